-- A small shop for PostgreSQL: schema shop (customers, products, orders,
-- order_items, shipments, odd_types and the view order_totals) and one table in
-- public (audit_log). Plain statements only, run into a fresh database in one
-- simple query by tests/py/record_text_to_sql_pg.py and by the Rust tests.
CREATE SCHEMA shop;
CREATE TYPE shop.order_status AS ENUM ('new', 'paid', 'shipped');
CREATE TABLE shop.customers (
    id INTEGER PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    email TEXT UNIQUE,
    referred_by INTEGER REFERENCES shop.customers (id),
    joined DATE
);
COMMENT ON TABLE shop.customers IS 'People who bought from the shop.';
COMMENT ON COLUMN shop.customers.referred_by IS 'The customer who brought this one in';
COMMENT ON COLUMN shop.customers.email IS 'Contact address, it''s unique';
CREATE TABLE shop.products (
    id INTEGER PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    category VARCHAR(32) NOT NULL,
    price NUMERIC(10, 2) NOT NULL,
    description TEXT
);
COMMENT ON COLUMN shop.products.price IS 'Unit price in euros';
CREATE TABLE shop.orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES shop.customers (id),
    status shop.order_status NOT NULL DEFAULT 'new',
    placed DATE NOT NULL,
    note TEXT
);
COMMENT ON TABLE shop.orders IS 'One row per order; lines are in order_items.';
CREATE TABLE shop.order_items (
    order_id INTEGER NOT NULL,
    line_no SMALLINT NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, line_no),
    CONSTRAINT order_items_product_fk FOREIGN KEY (product_id) REFERENCES shop.products (id),
    CONSTRAINT order_items_order_fk FOREIGN KEY (order_id) REFERENCES shop.orders (id)
);
CREATE TABLE shop.shipments (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL,
    line_no SMALLINT NOT NULL,
    carrier VARCHAR(20),
    FOREIGN KEY (order_id, line_no) REFERENCES shop.order_items (order_id, line_no)
);
CREATE TABLE shop.odd_types (
    id INTEGER PRIMARY KEY,
    c_integer INTEGER,
    c_bigint BIGINT,
    c_smallint SMALLINT,
    c_numeric NUMERIC(10, 2),
    c_real REAL,
    c_double DOUBLE PRECISION,
    c_boolean BOOLEAN,
    c_text TEXT,
    c_varchar VARCHAR(20),
    c_char CHAR(3),
    c_date DATE,
    c_timestamp TIMESTAMP,
    c_timestamptz TIMESTAMPTZ,
    c_time TIME,
    c_interval INTERVAL,
    c_uuid UUID,
    c_json JSON,
    c_jsonb JSONB,
    c_bytea BYTEA,
    c_int_array INTEGER[],
    c_text_array TEXT[]
);
COMMENT ON TABLE shop.odd_types IS 'One column per PostgreSQL type';
COMMENT ON COLUMN shop.odd_types.c_timestamptz IS 'Stored in UTC';
CREATE VIEW shop.order_totals AS
    SELECT o.id AS order_id, c.name AS customer, SUM(oi.quantity * p.price) AS total, COUNT(*) AS lines
    FROM shop.orders o
    JOIN shop.customers c ON c.id = o.customer_id
    JOIN shop.order_items oi ON oi.order_id = o.id
    JOIN shop.products p ON p.id = oi.product_id
    GROUP BY o.id, c.name;
COMMENT ON VIEW shop.order_totals IS 'Order totals (sum of quantity times price)';
CREATE TABLE public.audit_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    happened TIMESTAMPTZ NOT NULL,
    actor TEXT NOT NULL,
    action VARCHAR(32) NOT NULL,
    detail JSONB
);
COMMENT ON TABLE public.audit_log IS 'Who changed what';
COMMENT ON COLUMN public.audit_log.actor IS 'Login name';
INSERT INTO shop.customers (id, name, email, referred_by, joined) VALUES
    (1, 'Ada', 'ada@example.com', NULL, '2021-03-04'),
    (2, 'Kenji', 'kenji@example.jp', 1, '2022-11-30'),
    (3, 'Zoë O''Brien', NULL, 1, '2020-07-15'),
    (4, '美緒', 'mio@example.jp', 2, NULL);
INSERT INTO shop.products (id, name, category, price, description) VALUES
    (1, 'Kettle', 'kitchen', 39.50, 'A steel kettle.'),
    (2, 'Teapot', 'kitchen', 24.00, NULL),
    (3, 'Lamp', 'living', 55.25, 'A reading lamp with a long, flexible arm. It clamps to a desk or a shelf and gives a warm light that is easy on the eyes. The shade turns in every direction, the switch sits on the cable, and the bulb is a standard E27 so any shop sells a spare. Comes in black, white and a dark green that looks nice next to wood. Packed flat in a recycled box.'),
    (4, 'Rug', 'living', 120.00, repeat('x', 320)),
    (5, 'Bowl ☕', 'kitchen', 9.99, repeat('東京 ', 110));
INSERT INTO shop.orders (id, customer_id, status, placed, note) VALUES
    (1, 1, 'shipped', '2023-01-05', 'gift wrap'),
    (2, 2, 'paid', '2023-02-11', 'it''s for the office'),
    (3, 3, 'new', '2023-02-12', NULL),
    (4, 4, 'paid', '2023-03-01', '配達は午前中に');
INSERT INTO shop.order_items (order_id, line_no, product_id, quantity) VALUES
    (1, 1, 1, 1),
    (1, 2, 3, 2),
    (2, 1, 2, 3),
    (3, 1, 4, 1),
    (3, 2, 5, 4),
    (4, 1, 1, 2);
INSERT INTO shop.shipments (id, order_id, line_no, carrier) VALUES
    (1, 1, 1, 'DHL'),
    (2, 1, 2, NULL);
INSERT INTO shop.odd_types VALUES
    (1, 42, 9007199254740993, -7, 12.50, 3.14, 2.718281828459045, TRUE, 'it''s here', 'short', 'ab',
     '2024-02-29', '2024-02-29 13:45:30.123456', '2024-03-10 12:34:56.789+02', '23:59:58.5',
     '1 day 02:03:04', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
     '{"b": 1, "a": [1, 2.5, "x"], "n": null}', '{"b": 1, "a": [1, 2.5, "x"], "n": null}',
     '\x00ff27', '{1,2,3}', '{"a","it''s","Zoë, 東京"}'),
    (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (3, -2147483648, 9223372036854775807, -32768, -0.05, 'NaN', 'Infinity', FALSE, '', '', 'xyz',
     '1999-12-31', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '00:00:00',
     '1 year 2 mons 3 days -04:05:06.5', '00000000-0000-0000-0000-000000000000',
     'null', '[]', '', '{}', '{NULL,"",b}'),
    (4, 0, -1, 0, 99999999.99, 1e-7, -1.5e300, TRUE, 'line one
line two	tab "quoted" \ back', 'Zoë', '東',
     '0001-01-01', '2024-12-31 23:59:59', '2024-06-01 00:00:00-07:30', '12:00:00',
     '-3 days', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12',
     '{"k": "v"}', '{"k": "v", "nested": {"z": 1, "a": true}, "long_key_here": 0}',
     '\x68656c6c6f', '{-1,NULL}', '{"with space","a\"b"}');
INSERT INTO public.audit_log (happened, actor, action, detail) VALUES
    ('2024-01-01 10:00:00+00', 'admin', 'create', '{"table": "products"}'),
    ('2024-01-02 11:30:00+00', 'o''hara', 'update', NULL);

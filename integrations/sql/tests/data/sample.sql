-- A small shop: countries, cities, customers, products and orders. The same
-- statements build it on SQLite and on PostgreSQL (tests/data/README.md).
CREATE TABLE country (
    id INTEGER PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    continent VARCHAR(32) NOT NULL
);
CREATE TABLE city (
    id INTEGER PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    country_id INTEGER NOT NULL REFERENCES country (id),
    population INTEGER
);
CREATE TABLE customer (
    id INTEGER PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    city_id INTEGER REFERENCES city (id),
    joined DATE
);
CREATE TABLE product (
    id INTEGER PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    category VARCHAR(32) NOT NULL,
    price REAL NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customer (id),
    product_id INTEGER NOT NULL REFERENCES product (id),
    quantity INTEGER NOT NULL,
    note TEXT
);
INSERT INTO country (id, name, continent) VALUES
    (1, 'Canada', 'North America'),
    (2, 'Japan', 'Asia'),
    (3, 'Germany', 'Europe');
INSERT INTO city (id, name, country_id, population) VALUES
    (1, 'Toronto', 1, 2930000),
    (2, 'Vancouver', 1, 662248),
    (3, 'Tokyo', 2, 13960000),
    (4, 'Osaka', 2, 2691000),
    (5, 'Berlin', 3, 3645000);
INSERT INTO customer (id, name, city_id, joined) VALUES
    (1, 'Ada', 1, '2021-03-04'),
    (2, 'Kenji', 3, '2022-11-30'),
    (3, 'Greta', 5, '2020-07-15'),
    (4, 'Mio', 4, NULL);
INSERT INTO product (id, name, category, price) VALUES
    (1, 'Kettle', 'kitchen', 39.5),
    (2, 'Teapot', 'kitchen', 24.0),
    (3, 'Lamp', 'living', 55.25),
    (4, 'Rug', 'living', 120.0);
INSERT INTO orders (id, customer_id, product_id, quantity, note) VALUES
    (1, 1, 1, 1, 'gift wrap'),
    (2, 1, 3, 2, NULL),
    (3, 2, 2, 3, 'it''s for the office'),
    (4, 3, 4, 1, NULL),
    (5, 4, 1, 2, NULL),
    (6, 2, 3, 1, NULL);

-- Declared types SQLite accepts and SQLAlchemy reads by its affinity rules,
-- composite and implicit foreign keys, a quoted table name, a view.
CREATE TABLE odd (
    a int, b varchar(10), c NUMERIC(10,2), d DECIMAL(8), e FLOAT(5), f DOUBLE PRECISION,
    g CHAR(3), h, i BLOB, j BOOLEAN, k DATETIME, l TIMESTAMP(6), m TIME, n SMALLINT,
    o BIGINT, p NCHAR(2), q TEXT(5), r INTEGER(11), s JSON, t STRING, u MEDIUMINT,
    v CLOB, w BINARY(16), x NVARCHAR(9), y DATE(1), z NUMERIC(+1, -2), aa "weird name",
    ab UNSIGNED BIG INT, ac VARYING CHARACTER(255), ad REAL(4), ae FLOATING POINT
);
CREATE TABLE "My Table" ("first col" INTEGER PRIMARY KEY, odd_id INTEGER, FOREIGN KEY (odd_id) REFERENCES odd (a));
CREATE TABLE pair (x INTEGER, y INTEGER, PRIMARY KEY (x, y));
CREATE TABLE child (x INTEGER, y INTEGER, z INTEGER REFERENCES odd (a), FOREIGN KEY (x, y) REFERENCES pair (x, y));
CREATE TABLE implicit (px INTEGER, py INTEGER, FOREIGN KEY (px, py) REFERENCES pair);
CREATE VIEW v_odd AS SELECT a FROM odd;

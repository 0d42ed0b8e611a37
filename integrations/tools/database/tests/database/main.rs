//! ragloom-tools-database's tests, one binary: SQLite files the tests
//! build, and the PostgreSQL server `.ci/run` starts.

#![allow(clippy::unwrap_used)]

#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

//! ragloom-sql's tests, one binary: equality with LlamaIndex on recorded
//! cases, and the guards against hostile model-written SQL.

#![allow(clippy::unwrap_used)]

mod common;
mod guards;
mod join;
#[cfg(feature = "postgres")]
mod postgres;
mod tables;
mod text_to_sql;

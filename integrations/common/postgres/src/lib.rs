//! ragloom-common-postgres: what ragloom's PostgreSQL crates share — a
//! connection URL read as Python's drivers write it, and [`PgSession`], the
//! one connection (and transaction) a vector store and a docstore write through.
//!
//! `ragloom-vector-stores-postgres` and `ragloom-storage-postgres` both depend
//! on this crate; users reach its names through them.

#![warn(missing_docs)]

mod session;

use ragloom_core::{Error, Result};
pub use session::{PgSession, endpoint};
use sqlx::postgres::PgConnectOptions;
use std::str::FromStr;

/// The provider name in every [`Error::Provider`] ragloom's PostgreSQL crates return.
pub const PROVIDER: &str = "postgres";

/// Connection options from a URL (`postgres://user:password@host:port/db`;
/// Python's `postgresql+psycopg2://` form is accepted too). The error never
/// repeats the URL, which may hold a password.
pub fn connect_options(url: &str) -> Result<PgConnectOptions> {
    PgConnectOptions::from_str(&without_driver(url))
        .map_err(|e| Error::invalid("invalid PostgreSQL connection URL", e))
}

/// Python's drivers name themselves in the scheme (`postgresql+psycopg2://`,
/// `postgresql+asyncpg://`); sqlx wants the plain scheme.
fn without_driver(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) if scheme.contains('+') => {
            let base = scheme.split('+').next().unwrap_or("postgresql");
            format!("{base}://{rest}")
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn python_driver_schemes_are_accepted() {
        assert_eq!(
            without_driver("postgresql+psycopg2://u:p@h:5/d"),
            "postgresql://u:p@h:5/d"
        );
        assert_eq!(without_driver("postgres://h/d"), "postgres://h/d");
    }
}

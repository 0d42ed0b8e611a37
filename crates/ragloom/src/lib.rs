//! ragloom: a data framework for LLM applications — load, parse, embed, index,
//! retrieve, synthesize, chat and build agents over your own data.
//!
//! This facade re-exports [`ragloom_core`] and, behind feature flags, each
//! integration crate, so one dependency gives the whole toolkit.

pub use ragloom_core::*;

/// PostgreSQL with pgvector as a vector store, in LlamaIndex's table layout:
/// [`postgres::PGVectorStore`] (the `ragloom-vector-stores-postgres` crate).
#[cfg(feature = "postgres")]
pub mod postgres {
    pub use ragloom_vector_stores_postgres::*;
}

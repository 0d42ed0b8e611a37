//! Query-time helpers shared by indexes, as LlamaIndex's `indices.query`:
//! query transforms (HyDE) that rewrite a query before retrieval.

pub mod query_transform;

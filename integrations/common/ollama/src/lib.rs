//! ragloom-common-ollama: what ragloom's Ollama crates share — the server's
//! address, the HTTP connection with its limits, errors, and the wire types.
//!
//! `ragloom-llms-ollama` and `ragloom-embeddings-ollama` both depend on this
//! crate rather than one on the other, so both read `OLLAMA_HOST` by
//! Ollama's rules and report a server's failures the same way. Users reach
//! its public names through those crates.

#![warn(missing_docs)]

mod connection;
mod options;
mod wire;

pub use connection::*;
pub use options::ServerOptions;
pub use wire::*;

//! Kits integration crates run in their own tests (feature `testing`): the
//! behaviours every store must have and a server that fails on cue.
//!
//! [`check_vector_store`] and [`check_doc_store`] panic with the failing
//! check's name and what differed; an operation a store answers with
//! [`Error::Unsupported`](crate::Error) is recorded in the returned
//! [`Conformance`], never counted as a pass. [`FaultServer`] injects HTTP
//! faults in front of provider clients.

mod doc_store;
mod fault_server;
mod vector_store;

pub use doc_store::check_doc_store;
pub use fault_server::{Fault, FaultServer, Recorded, Responder};
pub use vector_store::check_vector_store;

/// What a conformance run found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Conformance {
    /// The checks the store passed.
    pub passed: Vec<String>,
    /// The checks the store declined with `Error::Unsupported`, with its message.
    pub unsupported: Vec<(String, String)>,
}

impl Conformance {
    fn pass(&mut self, check: impl Into<String>) {
        self.passed.push(check.into());
    }
}

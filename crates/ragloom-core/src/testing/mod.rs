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

/// A test service's variable that `.ci/run` sets (a server's URL, a
/// folder of reference files). Outside CI its absence skips the test (say
/// so and return `None`); under CI (`CI` set) it fails the test, so a
/// broken setup script cannot pass for a skipped test.
pub fn ci_var(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{var} is missing: .ci/run should have set it"
            );
            eprintln!("skipped: {var} is missing");
            None
        }
    }
}

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

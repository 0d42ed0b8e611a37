//! The behaviours every store must have, as a kit a store crate runs in its
//! own tests (feature `testing`): [`check_vector_store`] and [`check_doc_store`].
//!
//! A check that fails panics with the check's name and what differed; an
//! operation a store answers with [`Error::Unsupported`](crate::Error) is
//! recorded in the returned [`Conformance`], never counted as a pass.

mod doc_store;
mod vector_store;

pub use doc_store::check_doc_store;
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

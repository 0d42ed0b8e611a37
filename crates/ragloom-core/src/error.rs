//! The one error type of ragloom-core, shared by every trait so that integration
//! crates can map their SDK errors into it while keeping the cause.

use std::path::PathBuf;

/// Boxed source error kept by [`Error::Provider`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in ragloom.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read or written.
    #[error("{op} {path}: {source}", path = path.display())]
    Io {
        /// What was being done ("reading", "writing", ...).
        op: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An I/O failure with no file to name: what `?` on a `std::io::Result`
    /// gives (a program's `main` creating folders and files, a socket).
    /// Library code names the file with [`Error::io`] instead.
    #[error("I/O error: {0}")]
    IoOther(#[from] std::io::Error),
    /// A persisted file exists but does not have the expected shape.
    #[error("corrupt or unreadable file {path}: {message}", path = path.display())]
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What was wrong with it.
        message: String,
    },
    /// A value given by the caller is not acceptable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A value given by the caller is not acceptable, and the parser or
    /// check that refused it says why: its error is kept as the source.
    /// [`Error::is_invalid_input`] covers this and [`Error::InvalidInput`].
    #[error("invalid input: {what}: {source}")]
    Invalid {
        /// What was invalid (the setting, field or value, named).
        what: String,
        /// Why: the refusing parser's or check's own error.
        #[source]
        source: BoxError,
    },
    /// A node, document, index or other object was looked up and is absent.
    #[error("not found: {0}")]
    NotFound(String),
    /// The operation or mode is not supported by this component.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// (De)serialisation of JSON failed.
    #[error("serialization error: {0}")]
    Serde(#[from] serde_json::Error),
    /// A model's reply could not be parsed into what was asked for.
    #[error("could not parse model output: {0}")]
    OutputParse(String),
    /// A tool failed.
    #[error("tool `{tool}` failed: {message}")]
    Tool {
        /// The tool's name.
        tool: String,
        /// What went wrong.
        message: String,
    },
    /// An error reported by an external provider (LLM, embedding, store).
    #[error("{provider}: {message}")]
    Provider {
        /// The provider's name, e.g. "openai" or "qdrant".
        provider: String,
        /// A human readable message.
        message: String,
        /// The provider's own error, kept for inspection.
        #[source]
        source: Option<BoxError>,
    },
    /// A workflow could not be built as asked, or its run failed, timed out
    /// or was cancelled.
    #[error("workflow: {0}")]
    Workflow(String),
    /// Not a failure: a workflow step called `Context::wait_for_event` and is
    /// parked until the event arrives (it runs again then). Return it with
    /// `?`; the runtime never reports it as an error.
    #[error("waiting for an event ({0})")]
    WaitingForEvent(String),
    /// A provider or integration was asked for whose Cargo feature this
    /// build does not include.
    #[error("{what} needs ragloom's `{feature}` feature, which this build does not include")]
    FeatureMissing {
        /// What was asked for (a provider's label).
        what: String,
        /// The facade feature that adds it.
        feature: &'static str,
    },
    /// An evaluator set to raise (`raise_error`) judged a response invalid.
    #[error("evaluation: {0}")]
    Evaluation(String),
    /// A durable index's own failure (a busy writer, nothing to ingest, a
    /// damaged store, a conflicting commit); see [`IndexError`].
    #[error(transparent)]
    Index(#[from] IndexError),
    /// An operation failed because of an error beneath it (a task that
    /// panicked, a thread that did not start, a file that could not be
    /// loaded), kept as the source.
    #[error("{what}: {source}")]
    Failed {
        /// What was being done.
        what: String,
        /// The error beneath.
        #[source]
        source: BoxError,
    },
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// An [`Error::CorruptFile`] for `path`.
    pub fn corrupt(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        Error::CorruptFile {
            path: path.into(),
            message: message.to_string(),
        }
    }

    /// An [`Error::Invalid`]: `what` was refused by `source`.
    pub fn invalid(what: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Invalid {
            what: what.into(),
            source: source.into(),
        }
    }

    /// An [`Error::Failed`]: `what` failed because of `source`.
    pub fn failed(what: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Failed {
            what: what.into(),
            source: source.into(),
        }
    }

    /// Whether the caller gave something unacceptable ([`Error::InvalidInput`]
    /// or [`Error::Invalid`]): what a command line reports as a usage error
    /// and a server as a bad request.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Error::InvalidInput(_) | Error::Invalid { .. })
    }

    /// What the caller gave that is unacceptable, and why, without the
    /// `invalid input:` prefix; `None` for other errors.
    pub fn input_problem(&self) -> Option<String> {
        match self {
            Error::InvalidInput(m) => Some(m.clone()),
            Error::Invalid { what, source } => Some(format!("{what}: {source}")),
            _ => None,
        }
    }

    /// An [`Error::Provider`] keeping the provider's own error as the source.
    pub fn provider(
        provider: impl Into<String>,
        message: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Error::Provider {
            provider: provider.into(),
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// Errors of a durable index that a caller may want to tell apart (the
/// command line turns each into an exit code and a hint).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// Another writer holds the source's lock and the caller asked not to wait.
    #[error("another ingest of this folder is running")]
    WriterBusy,
    /// The listing found no readable file; the index is kept as it was
    /// (`held`: it holds an earlier ingest) unless `prune` is set.
    #[error("no readable files in {source_key}")]
    NoFiles {
        /// The source's key.
        source_key: String,
        /// Whether the index holds an earlier ingest (kept as it was).
        held: bool,
    },
    /// The source's files were read but yield no text, and the index held
    /// some: kept as it was unless `prune` is set.
    #[error("{source_key} yields no text now")]
    NoText {
        /// The source's key.
        source_key: String,
    },
    /// Nothing was ingested for the source yet.
    #[error("nothing is ingested for {source_key}")]
    NotIngested {
        /// The source's key.
        source_key: String,
    },
    /// What the store holds for the source is damaged or missing; rebuilding
    /// the index (clear, then sync) repairs it.
    #[error("{what}")]
    Damaged {
        /// What is wrong, naming the file, table or collection.
        what: String,
    },
    /// Another writer (from another machine) committed while this one ran:
    /// nothing of this one was published.
    #[error(
        "another ingest of {source_key} committed while this one ran; nothing of this one was published"
    )]
    Conflict {
        /// The source's key.
        source_key: String,
    },
    /// A LlamaIndex storage folder cannot be imported from, or exported to, as it is.
    #[error("{}: {problem}", dir.display())]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// What is wrong with it.
        problem: FolderProblem,
    },
    /// The chunking asked for cannot be used.
    #[error("{message}")]
    Settings {
        /// What is wrong.
        message: String,
        /// What to give instead.
        hint: String,
    },
}

/// Why a LlamaIndex storage folder cannot be imported or exported to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FolderProblem {
    /// It holds no `VectorStoreIndex` (with the id asked for).
    #[error("holds no VectorStoreIndex{}", index_id.as_ref().map(|i| format!(" `{i}`")).unwrap_or_default())]
    NoVectorIndex {
        /// The index id asked for, if any.
        index_id: Option<String>,
    },
    /// It holds several vector indexes and none was chosen.
    #[error("holds several vector indexes: {}", ids.join(", "))]
    SeveralIndexes {
        /// Their ids.
        ids: Vec<String>,
    },
    /// Its vector store holds vectors for some of the index's nodes only.
    #[error("{embedded} of {nodes} nodes have vectors")]
    PartialVectors {
        /// Nodes with a vector.
        embedded: usize,
        /// Nodes of the index.
        nodes: usize,
    },
    /// It holds vectors but no embedding model was given to query them.
    #[error("holds vectors, but no embedding model is configured to query them")]
    VectorsWithoutModel,
    /// An embedding model was given but it holds no vectors.
    #[error("has no vectors, but an embedding model is configured")]
    ModelWithoutVectors,
    /// An export target that already holds files.
    #[error("exists and is not empty")]
    NotEmpty,
}

impl FolderProblem {
    /// What to do instead.
    pub fn hint(&self) -> &'static str {
        match self {
            FolderProblem::NoVectorIndex { .. } => {
                "give the folder LlamaIndex's `storage_context.persist()` wrote"
            }
            FolderProblem::SeveralIndexes { .. } => "choose one by its index id",
            FolderProblem::PartialVectors { .. } => {
                "import a folder whose vector store holds every node of the index"
            }
            FolderProblem::VectorsWithoutModel => {
                "give the model that made them, e.g. --embed huggingface --embed-model DIR"
            }
            FolderProblem::ModelWithoutVectors => {
                "import without an embedding model (queries then use the keyword index)"
            }
            FolderProblem::NotEmpty => "give a new or empty folder",
        }
    }
}

/// `Result` with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn invalid_and_failed_keep_their_cause_and_read_as_before() {
        let cause = std::io::Error::other("the disk said no");
        let err = Error::invalid("setting `x`", cause);
        assert_eq!(
            err.to_string(),
            "invalid input: setting `x`: the disk said no"
        );
        assert!(err.is_invalid_input());
        assert_eq!(
            err.input_problem().unwrap(),
            "setting `x`: the disk said no"
        );
        let source = err.source().unwrap();
        assert_eq!(source.to_string(), "the disk said no");
        assert!(source.downcast_ref::<std::io::Error>().is_some());

        let err = Error::failed("writing a batch", std::io::Error::other("gone"));
        assert_eq!(err.to_string(), "writing a batch: gone");
        assert!(!err.is_invalid_input());
        assert!(err.source().is_some());
        assert!(Error::InvalidInput("plain".into()).is_invalid_input());
        assert_eq!(Error::Other("x".into()).input_problem(), None);
    }
}

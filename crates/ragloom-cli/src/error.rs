//! Errors of the command line: one clear line, a hint, and an exit code a
//! script can branch on (documented in docs/cli.md).

use ragloom::durable::{FolderProblem, IndexError};
use std::fmt;

/// Exit codes.
pub(crate) mod exit {
    /// A failure while working (reading, indexing, a provider that failed).
    pub(crate) const FAILURE: i32 = 1;
    /// Bad usage: unknown flags or arguments (clap's code).
    pub(crate) const USAGE: i32 = 2;
    /// The configuration is wrong: an unknown provider, a missing setting, a bad config file.
    pub(crate) const CONFIG: i32 = 3;
    /// Nothing to work on: no files matched, or nothing was ingested yet.
    pub(crate) const NO_INPUT: i32 = 4;
    /// A provider (LLM or embedding server) could not be reached or failed.
    pub(crate) const PROVIDER: i32 = 5;
    /// Standard output was closed by its reader (`ragloom query ... | head -1`):
    /// the command stopped quietly, as a process ended by `SIGPIPE` reports.
    pub(crate) const CLOSED_PIPE: i32 = 141;
}

/// An error to show the user.
#[derive(Debug)]
pub(crate) struct CliError {
    pub message: String,
    pub hint: Option<String>,
    pub code: i32,
    /// The library's error this one reports, when it came from one: kept so
    /// a caller that is not a terminal (the server) keeps the cause.
    pub source: Option<ragloom::Error>,
}

impl CliError {
    pub(crate) fn new(code: i32, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: Some(hint.into()).filter(|h: &String| !h.is_empty()),
            code,
            source: None,
        }
    }

    pub(crate) fn config(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::new(exit::CONFIG, message, hint)
    }

    pub(crate) fn no_input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::new(exit::NO_INPUT, message, hint)
    }

    /// Standard output's reader went away; nothing more to say to anyone.
    pub(crate) fn closed_pipe() -> Self {
        Self::new(exit::CLOSED_PIPE, "standard output was closed", "")
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl From<ragloom::Error> for CliError {
    fn from(e: ragloom::Error) -> Self {
        // Only the first line: provider errors can carry whole server replies.
        let message = e.to_string().lines().next().unwrap_or_default().to_string();
        if let ragloom::Error::Index(e) = e {
            return Self::from(e);
        }
        let mut error = Self::classify(&e, message);
        error.source = Some(e);
        error
    }
}

impl CliError {
    /// The exit code and hint for a library error.
    fn classify(e: &ragloom::Error, message: String) -> Self {
        match e {
            ragloom::Error::Provider { .. } => Self::new(
                exit::PROVIDER,
                message,
                "check that the provider's server is running and its settings (see `ragloom status`)",
            ),
            ragloom::Error::FeatureMissing { feature, .. } => {
                Self::config(message, build_with(feature))
            }
            e if e.is_invalid_input() => Self::new(exit::CONFIG, message, "see `ragloom --help`"),
            _ => Self::new(
                exit::FAILURE,
                message,
                "run again with --verbose for details",
            ),
        }
    }
}

/// How to build the command with `feature`: the local models come together.
pub(crate) fn build_with(feature: &str) -> String {
    let feature = match feature {
        "huggingface" | "candle" | "sbert-rerank" => "local-models",
        other => other,
    };
    format!(
        "build the command with it: cargo install --path crates/ragloom-cli --features {feature}"
    )
}

impl From<IndexError> for CliError {
    fn from(e: IndexError) -> Self {
        let message = e.to_string();
        match e {
            IndexError::WriterBusy => Self::new(
                exit::FAILURE,
                message,
                "wait for it to finish, or run without --no-wait to wait for it",
            ),
            IndexError::NoFiles { held: true, .. } | IndexError::NoText { .. } => Self::no_input(
                message,
                "the index is kept as it was; to empty it, ingest with --prune",
            ),
            IndexError::NoFiles { held: false, .. } => Self::no_input(
                message,
                "point --files at a folder with text, Markdown or PDF files",
            ),
            IndexError::NotIngested { source_key } => {
                Self::no_input(message, format!("run `ragloom ingest {source_key}` first"))
            }
            IndexError::Conflict { .. } => Self::new(
                exit::FAILURE,
                message,
                "ingest a source from one machine at a time; run the ingest again",
            ),
            IndexError::Settings { hint, .. } => Self::new(exit::USAGE, message, hint),
            IndexError::Folder { problem, .. } => {
                let code = match problem {
                    FolderProblem::NoVectorIndex { .. } => exit::NO_INPUT,
                    FolderProblem::SeveralIndexes { .. } | FolderProblem::NotEmpty => exit::USAGE,
                    FolderProblem::PartialVectors { .. } => exit::FAILURE,
                    _ => exit::CONFIG,
                };
                let hint = match problem {
                    FolderProblem::SeveralIndexes { .. } => "choose one with --index-id",
                    FolderProblem::ModelWithoutVectors => {
                        "import with --embed none (queries then use the keyword index)"
                    }
                    other => other.hint(),
                };
                Self::new(code, message, hint)
            }
            _ => Self::new(
                exit::FAILURE,
                message,
                "rebuild the index with `ragloom rag --clear --files ...`",
            ),
        }
    }
}

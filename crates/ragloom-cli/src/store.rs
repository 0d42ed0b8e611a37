//! The command line's local state: the persist root (`--persist-dir`, made
//! absolute once) and the source used last, so `query`, `chat` and `status`
//! need no `--files`.

use crate::error::CliError;
use ragloom::durable::Source;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The persist root: `--persist-dir`, else `<data dir>/ragloom`; made
/// absolute once, here: every path derived from it (the uploads folder a
/// server compares requested paths with, the index folder `status` shows)
/// is then absolute too, whatever the working directory later is.
pub(crate) fn persist_root(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = flag {
        return std::path::absolute(p).map_err(|e| {
            CliError::config(
                format!("cannot resolve the persist folder {}: {e}", p.display()),
                "give an absolute --persist-dir",
            )
        });
    }
    dirs::data_dir().map(|d| d.join("ragloom")).ok_or_else(|| {
        CliError::config(
            "no data directory is known for this user",
            "give one with --persist-dir or RAGLOOM_PERSIST_DIR",
        )
    })
}

/// The record of the source used last.
#[derive(Debug, Serialize, Deserialize)]
struct Last {
    source: String,
}

/// Remembers `source` as the last one used.
pub(crate) fn remember_last(root: &Path, source: &Source) -> Result<(), CliError> {
    let json = serde_json::to_vec(&Last {
        source: source.key.clone(),
    })
    .map_err(ragloom::Error::from)?;
    ragloom::utils::write_atomic(&root.join("last.json"), |w| w.write_all(&json))?;
    Ok(())
}

/// The source used last, if any.
pub(crate) fn last_source(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("last.json")).ok()?;
    serde_json::from_str::<Last>(&text).ok().map(|l| l.source)
}

/// Resolves `--files`: a folder, a file or a glob.
pub(crate) fn resolve_source(arg: &str) -> Result<Source, CliError> {
    Source::resolve(arg).map_err(|e| match (e.input_problem(), e) {
        (_, ragloom::Error::NotFound(m)) => CliError::no_input(
            m,
            "give a folder, a file, or a glob such as \"docs/**/*.md\"",
        ),
        (Some(problem), _) => CliError::no_input(
            problem,
            "quote the glob so the shell does not expand it: --files \"docs/**/*.md\"",
        ),
        (None, other) => other.into(),
    })
}

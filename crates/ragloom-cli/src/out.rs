//! Standard output: every line the command prints goes through here, so a
//! reader that went away (`ragloom query ... | head -1`) ends the command quietly.

use crate::error::{CliError, exit};
use std::io::{self, Write};

/// Writes `text` to standard output and flushes it (answers are streamed).
/// A closed pipe becomes [`CliError::closed_pipe`]: exit code 141, nothing printed.
pub(crate) fn write(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                CliError::closed_pipe()
            } else {
                CliError::new(
                    exit::FAILURE,
                    format!("cannot write to standard output: {e}"),
                    "",
                )
            }
        })
}

/// Writes `text` and a newline.
pub(crate) fn line(text: impl AsRef<str>) -> Result<(), CliError> {
    write(&format!("{}\n", text.as_ref()))
}

//! Talking to the user: notes and warnings on stderr, results on stdout,
//! progress bars only on a terminal and never in `--json` mode.

use std::io::IsTerminal;

/// Output settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ui {
    pub json: bool,
    pub verbose: bool,
}

impl Ui {
    /// Whether progress bars are shown.
    pub(crate) fn progress(&self) -> bool {
        !self.json && std::io::stderr().is_terminal()
    }

    /// A note about what is happening (stderr; shown unless `--json`).
    pub(crate) fn note(&self, msg: &str) {
        if !self.json {
            eprintln!("{msg}");
        }
    }

    /// A note shown with `--verbose` only.
    pub(crate) fn detail(&self, msg: &str) {
        if self.verbose && !self.json {
            eprintln!("{msg}");
        }
    }

    /// A warning (stderr, always).
    pub(crate) fn warn(&self, msg: &str) {
        eprintln!("warning: {msg}");
    }
}

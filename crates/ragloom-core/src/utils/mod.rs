//! Small shared helpers: Python-style `{name}` formatting, atomic file writes,
//! and character/byte offset conversion.

mod fmt;
mod fs;

pub use fmt::{format_named, template_vars};
pub use fs::{read_json_file, write_atomic};

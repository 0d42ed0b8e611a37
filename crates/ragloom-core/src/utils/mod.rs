//! Small shared helpers: Python-style `{name}` formatting, atomic file writes,
//! Python's JSON layout, and NumPy `.npy` arrays.

mod fmt;
mod fs;
pub(crate) mod npy;
mod pyjson;

pub use fmt::{format_named, template_vars};
pub use fs::{read_json_file, write_atomic};
pub use pyjson::{PythonFormatter, to_python_json_string, write_python_json};

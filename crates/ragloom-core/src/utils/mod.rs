//! Small shared helpers: Python-style `{name}` formatting and hex digests, atomic writes, Python's JSON,
//! `.npy` arrays, builder setters, blocking work off the async threads, jobs run a few at a time in order, and the tokenizers' word caches.

mod blocking;
mod fmt;
mod fs;
pub(crate) mod npy;
mod ordered;
mod pyjson;
mod setters;
mod str_map;

pub(crate) use crate::{setters, wrapped_setters};
pub use blocking::run_blocking;
pub use fmt::hex;
pub use fmt::{format_named, template_vars};
pub use fs::{read_json_file, replace_lone_surrogates, write_atomic};
pub(crate) use ordered::{run_in_order, spawn_stoppable};
pub use pyjson::{
    PythonFormatter, json_dumps, to_python_json_string, to_python_json_string_unescaped,
    write_python_json,
};
pub(crate) use str_map::StrMap;

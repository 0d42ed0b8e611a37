//! The sample databases the tests share, built from tests/data/*.sql.

use std::path::{Path, PathBuf};

pub(crate) fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A SQLite file in `dir` built from `script`.
pub(crate) fn build_db(dir: &Path, script: &str) -> PathBuf {
    let path = dir.join(script.replace(".sql", ".db"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&std::fs::read_to_string(data(script)).unwrap())
        .unwrap();
    path
}

/// What LlamaIndex 0.14.25 did on the sample databases (tests/py/record_text_to_sql.py).
pub(crate) fn recorded() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data("text_to_sql.json")).unwrap()).unwrap()
}

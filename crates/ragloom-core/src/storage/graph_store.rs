//! `SimpleGraphStore`: keeps LlamaIndex's `graph_store.json` so a storage
//! folder round-trips; ragloom's knowledge-graph indexes will build on it.

use crate::error::{Error, Result};
use crate::utils::{read_json_file, write_atomic};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::RwLock;

/// The graph store file name.
pub const GRAPH_STORE_FNAME: &str = "graph_store.json";

/// A triplet graph as LlamaIndex's `SimpleGraphStore` persists it
/// (`{"graph_dict": {subject: [[relation, object], ...]}}`).
#[derive(Debug)]
pub struct SimpleGraphStore {
    data: RwLock<Value>,
}

impl Default for SimpleGraphStore {
    fn default() -> Self {
        Self {
            data: RwLock::new(json!({"graph_dict": {}})),
        }
    }
}

impl SimpleGraphStore {
    /// Loads `path`; a missing or malformed file is an error naming it.
    pub fn from_persist_path(path: &Path) -> Result<Self> {
        let data: Value = read_json_file(path)?;
        if !data.get("graph_dict").is_some_and(Value::is_object) {
            return Err(Error::corrupt(
                path,
                "expected an object with a `graph_dict` object",
            ));
        }
        Ok(Self {
            data: RwLock::new(data),
        })
    }

    /// Writes the store to `path` atomically.
    pub fn persist(&self, path: &Path) -> Result<()> {
        let data = self
            .data
            .read()
            .map_err(|_| Error::Other("graph store lock poisoned".into()))?;
        write_atomic(path, |w| {
            serde_json::to_writer(w, &*data).map_err(std::io::Error::other)
        })
    }

    /// The triplets `(subject, relation, object)`.
    pub fn triplets(&self) -> Vec<(String, String, String)> {
        let Ok(data) = self.data.read() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(graph) = data.get("graph_dict").and_then(Value::as_object) {
            for (subj, rels) in graph {
                for pair in rels.as_array().into_iter().flatten() {
                    if let (Some(r), Some(o)) = (
                        pair.get(0).and_then(Value::as_str),
                        pair.get(1).and_then(Value::as_str),
                    ) {
                        out.push((subj.clone(), r.to_string(), o.to_string()));
                    }
                }
            }
        }
        out
    }
}

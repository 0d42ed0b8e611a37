//! What the stores that keep many sources' builds side by side on one server
//! (PostgreSQL tables, Qdrant collections) do alike: name, find and drop builds.

use super::kv::DynKv;
use super::location::{BuildRequest, IndexBuild, build_prefix, import_suffix};
use super::manifest::read_manifest;
use crate::error::{IndexError, Result};
use crate::schema::Node;
use crate::vector_stores::{SimpleVectorStore, VectorStore};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

impl BuildRequest<'_> {
    /// The name of the build asked for in a shared store: the source's
    /// [`build_prefix`], the settings' fingerprint and, for an import, an
    /// [`import_suffix`] of its own.
    pub fn build_name(&self, key: &str) -> String {
        let mut name = format!("{}{}", build_prefix(key), self.fingerprint);
        if self.import {
            name.push_str(&import_suffix());
        }
        name
    }
}

/// `live`, when it is a `B` (a build of the store asking) named `name`.
pub fn live_if_named<B: IndexBuild + 'static>(
    live: Option<Arc<dyn IndexBuild>>,
    name: &str,
) -> Option<Arc<dyn IndexBuild>> {
    live.filter(|l| {
        l.as_any()
            .downcast_ref::<B>()
            .is_some_and(|b| b.name() == name)
    })
}

/// The name of `build`, when it is a `B` (a build of the store asking).
pub fn own_build_name<B: IndexBuild + 'static>(build: Option<&dyn IndexBuild>) -> Option<String> {
    build
        .and_then(|b| b.as_any().downcast_ref::<B>())
        .map(|b| b.name())
}

/// The live build's name and vectors' length in the entry a shared store
/// keeps for a source (`{"name": ..., "embed_dim": ...}`); `what` names the
/// entry in the error when it is damaged.
pub fn live_entry(entry: &Value, what: &str) -> Result<(String, usize)> {
    let name = entry.get("name").and_then(|n| n.as_str());
    let dim = entry.get("embed_dim").and_then(|d| d.as_u64());
    match (name, dim) {
        (Some(n), Some(d)) => Ok((n.to_string(), d as usize)),
        _ => Err(IndexError::Damaged {
            what: format!("{what} is damaged"),
        }
        .into()),
    }
}

/// Fails when the manifest in `kv` is another source's than `key` (two
/// sources sharing a build name): `holder` names where the build lives and
/// `advice` ends the message.
pub fn check_manifest_source(kv: &dyn DynKv, key: &str, holder: &str, advice: &str) -> Result<()> {
    match read_manifest(kv)?.filter(|m| m.source != key) {
        Some(m) => Err(IndexError::Damaged {
            what: format!(
                "{holder} hold the index of {}, not of {key}{advice}",
                m.source
            ),
        }
        .into()),
        None => Ok(()),
    }
}

/// The `nodes` that carry an embedding, in an in-memory vector store (for
/// export: the nodes stored for keyword search alone have none).
pub async fn embedded_vectors(nodes: Vec<Node>) -> Result<Arc<SimpleVectorStore>> {
    let vectors = Arc::new(SimpleVectorStore::new());
    let embedded: Vec<_> = nodes
        .into_iter()
        .filter(|n| n.embedding.is_some())
        .collect();
    vectors.add(&embedded).await?;
    Ok(vectors)
}

/// Drops the builds `names` other than `keep` with `drop`; returns those it
/// could not drop, each with why. Only space is at stake: a build still in
/// use is dropped by a later sync.
pub async fn drop_builds<F, Fut>(
    names: impl IntoIterator<Item = String>,
    keep: Option<&str>,
    mut drop: F,
) -> Vec<(String, String)>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let mut kept = Vec::new();
    for name in names {
        if Some(name.as_str()) != keep
            && let Err(e) = drop(name.clone()).await
        {
            kept.push((name, e.to_string()));
        }
    }
    kept
}

//! Generations: the versions of a Qdrant collection side by side, so that a
//! writer's points stay invisible until one small write commits them all.
//!
//! Qdrant has no transactions. A writer of generation `N = committed + 1`
//! tags each point it writes with `N` and deletes earlier points by marking
//! them deleted at `N`; readers of generation `C` see the points written at
//! or before `C` and not deleted at or before `C`. Moving the commit marker
//! (one point, see [`CommitMarkers`]) from `C` to `N` publishes the whole
//! write at once; a writer that dies before it leaves points nobody sees,
//! which [`recover`](crate::QdrantVectorStore::recover) removes before the next write (with the marks it set),
//! along with points deleted before the committed generation. A reader of
//! `C` sees its generation exactly until the writer of `N + 1` starts.

use crate::backend::{Backend, CreateSpec, Point, Using};
use crate::filters::{Cond, Plan, Range};
use crate::store::{Distance, Target};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::Metadata;
use serde_json::Value;

/// Which generation a store reads, and the one it writes, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generation {
    committed: u64,
    writing: Option<u64>,
}

impl Generation {
    /// Reads generation `committed` (0: nothing committed yet).
    pub fn read(committed: u64) -> Self {
        Self {
            committed,
            writing: None,
        }
    }

    /// Writes the generation after `committed`, reading its own writes.
    pub fn write(committed: u64) -> Self {
        Self {
            committed,
            writing: Some(committed + 1),
        }
    }

    /// The generation readers see.
    pub fn committed(&self) -> u64 {
        self.committed
    }

    /// The generation being written; an error for a reader.
    pub fn writing(&self) -> Result<u64> {
        self.writing.ok_or_else(|| {
            Error::InvalidInput(format!(
                "a reader of generation {} cannot write; open the store with Generation::write",
                self.committed
            ))
        })
    }

    /// The generation this store sees: the one it writes, else the committed one.
    pub fn view(&self) -> u64 {
        self.writing.unwrap_or(self.committed)
    }

    fn up_to(key: &str, g: u64) -> Cond {
        Cond::Range(
            key.into(),
            Range {
                lte: Some(g as f64),
                ..Range::default()
            },
        )
    }

    fn after(key: &str, g: u64) -> Cond {
        Cond::Range(
            key.into(),
            Range {
                gt: Some(g as f64),
                ..Range::default()
            },
        )
    }

    /// Points this store sees: written at or before its view, not deleted by then.
    pub(crate) fn visible_plan(&self, gen_key: &str, del_key: &str) -> Plan {
        let v = self.view();
        Plan {
            must: vec![Self::up_to(gen_key, v)],
            must_not: vec![Self::up_to(del_key, v)],
            ..Plan::default()
        }
    }

    /// Points of earlier generations this writer has not deleted.
    pub(crate) fn committed_live_plan(&self, gen_key: &str, del_key: &str) -> Plan {
        Plan {
            must: vec![Self::up_to(gen_key, self.committed)],
            must_not: vec![Self::up_to(del_key, self.view())],
            ..Plan::default()
        }
    }

    /// Points of earlier generations, deleted or not.
    pub(crate) fn committed_plan(&self, gen_key: &str) -> Plan {
        Plan {
            must: vec![Self::up_to(gen_key, self.committed)],
            ..Plan::default()
        }
    }

    /// Points this writer wrote.
    pub(crate) fn own_plan(&self, gen_key: &str) -> Plan {
        Plan {
            must: vec![Cond::Integer(gen_key.into(), self.view() as i64)],
            ..Plan::default()
        }
    }
}

/// Removes what unfinished writers after `g`'s committed generation `c`
/// left (their points, their deletion marks) and the points deleted before
/// `c`: those deleted at `c` stay, as readers of `c - 1` (a query that
/// started before `c` was committed) still see them.
pub(crate) async fn recover(
    backend: &Backend,
    g: &Generation,
    gen_key: &str,
    del_key: &str,
) -> Result<()> {
    let c = g.committed();
    let only = |cond| Plan {
        must: vec![cond],
        ..Plan::default()
    };
    backend.delete(&only(Generation::after(gen_key, c))).await?;
    backend
        .delete_payload(&only(Generation::after(del_key, c)), &[del_key])
        .await?;
    match c.checked_sub(1) {
        Some(before) if before > 0 => {
            backend
                .delete(&only(Generation::up_to(del_key, before)))
                .await
        }
        _ => Ok(()),
    }
}

/// Commit markers: one point per name in a collection of their own, each
/// holding a JSON object (e.g. which collection is live and its committed
/// generation). Writing one is a single point upsert, which Qdrant applies
/// whole: the commit of a generation.
pub struct CommitMarkers {
    backend: Backend,
}

impl std::fmt::Debug for CommitMarkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CommitMarkers")
    }
}

const MARKER_KEY: &str = "marker";
const NAME_KEY: &str = "name";

impl CommitMarkers {
    /// The markers in `collection` on the server at `url` (created on the first write).
    pub fn remote(url: &str, api_key: Option<&str>, collection: &str) -> Result<Self> {
        let target = Target::Remote {
            url: url.to_string(),
            api_key: api_key.map(str::to_string),
        };
        Ok(Self {
            backend: Backend::open(&target, collection)?,
        })
    }

    /// The marker `name`, if written.
    pub async fn get(&self, name: &str) -> Result<Option<Value>> {
        if self.backend.vector_names().await?.is_none() {
            return Ok(None);
        }
        let hits = self.backend.retrieve(&[marker_id(name)]).await?;
        let Some(hit) = hits.into_iter().next() else {
            return Ok(None);
        };
        match hit.payload.get(MARKER_KEY).and_then(Value::as_str) {
            Some(text) => serde_json::from_str(text)
                .map(Some)
                .map_err(|e| Error::invalid(format!("the commit marker `{name}` is damaged"), e)),
            None => Ok(None),
        }
    }

    /// Every marker, by name.
    pub async fn all(&self) -> Result<Vec<(String, Value)>> {
        if self.backend.vector_names().await?.is_none() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for hit in self.backend.scroll(&Plan::default(), usize::MAX).await? {
            let name = hit.payload.get(NAME_KEY).and_then(Value::as_str);
            let text = hit.payload.get(MARKER_KEY).and_then(Value::as_str);
            if let (Some(name), Some(text)) = (name, text) {
                let value = serde_json::from_str(text).map_err(|e| {
                    Error::invalid(format!("the commit marker `{name}` is damaged"), e)
                })?;
                out.push((name.to_string(), value));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Writes the marker `name` (one point upsert).
    pub async fn set(&self, name: &str, value: &Value) -> Result<()> {
        self.ensure().await?;
        let mut payload = Metadata::new();
        payload.insert(NAME_KEY.into(), name.into());
        payload.insert(MARKER_KEY.into(), value.to_string().into());
        let point = Point {
            id: marker_id(name),
            vector: None,
            sparse: None,
            payload,
        };
        self.backend
            .upsert(&Using::default(), vec![point], 1, 1)
            .await
    }

    /// Removes the marker `name`.
    pub async fn remove(&self, name: &str) -> Result<()> {
        if self.backend.vector_names().await?.is_none() {
            return Ok(());
        }
        let plan = Plan {
            must: vec![Cond::HasId(vec![marker_id(name)])],
            ..Plan::default()
        };
        self.backend.delete(&plan).await
    }

    async fn ensure(&self) -> Result<()> {
        if self.backend.vector_names().await?.is_none() {
            self.backend
                .create(&CreateSpec {
                    dense: None,
                    sparse: None,
                    distance: Distance::Cosine,
                    keyword_indexes: Vec::new(),
                    integer_indexes: Vec::new(),
                })
                .await?;
        }
        Ok(())
    }
}

/// A stable point id for a name: a UUID (version 8) of its SHA-256.
pub(crate) fn marker_id(name: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("ragloom:{name}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_sees_its_own_generation_and_readers_the_committed_one() {
        let r = Generation::read(3);
        let w = Generation::write(3);
        assert_eq!((r.view(), w.view()), (3, 4));
        assert!(r.writing().is_err());
        assert_eq!(w.writing().ok(), Some(4));
        let plan = w.visible_plan("g", "d");
        assert_eq!(plan.must, vec![Generation::up_to("g", 4)]);
        assert_eq!(plan.must_not, vec![Generation::up_to("d", 4)]);
        let live = w.committed_live_plan("g", "d");
        assert_eq!(live.must, vec![Generation::up_to("g", 3)]);
        assert_eq!(w.own_plan("g").must, vec![Cond::Integer("g".into(), 4)]);
    }

    #[test]
    fn marker_ids_are_stable_uuids() {
        assert_eq!(marker_id("a"), marker_id("a"));
        assert_ne!(marker_id("a"), marker_id("b"));
        assert!(uuid::Uuid::parse_str(&marker_id("a")).is_ok());
    }
}

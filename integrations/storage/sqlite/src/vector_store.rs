//! `SqliteVectorStore`: embeddings in the `vectors` table. A query scans the
//! rows from the file; a second query of the same commit builds an
//! in-memory `SimpleVectorStore` that later ones reuse until a commit changes them.

use crate::db::{Db, Scope};
use async_trait::async_trait;
use ragloom_core::embeddings::SimilarityMode;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::{Metadata, Node, NodeRelationship, RelatedNodeInfo};
use ragloom_core::vector_stores::utils::metadata_dict_without_content;
use ragloom_core::vector_stores::{
    ExactSearch, MetadataFilters, SimpleVectorStore, VectorStore, VectorStoreQuery,
    VectorStoreQueryMode, VectorStoreQueryResult, check_embeddings, delete_selection, matches,
};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

/// The vectors of a [`crate::SqliteStore`]. Node text stays in the docstore
/// (`stores_text` is false), so it is kept once.
#[derive(Clone, Debug)]
pub struct SqliteVectorStore {
    pub(crate) db: Arc<Db>,
    pub(crate) scope: Scope,
    pub(crate) cache: VectorCache,
}

/// The vectors in memory, with the generation they were read at.
pub(crate) type VectorCache = Arc<Mutex<Cached>>;

/// Where a query starts (see `SqliteVectorStore::read_state`).
enum State {
    Cached(Arc<SimpleVectorStore>),
    Rows(i64, Vec<Node>),
    Scanned(Vec<(f32, String)>),
}

/// What the store remembers between queries.
#[derive(Debug, Default)]
pub(crate) struct Cached {
    /// The vectors in memory and the generation they hold.
    store: Option<(i64, Arc<SimpleVectorStore>)>,
    /// The generation the last query scanned from the file: a second query
    /// of it builds `store` (a process asking once, as the command line
    /// does, never holds every vector).
    scanned: Option<i64>,
    /// The vector index file mapped for queries (see [`crate::ann`]).
    view: crate::ann::SharedView,
    /// A file that failed to open, not tried again by this store.
    unreadable: Option<String>,
}

const GENERATION_KEY: &str = "vectors_generation";

fn generation(conn: &Connection) -> rusqlite::Result<i64> {
    crate::keyword::meta_i64(conn, GENERATION_KEY)
}

/// Marks the vectors changed, inside the write's own transaction.
fn bump_generation(conn: &Connection) -> rusqlite::Result<()> {
    crate::keyword::set_meta(conn, GENERATION_KEY, generation(conn)? + 1)
}

pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn from_blob(b: &[u8]) -> Vec<f32> {
    let mut v = Vec::new();
    from_blob_into(b, &mut v);
    v
}

/// [`from_blob`] into `out` (cleared first), reusing its allocation.
pub(crate) fn from_blob_into(b: &[u8], out: &mut Vec<f32>) {
    out.clear();
    out.extend(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
}

impl SqliteVectorStore {
    fn check(&self, conn: &Connection, nodes: &[Node]) -> Result<()> {
        let stored: Option<usize> = conn
            .query_row("SELECT length(embedding) FROM vectors LIMIT 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .map_err(|e| self.db.err("reading", e))?
            .map(|bytes| bytes as usize / 4);
        check_embeddings(nodes, stored)
    }

    /// After a write of its own (outside a transaction, which maintains the
    /// vector index at its commit): the vector index brought up to it when due.
    async fn committed<R>(&self, out: Result<R>) -> Result<R> {
        if out.is_ok() && matches!(self.scope, Scope::Committed) {
            crate::ann::after_commit(&self.db).await;
        }
        out
    }

    /// A row as a node carrying what a filter reads: its metadata and source document.
    fn row_node(&self, id: String, ref_doc_id: Option<String>, metadata: &str) -> Result<Node> {
        let metadata: Metadata = serde_json::from_str(metadata)
            .map_err(|e| Error::corrupt(&self.db.path, format!("vector `{id}` metadata: {e}")))?;
        let mut node = Node::text_node("").with_id(id).with_metadata_map(metadata);
        if let Some(doc) = ref_doc_id {
            node = node.with_relationship(NodeRelationship::Source, RelatedNodeInfo::new(doc));
        }
        Ok(node)
    }

    /// Whether the row `row` passes `filters`, judged as [`Self::matching_ids`] judges.
    fn row_matches(&self, conn: &Connection, row: i64, filters: &MetadataFilters) -> Result<bool> {
        let mut stmt = conn
            .prepare_cached("SELECT node_id, ref_doc_id, metadata FROM vectors WHERE rowid = ?1")
            .map_err(|e| self.db.err("reading vectors", e))?;
        let found = stmt
            .query_row(params![row], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .optional()
            .map_err(|e| self.db.err("reading vectors", e))?;
        match found {
            None => Ok(false),
            Some((id, doc, metadata)) => {
                let node = self.row_node(id, doc, &metadata)?;
                Ok(matches(filters, &metadata_dict_without_content(&node)))
            }
        }
    }

    /// The `top_k` rows nearest `query` among those passing `filters`, read
    /// from the file; a row's vector is decoded only once its metadata passed.
    fn scan_filtered(
        &self,
        conn: &Connection,
        query: &[f32],
        top_k: usize,
        filters: &MetadataFilters,
    ) -> Result<Vec<(f32, String)>> {
        let mut search = ExactSearch::new(query, SimilarityMode::Cosine, top_k);
        let mut stmt = conn
            .prepare_cached(
                "SELECT node_id, ref_doc_id, metadata, embedding FROM vectors ORDER BY rowid",
            )
            .map_err(|e| self.db.err("reading vectors", e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| self.db.err("reading vectors", e))?;
        let mut values = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.db.err("reading vectors", e))? {
            let read = |i| {
                row.get::<_, String>(i)
                    .map_err(|e| self.db.err("reading vectors", e))
            };
            let (id, metadata) = (read(0)?, read(2)?);
            let doc: Option<String> = row.get(1).map_err(|e| self.db.err("reading vectors", e))?;
            let node = self.row_node(id, doc, &metadata)?;
            if !matches(filters, &metadata_dict_without_content(&node)) {
                continue;
            }
            let blob = row
                .get_ref(3)
                .and_then(|v| v.as_blob().map_err(Into::into))
                .map_err(|e| self.db.err("reading vectors", e))?;
            from_blob_into(blob, &mut values);
            search.push(node.id_, &values)?;
        }
        Ok(search.finish())
    }

    /// The mapped vector index `state` names, shared by this store's
    /// queries; `None` (the rows are scanned) if it cannot be opened.
    fn view(&self, state: &crate::ann::AnnState) -> Option<Arc<usearch::Index>> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(crate::ann::View(file, index)) = &cache.view
            && *file == state.file
        {
            return Some(Arc::clone(index));
        }
        if cache.unreadable.as_deref() == Some(state.file.as_str()) {
            return None;
        }
        match crate::ann::open_view(&self.db.path, state) {
            Ok(index) => {
                let index = Arc::new(index);
                cache.view = Some(crate::ann::View(state.file.clone(), Arc::clone(&index)));
                Some(index)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the vector index is unreadable; scanning the rows");
                cache.unreadable = Some(state.file.clone());
                None
            }
        }
    }

    /// The answer of the vector index, when the store keeps one and the
    /// query is one it answers: `None` sends the query the usual way.
    fn ann_query(&self, query: &VectorStoreQuery) -> Result<Option<Vec<(f32, String)>>> {
        let Some(embedding) = query.query_embedding.as_deref() else {
            return Ok(None);
        };
        if query.mode != VectorStoreQueryMode::Default
            || query.node_ids.is_some()
            || query.doc_ids.is_some()
            || query.similarity_top_k == 0
        {
            return Ok(None);
        }
        self.db.read(&self.scope, |c| {
            let Some(state) =
                crate::ann::AnnState::read(c).map_err(|e| self.db.err("reading", e))?
            else {
                return Ok(None);
            };
            let Some(index) = self.view(&state) else {
                return Ok(None);
            };
            let keep = |conn: &Connection, row: i64| match &query.filters {
                Some(f) => self.row_matches(conn, row, f),
                None => Ok(true),
            };
            let found = crate::ann::AnnQuery {
                index: &index,
                state: &state,
                query: embedding,
                top_k: query.similarity_top_k,
                keep: query.filters.as_ref().map(|_| &keep as _),
            }
            .run(c)?;
            match (found, &query.filters) {
                (Some(found), _) => Ok(Some(found)),
                (None, Some(f)) => self
                    .scan_filtered(c, embedding, query.similarity_top_k, f)
                    .map(Some),
                (None, None) => Ok(None),
            }
        })
    }

    /// Every stored vector, as nodes carrying only what a query needs
    /// (without their embeddings when `embeddings` is false).
    fn load(&self, conn: &Connection, embeddings: bool) -> Result<Vec<Node>> {
        let mut stmt = conn
            .prepare_cached(
                "SELECT node_id, ref_doc_id, CASE WHEN ?1 THEN embedding ELSE X'' END, metadata
                 FROM vectors ORDER BY rowid",
            )
            .map_err(|e| self.db.err("reading vectors", e))?;
        let rows = stmt
            .query_map(params![embeddings], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(|e| self.db.err("reading vectors", e))?;
        let mut nodes = Vec::new();
        for row in rows {
            let (id, ref_doc_id, blob, metadata) =
                row.map_err(|e| self.db.err("reading vectors", e))?;
            let mut node = self.row_node(id, ref_doc_id, &metadata)?;
            if embeddings {
                node = node.with_embedding(from_blob(&blob));
            }
            nodes.push(node);
        }
        Ok(nodes)
    }

    /// Every stored vector with its node's metadata, as an in-memory
    /// `SimpleVectorStore` (which persists in LlamaIndex's file layout): an
    /// index exported for Python LlamaIndex, or moved to another store.
    pub async fn to_simple_vector_store(&self) -> Result<Arc<SimpleVectorStore>> {
        self.engine().await
    }

    /// The vector store a query runs on, for the state this store sees: built
    /// once and rebuilt only when a write bumped the generation (inside an open
    /// transaction its own writes bump it too, in its own cache).
    async fn engine(&self) -> Result<Arc<SimpleVectorStore>> {
        match self.read_state(None)? {
            State::Cached(store) => Ok(store),
            State::Rows(now, nodes) => self.build(now, nodes).await,
            State::Scanned(_) => Err(Error::Other("a scan ran where none was asked for".into())),
        }
    }

    /// What a query starts from: the in-memory store of the state this
    /// store sees, else, with `scan` and on the first query of this state,
    /// the scan's result over the file's rows, else the rows to build it from.
    fn read_state(&self, scan: Option<(&[f32], usize)>) -> Result<State> {
        // The generation and the rows are read in one snapshot, so they agree.
        self.db.read(&self.scope, |c| {
            let now = generation(c).map_err(|e| self.db.err("reading", e))?;
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((_, store)) = cache.store.as_ref().filter(|(g, _)| *g == now) {
                return Ok(State::Cached(Arc::clone(store)));
            }
            match scan {
                Some((query, top_k)) if cache.scanned != Some(now) => {
                    // The vectors of an older commit are not kept meanwhile.
                    (cache.scanned, cache.store) = (Some(now), None);
                    drop(cache);
                    Ok(State::Scanned(self.scan(c, query, top_k)?))
                }
                _ => {
                    drop(cache);
                    Ok(State::Rows(now, self.load(c, true)?))
                }
            }
        })
    }

    /// The in-memory store of `nodes`, kept for later queries of generation `now`.
    async fn build(&self, now: i64, nodes: Vec<Node>) -> Result<Arc<SimpleVectorStore>> {
        let store = SimpleVectorStore::new();
        store.add(&nodes).await?;
        let store = Arc::new(store);
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .store = Some((now, Arc::clone(&store)));
        Ok(store)
    }

    /// The `top_k` rows nearest `query`, read one by one from the file and
    /// ranked as the in-memory store ranks them.
    fn scan(&self, conn: &Connection, query: &[f32], top_k: usize) -> Result<Vec<(f32, String)>> {
        let mut search = ExactSearch::new(query, SimilarityMode::Cosine, top_k);
        let mut stmt = conn
            .prepare_cached("SELECT node_id, embedding FROM vectors ORDER BY rowid")
            .map_err(|e| self.db.err("reading vectors", e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| self.db.err("reading vectors", e))?;
        let mut row_values = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.db.err("reading vectors", e))? {
            let id: String = row.get(0).map_err(|e| self.db.err("reading vectors", e))?;
            let blob = row
                .get_ref(1)
                .and_then(|v| v.as_blob().map_err(Into::into))
                .map_err(|e| self.db.err("reading vectors", e))?;
            from_blob_into(blob, &mut row_values);
            search.push(id, &row_values)?;
        }
        Ok(search.finish())
    }

    /// Ids of the stored vectors that match `filters`, judged on the same
    /// metadata a query filters on (the source document's ids included).
    fn matching_ids(&self, conn: &Connection, filters: &MetadataFilters) -> Result<Vec<String>> {
        Ok(self
            .load(conn, false)?
            .into_iter()
            .filter(|n| matches(filters, &metadata_dict_without_content(n)))
            .map(|n| n.id_)
            .collect())
    }
}

#[async_trait]
impl VectorStore for SqliteVectorStore {
    fn stores_text(&self) -> bool {
        false
    }

    async fn add(&self, nodes: &[Node]) -> Result<Vec<String>> {
        let out = self.db.write(&self.scope, |c| {
            self.check(c, nodes)?;
            let mut stmt = c
                .prepare_cached(
                    "INSERT INTO vectors (node_id, ref_doc_id, embedding, metadata) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (node_id) DO UPDATE SET ref_doc_id = excluded.ref_doc_id,
                       embedding = excluded.embedding, metadata = excluded.metadata",
                )
                .map_err(|e| self.db.err("writing vectors", e))?;
            for node in nodes {
                let embedding = node.embedding.as_deref().unwrap_or_default();
                let metadata = serde_json::to_string(&Value::Object(node.metadata.clone()))?;
                stmt.execute(params![node.id_, node.ref_doc_id(), to_blob(embedding), metadata])
                    .map_err(|e| self.db.err("writing vectors", e))?;
            }
            bump_generation(c).map_err(|e| self.db.err("writing vectors", e))?;
            Ok(nodes.iter().map(|n| n.id_.clone()).collect())
        });
        self.committed(out).await
    }

    async fn delete(&self, ref_doc_id: &str) -> Result<()> {
        let out = self.db.write(&self.scope, |c| {
            c.execute(
                "DELETE FROM vectors WHERE ref_doc_id = ?1",
                params![ref_doc_id],
            )
            .and_then(|_| bump_generation(c))
            .map_err(|e| self.db.err("deleting vectors", e))
        });
        self.committed(out).await
    }

    /// Deletes the listed nodes that also match `filters`, read as
    /// [`ragloom_core::vector_stores::delete_selection`] reads them.
    async fn delete_nodes(
        &self,
        node_ids: Option<&[String]>,
        filters: Option<&MetadataFilters>,
    ) -> Result<()> {
        let Some(sel) = delete_selection(node_ids, filters)? else {
            return Ok(());
        };
        let out = self.db.write(&self.scope, |c| {
            let doomed: Vec<String> = match (sel.filters, sel.node_ids) {
                (Some(f), listed) => {
                    let listed: Option<HashSet<&str>> =
                        listed.map(|ids| ids.iter().map(String::as_str).collect());
                    self.matching_ids(c, f)?
                        .into_iter()
                        .filter(|id| listed.as_ref().is_none_or(|l| l.contains(id.as_str())))
                        .collect()
                }
                (None, listed) => listed.unwrap_or_default().to_vec(),
            };
            let mut stmt = c
                .prepare_cached("DELETE FROM vectors WHERE node_id = ?1")
                .map_err(|e| self.db.err("deleting vectors", e))?;
            for id in &doomed {
                stmt.execute(params![id])
                    .map_err(|e| self.db.err("deleting vectors", e))?;
            }
            bump_generation(c).map_err(|e| self.db.err("deleting vectors", e))
        });
        self.committed(out).await
    }

    async fn query(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        if let Some(found) = self.ann_query(query)? {
            let (similarities, ids) = found.into_iter().unzip();
            return Ok(VectorStoreQueryResult {
                nodes: None,
                similarities,
                ids,
            });
        }
        let plain = query.mode == VectorStoreQueryMode::Default
            && query.filters.is_none()
            && query.node_ids.is_none()
            && query.doc_ids.is_none();
        let scan = match (&query.query_embedding, plain) {
            (Some(e), true) => Some((e.as_slice(), query.similarity_top_k)),
            _ => None,
        };
        let store = match self.read_state(scan)? {
            State::Cached(store) => store,
            State::Rows(now, nodes) => self.build(now, nodes).await?,
            State::Scanned(found) => {
                let (similarities, ids) = found.into_iter().unzip();
                return Ok(VectorStoreQueryResult {
                    nodes: None,
                    similarities,
                    ids,
                });
            }
        };
        store.query(query).await
    }

    async fn clear(&self) -> Result<()> {
        let out = self.db.write(&self.scope, |c| {
            c.execute("DELETE FROM vectors", [])
                .and_then(|_| bump_generation(c))
                .map_err(|e| self.db.err("clearing vectors", e))
        });
        self.committed(out).await
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

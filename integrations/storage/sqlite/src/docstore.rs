//! `SqliteDocumentStore`: LlamaIndex's document store over the `kv` table,
//! keeping the keyword index in step with the stored nodes in the same write.

use crate::db::{Db, Scope};
use crate::keyword;
use crate::kv::{SqliteKv, Table, encode_json};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::retrievers::Bm25Tokenizer;
use ragloom_core::schema::Node;
use ragloom_core::storage::RefDocInfo;
use ragloom_core::storage::docstore::{DocStore, KvDocumentStore, doc_to_json};
use ragloom_core::storage::kvstore::KvTable;
use rayon::prelude::*;
use rusqlite::types::Value as SqlValue;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Nodes made ready to write ([`SqliteDocumentStore::prepare`]), with each
/// one's stored JSON and hash, and their terms.
#[derive(Debug)]
pub struct PreparedNodes {
    nodes: Vec<Node>,
    encoded: Encoded,
}

impl PreparedNodes {
    /// The nodes, as they will be written.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
}

/// Each node's stored JSON (`None` without its text) and hash, and the
/// nodes' terms.
#[derive(Debug)]
struct Encoded {
    values: Vec<(Option<SqlValue>, String)>,
    counted: keyword::Counted,
}

/// The nodes of a [`crate::SqliteStore`], with the semantics (and JSON) of
/// `SimpleDocumentStore`. Every node stored with its text is also in the
/// keyword index that [`crate::SqliteBm25Retriever`] reads, written in the
/// same SQLite transaction, so the two never disagree.
#[derive(Debug)]
pub struct SqliteDocumentStore {
    kv: KvDocumentStore<SqliteKv>,
    db: Arc<Db>,
    scope: Scope,
    tokenizer: Bm25Tokenizer,
}

impl SqliteDocumentStore {
    pub(crate) fn new(db: Arc<Db>, scope: Scope) -> Self {
        let backend = Arc::new(SqliteKv {
            db: Arc::clone(&db),
            scope: scope.clone(),
        });
        Self {
            kv: KvDocumentStore::from_backend(backend, None),
            db,
            scope,
            tokenizer: Bm25Tokenizer::new(),
        }
    }

    /// The key-value document store underneath (its `try_` methods, its collections).
    pub fn kv(&self) -> &KvDocumentStore<SqliteKv> {
        &self.kv
    }

    /// Runs `f` on the `kv` table in one write, then drops from the keyword
    /// index each of `candidates` that is no longer a stored node.
    fn write_then_unindex<R>(
        &self,
        candidates: impl FnOnce(&mut dyn KvTable) -> Result<Vec<String>>,
        f: impl FnOnce(&mut dyn KvTable) -> Result<R>,
    ) -> Result<R> {
        let db = &self.db;
        db.write(&self.scope, |conn| {
            let mut table = Table { conn, db };
            let mut ids = candidates(&mut table)?;
            let out = f(&mut table)?;
            let collection = self.kv.node_collection();
            let mut gone = Vec::with_capacity(ids.len());
            for id in ids.drain(..) {
                if !table.contains(&id, collection)? {
                    gone.push(id);
                }
            }
            keyword::remove(&db.path, conn, &gone)?;
            Ok(out)
        })
    }

    /// What adding `nodes` costs before the write, on every core: each
    /// node's JSON, written and compressed as stored, its hash, and its
    /// terms for the keyword index. The nodes are kept with it, so what is
    /// written is what was prepared. A program writing batches in turn
    /// prepares the next while the last one is written
    /// ([`add_prepared_nodes`](Self::add_prepared_nodes)).
    pub fn prepare(&self, nodes: Vec<Node>, store_text: bool) -> Result<PreparedNodes> {
        let encoded = self.encode(&nodes, store_text)?;
        Ok(PreparedNodes { nodes, encoded })
    }

    /// [`DocStore::add_documents`] of [`prepared`](Self::prepare) nodes, in
    /// one write: only the lookups and inserts are left.
    pub fn add_prepared_nodes(&self, prepared: PreparedNodes, allow_update: bool) -> Result<()> {
        self.write_encoded(&prepared.nodes, prepared.encoded, allow_update)
    }

    fn encode(&self, nodes: &[Node], store_text: bool) -> Result<Encoded> {
        let values = nodes
            .par_iter()
            .map(|n| {
                let json = store_text.then(|| encode_json(&doc_to_json(n)));
                Ok((json.transpose()?, n.hash()))
            })
            .collect::<Result<_>>()?;
        Ok(Encoded {
            values,
            counted: keyword::count_terms(&self.tokenizer, if store_text { nodes } else { &[] }),
        })
    }

    fn write_encoded(&self, nodes: &[Node], encoded: Encoded, allow_update: bool) -> Result<()> {
        let db = &self.db;
        let collection = self.kv.node_collection();
        db.write(&self.scope, |conn| {
            self.kv.add_prepared_locked(
                &mut Table { conn, db },
                nodes,
                encoded.values,
                allow_update,
                |_, pairs| {
                    let table = Table { conn, db };
                    for (key, value) in pairs {
                        table.insert(&key, value, collection)?;
                    }
                    Ok(())
                },
            )?;
            keyword::add(&db.path, conn, &encoded.counted)
        })
    }

    /// Like [`DocStore::delete_document`] with Python's `raise_error=False`.
    pub fn try_delete_document(&self, doc_id: &str) -> Result<bool> {
        self.write_then_unindex(
            |c| {
                let mut ids = vec![doc_id.to_string()];
                ids.extend(self.kv.ref_doc_id_locked(c, doc_id)?);
                Ok(ids)
            },
            |c| self.kv.delete_locked(c, doc_id),
        )
    }

    /// Like [`DocStore::delete_ref_doc`] with Python's `raise_error=False`.
    pub fn try_delete_ref_doc(&self, ref_doc_id: &str) -> Result<bool> {
        self.write_then_unindex(
            |c| {
                let mut ids = vec![ref_doc_id.to_string()];
                if let Some(info) = self.kv.ref_doc_info_locked(c, ref_doc_id)? {
                    ids.extend(info.node_ids);
                }
                Ok(ids)
            },
            |c| self.kv.delete_ref_doc_locked(c, ref_doc_id),
        )
    }
}

#[async_trait]
impl DocStore for SqliteDocumentStore {
    async fn docs(&self) -> Result<Vec<Node>> {
        self.kv.docs().await
    }

    async fn add_documents(
        &self,
        nodes: &[Node],
        allow_update: bool,
        store_text: bool,
    ) -> Result<()> {
        self.write_encoded(nodes, self.encode(nodes, store_text)?, allow_update)
    }

    async fn get_document(&self, doc_id: &str) -> Result<Option<Node>> {
        self.kv.get_document(doc_id).await
    }

    async fn get_node(&self, node_id: &str) -> Result<Node> {
        self.kv.get_node(node_id).await
    }

    async fn document_exists(&self, doc_id: &str) -> Result<bool> {
        self.kv.document_exists(doc_id).await
    }

    async fn delete_document(&self, doc_id: &str) -> Result<()> {
        if self.try_delete_document(doc_id)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("doc_id {doc_id} in the docstore")))
        }
    }

    async fn delete_ref_doc(&self, ref_doc_id: &str) -> Result<()> {
        if self.try_delete_ref_doc(ref_doc_id)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!(
                "ref_doc_id {ref_doc_id} in the docstore"
            )))
        }
    }

    async fn get_ref_doc_info(&self, ref_doc_id: &str) -> Result<Option<RefDocInfo>> {
        self.kv.get_ref_doc_info(ref_doc_id).await
    }

    async fn get_all_ref_doc_info(&self) -> Result<BTreeMap<String, RefDocInfo>> {
        self.kv.get_all_ref_doc_info().await
    }

    async fn set_document_hash(&self, doc_id: &str, hash: &str) -> Result<()> {
        self.kv.set_document_hash(doc_id, hash).await
    }

    async fn get_document_hash(&self, doc_id: &str) -> Result<Option<String>> {
        self.kv.get_document_hash(doc_id).await
    }

    async fn get_all_document_hashes(&self) -> Result<BTreeMap<String, String>> {
        self.kv.get_all_document_hashes().await
    }
}

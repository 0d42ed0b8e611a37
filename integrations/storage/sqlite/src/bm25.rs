//! `SqliteBm25Retriever`: keyword retrieval over the file's keyword index,
//! reading only the query's postings and the best nodes, never the whole index.

use crate::db::{Db, Scope};
use crate::keyword::{self, Params};
use crate::kv::Table;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::retrievers::bm25::{DEFAULT_B, DEFAULT_K1, DEFAULT_SIMILARITY_TOP_K};
use ragloom_core::retrievers::{Bm25Tokenizer, Retriever};
use ragloom_core::schema::{NodeWithScore, QueryBundle};
use ragloom_core::storage::docstore::{
    DEFAULT_COLLECTION_DATA_SUFFIX, DEFAULT_NAMESPACE, json_to_doc,
};
use ragloom_core::storage::kvstore::KvTable;
use ragloom_core::vector_stores::{MetadataFilters, matches};
use std::sync::Arc;

/// BM25 over every node of a [`crate::SqliteStore`], scored as
/// `BM25Retriever` scores the same nodes (same tokenizer, same bm25s
/// formula, same `k1` and `b`), so the ranking is the same. Each query reads
/// the last commit in one snapshot: it never sees half of an ingest.
#[derive(Clone, Debug)]
pub struct SqliteBm25Retriever {
    pub(crate) db: Arc<Db>,
    pub(crate) tokenizer: Bm25Tokenizer,
    pub(crate) similarity_top_k: usize,
    pub(crate) params: Params,
    pub(crate) filters: Option<MetadataFilters>,
}

impl SqliteBm25Retriever {
    pub(crate) fn new(db: Arc<Db>) -> Self {
        Self {
            db,
            tokenizer: Bm25Tokenizer::new(),
            similarity_top_k: DEFAULT_SIMILARITY_TOP_K,
            params: Params {
                k1: DEFAULT_K1,
                b: DEFAULT_B,
            },
            filters: None,
        }
    }

    /// How many nodes to return (default 2, as LlamaIndex).
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.similarity_top_k = k;
        self
    }

    /// Only nodes whose metadata match `filters` are returned. Scores stay
    /// those of the whole index (its term statistics); nodes are read in
    /// score order until `top_k` of them match.
    pub fn filters(mut self, filters: MetadataFilters) -> Self {
        self.filters = Some(filters);
        self
    }

    /// BM25's `k1` and `b` (default 1.5 and 0.75, as bm25s).
    pub fn params(mut self, k1: f64, b: f64) -> Result<Self> {
        if !k1.is_finite() || k1 < 0.0 || !b.is_finite() {
            return Err(Error::InvalidInput(format!(
                "k1 ({k1}) must be a non-negative number and b ({b}) a number"
            )));
        }
        self.params = Params { k1, b };
        Ok(self)
    }

    /// The best nodes for `query`, best first, with their BM25 scores.
    pub fn retrieve_str(&self, query: &str) -> Result<Vec<NodeWithScore>> {
        self.retrieve_terms(&self.tokenizer.tokenize(query))
    }

    fn retrieve_terms(&self, tokens: &[String]) -> Result<Vec<NodeWithScore>> {
        let collection = format!("{DEFAULT_NAMESPACE}{DEFAULT_COLLECTION_DATA_SUFFIX}");
        let db = &self.db;
        db.read(&Scope::Committed, |conn| {
            let k = match self.filters {
                Some(_) => usize::MAX,
                None => self.similarity_top_k,
            };
            let hits = keyword::search(&db.path, conn, tokens, self.params, k)?;
            // The nodes are read in the same snapshot as the postings, through
            // the docstore's own table, so a hit is never a node since deleted.
            let mut table = Table { conn, db };
            let mut out = Vec::new();
            for (id, score) in hits {
                if out.len() == self.similarity_top_k {
                    break;
                }
                let stored = table.get(&id, &collection)?.ok_or_else(|| {
                    Error::corrupt(&db.path, format!("indexed node `{id}` is not stored"))
                })?;
                let node = json_to_doc(&stored)
                    .map_err(|m| Error::corrupt(&db.path, format!("node `{id}`: {m}")))?;
                if self
                    .filters
                    .as_ref()
                    .is_some_and(|f| !matches(f, &node.metadata))
                {
                    continue;
                }
                out.push(NodeWithScore::new(node, Some(score)));
            }
            Ok(out)
        })
    }
}

#[async_trait]
impl Retriever for SqliteBm25Retriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let _span = tracing::info_span!("retrieve", retriever = "sqlite_bm25").entered();
        self.retrieve_terms(&self.tokenizer.query_terms(query))
    }
}

//! `BM25Retriever`: keyword retrieval with Okapi BM25 over an inverted index,
//! scoring as LlamaIndex's BM25 retriever (bm25s, "lucene" variant) scores.
//!
//! Each (term, node) weight is computed once when the index is built, exactly
//! as bm25s computes it: `idf = ln(1 + (N - df + 0.5) / (df + 0.5))` kept as
//! `f32`, times `tf / (k1 * (1 - b + b * dl / avgdl) + tf)` in `f64`, stored as
//! `f32`. A query adds, in `f32`, the weights of its terms (a repeated query
//! term counts again, as in bm25s) for the nodes that contain them, so scores
//! agree with Python to the last bit in practice.

use super::Retriever;
use super::tokenize::Bm25Tokenizer;
use crate::error::{Error, Result};
use crate::schema::{MetadataMode, Node, NodeWithScore, QueryBundle};
use crate::storage::DocStore;
use crate::vector_stores::{MetadataFilters, matches};
use async_trait::async_trait;
use rayon::prelude::*;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

mod persist;

/// LlamaIndex's `DEFAULT_SIMILARITY_TOP_K`.
pub const DEFAULT_SIMILARITY_TOP_K: usize = 2;
/// bm25s's default `k1`.
pub const DEFAULT_K1: f64 = 1.5;
/// bm25s's default `b`.
pub const DEFAULT_B: f64 = 0.75;

/// Options of a [`BM25Retriever`] (LlamaIndex `BM25Retriever.from_defaults` kwargs).
#[derive(Clone, Debug)]
pub struct BM25RetrieverBuilder {
    similarity_top_k: usize,
    tokenizer: Bm25Tokenizer,
    filters: Option<MetadataFilters>,
    k1: f64,
    b: f64,
}

impl Default for BM25RetrieverBuilder {
    fn default() -> Self {
        Self {
            similarity_top_k: DEFAULT_SIMILARITY_TOP_K,
            tokenizer: Bm25Tokenizer::new(),
            filters: None,
            k1: DEFAULT_K1,
            b: DEFAULT_B,
        }
    }
}

impl BM25RetrieverBuilder {
    /// How many nodes a query returns at most (default 2).
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.similarity_top_k = k;
        self
    }

    /// The tokenizer for nodes and queries (default: English stopwords and stemming).
    pub fn tokenizer(mut self, tokenizer: Bm25Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Turns stemming off (LlamaIndex `skip_stemming=True`).
    pub fn skip_stemming(mut self, skip: bool) -> Self {
        self.tokenizer = self.tokenizer.stemming(!skip);
        self
    }

    /// Only nodes whose metadata match `filters` are ever returned.
    pub fn filters(mut self, filters: MetadataFilters) -> Self {
        self.filters = Some(filters);
        self
    }

    /// BM25's term-frequency saturation (default 1.5).
    pub fn k1(mut self, k1: f64) -> Self {
        self.k1 = k1;
        self
    }

    /// BM25's length normalisation (default 0.75).
    pub fn b(mut self, b: f64) -> Self {
        self.b = b;
        self
    }

    /// Indexes `nodes` (their text with embed-mode metadata, as LlamaIndex).
    ///
    /// Errors when there are no nodes, or when filters leave none, as LlamaIndex does.
    pub fn build(self, nodes: Vec<Node>) -> Result<BM25Retriever> {
        if nodes.is_empty() {
            return Err(Error::InvalidInput(
                "BM25Retriever: no nodes to index; add nodes first".into(),
            ));
        }
        if !self.k1.is_finite() || self.k1 < 0.0 || !self.b.is_finite() {
            return Err(Error::InvalidInput(format!(
                "BM25Retriever: k1 ({}) must be a non-negative number and b ({}) a number",
                self.k1, self.b
            )));
        }
        let allowed: Option<Vec<bool>> = self
            .filters
            .as_ref()
            .map(|f| nodes.iter().map(|n| matches(f, &n.metadata)).collect());
        if allowed.as_ref().is_some_and(|a| !a.iter().any(|&x| x)) {
            return Err(Error::InvalidInput(
                "BM25Retriever: the metadata filters leave no node".into(),
            ));
        }
        let tokenizer = self.tokenizer;
        let (vocab, docs) = tokenize_corpus(&tokenizer, &nodes);
        let postings = build_postings(vocab.len(), &docs, self.k1, self.b);
        // LlamaIndex lowers top_k to the number of nodes.
        let similarity_top_k = self.similarity_top_k.min(nodes.len());
        Ok(BM25Retriever {
            nodes,
            vocab,
            postings,
            tokenizer,
            similarity_top_k,
            allowed,
            k1: self.k1,
            b: self.b,
        })
    }
}

/// For each term id, the nodes containing it with their precomputed BM25 weight.
type Postings = Vec<Vec<(u32, f32)>>;

/// The vocabulary (stem → term id) and each node's term ids. Words are split
/// in parallel and each distinct word is stemmed once.
fn tokenize_corpus(
    tokenizer: &Bm25Tokenizer,
    nodes: &[Node],
) -> (HashMap<String, u32>, Vec<Vec<u32>>) {
    let words: Vec<Vec<String>> = nodes
        .par_iter()
        .map(|n| tokenizer.words(&n.get_content(MetadataMode::Embed)))
        .collect();
    let mut word_ids: HashMap<&str, u32> = HashMap::new();
    let mut unique: Vec<&str> = Vec::new();
    let doc_words: Vec<Vec<u32>> = words
        .iter()
        .map(|doc| {
            doc.iter()
                .map(|w| {
                    *word_ids.entry(w.as_str()).or_insert_with(|| {
                        unique.push(w.as_str());
                        (unique.len() - 1) as u32
                    })
                })
                .collect()
        })
        .collect();
    let stems: Vec<String> = unique.par_iter().map(|w| tokenizer.stem(w)).collect();
    let mut vocab: HashMap<String, u32> = HashMap::new();
    let word_to_term: Vec<u32> = stems
        .into_iter()
        .map(|s| {
            let next = vocab.len() as u32;
            *vocab.entry(s).or_insert(next)
        })
        .collect();
    let docs = doc_words
        .into_iter()
        .map(|d| d.into_iter().map(|w| word_to_term[w as usize]).collect())
        .collect();
    (vocab, docs)
}

fn build_postings(vocab_size: usize, docs: &[Vec<u32>], k1: f64, b: f64) -> Postings {
    let n_docs = docs.len() as f64;
    let total: usize = docs.iter().map(Vec::len).sum();
    let avg_len = total as f64 / n_docs;
    let mut postings: Postings = vec![Vec::new(); vocab_size];
    let mut lens: Vec<f64> = Vec::with_capacity(docs.len());
    let mut sorted: Vec<u32> = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        lens.push(doc.len() as f64);
        let idx = u32::try_from(i).unwrap_or(u32::MAX);
        sorted.clear();
        sorted.extend_from_slice(doc);
        sorted.sort_unstable();
        // Raw term counts for now; turned into weights once df is known.
        for run in sorted.chunk_by(|a, b| a == b) {
            if let Some(list) = postings.get_mut(run[0] as usize) {
                list.push((idx, run.len() as f32));
            }
        }
    }
    for list in postings.iter_mut() {
        let df = list.len() as f64;
        let idf = (1.0 + (n_docs - df + 0.5) / (df + 0.5)).ln() as f32;
        for (doc, w) in list.iter_mut() {
            let tf = f64::from(*w);
            let dl = lens.get(*doc as usize).copied().unwrap_or(0.0);
            let tfc = tf / (k1 * ((1.0 - b) + b * dl / avg_len) + tf);
            *w = (f64::from(idf) * tfc) as f32;
        }
    }
    postings
}

/// Ranks nodes for a query by Okapi BM25 (LlamaIndex `BM25Retriever`, from
/// `llama-index-retrievers-bm25`).
///
/// Only nodes that contain a query term are scored and returned, best first,
/// ties in the order the nodes were given. (Python also pads the result with
/// zero-score nodes up to `similarity_top_k`; those carry no signal and are
/// left out here.)
#[derive(Clone, Debug)]
pub struct BM25Retriever {
    nodes: Vec<Node>,
    vocab: HashMap<String, u32>,
    postings: Postings,
    tokenizer: Bm25Tokenizer,
    similarity_top_k: usize,
    allowed: Option<Vec<bool>>,
    /// The parameters the weights were computed with (persisted with them).
    k1: f64,
    b: f64,
}

impl BM25Retriever {
    /// A builder with LlamaIndex's defaults.
    pub fn builder() -> BM25RetrieverBuilder {
        BM25RetrieverBuilder::default()
    }

    /// Indexes `nodes` with LlamaIndex's defaults (`from_defaults(nodes=...)`).
    pub fn from_defaults(nodes: Vec<Node>, similarity_top_k: usize) -> Result<Self> {
        Self::builder()
            .similarity_top_k(similarity_top_k)
            .build(nodes)
    }

    /// Indexes every node of `docstore` (`from_defaults(docstore=...)`).
    pub async fn from_docstore(docstore: &dyn DocStore, similarity_top_k: usize) -> Result<Self> {
        Self::from_defaults(docstore.docs().await?, similarity_top_k)
    }

    /// The effective top k (never more than the number of nodes).
    pub fn similarity_top_k(&self) -> usize {
        self.similarity_top_k
    }

    /// How many nodes are indexed.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node is indexed (never true for a built retriever).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// How many distinct terms the index holds.
    pub fn vocabulary_size(&self) -> usize {
        self.vocab.len()
    }

    /// The BM25 score of every node containing a term of `query`, as
    /// `(node position, score)`, unordered.
    pub fn get_scores(&self, query: &str) -> Vec<(usize, f32)> {
        self.scores_of(&self.tokenizer.tokenize(query))
    }

    /// [`get_scores`](Self::get_scores) of a query already tokenized.
    fn scores_of(&self, terms: &[String]) -> Vec<(usize, f32)> {
        let lists: Vec<&Vec<(u32, f32)>> = terms
            .iter()
            .filter_map(|t| self.vocab.get(t))
            .filter_map(|&id| self.postings.get(id as usize))
            .collect();
        if lists.is_empty() {
            return Vec::new();
        }
        // A dense accumulator: cheaper than hashing when a common term touches
        // many nodes. Weights are positive, so 0.0 means "not touched yet".
        let mut acc = vec![0.0f32; self.nodes.len()];
        let mut touched: Vec<u32> = Vec::new();
        for list in lists {
            for &(doc, w) in list {
                if let Some(slot) = acc.get_mut(doc as usize) {
                    if *slot == 0.0 {
                        touched.push(doc);
                    }
                    *slot += w;
                }
            }
        }
        touched
            .into_iter()
            .map(|d| (d as usize, acc[d as usize]))
            .filter(|&(d, s)| {
                s > 0.0
                    && self
                        .allowed
                        .as_ref()
                        .is_none_or(|a| a.get(d).copied().unwrap_or(false))
            })
            .collect()
    }

    /// The best `similarity_top_k` nodes for `query`, best first.
    pub fn retrieve_str(&self, query: &str) -> Vec<NodeWithScore> {
        self.retrieve_terms(&self.tokenizer.tokenize(query))
    }

    fn retrieve_terms(&self, terms: &[String]) -> Vec<NodeWithScore> {
        top_k(self.scores_of(terms), self.similarity_top_k)
            .into_iter()
            .filter_map(|(d, s)| {
                self.nodes
                    .get(d)
                    .map(|n| NodeWithScore::new(n.clone(), Some(s)))
            })
            .collect()
    }
}

/// A scored position ordered best-first: higher score, then lower position.
#[derive(PartialEq)]
struct Ranked(f32, Reverse<usize>);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The `k` best of `scored`, best first, with a heap of at most `k` entries.
pub(crate) fn top_k(scored: Vec<(usize, f32)>, k: usize) -> Vec<(usize, f32)> {
    if k == 0 {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Reverse<Ranked>> = BinaryHeap::with_capacity(k + 1);
    for (d, s) in scored {
        let r = Ranked(s, Reverse(d));
        if heap.len() < k {
            heap.push(Reverse(r));
        } else if heap.peek().is_some_and(|Reverse(worst)| r > *worst) {
            heap.pop();
            heap.push(Reverse(r));
        }
    }
    let mut out: Vec<Ranked> = heap.into_iter().map(|Reverse(r)| r).collect();
    out.sort_by(|a, b| b.cmp(a));
    out.into_iter()
        .map(|Ranked(s, Reverse(d))| (d, s))
        .collect()
}

#[async_trait]
impl Retriever for BM25Retriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let _span = tracing::info_span!("retrieve", retriever = "bm25").entered();
        Ok(self.retrieve_terms(&self.tokenizer.query_terms(query)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn nodes(texts: &[&str]) -> Vec<Node> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Node::text_node(*t).with_id(format!("n{i}")))
            .collect()
    }

    #[test]
    fn ties_keep_input_order_and_top_k_bounds() {
        let r =
            BM25Retriever::from_defaults(nodes(&["apple pie", "apple pie", "pear"]), 5).unwrap();
        assert_eq!(r.similarity_top_k(), 3);
        let got = r.retrieve_str("apple");
        let ids: Vec<&str> = got.iter().map(|n| n.node_id()).collect();
        assert_eq!(ids, ["n0", "n1"]);
        assert_eq!(got[0].score, got[1].score);
        assert!(r.retrieve_str("zebra").is_empty());
        assert_eq!(
            top_k(vec![(0, 1.0), (1, 3.0), (2, 2.0)], 2),
            [(1, 3.0), (2, 2.0)]
        );
    }

    #[test]
    fn empty_corpus_and_bad_params_are_errors() {
        assert!(BM25Retriever::from_defaults(Vec::new(), 2).is_err());
        assert!(
            BM25Retriever::builder()
                .k1(f64::NAN)
                .build(nodes(&["a b"]))
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_query_carrying_its_terms_is_not_tokenized_again() {
        let docs = nodes(&[
            "the white rabbit ran",
            "the queen of hearts",
            "a mad hatter",
        ]);
        let default = BM25Retriever::from_defaults(docs.clone(), 1).unwrap();
        // The carried terms win over the text: they are what was tokenized.
        let carried = QueryBundle::new("queen").with_keyword_terms(vec!["rabbit".into()]);
        let got = default.retrieve(&carried).await.unwrap();
        assert_eq!(got[0].node.get_text(), "the white rabbit ran");
        // keyword_query carries exactly what the default tokenizer reads.
        let q = crate::retrievers::keyword_query("Hearts of the Queens");
        assert_eq!(
            q.keyword_terms.as_deref(),
            Some(&["heart".to_string(), "queen".to_string()][..])
        );
        assert_eq!(
            default.retrieve(&q).await.unwrap()[0].node.get_text(),
            "the queen of hearts"
        );
        // Another tokenizer reads the text itself: the terms are not its own.
        let plain = BM25Retriever::builder()
            .similarity_top_k(1)
            .tokenizer(Bm25Tokenizer::new().stemming(false))
            .build(docs)
            .unwrap();
        let got = plain.retrieve(&carried).await.unwrap();
        assert_eq!(got[0].node.get_text(), "the queen of hearts");
    }
}

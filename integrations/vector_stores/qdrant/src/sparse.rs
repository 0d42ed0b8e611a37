//! BM25 sparse vectors for Qdrant's keyword side of hybrid search: term
//! weights made here, the IDF applied by Qdrant (the sparse vector's `Idf` modifier).
//!
//! The scheme is the one Qdrant's own BM25 uses (and fastembed's
//! `Qdrant/bm25`): a token's index is its murmur3 32-bit hash (seed 0) as
//! `|i32|`; a document's value for a token is BM25's saturated term
//! frequency `tf·(k1+1) / (tf + k1·(1 − b + b·len/avg_len))` with k1 1.2,
//! b 0.75 and avg_len 256; a query's value is 1 per distinct token. Tokens
//! are ragloom's BM25 tokens (lowercase words, English stopwords, Snowball
//! stems), so Qdrant's keyword scores rank as the embedded store's BM25 does.

use murmur3_32::Murmur3;
use ragloom_core::retrievers::Bm25Tokenizer;
use std::collections::BTreeMap;

/// A sparse vector: ascending indices and their values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseVector {
    /// The term ids, ascending.
    pub indices: Vec<u32>,
    /// Each term's weight, in the order of `indices`.
    pub values: Vec<f32>,
}

impl SparseVector {
    /// Whether no term is set.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// Makes BM25 sparse vectors for documents and queries.
#[derive(Clone, Debug)]
pub struct Bm25SparseEncoder {
    tokenizer: Bm25Tokenizer,
    k1: f64,
    b: f64,
    avg_len: f64,
}

impl Default for Bm25SparseEncoder {
    fn default() -> Self {
        Self {
            tokenizer: Bm25Tokenizer::new(),
            k1: 1.2,
            b: 0.75,
            avg_len: 256.0,
        }
    }
}

/// A token's index in the sparse space.
pub fn token_index(token: &str) -> u32 {
    (Murmur3::hash(0, token.as_bytes()) as i32).unsigned_abs()
}

impl Bm25SparseEncoder {
    /// An encoder with the default BM25 tokenizer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `tokenizer` instead of the default BM25 tokens.
    pub fn tokenizer(mut self, tokenizer: Bm25Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Term counts by index. Two tokens hashing alike share a count, as in Qdrant.
    fn counts(&self, text: &str) -> (BTreeMap<u32, f64>, usize) {
        let tokens = self.tokenizer.tokenize(text);
        let mut counts = BTreeMap::new();
        for t in &tokens {
            *counts.entry(token_index(t)).or_insert(0.0) += 1.0;
        }
        (counts, tokens.len())
    }

    /// A document's vector: saturated term frequencies.
    pub fn encode_document(&self, text: &str) -> SparseVector {
        let (counts, len) = self.counts(text);
        let norm = 1.0 - self.b + self.b * len as f64 / self.avg_len;
        let mut out = SparseVector::default();
        for (index, tf) in counts {
            out.indices.push(index);
            out.values
                .push((tf * (self.k1 + 1.0) / (tf + self.k1 * norm)) as f32);
        }
        out
    }

    /// A query's vector: 1 for each distinct token.
    pub fn encode_query(&self, text: &str) -> SparseVector {
        let (counts, _) = self.counts(text);
        SparseVector {
            values: vec![1.0; counts.len()],
            indices: counts.into_keys().collect(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn token_indices_are_qdrants() {
        // murmur3_32("hello", 0) = 0x248bfa47; positive as i32, so unchanged.
        assert_eq!(token_index("hello"), 0x248b_fa47);
        // A hash with the top bit set becomes |i32|.
        let raw = Murmur3::hash(0, b"the");
        assert_eq!(token_index("the"), (raw as i32).unsigned_abs());
    }

    #[test]
    fn documents_get_saturated_term_frequencies() {
        let enc = Bm25SparseEncoder::new();
        // "cats" twice, "chased" and "dogs" once: 4 tokens after stopwords; stems "cat", "dog".
        let v = enc.encode_document("The cats and the cats chased dogs");
        let norm = 1.0 - 0.75 + 0.75 * 4.0 / 256.0;
        let weight = |tf: f64| (tf * 2.2 / (tf + 1.2 * norm)) as f32;
        let cat = v
            .indices
            .iter()
            .position(|i| *i == token_index("cat"))
            .unwrap();
        let dog = v
            .indices
            .iter()
            .position(|i| *i == token_index("dog"))
            .unwrap();
        assert!((v.values[cat] - weight(2.0)).abs() < 1e-6, "{v:?}");
        assert!((v.values[dog] - weight(1.0)).abs() < 1e-6, "{v:?}");
        assert!(v.indices.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn queries_weigh_each_distinct_token_once() {
        let v = Bm25SparseEncoder::new().encode_query("cats cats dogs");
        assert_eq!(v.values, vec![1.0, 1.0]);
        assert!(Bm25SparseEncoder::new().encode_query("the and").is_empty());
    }
}

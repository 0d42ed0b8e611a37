//! `HashEmbedding`: a deterministic bag-of-words embedding (hashed word
//! counts) for tests and demos; similar wording gives similar vectors, meaning does not.

use super::Embedding;
use crate::error::{Error, Result};
use async_trait::async_trait;

/// Hashes each lower-cased word of a text into one of `dim` buckets, adding
/// `±(1 + ln tf)` for a word that occurs `tf` times (sublinear, so a repeated
/// word does not drown the rest; the sign comes from the hash, so unrelated
/// words tend to cancel rather than pile up), then scales the vector to unit
/// length. Common English function words ("the", "of", "what", ...) are
/// skipped: they carry no topic and would otherwise dominate short queries.
///
/// Words are maximal runs of Unicode alphanumeric characters, lower-cased
/// with Unicode rules. The hash is FNV-1a over the word's UTF-8 bytes followed
/// by a 64-bit mixing step: fixed constants, no seed, so a text embeds to the
/// same vector on every run and platform (unlike `std`'s `RandomState`).
/// Texts sharing words score high under cosine similarity; texts sharing
/// none score near zero. A text without any word embeds to the zero vector.
///
/// This is a test and demo embedding, not a semantic one: "car" and
/// "automobile" are unrelated to it.
#[derive(Clone, Debug, PartialEq)]
pub struct HashEmbedding {
    dim: usize,
    embed_batch_size: usize,
}

impl HashEmbedding {
    /// A hash embedding with `dim` buckets (embedding with `dim == 0` is an error).
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            embed_batch_size: super::DEFAULT_EMBED_BATCH_SIZE,
        }
    }

    /// Sets how many texts go in one call (at least 1).
    pub fn with_embed_batch_size(mut self, size: usize) -> Self {
        self.embed_batch_size = size.max(1);
        self
    }

    /// The embedding of `text` (what `embed_query` and `embed_texts` return).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        if self.dim == 0 {
            return Err(Error::InvalidInput(
                "HashEmbedding needs at least one dimension".into(),
            ));
        }
        let mut tf: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let word = word.to_lowercase();
            if !is_stop_word(&word) {
                *tf.entry(word).or_insert(0) += 1;
            }
        }
        let mut counts = vec![0f64; self.dim];
        let dim = self.dim as u64;
        for (word, n) in &tf {
            let h = word_hash(word);
            let bucket = ((h & (u64::MAX >> 1)) % dim) as usize;
            let weight = 1.0 + f64::from(*n).ln();
            counts[bucket] += if h >> 63 == 1 { -weight } else { weight };
        }
        let norm = counts.iter().map(|c| c * c).sum::<f64>().sqrt();
        if norm > 0.0 {
            counts.iter_mut().for_each(|c| *c /= norm);
        }
        Ok(counts.into_iter().map(|c| c as f32).collect())
    }
}

/// FNV-1a (64-bit) then the MurmurHash3 finaliser, so that the low bits used
/// for bucketing depend on every byte.
/// English function words, skipped by [`HashEmbedding`].
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from",
    "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "me", "my", "no", "nor", "not", "of", "on", "or",
    "our", "ours", "out", "over", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

fn word_hash(word: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in word.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[async_trait]
impl Embedding for HashEmbedding {
    fn model_name(&self) -> &str {
        "HashEmbedding"
    }

    fn dimensions(&self) -> Option<usize> {
        Some(self.dim)
    }

    fn embed_batch_size(&self) -> usize {
        self.embed_batch_size
    }

    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        self.embed(query)
    }

    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        texts.iter().map(|t| self.embed(t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_fixed() {
        // Pinned values (checked against an independent Python implementation):
        // a change here changes every vector a HashEmbedding ever produced.
        assert_eq!(word_hash("hello"), 0xe9c5_62c0_fdb2_3244);
        assert_eq!(word_hash("wörld"), 0x81d1_04ef_a796_d69f);
        let v = HashEmbedding::new(8)
            .embed("Hello wörld, hello")
            .unwrap_or_default();
        // "hello" twice weighs 1 + ln 2, "wörld" once weighs 1.
        let w = 1.0 + 2f32.ln();
        let norm = (w * w + 1.0).sqrt();
        let want = [0.0, 0.0, 0.0, 0.0, -w / norm, 0.0, 0.0, -1.0 / norm];
        assert_eq!(v.len(), 8);
        assert!(
            v.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-7),
            "{v:?}"
        );
        let a = HashEmbedding::new(8)
            .embed("Hello, hello WORLD")
            .unwrap_or_default();
        let b = HashEmbedding::new(8)
            .embed("world HELLO hello")
            .unwrap_or_default();
        assert_eq!(a, b);
        assert!(HashEmbedding::new(0).embed("x").is_err());
        assert!(
            STOP_WORDS.windows(2).all(|p| p[0] < p[1]),
            "STOP_WORDS must stay sorted"
        );
        assert_eq!(
            HashEmbedding::new(16)
                .embed("What is the rabbit?")
                .unwrap_or_default(),
            HashEmbedding::new(16).embed("rabbit").unwrap_or_default()
        );
        assert_eq!(
            HashEmbedding::new(4).embed("  ...  ").unwrap_or_default(),
            vec![0.0; 4]
        );
    }
}

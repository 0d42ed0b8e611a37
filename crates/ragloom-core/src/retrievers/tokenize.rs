//! The text-to-terms step of keyword retrieval, as LlamaIndex's BM25 retriever
//! (bm25s) does it: lowercase, `\b\w\w+\b` words, English stopwords, Snowball stemming.

use regex::Regex;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, LazyLock};

/// bm25s's token pattern (scikit-learn's `CountVectorizer` default): words of
/// two or more Unicode word characters.
pub const DEFAULT_TOKEN_PATTERN: &str = r"\b\w\w+\b";

/// bm25s's English stopwords (`stopwords="en"`), the list NLTK's English
/// stopwords started from.
pub const ENGLISH_STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

// One compiled default shared by every tokenizer: cloning a `Regex` gives the
// clone a new pool of match caches, so a tokenizer made per request rebuilt
// its lazy DFA per request (about 50 KB each under `ragloom serve`'s load).
// A constant pattern: compiling it cannot fail at run time on any input.
static DEFAULT_PATTERN: LazyLock<Arc<Regex>> = LazyLock::new(|| {
    Arc::new(Regex::new(DEFAULT_TOKEN_PATTERN).expect("the default token pattern compiles"))
});
static DEFAULT_STOPWORDS: LazyLock<Arc<HashSet<String>>> =
    LazyLock::new(|| Arc::new(ENGLISH_STOPWORDS.iter().map(|s| s.to_string()).collect()));
static ENGLISH_STEMMER: LazyLock<Arc<Stemmer>> =
    LazyLock::new(|| Arc::new(Stemmer::create(Algorithm::English)));

/// Turns text into the terms a keyword index counts (bm25s `tokenize`):
/// lowercase, split by the token pattern, drop stopwords, then stem.
///
/// Defaults are LlamaIndex `BM25Retriever`'s: English stopwords and the
/// Snowball English stemmer (PyStemmer's `"english"`).
#[derive(Clone)]
pub struct Bm25Tokenizer {
    pattern: Arc<Regex>,
    lowercase: bool,
    stopwords: Arc<HashSet<String>>,
    stemmer: Option<Arc<Stemmer>>,
}

impl fmt::Debug for Bm25Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bm25Tokenizer")
            .field("pattern", &self.pattern.as_str())
            .field("lowercase", &self.lowercase)
            .field("stopwords", &self.stopwords.len())
            .field("stemming", &self.stemmer.is_some())
            .finish()
    }
}

impl Default for Bm25Tokenizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Bm25Tokenizer {
    /// LlamaIndex's defaults: lowercase, English stopwords, English stemming.
    pub fn new() -> Self {
        Self {
            pattern: Arc::clone(&DEFAULT_PATTERN),
            lowercase: true,
            stopwords: Arc::clone(&DEFAULT_STOPWORDS),
            stemmer: Some(Arc::clone(&ENGLISH_STEMMER)),
        }
    }

    /// Uses `pattern` (a regex whose matches are the tokens) instead of
    /// `\b\w\w+\b`; an invalid pattern is an error naming it.
    pub fn token_pattern(mut self, pattern: &str) -> crate::Result<Self> {
        self.pattern =
            Arc::new(Regex::new(pattern).map_err(|e| {
                crate::Error::InvalidInput(format!("token_pattern `{pattern}`: {e}"))
            })?);
        Ok(self)
    }

    /// Whether text is lowercased first (default true).
    pub fn lowercase(mut self, yes: bool) -> Self {
        self.lowercase = yes;
        self
    }

    /// Replaces the stopwords (an empty list keeps every word).
    pub fn stopwords<I, S>(mut self, words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.stopwords = Arc::new(words.into_iter().map(Into::into).collect());
        self
    }

    /// Turns stemming off (LlamaIndex `skip_stemming=True`) or on.
    pub fn stemming(mut self, yes: bool) -> Self {
        self.stemmer = yes.then(|| Arc::clone(&ENGLISH_STEMMER));
        self
    }

    /// Stems with the Snowball stemmer for `algorithm` (e.g. another language).
    pub fn stemmer(mut self, algorithm: Algorithm) -> Self {
        self.stemmer = Some(Arc::new(Stemmer::create(algorithm)));
        self
    }

    /// The terms of `text`, in order, duplicates kept.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        let mut words = self.words(text);
        if self.stemmer.is_some() {
            for w in words.iter_mut() {
                *w = self.stem(w);
            }
        }
        words
    }

    /// The words of `text` before stemming: lowercased (if set), split by
    /// the pattern, stopwords dropped.
    pub fn words(&self, text: &str) -> Vec<String> {
        let lowered;
        let text = if self.lowercase {
            lowered = text.to_lowercase();
            lowered.as_str()
        } else {
            text
        };
        self.pattern
            .find_iter(text)
            .map(|m| m.as_str())
            .filter(|t| !self.stopwords.contains(*t))
            .map(str::to_string)
            .collect()
    }

    /// `word` stemmed, or unchanged when stemming is off. (Indexing stems each
    /// distinct word once, as bm25s does.)
    pub fn stem(&self, word: &str) -> String {
        match &self.stemmer {
            Some(s) => s.stem(word).into_owned(),
            None => word.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercases_splits_drops_stopwords_and_stems() {
        let t = Bm25Tokenizer::new();
        assert_eq!(
            t.tokenize("The Runners were RUNNING to a café, x y"),
            ["runner", "were", "run", "café"]
        );
        let plain = Bm25Tokenizer::new()
            .stemming(false)
            .stopwords(Vec::<String>::new());
        assert_eq!(plain.tokenize("The runs, a b"), ["the", "runs"]);
    }

    #[test]
    fn bad_pattern_is_an_error_naming_it() {
        let e = Bm25Tokenizer::new().token_pattern("(");
        assert!(e.is_err_and(|e| e.to_string().contains("token_pattern")));
    }
}

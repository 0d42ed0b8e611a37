//! The text-to-terms step of keyword retrieval, as LlamaIndex's BM25 retriever
//! (bm25s) does it: lowercase, `\b\w\w+\b` words, English stopwords, Snowball stemming.

use crate::schema::QueryBundle;
use regex::Regex;
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
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
static DEFAULT_STOPWORDS: LazyLock<Arc<FxHashSet<String>>> =
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
    stopwords: Arc<FxHashSet<String>>,
    /// The longest stopword's length in bytes: most words are longer, and
    /// need no lookup.
    longest_stopword: usize,
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

/// A bundle for `question` carrying its terms as the default keyword
/// tokenizer reads them, so a question retrieved by keywords and then shown
/// with excerpts is tokenized once.
pub fn keyword_query(question: &str) -> QueryBundle {
    QueryBundle::new(question).with_keyword_terms(Bm25Tokenizer::new().tokenize(question))
}

impl Bm25Tokenizer {
    /// LlamaIndex's defaults: lowercase, English stopwords, English stemming.
    pub fn new() -> Self {
        Self {
            pattern: Arc::clone(&DEFAULT_PATTERN),
            lowercase: true,
            stopwords: Arc::clone(&DEFAULT_STOPWORDS),
            longest_stopword: longest(&DEFAULT_STOPWORDS),
            stemmer: Some(Arc::clone(&ENGLISH_STEMMER)),
        }
    }

    /// Whether this is the default tokenizer ([`Bm25Tokenizer::new`]), whose
    /// terms a [`QueryBundle`] may already carry.
    pub fn is_default(&self) -> bool {
        self.lowercase
            && Arc::ptr_eq(&self.pattern, &DEFAULT_PATTERN)
            && Arc::ptr_eq(&self.stopwords, &DEFAULT_STOPWORDS)
            && self
                .stemmer
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &ENGLISH_STEMMER))
    }

    /// The terms of `query`: those it carries when they are this
    /// tokenizer's (the default one's), else its text tokenized.
    pub fn query_terms<'q>(&self, query: &'q QueryBundle) -> Cow<'q, [String]> {
        match &query.keyword_terms {
            Some(terms) if self.is_default() => Cow::Borrowed(terms),
            _ => Cow::Owned(self.tokenize(&query.query_str)),
        }
    }

    /// Uses `pattern` (a regex whose matches are the tokens) instead of
    /// `\b\w\w+\b`; an invalid pattern is an error naming it.
    pub fn token_pattern(mut self, pattern: &str) -> crate::Result<Self> {
        self.pattern = Arc::new(
            Regex::new(pattern)
                .map_err(|e| crate::Error::invalid(format!("token_pattern `{pattern}`"), e))?,
        );
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
        self.longest_stopword = longest(&self.stopwords);
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

    /// The terms of `text`, in order, duplicates kept. Each word is
    /// stemmed once per thread (the thread's term cache, which stays
    /// bounded whatever one text holds), so texts read again and again — a
    /// server's excerpts — cost no stemming.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        if self.stemmer.is_none() {
            return self.words(text);
        }
        let cached = TERMS.try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            let cache = &mut *cache;
            if !cache.is_for(self) || cache.ids.len() >= CACHED_TERMS {
                cache.reset_for(self);
            }
            let mut out = Vec::new();
            self.for_each_token_of_lowered(&self.lowered(text), |w| {
                let id = match cache.ids.len() < CACHED_TERMS {
                    true => Some(cache.id_of(self, w)),
                    false => cache.ids.get(w),
                };
                match id {
                    Some(STOPWORD) => {}
                    Some(id) => out.push(cache.terms[id as usize].to_string()),
                    // The cache is full: the rest of this text is stemmed
                    // without it.
                    None if self.is_stopword(w) => {}
                    None => out.push(self.stem(w)),
                }
            });
            Some(out)
        });
        match cached {
            Ok(Some(out)) => out,
            // The thread's cache is in use further up the stack, or gone.
            _ => {
                let words = self.words(text);
                words.iter().map(|w| self.stem(w)).collect()
            }
        }
    }

    /// The words of `text` before stemming: lowercased (if set), split by
    /// the pattern, stopwords dropped.
    pub fn words(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_word_of_lowered(&self.lowered(text), |w| out.push(w.to_string()));
        out
    }

    fn lowered<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self.lowercase {
            std::borrow::Cow::Owned(text.to_lowercase())
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    /// The words of text already lowercased (if set), borrowed from it.
    fn for_each_word_of_lowered<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) {
        self.for_each_token_of_lowered(text, |t| {
            if !self.is_stopword(t) {
                f(t);
            }
        });
    }

    /// The pattern's matches in text already lowercased, stopwords included.
    fn for_each_token_of_lowered<'t>(&self, text: &'t str, f: impl FnMut(&'t str)) {
        if Arc::ptr_eq(&self.pattern, &DEFAULT_PATTERN) {
            word_runs(text).for_each(f);
        } else {
            self.pattern.find_iter(text).map(|m| m.as_str()).for_each(f);
        }
    }

    fn is_stopword(&self, word: &str) -> bool {
        word.len() <= self.longest_stopword && self.stopwords.contains(word)
    }

    /// The terms of many texts, grouped by term: what a keyword index
    /// writes for a batch of nodes, counted as [`tokenize`](Self::tokenize)
    /// would. Texts are counted in runs on every core; each thread
    /// remembers the terms its words became, so a word is stemmed once and
    /// each occurrence costs one lookup, with no string built per term and text.
    pub fn count_batch<T: AsRef<str> + Sync>(&self, texts: &[T]) -> TermBatch {
        use rayon::prelude::*;
        let run = texts
            .len()
            .div_ceil(2 * rayon::current_num_threads())
            .max(1);
        let runs: Vec<Run> = texts
            .par_chunks(run)
            .enumerate()
            .map(|(i, chunk)| self.count_run(chunk, (i * run) as u32))
            .collect();
        let mut lengths = Vec::with_capacity(texts.len());
        // Runs in text order, so each term's list stays in text order.
        let mut by_term: FxHashMap<Box<str>, Vec<(u32, u32)>> = FxHashMap::default();
        for (l, p) in runs {
            lengths.extend(l);
            for (term, list) in p {
                by_term.entry(term).or_default().extend(list);
            }
        }
        let mut postings: Vec<(String, Vec<(u32, u32)>)> = by_term
            .into_iter()
            .map(|(t, list)| (t.into(), list))
            .collect();
        postings.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        TermBatch { lengths, postings }
    }

    /// One run of texts, numbered from `first`, on this thread.
    fn count_run<T: AsRef<str>>(&self, texts: &[T], first: u32) -> Run {
        TERMS.with(|cache| {
            let mut cache = cache.borrow_mut();
            let cache = &mut *cache;
            if !cache.is_for(self) || cache.ids.len() >= CACHED_TERMS {
                cache.reset_for(self);
            }
            // A run that unwound mid-text would leave its counts behind.
            for id in cache.seen.drain(..) {
                cache.tf[id as usize] = 0;
            }
            let mut lengths = Vec::with_capacity(texts.len());
            // (term, text, count) for each term of each text, in text order.
            let mut counts: Vec<(u32, u32, u32)> = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let doc = first + i as u32;
                let mut length = 0u32;
                self.for_each_token_of_lowered(&self.lowered(text.as_ref()), |w| {
                    let id = cache.id_of(self, w);
                    if id == STOPWORD {
                        return;
                    }
                    length = length.saturating_add(1);
                    // A text's counts sit in one dense array by term: a
                    // list per term, appended to at each word, made most
                    // of this loop's time cache misses.
                    let tf = &mut cache.tf[id as usize];
                    if *tf == 0 {
                        cache.seen.push(id);
                    }
                    *tf = tf.saturating_add(1);
                });
                for &id in &cache.seen {
                    counts.push((id, doc, std::mem::take(&mut cache.tf[id as usize])));
                }
                cache.seen.clear();
                lengths.push(length);
            }
            (lengths, cache.group(&counts))
        })
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

/// Words a thread keeps the terms of (for one stemmer), up to this many
/// before it starts again: a few MB a thread.
const CACHED_TERMS: usize = 1 << 16;

fn longest(words: &FxHashSet<String>) -> usize {
    words.iter().map(String::len).max().unwrap_or(0)
}

/// A run of texts counted on one thread: each text's length, and each
/// term's `(text index, count)` list.
type Run = (Vec<u32>, TermLists);

/// Each term with its `(text index, count)` list.
type TermLists = Vec<(Box<str>, Vec<(u32, u32)>)>;

/// The terms of many texts, grouped by term ([`Bm25Tokenizer::count_batch`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TermBatch {
    /// Each text's length in terms (stopwords dropped).
    pub lengths: Vec<u32>,
    /// Each term, in order, with `(text index, count)` for every text
    /// holding it, by text index.
    pub postings: Vec<(String, Vec<(u32, u32)>)>,
}

/// A word's entry in [`TermCache::ids`] when it is a stopword.
const STOPWORD: u32 = u32::MAX;

/// A thread's terms, numbered, for one stemmer and stopword list.
#[derive(Default)]
struct TermCache {
    /// The stemmer they are for (`None`: no stemming).
    stemmer: Option<std::sync::Weak<Stemmer>>,
    /// The stopwords they are for. Both are weak references that keep
    /// their allocations, so another list never takes their addresses
    /// while these terms are kept.
    stopwords: std::sync::Weak<FxHashSet<String>>,
    /// Each word seen: its term's number, or [`STOPWORD`].
    ids: crate::utils::StrMap<u32>,
    /// Each term's number, by the term.
    term_ids: FxHashMap<Box<str>, u32>,
    /// The terms, by number.
    terms: Vec<Box<str>>,
    /// The text being counted: each term's count (by number, zero when
    /// absent), and the terms it has.
    tf: Vec<u32>,
    seen: Vec<u32>,
}

impl TermCache {
    fn is_for(&self, t: &Bm25Tokenizer) -> bool {
        let stemmer = match (&self.stemmer, &t.stemmer) {
            (None, None) => true,
            (Some(kept), Some(s)) => kept.as_ptr() == Arc::as_ptr(s),
            _ => false,
        };
        stemmer && self.stopwords.as_ptr() == Arc::as_ptr(&t.stopwords)
    }

    fn reset_for(&mut self, t: &Bm25Tokenizer) {
        *self = Self {
            stemmer: t.stemmer.as_ref().map(Arc::downgrade),
            stopwords: Arc::downgrade(&t.stopwords),
            ..Self::default()
        };
    }

    /// The number of `word`'s term ([`STOPWORD`] for a stopword), stemming
    /// it the first time it is seen.
    fn id_of(&mut self, t: &Bm25Tokenizer, word: &str) -> u32 {
        if let Some(id) = self.ids.get(word) {
            return id;
        }
        let id = if t.is_stopword(word) {
            STOPWORD
        } else {
            let term = match &t.stemmer {
                Some(s) => s.stem(word),
                None => std::borrow::Cow::Borrowed(word),
            };
            let next = self.terms.len() as u32;
            // Words sharing a stem share its number.
            let id = *self.term_ids.entry(term.as_ref().into()).or_insert(next);
            if id == next {
                self.terms.push(term.into_owned().into());
                self.tf.push(0);
            }
            id
        };
        self.ids.insert(word, id);
        id
    }

    /// `(term, text, count)` triples grouped by term, each term's texts in
    /// the order given (a counting sort by term number).
    fn group(&self, counts: &[(u32, u32, u32)]) -> TermLists {
        let mut starts = vec![0usize; self.terms.len() + 1];
        for &(id, ..) in counts {
            starts[id as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut flat = vec![(0u32, 0u32); counts.len()];
        for &(id, doc, tf) in counts {
            let at = &mut next[id as usize];
            flat[*at] = (doc, tf);
            *at += 1;
        }
        starts
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[1] > w[0])
            .map(|(id, w)| (self.terms[id].clone(), flat[w[0]..w[1]].to_vec()))
            .collect()
    }
}

thread_local! {
    static TERMS: std::cell::RefCell<TermCache> = std::cell::RefCell::new(TermCache::default());
}

/// The matches of `\b\w\w+\b`: the runs of word characters two or more
/// long (inside a run no position is a word boundary, so each match is a
/// whole run). A scan instead of the regex, which needs a forward and a
/// reverse search per word; `\w` is regex-syntax's, the regex's own table.
fn word_runs(text: &str) -> impl Iterator<Item = &str> {
    // Whether the character at byte `i` is a word character, and its length;
    // ASCII, most of any text, is decided from the byte alone.
    let word_at = |i: usize| -> (bool, usize) {
        let b = text.as_bytes()[i];
        if b.is_ascii() {
            return (b.is_ascii_alphanumeric() || b == b'_', 1);
        }
        match text[i..].chars().next() {
            Some(c) => (regex_syntax::is_word_character(c), c.len_utf8()),
            None => (false, 1),
        }
    };
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < text.len() {
            let (is_word, len) = word_at(at);
            let start = at;
            at += len;
            if !is_word {
                continue;
            }
            let mut chars = 1;
            while at < text.len() {
                let (is_word, len) = word_at(at);
                if !is_word {
                    break;
                }
                at += len;
                chars += 1;
            }
            if chars >= 2 {
                return Some(&text[start..at]);
            }
        }
        None
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// One text of more new words than the cache keeps leaves it bounded
    /// and gives the same terms as stemming each word.
    #[test]
    fn a_text_of_many_new_words_keeps_the_term_cache_bounded() {
        let t = Bm25Tokenizer::default();
        let text: String = (0..CACHED_TERMS + 500)
            .map(|i| format!("walking{i}s "))
            .collect();
        let terms = t.tokenize(&text);
        let by_hand: Vec<String> = t.words(&text).iter().map(|w| t.stem(w)).collect();
        assert_eq!(terms, by_hand);
        assert!(TERMS.with(|c| c.borrow().ids.len()) <= CACHED_TERMS);
        assert_eq!(t.tokenize("Walking dogs"), vec!["walk", "dog"]);
    }

    /// The scan finds what the default pattern's regex finds.
    #[test]
    fn word_runs_are_the_default_patterns_matches() {
        let parts = [
            "a", "bc", "_", "9", " ", "-", "é", "東京", "\u{300}", "ǅ", "²", "'", "🙂", "x_y", "\n",
        ];
        let re = Regex::new(DEFAULT_TOKEN_PATTERN).unwrap();
        let mut seed: u64 = 5;
        for _ in 0..5_000 {
            let mut text = String::new();
            for _ in 0..(seed % 13) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(parts[(seed >> 33) as usize % parts.len()]);
            }
            seed = seed.wrapping_add(1);
            let want: Vec<&str> = re.find_iter(&text).map(|m| m.as_str()).collect();
            assert_eq!(word_runs(&text).collect::<Vec<_>>(), want, "{text:?}");
        }
    }

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

    /// Term counts are the counted terms of `tokenize`, for each setting.
    /// One text's terms with their counts, and its length.
    fn term_counts(t: &Bm25Tokenizer, text: &str) -> (Vec<(String, u32)>, u32) {
        let batch = t.count_batch(&[text]);
        let terms = batch
            .postings
            .into_iter()
            .map(|(term, list)| (term, list.iter().map(|&(_, tf)| tf).sum()))
            .collect();
        (terms, batch.lengths[0])
    }

    #[test]
    fn term_counts_count_what_tokenize_returns() {
        let text = "The Runners were RUNNING; runners run, the café's runs x";
        for t in [
            Bm25Tokenizer::new(),
            Bm25Tokenizer::new().stemming(false),
            Bm25Tokenizer::new().lowercase(false),
            Bm25Tokenizer::new().token_pattern(r"\w+").unwrap(),
        ] {
            let terms = t.tokenize(text);
            let mut want: HashMap<String, u32> = HashMap::new();
            for term in &terms {
                *want.entry(term.clone()).or_default() += 1;
            }
            let (counts, length) = term_counts(&t, text);
            assert_eq!(length as usize, terms.len(), "{t:?}");
            assert_eq!(counts.len(), want.len(), "{t:?}");
            let got: HashMap<String, u32> = counts.into_iter().collect();
            assert_eq!(got, want, "{t:?}");
        }
    }

    /// A batch counts each text as `tokenize` does, grouped by term, in
    /// text order, across runs on several threads.
    #[test]
    fn a_batch_counts_each_text_as_tokenize_does() {
        let words = [
            "Alice", "rabbit", "RUNNING", "runs", "the", "café", "x", "Hearts", "queen's",
        ];
        let texts: Vec<String> = (0..200u64)
            .map(|i| {
                let mut seed = i.wrapping_mul(2654435761) + 7;
                (0..(i % 23))
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        words[(seed >> 33) as usize % words.len()]
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        for t in [
            Bm25Tokenizer::new(),
            Bm25Tokenizer::new().stemming(false),
            Bm25Tokenizer::new().lowercase(false),
            Bm25Tokenizer::new().stopwords(Vec::<String>::new()),
        ] {
            let batch = t.count_batch(&texts);
            assert_eq!(batch.lengths.len(), texts.len());
            let mut want: std::collections::BTreeMap<String, Vec<(u32, u32)>> = Default::default();
            for (i, text) in texts.iter().enumerate() {
                let terms = t.tokenize(text);
                assert_eq!(batch.lengths[i] as usize, terms.len(), "{t:?} {text:?}");
                let mut counts: std::collections::BTreeMap<String, u32> = Default::default();
                for term in terms {
                    *counts.entry(term).or_default() += 1;
                }
                for (term, n) in counts {
                    want.entry(term).or_default().push((i as u32, n));
                }
            }
            assert_eq!(
                batch.postings,
                want.into_iter().collect::<Vec<_>>(),
                "{t:?}"
            );
        }
        assert_eq!(
            Bm25Tokenizer::new().count_batch::<&str>(&[]),
            TermBatch::default()
        );
    }

    /// A thread's cached words are for one stopword list: tokenizers that
    /// share a stemmer but not their stopwords each drop their own.
    #[test]
    fn cached_words_are_not_shared_between_stopword_lists() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let text = "the rabbit and alice and the rabbit";
        let plain = Bm25Tokenizer::new();
        let no_alice = Bm25Tokenizer::new().stopwords(["alice", "rabbit"]);
        let none = Bm25Tokenizer::new().stopwords(Vec::<String>::new());
        pool.install(|| {
            for _ in 0..2 {
                for t in [&plain, &no_alice, &none] {
                    let (counts, length) = term_counts(t, text);
                    assert_eq!(length as usize, t.tokenize(text).len(), "{t:?}");
                    let terms: Vec<&str> = counts.iter().map(|(t, _)| t.as_str()).collect();
                    let want: std::collections::BTreeSet<String> =
                        t.tokenize(text).into_iter().collect();
                    assert_eq!(terms, want.iter().map(String::as_str).collect::<Vec<_>>());
                }
            }
        });
        assert_eq!(term_counts(&no_alice, text).1, 4);
        assert_eq!(term_counts(&none, text).1, 7);
    }

    /// A thread's stems are for one stemmer: another one, even made where
    /// a dropped one was, stems afresh.
    #[test]
    fn stems_are_not_shared_between_stemmers() {
        for _ in 0..3 {
            let english = Bm25Tokenizer::new().stemmer(Algorithm::English);
            assert_eq!(term_counts(&english, "running").0, [("run".to_string(), 1)]);
            drop(english);
            let dutch = Bm25Tokenizer::new().stemmer(Algorithm::Dutch);
            assert_eq!(
                term_counts(&dutch, "running").0,
                [("running".to_string(), 1)]
            );
        }
    }

    #[test]
    fn bad_pattern_is_an_error_naming_it() {
        let e = Bm25Tokenizer::new().token_pattern("(");
        assert!(e.is_err_and(|e| e.to_string().contains("token_pattern")));
    }
}

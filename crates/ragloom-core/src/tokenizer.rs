//! Token counting for chunk sizes and prompt budgets: the [`Tokenizer`] trait
//! and LlamaIndex's global default, tiktoken `cl100k_base`.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use tiktoken_rs::CoreBPE;

mod pretokenize;

/// Turns text into token ids. Splitters measure chunks with it and the prompt
/// helper budgets context windows with it, so it must be cheap to share.
pub trait Tokenizer: Send + Sync + std::fmt::Debug {
    /// The token ids of `text`.
    fn encode(&self, text: &str) -> Vec<u32>;

    /// How many tokens `text` has.
    fn count(&self, text: &str) -> usize {
        self.encode(text).len()
    }

    /// `text`'s count when it is at most `limit`, else some number above
    /// `limit`. A splitter only compares an oversized piece with the chunk
    /// size, so counting may stop there: a 25 KB document need not be
    /// counted whole before it is cut into sentences that are.
    fn count_up_to(&self, text: &str, _limit: usize) -> usize {
        self.count(text)
    }
}

/// tiktoken's `cl100k_base`, called as LlamaIndex's `get_tokenizer()` calls
/// it: `encode(text, allowed_special="all")`, so `<|endoftext|>` in a text is
/// one special token rather than an error or five ordinary tokens.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cl100kTokenizer;

/// The BPE tables take tens of milliseconds to build, so one copy serves the
/// whole process.
fn cl100k() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| {
        // The tables are compiled into tiktoken-rs; failing to parse them is a
        // broken build, not something input can cause.
        tiktoken_rs::cl100k_base().expect("tiktoken-rs ships a valid cl100k_base table")
    })
}

impl Cl100kTokenizer {
    /// The shared `cl100k_base` tokenizer.
    pub fn new() -> Self {
        Cl100kTokenizer
    }

    fn encode_all_special(text: &str) -> Vec<u32> {
        static ALLOWED: OnceLock<HashSet<&'static str>> = OnceLock::new();
        let bpe = cl100k();
        let allowed = ALLOWED.get_or_init(|| bpe.special_tokens());
        match bpe.encode(text, allowed) {
            Ok((tokens, _)) => tokens,
            // Only the regex backtracking limit can fail here (a run of about
            // a million spaces before a word; Python's tiktoken raises
            // there). Halving the text keeps the count within a few tokens
            // instead of panicking.
            Err(_) => split_halves(text)
                .map(|(a, b)| {
                    let mut out = Self::encode_all_special(a);
                    out.extend(Self::encode_all_special(b));
                    out
                })
                .unwrap_or_default(),
        }
    }
}

/// Two halves of `text` at a char boundary, or `None` if it cannot shrink.
fn split_halves(text: &str) -> Option<(&str, &str)> {
    text.chars().nth(1)?;
    let mut mid = text.len() / 2;
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    if mid == 0 || mid >= text.len() {
        return None;
    }
    Some(text.split_at(mid))
}

/// cl100k's special tokens: with `allowed_special="all"` each is one token,
/// and the text between them is encoded on its own.
const CL100K_SPECIAL: [&str; 5] = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
];

/// Counts as `encode(text).len()` does, but with the `bpe` crate's linear
/// counting of each piece (no token ids are built) and a pre-tokenizer that
/// scans character classes instead of running a regex: counting is what the
/// splitters spend their time on.
fn count_cl100k(text: &str, limit: usize) -> usize {
    // The bound's positions take two bytes each and never share one (the
    // second is not a space), so a text of at most `2 * limit + 1` bytes
    // cannot pass the limit by them.
    if text.len() / 2 > limit {
        let pieces = pieces_at_least(text, limit);
        if pieces > limit {
            return pieces;
        }
    }
    let bpe = bpe_openai::cl100k_base();
    let mut count = 0;
    let mut segment = 0;
    let mut search = 0;
    // Most texts hold no special token: one scan for `<|` settles it.
    while let Some(found) = text[search..].find("<|") {
        let at = search + found;
        match CL100K_SPECIAL.iter().find(|s| text[at..].starts_with(**s)) {
            Some(special) => {
                count += count_ordinary(bpe, &text[segment..at], limit - count) + 1;
                if count > limit {
                    return count;
                }
                segment = at + special.len();
                search = segment;
            }
            // Ordinary text: it stays in the segment the pre-tokenizer sees.
            None => search = at + 2,
        }
    }
    count + count_ordinary(bpe, &text[segment..], limit - count)
}

/// A lower bound on `text`'s token count, found by a byte scan that stops
/// once it passes `limit`: the splitter asks whether a whole document is over
/// the chunk size, and prose settles that in a few kilobytes without a
/// lookup. A space followed by an ASCII letter or digit always starts a
/// pre-tokenizer piece (` word`, or a lone ` ` before a number): no
/// alternative of the pattern takes a space followed by either except at its
/// start. Each piece is at least one token, and special tokens hold neither.
fn pieces_at_least(text: &str, limit: usize) -> usize {
    let mut pieces = 0;
    for pair in text.as_bytes().windows(2) {
        if pair[0] == b' ' && pair[1].is_ascii_alphanumeric() {
            pieces += 1;
            if pieces > limit {
                break;
            }
        }
    }
    pieces
}

/// Pieces shorter than this are counted through the cache: words and
/// punctuation, which repeat; longer ones are rare and cheap to miss.
const CACHED_PIECE_LEN: usize = 48;
/// Entries a thread's cache holds before it starts again.
const CACHED_PIECES: usize = 1 << 16;

thread_local! {
    /// Token counts of pre-tokenizer pieces already seen on this thread:
    /// counting a word again costs a hash lookup instead of setting up a
    /// BPE encoder (most of a count's time on prose).
    static PIECE_COUNTS: std::cell::RefCell<crate::utils::StrMap<u32>> =
        std::cell::RefCell::new(crate::utils::StrMap::default());
}

/// The byte length of cl100k's longest token, read from the table once.
fn longest_token(bpe: &bpe_openai::Tokenizer) -> usize {
    static LONGEST: OnceLock<usize> = OnceLock::new();
    *LONGEST.get_or_init(|| {
        let tokens = bpe.bpe.num_tokens();
        (0..tokens)
            .filter_map(|id| u32::try_from(id).ok())
            .map(|id| bpe.bpe.token_len(id))
            .max()
            .unwrap_or(1)
            .max(1)
    })
}

/// Tokens of text holding no special token: the pre-tokenizer's pieces
/// ([`pretokenize`]), each counted once per thread; the count stops once it
/// passes `limit`.
fn count_ordinary(bpe: &bpe_openai::Tokenizer, text: &str, limit: usize) -> usize {
    PIECE_COUNTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let mut count = 0;
        for piece in pretokenize::pieces(text) {
            count += if piece.len() == 1 {
                // Every byte is a token of its own.
                1
            } else if piece.len() >= CACHED_PIECE_LEN {
                // A piece has at least one token per longest token's bytes:
                // past the limit by that alone (a megabyte run of one
                // letter is one piece), it is not encoded, which would cost
                // memory in proportion to it.
                let at_least = piece.len().div_ceil(longest_token(bpe));
                if at_least > limit - count {
                    return count + at_least;
                }
                bpe.bpe.count(piece.as_bytes())
            } else if let Some(n) = cache.get(piece) {
                n as usize
            } else {
                let n = bpe.bpe.count(piece.as_bytes());
                if cache.len() >= CACHED_PIECES {
                    cache.clear();
                }
                cache.insert(piece, n as u32);
                n
            };
            if count > limit {
                break;
            }
        }
        count
    })
}

impl Tokenizer for Cl100kTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        Self::encode_all_special(text)
    }

    fn count(&self, text: &str) -> usize {
        count_cl100k(text, usize::MAX)
    }

    fn count_up_to(&self, text: &str, limit: usize) -> usize {
        count_cl100k(text, limit)
    }
}

/// The default tokenizer (LlamaIndex's global tokenizer): [`Cl100kTokenizer`].
pub fn default_tokenizer() -> Arc<dyn Tokenizer> {
    static DEFAULT: OnceLock<Arc<dyn Tokenizer>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| Arc::new(Cl100kTokenizer::new()))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_tokens_are_allowed() {
        let t = Cl100kTokenizer::new();
        assert_eq!(t.encode("<|endoftext|>"), vec![100257]);
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count(""), 0);
    }

    #[test]
    fn long_whitespace_runs_count_as_in_python() {
        let t = Cl100kTokenizer::new();
        // recorded from LlamaIndex's get_tokenizer()
        assert_eq!(t.count(&(" ".repeat(100_000) + "x")), 783);
        assert!(t.count(&" \n".repeat(100_000)) > 0);
    }

    #[test]
    fn counting_agrees_with_encoding() {
        let t = Cl100kTokenizer::new();
        for text in [
            "",
            "hello world",
            "a<|endoftext|>b",
            "<|endoftext|><|endofprompt|>",
            "x <| not special |> y",
            "<|fim_prefix|>def f():\n    <|fim_suffix|>\n<|fim_middle|>",
            "  \n\n\t  trailing   ",
            "naïve café 東京 🙂 don't I'll 12345",
        ] {
            assert_eq!(t.count(text), t.encode(text).len(), "{text:?}");
        }
    }

    /// A bounded count is the count up to the limit, and above it past there.
    #[test]
    fn bounded_counts_stop_only_past_the_limit() {
        let t = Cl100kTokenizer::new();
        let texts = [
            "",
            "hello world",
            "a<|endoftext|>b c d<|endofprompt|>",
            "<|endoftext|><|endoftext|><|endoftext|>",
            "naïve café 東京 🙂 don't I'll 12345, and then some more words.",
        ];
        for text in texts {
            let n = t.count(text);
            for limit in 0..n + 3 {
                let got = t.count_up_to(text, limit);
                if n <= limit {
                    assert_eq!(got, n, "{text:?} up to {limit}");
                } else {
                    assert!(got > limit && got <= n, "{text:?} up to {limit}: {got}");
                }
            }
        }
    }

    /// A run past the limit's worth of the longest token is bounded
    /// without being encoded, and still above the limit.
    #[test]
    fn a_long_run_is_bounded_without_encoding() {
        let t = Cl100kTokenizer::new();
        let run = "a".repeat(100_000);
        let n = t.count(&run);
        let got = t.count_up_to(&run, 10);
        assert!(got > 10 && got <= n, "{got} of {n}");
        assert_eq!(t.count_up_to(&run, n), n);
    }

    #[test]
    fn halves_split_at_char_boundaries() {
        assert_eq!(split_halves("aé"), Some(("a", "é")));
        assert_eq!(split_halves("éa"), Some(("é", "a")));
        assert_eq!(split_halves("é"), None);
        assert_eq!(split_halves(""), None);
    }
}

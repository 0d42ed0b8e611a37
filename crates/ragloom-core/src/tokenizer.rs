//! Token counting for chunk sizes and prompt budgets: the [`Tokenizer`] trait
//! and LlamaIndex's global default, tiktoken `cl100k_base`.

use std::sync::{Arc, OnceLock};
use tiktoken_rs::CoreBPE;

/// Turns text into token ids. Splitters measure chunks with it and the prompt
/// helper budgets context windows with it, so it must be cheap to share.
pub trait Tokenizer: Send + Sync + std::fmt::Debug {
    /// The token ids of `text`.
    fn encode(&self, text: &str) -> Vec<u32>;

    /// How many tokens `text` has.
    fn count(&self, text: &str) -> usize {
        self.encode(text).len()
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
        let bpe = cl100k();
        let allowed = bpe.special_tokens();
        match bpe.encode(text, &allowed) {
            Ok((tokens, _)) => tokens,
            // Only a regex backtracking limit can fail here; halving the text
            // keeps the count within a token or two instead of panicking.
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

impl Tokenizer for Cl100kTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        Self::encode_all_special(text)
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
    fn long_whitespace_runs_do_not_fail() {
        let t = Cl100kTokenizer::new();
        let spaces = " ".repeat(200_000);
        assert!(t.count(&spaces) > 0);
        let mixed = " \n".repeat(100_000);
        assert!(t.count(&mixed) > 0);
    }
}

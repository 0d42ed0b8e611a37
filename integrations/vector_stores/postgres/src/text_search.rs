//! The query text of full-text search, cleaned as LlamaIndex's `PGVectorStore`
//! cleans it before `to_tsquery`: its words joined by `|` (an OR search).

use regex::Regex;
use std::sync::LazyLock;

/// Runs of characters that are not word characters in Python's sense
/// (`str.isalnum()` or `_`).
static NON_WORD: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"[^\p{L}\p{N}_]+").ok());

/// The `to_tsquery` input LlamaIndex builds from `query`: every run of non-word
/// characters becomes one space, except a lone `.` between two word characters
/// (`e.g`, `3.5`), which stays; the ends are trimmed and spaces become `|`.
///
/// This is Python's `re.sub(r"(?!\b\.\b)\W+", " ", q).strip().replace(" ", "|")`
/// without the look-ahead, which Rust's regex engine lacks: a match can only be
/// refused where a run starts, and the only run it refuses is a single `.`
/// with word characters on both sides.
pub(crate) fn tsquery_input(query: &str) -> String {
    let Some(non_word) = NON_WORD.as_ref() else {
        return String::new();
    };
    let mut out = String::with_capacity(query.len());
    let mut last = 0;
    for run in non_word.find_iter(query) {
        out.push_str(&query[last..run.start()]);
        let inner = run.start() > 0 && run.end() < query.len();
        out.push_str(if inner && run.as_str() == "." {
            "."
        } else {
            " "
        });
        last = run.end();
    }
    out.push_str(&query[last..]);
    out.trim_matches(' ').replace(' ', "|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_ored_and_punctuation_dropped() {
        assert_eq!(tsquery_input("quick brown fox!"), "quick|brown|fox");
        assert_eq!(tsquery_input("  what's up?  "), "what|s|up");
        assert_eq!(tsquery_input("version 3.5 e.g. x"), "version|3.5|e.g|x");
        assert_eq!(tsquery_input(".a.b. a..b"), "a.b|a|b");
        assert_eq!(tsquery_input("fox & (dog | !cat):*"), "fox|dog|cat");
        assert_eq!(tsquery_input("!!!"), "");
    }

    /// Inputs cleaned by LlamaIndex's own two lines (tests/data/gen_tsquery.py):
    /// Unicode letters and digits, marks, emoji, dotted abbreviations.
    #[test]
    fn agrees_with_python_on_recorded_inputs() {
        let cases: serde_json::Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tsquery_cases.json"
        )))
        .unwrap_or_default();
        let cases = cases.as_array().cloned().unwrap_or_default();
        assert!(cases.len() >= 20);
        for case in cases {
            let query = case["query"].as_str().unwrap_or_default();
            assert_eq!(
                tsquery_input(query),
                case["tsquery"].as_str().unwrap_or_default(),
                "{query:?}"
            );
        }
    }
}

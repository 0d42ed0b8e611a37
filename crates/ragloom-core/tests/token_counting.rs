//! Token counting (the `bpe` crate's linear counter) gives exactly the
//! length of tiktoken's encoding, on every text of the shared corpus and on
//! thousands of windows cut from them at odd places, so chunk sizes stay
//! LlamaIndex's.

#![allow(clippy::unwrap_used)]

mod common;

use ragloom_core::{Cl100kTokenizer, Tokenizer};

/// Every corpus text, and ragged windows of it: odd starts and lengths cut
/// words, runs of spaces and multi-byte characters at every position.
#[test]
fn counts_equal_encoding_lengths_on_the_corpus() {
    let t = Cl100kTokenizer::new();
    let dir = common::corpus_dir();
    let mut files = vec![dir.join("paul_graham_essay.txt")];
    for entry in std::fs::read_dir(dir.join("sources")).unwrap() {
        files.push(entry.unwrap().path());
    }
    let mut windows = 0;
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let n = t.encode(&text).len();
        assert_eq!(t.count(&text), n, "{}", path.display());
        check_bounded(&t, &text, n);
        let mut start = 0;
        let mut len = 1;
        while start < text.len() {
            let mut s = start;
            while !text.is_char_boundary(s) {
                s += 1;
            }
            let mut e = (s + len).min(text.len());
            while !text.is_char_boundary(e) {
                e += 1;
            }
            let window = &text[s..e];
            let n = t.encode(window).len();
            assert_eq!(
                t.count(window),
                n,
                "{} bytes {s}..{e}: {window:?}",
                path.display()
            );
            check_bounded(&t, window, n);
            windows += 1;
            start += 1_013;
            len = (len * 7 + 3) % 3_001;
        }
    }
    assert!(windows > 1_000);
}

/// Texts built to stress the pre-tokenizer: whitespace before and after
/// line breaks, digits, contractions in capitals, specials next to text.
#[test]
fn counts_equal_encoding_lengths_on_awkward_text() {
    let t = Cl100kTokenizer::new();
    let pieces = [
        " ",
        "  ",
        "\n",
        " \n",
        "\n ",
        "\r\n",
        "\t",
        "a",
        "Z",
        "'S",
        "'ll",
        "123",
        "4567",
        "é",
        "東",
        "🙂",
        "<|endoftext|>",
        "<|",
        "|>",
        ".",
        "...",
        "-",
        "\u{a0}",
        "\u{2028}",
        "x y",
        "I'M",
        "'ſ",
        "'Re",
        "'vE",
        "'LL",
        "'",
        "²",
        "Ⅻ",
        "١٢",
        "\u{300}",
        "\u{b}",
        "\u{85}",
        "ǅ",
        "\r",
    ];
    let mut seed: u64 = 7;
    for _ in 0..3_000 {
        let mut text = String::new();
        for _ in 0..(seed % 23) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        seed = seed.wrapping_add(1);
        let n = t.encode(&text).len();
        assert_eq!(t.count(&text), n, "{text:?}");
        check_bounded(&t, &text, n);
    }
}

/// `count_up_to` gives the count when it is within the limit, and otherwise
/// a number past the limit that is no more than the count: the splitter
/// cuts by it, so an answer over the count could cut a text that fits.
/// Limits around the count and far below it (where the byte scan settles
/// it) are both tried.
fn check_bounded(t: &Cl100kTokenizer, text: &str, n: usize) {
    for limit in [0, 1, 2, n / 8, n / 2, n.saturating_sub(1), n, n + 1] {
        let got = t.count_up_to(text, limit);
        if n <= limit {
            assert_eq!(got, n, "{text:?} up to {limit}");
        } else {
            assert!(
                got > limit && got <= n,
                "{text:?} up to {limit}: {got} of {n}"
            );
        }
    }
}

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
        assert_eq!(t.count(&text), t.encode(&text).len(), "{}", path.display());
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
            assert_eq!(
                t.count(window),
                t.encode(window).len(),
                "{} bytes {s}..{e}: {window:?}",
                path.display()
            );
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
        assert_eq!(t.count(&text), t.encode(&text).len(), "{text:?}");
    }
}

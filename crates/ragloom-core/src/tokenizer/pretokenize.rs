//! cl100k's pre-tokenizer without a regex engine: the pieces tiktoken's
//! pattern cuts text into, found by one forward scan over character classes.
//!
//! The pattern, tried in order at each position:
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//! ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`. Each alternative
//! reduces to a run of one class, so the scan looks at each character about
//! once; the classes come from `regex-syntax`'s Unicode tables, the ones the
//! regex engines behind tiktoken use, so the pieces are the same.

use std::sync::OnceLock;

/// A character's class: a letter (`\p{L}`), a number (`\p{N}`), white
/// space (`\s`), or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Letter,
    Number,
    Space,
    Other,
}

struct Classes {
    ascii: [Class; 128],
    /// Disjoint, sorted ranges of the three named classes beyond ASCII.
    ranges: Vec<(u32, u32, Class)>,
}

/// The ranges of a one-class pattern such as `\p{L}`, from regex-syntax.
fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class as HirClass, HirKind};
    // Constant patterns: failing to parse one is a broken build.
    let hir = regex_syntax::parse(pattern).expect("a constant character class parses");
    match hir.kind() {
        HirKind::Class(HirClass::Unicode(c)) => c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        other => panic!("`{pattern}` is not a Unicode class: {other:?}"),
    }
}

fn classes() -> &'static Classes {
    static CLASSES: OnceLock<Classes> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut ascii = [Class::Other; 128];
        let mut ranges = Vec::new();
        for (pattern, class) in [
            (r"\p{L}", Class::Letter),
            (r"\p{N}", Class::Number),
            (r"\s", Class::Space),
        ] {
            for (lo, hi) in class_ranges(pattern) {
                for c in lo..=hi.min(127) {
                    ascii[c as usize] = class;
                }
                if hi >= 128 {
                    ranges.push((lo.max(128), hi, class));
                }
            }
        }
        ranges.sort_unstable_by_key(|r| r.0);
        Classes { ascii, ranges }
    })
}

impl Classes {
    fn of(&self, c: char) -> Class {
        let u = c as u32;
        if u < 128 {
            return self.ascii[u as usize];
        }
        let i = self.ranges.partition_point(|r| r.1 < u);
        match self.ranges.get(i) {
            Some(&(lo, _, class)) if lo <= u => class,
            _ => Class::Other,
        }
    }
}

/// The pieces of `text`, in order; together they are `text`.
pub(crate) fn pieces(text: &str) -> Pieces<'_> {
    Pieces {
        text,
        pos: 0,
        classes: classes(),
    }
}

pub(crate) struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    classes: &'static Classes,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        self.pos = self.piece_end(start);
        Some(&self.text[start..self.pos])
    }
}

/// Whether `c` is in `(?i:x)` for the ASCII letter `x` of a contraction:
/// simple case folding adds only the long s (U+017F) to these letters.
fn folds_to(c: Option<char>, x: char) -> bool {
    c.is_some_and(|c| c.eq_ignore_ascii_case(&x) || (x == 's' && c == '\u{17f}'))
}

impl Pieces<'_> {
    fn char_at(&self, i: usize) -> Option<char> {
        self.text.get(i..)?.chars().next()
    }

    fn at(&self, i: usize) -> Option<(char, Class)> {
        self.char_at(i).map(|c| (c, self.classes.of(c)))
    }

    /// The end of the run of `class` from `i`.
    fn run(&self, mut i: usize, class: Class) -> usize {
        let bytes = self.text.as_bytes();
        while i < bytes.len() {
            let b = bytes[i];
            if b < 128 {
                if self.classes.ascii[b as usize] != class {
                    break;
                }
                i += 1;
            } else {
                match self.at(i) {
                    Some((c, k)) if k == class => i += c.len_utf8(),
                    _ => break,
                }
            }
        }
        i
    }

    /// `i` moved past any `\r` and `\n`.
    fn newlines(&self, mut i: usize) -> usize {
        let bytes = self.text.as_bytes();
        while i < bytes.len() && matches!(bytes[i], b'\r' | b'\n') {
            i += 1;
        }
        i
    }

    /// `'s|'t|'re|'ve|'m|'ll|'d`, any case, after the apostrophe at `after - 1`.
    fn contraction(&self, after: usize) -> Option<usize> {
        let c1 = self.char_at(after)?;
        let n1 = after + c1.len_utf8();
        if ['s', 't', 'm', 'd'].iter().any(|&x| folds_to(Some(c1), x)) {
            return Some(n1);
        }
        let c2 = self.char_at(n1);
        let two = [('r', 'e'), ('v', 'e'), ('l', 'l')]
            .iter()
            .any(|&(x, y)| folds_to(Some(c1), x) && folds_to(c2, y));
        two.then(|| n1 + c2.map_or(0, char::len_utf8))
    }

    fn piece_end(&self, i: usize) -> usize {
        let Some((c0, k0)) = self.at(i) else {
            return self.text.len();
        };
        let n0 = i + c0.len_utf8();
        if c0 == '\'' {
            if let Some(end) = self.contraction(n0) {
                return end;
            }
        }
        // `[^\r\n\p{L}\p{N}]?\p{L}+`
        if k0 == Class::Letter {
            return self.run(n0, Class::Letter);
        }
        if k0 != Class::Number && c0 != '\r' && c0 != '\n' {
            if let Some((_, Class::Letter)) = self.at(n0) {
                return self.run(n0, Class::Letter);
            }
        }
        // `\p{N}{1,3}`
        if k0 == Class::Number {
            let mut end = n0;
            for _ in 0..2 {
                match self.at(end) {
                    Some((c, Class::Number)) => end += c.len_utf8(),
                    _ => break,
                }
            }
            return end;
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
        if k0 == Class::Other {
            return self.newlines(self.run(n0, Class::Other));
        }
        if c0 == ' ' {
            if let Some((c1, Class::Other)) = self.at(n0) {
                return self.newlines(self.run(n0 + c1.len_utf8(), Class::Other));
            }
        }
        // White space from here. `\s*[\r\n]+` ends after the run's last line break.
        let end = self.run(n0, Class::Space);
        let run = &self.text.as_bytes()[i..end];
        if let Some(k) = run.iter().rposition(|&b| b == b'\r' || b == b'\n') {
            return i + k + 1;
        }
        // `\s+(?!\S)`: the whole run at the end of the text, else all of it
        // but its last character (which then leads the next piece)...
        if end == self.text.len() {
            return end;
        }
        let last = self.text[..end]
            .char_indices()
            .next_back()
            .map_or(i, |(p, _)| p);
        if last > i {
            return last;
        }
        // ...and `\s+` for a single white-space character before text.
        n0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        pieces(text).collect()
    }

    #[test]
    fn cuts_as_the_cl100k_pattern_does() {
        assert_eq!(split("Hello world"), ["Hello", " world"]);
        assert_eq!(split("don't I'LL"), ["don", "'t", " I", "'LL"]);
        assert_eq!(split("12345 x"), ["123", "45", " x"]);
        assert_eq!(split("a  \n\n  b"), ["a", "  \n\n", " ", " b"]);
        assert_eq!(split("x   "), ["x", "   "]);
        assert_eq!(split("x \t y"), ["x", " \t", " y"]);
        assert_eq!(split("!!\n\nx"), ["!!\n\n", "x"]);
        assert_eq!(split(" ...\"quoted\""), [" ...\"", "quoted", "\""]);
        assert_eq!(split("\"quoted"), ["\"quoted"]);
        assert_eq!(split("\nword"), ["\n", "word"]);
        assert_eq!(split(""), Vec::<&str>::new());
    }

    /// The contractions' case folding is regex-syntax's: each letter's
    /// `(?i)` class is the letter, its capital, and for `s` the long s.
    #[test]
    fn contraction_letters_fold_as_regex_syntax_says() {
        for x in ['s', 't', 'r', 'e', 'v', 'm', 'l', 'd'] {
            for (lo, hi) in class_ranges(&format!("(?i:[{x}])")) {
                for u in lo..=hi {
                    let c = char::from_u32(u).unwrap();
                    assert!(folds_to(Some(c), x), "{c:?} folds to {x}");
                }
            }
            let upper = x.to_ascii_uppercase();
            assert!(folds_to(Some(upper), x));
        }
        assert!(!folds_to(Some('x'), 's'));
    }

    /// Random texts of awkward parts cut the same as by the `bpe` crate's
    /// regex-automata splitter (counts are checked against tiktoken in
    /// tests/token_counting.rs).
    #[test]
    fn cuts_as_the_regex_splitter_does() {
        let parts = [
            " ", "  ", "\n", "\r\n", "\r", "\t", "\u{b}", "\u{85}", "\u{a0}", "\u{2028}",
            "\u{3000}", "a", "Z", "é", "東京", "ǅ", "'", "'s", "'S", "'ſ", "'re", "'RE", "'vE",
            "'ll", "'Ll", "'m", "'d", "'x", "1", "23", "4567", "²", "Ⅻ", "١٢", "\u{300}", ".",
            "...", "\"", "-", "🙂", "_", "x y",
        ];
        let bpe = bpe_openai::cl100k_base();
        let mut seed: u64 = 11;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(seed % 17) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(parts[(seed >> 33) as usize % parts.len()]);
            }
            seed = seed.wrapping_add(1);
            let want: Vec<&str> = bpe.split(&text).collect();
            assert_eq!(split(&text), want, "{text:?}");
        }
    }
}

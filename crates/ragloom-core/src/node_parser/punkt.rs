//! NLTK 3.10.4's Punkt sentence tokenizer with untrained (empty) parameters,
//! the sentence splitter LlamaIndex's `SentenceSplitter` relies on.
//!
//! With no abbreviations, collocations, sentence starters or orthographic
//! context learnt, Punkt reduces to a handful of rules, applied here in the
//! same order and on the same text windows as nltk so that every boundary
//! (including nltk's quirks) comes out identical:
//!
//! 1. candidates are `.`, `?` and `!` followed by closing punctuation or by
//!    whitespace and a further token;
//! 2. each candidate is judged on a short context (the word before it, the
//!    mark and what follows), tokenised with Punkt's word regex;
//! 3. a `.`-final token breaks a sentence unless it is an initial (`J.`) or a
//!    number (`12.`) followed by a lower-case word or punctuation, or an
//!    initial followed by a capitalised word;
//! 4. closing quotes and brackets after a break are moved onto the sentence
//!    they close.
//!
//! Offsets are computed on bytes internally and reported in characters,
//! as Python's `str` indices.

use super::punkt_tables::{DECIMAL_DIGIT, LOWERCASE, UPPERCASE, WORD_NON_DIGIT};
use crate::schema::is_py_space;

/// NLTK's `PunktSentenceTokenizer()` built without training text.
#[derive(Clone, Copy, Debug, Default)]
pub struct PunktSentenceTokenizer;

impl PunktSentenceTokenizer {
    /// The untrained tokenizer (nltk's default `PunktParameters`).
    pub fn new() -> Self {
        PunktSentenceTokenizer
    }

    /// Sentence spans `(start, end)` in characters, as nltk's
    /// `span_tokenize(text)` yields them (boundaries realigned).
    pub fn span_tokenize(&self, text: &str) -> Vec<(usize, usize)> {
        let spans = self.byte_spans(text);
        let mut offsets: Vec<usize> = spans.iter().flat_map(|&(s, e)| [s, e]).collect();
        bytes_to_chars(text, &mut offsets);
        offsets.chunks_exact(2).map(|p| (p[0], p[1])).collect()
    }

    /// The sentences of `text`, as nltk's `tokenize(text)` returns them.
    pub fn tokenize<'a>(&self, text: &'a str) -> Vec<&'a str> {
        self.byte_spans(text)
            .into_iter()
            .map(|(s, e)| text.get(s..e).unwrap_or(""))
            .collect()
    }

    /// Sentence spans in bytes; the order and content of nltk's spans.
    pub(crate) fn byte_spans(&self, text: &str) -> Vec<(usize, usize)> {
        self.byte_span_iter(text).collect()
    }

    /// [`Self::byte_spans`] one at a time: each stage looks at most one
    /// mark or slice ahead, so a text with a sentence every two bytes costs
    /// no memory per sentence.
    pub(crate) fn byte_span_iter<'a>(
        self,
        text: &'a str,
    ) -> impl Iterator<Item = (usize, usize)> + 'a {
        realign_boundaries(text, slices_from_text(text))
    }
}

/// Converts sorted-or-not byte offsets of `text` to character offsets in place.
fn bytes_to_chars(text: &str, offsets: &mut [usize]) {
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut chars = 0usize;
    let mut byte = 0usize;
    let mut iter = text.char_indices().peekable();
    for i in order {
        let target = offsets[i];
        while byte < target {
            match iter.next() {
                Some((_, c)) => {
                    byte += c.len_utf8();
                    chars += 1;
                }
                None => break,
            }
        }
        offsets[i] = chars;
    }
}

/// Whitespace as the `regex` module's `\s` sees it (Unicode `White_Space`).
fn is_re_space(c: char) -> bool {
    c.is_whitespace()
}

/// Punkt's `_re_non_word_chars`: punctuation that cannot be inside a word.
fn is_non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"' | ';' | '}' | ']' | '*' | ':' | '@' | '\'' | '(' | '{' | '[' | '?' | '!'
    ) || is_curly_quote(c)
}

/// Characters Punkt's `_re_word_start` refuses at the start of a word.
fn is_excluded_word_start(c: char) -> bool {
    matches!(
        c,
        '(' | '"'
            | '`'
            | '{'
            | '['
            | ':'
            | ';'
            | '&'
            | '#'
            | '*'
            | '@'
            | ')'
            | '}'
            | ']'
            | '-'
            | ','
    )
}

/// Closing punctuation `re_boundary_realignment` moves onto the sentence before.
fn is_closing(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}') || is_curly_quote(c)
}

/// The typographic quotes (single, double, guillemets) both sets above hold.
fn is_curly_quote(c: char) -> bool {
    matches!(
        c,
        '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}' | '\u{ab}' | '\u{bb}'
    )
}

fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|r| r.chars().next())
}

/// Length in bytes of Punkt's multi-character punctuation (`--`, `..`,
/// `. . .`) starting at byte `i`, if there is one.
fn multi_char_len(s: &str, i: usize) -> Option<usize> {
    let rest = s.get(i..)?;
    if rest.starts_with("--") {
        return Some(rest.len() - rest.trim_start_matches('-').len());
    }
    if rest.starts_with("..") {
        return Some(rest.len() - rest.trim_start_matches('.').len());
    }
    // `(?:\.\s){2,}\.`: greedy pairs, backing off one pair if the dot that
    // must close the run is missing. Only the count of pairs and the end of
    // the one before the last are needed, not a list as long as the run.
    let mut pairs = 0usize;
    let mut before_last = 0usize;
    let mut q = 0usize;
    loop {
        let mut it = rest[q..].chars();
        match (it.next(), it.next()) {
            (Some('.'), Some(w)) if is_re_space(w) => {
                before_last = q;
                q += 1 + w.len_utf8();
                pairs += 1;
            }
            _ => break,
        }
    }
    if pairs >= 2 && rest[q..].starts_with('.') {
        Some(q + 1)
    } else if pairs >= 3 {
        Some(before_last + 1)
    } else {
        None
    }
}

/// Whether a word token may end before byte `p`: the lookahead of Punkt's
/// word regex (whitespace, end, punctuation, multi-char punctuation, or a
/// comma that itself ends a word).
fn word_ends_at(s: &str, p: usize) -> bool {
    let Some(c) = char_at(s, p) else {
        return true;
    };
    if is_re_space(c) || is_non_word(c) || multi_char_len(s, p).is_some() {
        return true;
    }
    if c == ',' {
        let q = p + 1;
        return match char_at(s, q) {
            None => true,
            Some(n) => is_re_space(n) || is_non_word(n) || multi_char_len(s, q).is_some(),
        };
    }
    false
}

/// Punkt's `word_tokenize` on one line (no `\n` inside), one token at a
/// time: a context can be a whole text of one-character tokens.
fn word_tokenize(line: &str) -> impl Iterator<Item = &str> {
    let mut i = 0usize;
    std::iter::from_fn(move || {
        loop {
            let c = char_at(line, i)?;
            if is_re_space(c) {
                i += c.len_utf8();
                continue;
            }
            let end = if let Some(len) = multi_char_len(line, i) {
                i + len
            } else if !is_excluded_word_start(c) {
                let mut p = i + c.len_utf8();
                while !word_ends_at(line, p) {
                    p += char_at(line, p).map_or(1, char::len_utf8);
                }
                p
            } else {
                i + c.len_utf8()
            };
            let token = &line[i..end];
            i = end;
            return Some(token);
        }
    })
}

/// Punkt's `_tokenize_words`: the word tokens of every non-blank line.
fn tokenize_words(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .filter(|line| !line.trim_matches(is_py_space).is_empty())
        .flat_map(word_tokenize)
}

fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Python's `c.isupper()`.
fn is_py_upper(c: char) -> bool {
    in_table(UPPERCASE, c)
}

/// Python's `c.islower()`.
fn is_py_lower(c: char) -> bool {
    in_table(LOWERCASE, c)
}

/// `\d` of the `regex` module.
fn is_re_digit(c: char) -> bool {
    in_table(DECIMAL_DIGIT, c)
}

/// `PunktToken.is_initial`: `[^\W\d]\.$`, one letter and a period.
fn is_initial(tok: &str) -> bool {
    let mut chars = tok.chars();
    matches!(
        (chars.next(), chars.next(), chars.next()),
        (Some(c), Some('.'), None) if in_table(WORD_NON_DIGIT, c)
    )
}

/// Punkt's `_RE_NUMERIC`, `^-?[\.,]?\d[\d,\.-]*\.?$`. The greedy middle class
/// already holds `.`, so the pattern is: optional sign, optional leading
/// separator, a digit, then digits and separators only.
fn is_numeric(tok: &str) -> bool {
    let rest = tok.strip_prefix('-').unwrap_or(tok);
    let rest = rest
        .strip_prefix('.')
        .or_else(|| rest.strip_prefix(','))
        .unwrap_or(rest);
    let mut chars = rest.chars();
    chars.next().is_some_and(is_re_digit)
        && chars.all(|c| is_re_digit(c) || matches!(c, ',' | '.' | '-'))
}

/// Whether a token's type without its final period is `##number##`.
fn is_number_type(tok: &str) -> bool {
    let typ = if is_numeric(tok) {
        "##number##".to_string()
    } else {
        tok.to_lowercase()
    };
    let no_period = if typ.chars().nth(1).is_some() && typ.ends_with('.') {
        &typ[..typ.len() - 1]
    } else {
        typ.as_str()
    };
    no_period == "##number##"
}

/// The answers of Punkt's orthographic heuristic.
#[derive(PartialEq, Eq)]
enum Ortho {
    NotStarter,
    Unknown,
}

/// Punkt's `_ortho_heuristic` with an empty orthographic context: it can
/// only rule a sentence start out (punctuation, lower-case word) or shrug.
fn ortho_heuristic(tok: &str) -> Ortho {
    if matches!(tok, ";" | ":" | "," | "." | "!" | "?") {
        return Ortho::NotStarter;
    }
    if tok.chars().next().is_some_and(is_py_lower) {
        return Ortho::NotStarter;
    }
    Ortho::Unknown
}

/// Whether `tok` ends a sentence once both annotation passes have run,
/// `next` being the token after it.
fn is_sentbreak(tok: &str, next: &str) -> bool {
    let mut sentbreak = false;
    if matches!(tok, "." | "?" | "!") {
        sentbreak = true;
    } else if tok.len() >= 2 && tok.bytes().all(|b| b == b'.') {
        // an ellipsis: never a break on its own, and the second pass cannot
        // make it one without learnt sentence starters
        return false;
    } else if tok.ends_with('.') && !tok.ends_with("..") {
        sentbreak = true;
    }
    if !tok.ends_with('.') {
        return sentbreak;
    }
    let is_initial = is_initial(tok);
    if is_initial || is_number_type(tok) {
        let ortho = ortho_heuristic(next);
        if ortho == Ortho::NotStarter {
            return false;
        }
        if is_initial && next.chars().next().is_some_and(is_py_upper) {
            return false;
        }
    }
    sentbreak
}

/// nltk's `text_contains_sentbreak`: some token other than the last breaks.
fn text_contains_sentbreak(context: &str) -> bool {
    let mut toks = tokenize_words(context);
    let Some(mut prev) = toks.next() else {
        return false;
    };
    for tok in toks {
        if is_sentbreak(prev, tok) {
            return true;
        }
        prev = tok;
    }
    false
}

/// A match of Punkt's period-context regex: an end mark and what follows it.
#[derive(Clone, Copy)]
struct EndMark {
    /// Byte offset of the `.`, `?` or `!`.
    pos: usize,
    /// Byte offset where the `after_tok` lookahead ends.
    after_end: usize,
    /// Byte offset of `next_tok`, when whitespace and a token follow.
    next_tok: Option<usize>,
}

/// The end marks of `text` in order, found as they are asked for.
fn end_marks(text: &str) -> impl Iterator<Item = EndMark> + '_ {
    text.char_indices().filter_map(move |(pos, c)| {
        if !matches!(c, '.' | '?' | '!') {
            return None;
        }
        let after = pos + 1;
        let n = char_at(text, after)?;
        if is_non_word(n) {
            return Some(EndMark {
                pos,
                after_end: after + n.len_utf8(),
                next_tok: None,
            });
        }
        if !is_re_space(n) {
            return None;
        }
        let rest = &text[after..];
        let ws = rest.len() - rest.trim_start_matches(is_re_space).len();
        let tok_start = after + ws;
        let tail = &text[tok_start..];
        let tok_len = tail.find(is_re_space).unwrap_or(tail.len());
        (tok_len > 0).then_some(EndMark {
            pos,
            after_end: tok_start + tok_len,
            next_tok: Some(tok_start),
        })
    })
}

/// nltk's `_match_potential_end_contexts`: each kept mark with the byte
/// offset where its context (the word before it) starts. A mark whose word
/// overlaps the next mark's word is dropped, as nltk drops it.
/// Whether a mark is kept depends on the next one, so this runs one mark
/// behind [`end_marks`].
fn potential_end_contexts(text: &str) -> impl Iterator<Item = (EndMark, usize)> + '_ {
    let mut marks = end_marks(text);
    let mut prev_slice = (0usize, 0usize);
    let mut prev_mark: Option<EndMark> = None;
    std::iter::from_fn(move || {
        for mark in marks.by_ref() {
            let before = &text[prev_slice.1..mark.pos];
            // nltk treats "whitespace at index 0" as "no whitespace found".
            let start = match before.rfind([' ', '\t', '\n', '\r', '\x0b', '\x0c']) {
                Some(i) if i > 0 => prev_slice.1 + i + 1,
                _ => prev_slice.0,
            };
            let kept = prev_mark
                .filter(|_| prev_slice.1 <= start)
                .map(|pm| (pm, prev_slice.0));
            prev_mark = Some(mark);
            prev_slice = (start, mark.pos);
            if kept.is_some() {
                return kept;
            }
        }
        prev_mark.take().map(|pm| (pm, prev_slice.0))
    })
}

/// nltk's `_slices_from_text`: sentence slices before realignment, one at
/// a time.
fn slices_from_text(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut contexts = potential_end_contexts(text);
    let mut last_break = Some(0usize);
    std::iter::from_fn(move || {
        // `None` once the last slice, to the end of the text, is out
        let from = last_break?;
        for (mark, ctx_start) in contexts.by_ref() {
            if text_contains_sentbreak(&text[ctx_start..mark.after_end]) {
                last_break = Some(mark.next_tok.unwrap_or(mark.pos + 1));
                return Some((from, mark.pos + 1));
            }
        }
        last_break = None;
        Some((from, text.trim_end_matches(is_py_space).len()))
    })
}

/// `re_boundary_realignment.match(s)`: closing punctuation at the start of
/// `s` followed by whitespace, `--` or the end. Returns the byte length of
/// the punctuation and of the whole match.
fn boundary_realignment(s: &str) -> Option<(usize, usize)> {
    let mut p = 0usize;
    loop {
        let c = char_at(s, p)?;
        if !is_closing(c) {
            return None;
        }
        p += c.len_utf8();
        match char_at(s, p) {
            Some(w) if is_re_space(w) => {
                let rest = &s[p..];
                let ws = rest.len() - rest.trim_start_matches(is_re_space).len();
                return Some((p, p + ws));
            }
            None => return Some((p, p)),
            Some(_) if s[p..].starts_with("--") => return Some((p, p)),
            Some(_) => {}
        }
    }
}

fn slice_is_empty(text: &str, (s, e): (usize, usize)) -> bool {
    s >= e.min(text.len())
}

/// nltk's `_realign_boundaries`, one slice ahead of its output.
fn realign_boundaries<'a>(
    text: &'a str,
    slices: impl Iterator<Item = (usize, usize)> + 'a,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut slices = slices.peekable();
    let mut realign = 0usize;
    std::iter::from_fn(move || {
        loop {
            let (start, stop) = slices.next()?;
            let s1 = (start + realign, stop);
            let Some(&s2) = slices.peek() else {
                if !slice_is_empty(text, s1) {
                    return Some(s1);
                }
                continue;
            };
            let sentence2 = if s2.0 < s2.1 {
                text.get(s2.0..s2.1).unwrap_or("")
            } else {
                ""
            };
            if let Some((kept, end)) = boundary_realignment(sentence2) {
                realign = end;
                return Some((s1.0, s2.0 + kept));
            }
            realign = 0;
            if !slice_is_empty(text, s1) {
                return Some(s1);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sents(text: &str) -> Vec<&str> {
        PunktSentenceTokenizer::new().tokenize(text)
    }

    #[test]
    fn splits_plain_sentences() {
        assert_eq!(
            sents("Hello world. This is it! Is it? Yes."),
            ["Hello world.", "This is it!", "Is it?", "Yes."]
        );
    }

    #[test]
    fn initials_and_numbers_do_not_break() {
        assert_eq!(
            sents("J. R. R. Tolkien wrote it. Next."),
            ["J. R. R. Tolkien wrote it.", "Next."]
        );
        assert_eq!(sents("Item 3. and more."), ["Item 3. and more."]);
        assert_eq!(sents("Item 3. The end."), ["Item 3.", "The end."]);
    }

    #[test]
    fn closing_punctuation_is_realigned() {
        assert_eq!(sents("(Sent1.) Sent2."), ["(Sent1.)", "Sent2."]);
        assert_eq!(
            sents("He said \"Hi.\" Then left."),
            ["He said \"Hi.\"", "Then left."]
        );
    }

    #[test]
    fn spans_count_characters() {
        let t = PunktSentenceTokenizer::new();
        assert_eq!(t.span_tokenize("Été. Über."), vec![(0, 4), (5, 10)]);
        assert!(t.span_tokenize("   ").is_empty());
    }

    #[test]
    fn multi_char_punctuation() {
        assert_eq!(multi_char_len("--x", 0), Some(2));
        assert_eq!(multi_char_len("...x", 0), Some(3));
        assert_eq!(multi_char_len(". . .x", 0), Some(5));
        assert_eq!(multi_char_len(". . . x", 0), Some(5));
        assert_eq!(multi_char_len(". . x", 0), None);
        assert_eq!(
            word_tokenize("acting!!! I").collect::<Vec<_>>(),
            ["acting", "!", "!", "!", "I"]
        );
        assert_eq!(
            word_tokenize("a,b, c").collect::<Vec<_>>(),
            ["a,b", ",", "c"]
        );
    }

    #[test]
    fn numeric_tokens_as_python_regex() {
        // (token, what Python's `_RE_NUMERIC.match` says)
        let cases = [
            ("12.", true),
            ("-3", true),
            (".5", true),
            ("1,000.50", true),
            ("1-2", true),
            ("-", false),
            ("a1", false),
            ("1a", false),
            (",-5", false),
            ("-.5", true),
            ("--5", false),
            ("5..", true),
            ("\u{663}.", true),
            (".,5", false),
            ("1.2.3.", true),
            ("", false),
        ];
        for (tok, expected) in cases {
            assert_eq!(is_numeric(tok), expected, "{tok:?}");
        }
        assert!(is_number_type("12.") && is_number_type("3") && !is_number_type("a."));
        assert!(is_initial("J.") && is_initial("é.") && !is_initial("1.") && !is_initial("JR."));
    }

    /// Every code point, classified by nltk's regexes / Python's str methods
    /// (recorded in `charclasses.json`) and by the predicates used here.
    #[test]
    fn character_classes_equal_python() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/splitters/charclasses.json"
        );
        let data: serde_json::Value =
            crate::utils::read_json_file(std::path::Path::new(path)).unwrap_or_default();
        let class = |name: &str| -> Vec<(u32, u32)> {
            data[name]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|r| Some((r[0].as_u64()? as u32, r[1].as_u64()? as u32)))
                        .collect()
                })
                .unwrap_or_default()
        };
        let preds: [(&str, &dyn Fn(char) -> bool); 6] = [
            ("regex_s", &is_re_space),
            ("py_isspace", &is_py_space),
            ("regex_word_nondigit", &|c| is_initial(&format!("{c}."))),
            ("regex_d", &|c| is_numeric(&c.to_string())),
            ("py_isupper", &is_py_upper),
            ("py_islower", &is_py_lower),
        ];
        for (name, pred) in preds {
            let ranges = class(name);
            assert!(!ranges.is_empty(), "{name} missing from {path}");
            let mut mismatches = Vec::new();
            let mut r = ranges.iter().peekable();
            for cp in 0..=0x10FFFFu32 {
                let Some(c) = char::from_u32(cp) else {
                    continue;
                };
                while r.peek().is_some_and(|&&(_, hi)| hi < cp) {
                    r.next();
                }
                let expected = r.peek().is_some_and(|&&(lo, _)| lo <= cp);
                if pred(c) != expected {
                    mismatches.push(cp);
                }
            }
            assert!(
                mismatches.is_empty(),
                "{name}: {} code points differ, first {:x?}",
                mismatches.len(),
                &mismatches[..mismatches.len().min(20)]
            );
        }
    }
}

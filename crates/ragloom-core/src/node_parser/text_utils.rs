//! The split functions LlamaIndex's text splitters chain (its
//! `node_parser/text/utils.py`): by separator, by sentence, by regex, by character.
//!
//! Each returns slices of its input, and each has an iterator twin that
//! yields them one at a time, so a splitter holds no list as long as the text.

use super::punkt::PunktSentenceTokenizer;
use regex::Regex;

/// Python's `text.split(sep)` with the separator kept at the front of every
/// part but the first, and empty parts dropped (LlamaIndex's
/// `split_text_keep_separator`). An empty `sep` gives the whole text, where
/// Python would raise; splitters reject empty separators when configured.
pub fn split_text_keep_separator<'a>(text: &'a str, sep: &str) -> Vec<&'a str> {
    keep_separator_pieces(text, sep).collect()
}

/// [`split_text_keep_separator`]'s parts one at a time: a splitter walks
/// them without holding a list as long as the text.
pub fn keep_separator_pieces<'a, 'b>(text: &'a str, sep: &'b str) -> KeepSeparatorPieces<'a, 'b> {
    KeepSeparatorPieces {
        text,
        matches: (!sep.is_empty()).then(|| text.match_indices(sep)),
        sep_len: sep.len(),
        start: 0,
        first: true,
        done: false,
    }
}

/// The iterator of [`keep_separator_pieces`].
#[derive(Debug)]
pub struct KeepSeparatorPieces<'a, 'b> {
    text: &'a str,
    /// `None` for an empty separator, which yields the text whole.
    matches: Option<std::str::MatchIndices<'a, &'b str>>,
    sep_len: usize,
    /// Where the part after the last match starts.
    start: usize,
    first: bool,
    done: bool,
}

impl<'a> Iterator for KeepSeparatorPieces<'a, '_> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        while !self.done {
            let Some(matches) = self.matches.as_mut() else {
                self.done = true;
                return (!self.text.is_empty()).then_some(self.text);
            };
            let end = match matches.next() {
                Some((pos, _)) => pos,
                None => {
                    self.done = true;
                    self.text.len()
                }
            };
            // the separator precedes the part in the text, so the two are
            // one slice
            let from = if self.first {
                self.start
            } else {
                self.start - self.sep_len
            };
            self.first = false;
            self.start = end + self.sep_len;
            if from < end {
                return Some(&self.text[from..end]);
            }
        }
        None
    }
}

/// Every character of `text` as its own split (LlamaIndex `split_by_char`).
pub fn split_by_char(text: &str) -> Vec<&str> {
    char_pieces(text).collect()
}

/// [`split_by_char`]'s characters one at a time, as slices of `text`.
pub fn char_pieces(text: &str) -> impl Iterator<Item = &str> {
    text.char_indices()
        .map(move |(i, c)| &text[i..i + c.len_utf8()])
}

/// The matches of `regex` in `text`, as Python's `re.findall` of a pattern
/// without groups (LlamaIndex `split_by_regex`).
pub fn split_by_regex<'a>(text: &'a str, regex: &Regex) -> Vec<&'a str> {
    regex.find_iter(text).map(|m| m.as_str()).collect()
}

/// LlamaIndex's default `CHUNKING_REGEX`, `[^,.;。？！]+[,.;。？！]?|[,.;。？！]`,
/// matched by hand: clause runs that keep their closing mark.
pub fn split_by_default_chunking_regex(text: &str) -> Vec<&str> {
    default_chunking_pieces(text).collect()
}

/// [`split_by_default_chunking_regex`]'s clauses one at a time.
pub fn default_chunking_pieces(text: &str) -> impl Iterator<Item = &str> {
    fn is_mark(c: char) -> bool {
        matches!(c, ',' | '.' | ';' | '。' | '？' | '！')
    }
    let mut start = 0usize;
    std::iter::from_fn(move || {
        let rest = text.get(start..).filter(|r| !r.is_empty())?;
        // a mark closes the current run, or stands alone; a run with no
        // mark goes to the end of the text
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_mark(c))
            .map_or(rest.len(), |(i, c)| i + c.len_utf8());
        start += end;
        Some(&rest[..end])
    })
}

/// Sentences as LlamaIndex's `split_by_sentence_tokenizer` cuts them: each
/// runs from the start of its Punkt span to the start of the next one (the
/// last to the end of the text), so the whitespace between sentences stays
/// with the sentence before. Text outside every span (a whitespace-only
/// text) gives no sentences at all.
pub fn split_by_sentence_tokenizer(text: &str) -> Vec<&str> {
    sentence_pieces(text).collect()
}

/// [`split_by_sentence_tokenizer`]'s sentences one at a time, each found
/// when asked for: Punkt runs ahead by one sentence only.
pub fn sentence_pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut spans = PunktSentenceTokenizer::new()
        .byte_span_iter(text)
        .peekable();
    std::iter::from_fn(move || {
        let (start, _) = spans.next()?;
        let end = spans.peek().map_or(text.len(), |s| s.0);
        Some(if start <= end {
            text.get(start..end).unwrap_or("")
        } else {
            ""
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_separator_matches_python() {
        assert_eq!(split_text_keep_separator("a  b", " "), ["a", " ", " b"]);
        assert_eq!(split_text_keep_separator(" a", " "), [" a"]);
        assert_eq!(split_text_keep_separator("a ", " "), ["a", " "]);
        assert_eq!(
            split_text_keep_separator("p1\n\n\np2\n\n\n\np3", "\n\n\n"),
            ["p1", "\n\n\np2", "\n\n\n\np3"]
        );
        assert!(split_text_keep_separator("", " ").is_empty());
    }

    #[test]
    fn default_regex_equals_the_pattern() {
        #[allow(clippy::unwrap_used)]
        let re = Regex::new("[^,.;。？！]+[,.;。？！]?|[,.;。？！]").unwrap();
        for text in [
            "a, b. c; d",
            ",,x..",
            "東京。大阪？はい！",
            "",
            "no marks",
            "end.",
            ". start",
        ] {
            assert_eq!(
                split_by_default_chunking_regex(text),
                split_by_regex(text, &re),
                "{text:?}"
            );
        }
    }

    #[test]
    fn sentences_keep_trailing_whitespace() {
        assert_eq!(
            split_by_sentence_tokenizer("  One. Two.  Three."),
            ["  One. ", "Two.  ", "Three."]
        );
    }
}

//! The split functions LlamaIndex's text splitters chain (its
//! `node_parser/text/utils.py`): by separator, by sentence, by regex, by character.
//!
//! Each returns slices of its input, so splitting allocates nothing until
//! chunks are joined.

use super::punkt::PunktSentenceTokenizer;
use regex::Regex;

/// Python's `text.split(sep)` with the separator kept at the front of every
/// part but the first, and empty parts dropped (LlamaIndex's
/// `split_text_keep_separator`). An empty `sep` gives the whole text, where
/// Python would raise; splitters reject empty separators when configured.
pub fn split_text_keep_separator<'a>(text: &'a str, sep: &str) -> Vec<&'a str> {
    if sep.is_empty() {
        return if text.is_empty() { vec![] } else { vec![text] };
    }
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut first = true;
    for (pos, _) in text.match_indices(sep) {
        push_part(&mut out, text, start, pos, first, sep.len());
        first = false;
        start = pos + sep.len();
    }
    push_part(&mut out, text, start, text.len(), first, sep.len());
    out
}

/// Pushes `sep + text[start..end]` (the separator precedes the part in the
/// text, so it is one slice), skipping an empty first part.
fn push_part<'a>(
    out: &mut Vec<&'a str>,
    text: &'a str,
    start: usize,
    end: usize,
    first: bool,
    sep_len: usize,
) {
    let from = if first { start } else { start - sep_len };
    if from < end {
        out.push(&text[from..end]);
    }
}

/// Every character of `text` as its own split (LlamaIndex `split_by_char`).
pub fn split_by_char(text: &str) -> Vec<&str> {
    text.char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect()
}

/// The matches of `regex` in `text`, as Python's `re.findall` of a pattern
/// without groups (LlamaIndex `split_by_regex`).
pub fn split_by_regex<'a>(text: &'a str, regex: &Regex) -> Vec<&'a str> {
    regex.find_iter(text).map(|m| m.as_str()).collect()
}

/// LlamaIndex's default `CHUNKING_REGEX`, `[^,.;。？！]+[,.;。？！]?|[,.;。？！]`,
/// matched by hand: clause runs that keep their closing mark.
pub fn split_by_default_chunking_regex(text: &str) -> Vec<&str> {
    fn is_mark(c: char) -> bool {
        matches!(c, ',' | '.' | ';' | '。' | '？' | '！')
    }
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut in_run = false;
    for (i, c) in text.char_indices() {
        if is_mark(c) {
            // a mark closes the current run, or stands alone
            out.push(&text[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
            in_run = false;
        } else {
            in_run = true;
        }
    }
    if in_run {
        out.push(&text[start..]);
    }
    out
}

/// Sentences as LlamaIndex's `split_by_sentence_tokenizer` cuts them: each
/// runs from the start of its Punkt span to the start of the next one (the
/// last to the end of the text), so the whitespace between sentences stays
/// with the sentence before. Text outside every span (a whitespace-only
/// text) gives no sentences at all.
pub fn split_by_sentence_tokenizer(text: &str) -> Vec<&str> {
    let spans = PunktSentenceTokenizer::new().byte_spans(text);
    let mut out = Vec::with_capacity(spans.len());
    for (i, &(start, _)) in spans.iter().enumerate() {
        let end = spans.get(i + 1).map_or(text.len(), |s| s.0);
        out.push(if start <= end {
            text.get(start..end).unwrap_or("")
        } else {
            ""
        });
    }
    out
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

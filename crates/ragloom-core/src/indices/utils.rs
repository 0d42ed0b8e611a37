//! Helpers shared by the indices and postprocessors that ask an LLM to pick
//! nodes (LlamaIndex `indices/utils.py`): rendering a batch, reading the choice.

use crate::schema::{MetadataMode, Node};

/// LlamaIndex's `default_format_node_batch_fn`: `Document n:` and the node's
/// LLM-mode content, blocks separated by a blank line.
pub fn default_format_node_batch_fn(nodes: &[Node]) -> String {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| format!("Document {}:\n{}", i + 1, n.get_content(MetadataMode::Llm)))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first number in `s`: digits with an optional decimal part.
pub(crate) fn first_number(s: &str) -> Option<f32> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let rest = &s[start..];
    let mut end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if let Some(frac) = rest[end..].strip_prefix('.') {
        let digits = frac
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(frac.len());
        if digits > 0 {
            end += 1 + digits;
        }
    }
    rest[..end].parse().ok()
}

/// The number after a `doc`/`document` label (`Doc: 3`, `Document #3`, `doc 3`).
fn labelled_doc_number(line: &str) -> Option<i64> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("doc")?;
    let rest = line[at + 3..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '#' | '.'));
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

/// LlamaIndex's `default_parse_choice_select_answer_fn`, made robust.
///
/// Each line of the form `Doc: <n>, Relevance: <m>` gives a choice, read as
/// Python reads it (the number after the first `:` of the part before the
/// comma; the first number after the `:` of the part after it). Beyond
/// Python, and never panicking: a line that does not split into exactly two
/// comma parts is still read when it names a `Doc`/`Document` number
/// (`Doc 3 - Relevance 8`, `Doc: 1, Relevance: 2, extra`); other lines and
/// extra text are skipped; numbers outside `1..=num_choices` are dropped
/// (Python drops those above, and wraps 0 and negatives to other nodes); a
/// document listed twice counts once, at its first mention; a decimal
/// relevance keeps its decimals (Python keeps the integer part); a choice
/// with no readable relevance scores 1.0 (Python's score when no line has
/// one, and a misalignment of its two lists when only some lack one).
pub fn default_parse_choice_select_answer_fn(
    answer: &str,
    num_choices: usize,
) -> Vec<(usize, f32)> {
    let mut out: Vec<(usize, f32)> = Vec::new();
    for line in answer.split('\n') {
        let parts: Vec<&str> = line.split(',').collect();
        let python_num = (parts.len() == 2)
            .then(|| parts[0].split(':').nth(1))
            .flatten()
            .and_then(|s| s.trim().parse::<i64>().ok());
        let Some(num) = python_num.or_else(|| labelled_doc_number(line)) else {
            continue;
        };
        let Ok(num) = usize::try_from(num) else {
            continue;
        };
        if num == 0 || num > num_choices || out.iter().any(|(n, _)| *n == num) {
            continue;
        }
        let after_comma = parts
            .get(1)
            .and_then(|p| p.split(':').nth(1))
            .and_then(first_number);
        let labelled = || {
            let lower = line.to_ascii_lowercase();
            let at = lower.find("relevance")?;
            first_number(&line[at + "relevance".len()..])
        };
        let relevance = after_comma.or_else(labelled).unwrap_or(1.0);
        out.push((num, relevance));
    }
    out
}

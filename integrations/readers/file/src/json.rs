//! `JSONReader`: a JSON (or JSON Lines) file as documents, formatted as
//! LlamaIndex's `llama-index-readers-json` does, `levels_back` and `collapse_length` included.

use crate::util::{read_utf8, run_guarded};
use async_trait::async_trait;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result, float_repr, py_strip};
use serde_json::Value;
use std::path::Path;

mod stream;

/// Reads a JSON file (LlamaIndex `JSONReader`): one document per JSON value
/// (the file's, or each line's with [`is_jsonl`](Self::is_jsonl)), metadata
/// the file's alone.
///
/// The text is, as in LlamaIndex:
/// - `levels_back` unset, `clean_json` (the default): `json.dumps(data,
///   indent=0)` without the lines made only of brackets and commas;
/// - `levels_back` unset, `clean_json(false)`: `json.dumps(data)` on one line;
/// - `levels_back(n)`: one line per leaf, `key key ... value` with the last
///   `n` keys of its path (`0`: all of them); list items share their list's
///   path. With `collapse_length(c)`, an object or list whose `json.dumps`
///   is at most `c` characters is written whole on its path's line instead.
///   Leaves print as Python's `str` does (`True`, `None`, `1e+20`).
///
/// `ensure_ascii` escapes non-ASCII characters as `\uXXXX`; as in
/// LlamaIndex, below the top level the collapsed fragments ignore it.
/// Deviations: integers beyond 64 bits are read as floats and `NaN` /
/// `Infinity` literals are rejected (Python accepts both). Invalid JSON is an
/// [`Error::CorruptFile`] naming the file (and the line, for JSON Lines).
///
/// The text is written as the JSON is walked, with no tree of it in memory
/// (the file's text is held whole); an object with duplicate keys is
/// written as Python's dict holds it, the first position with the last value.
#[derive(Debug, Clone, Default)]
pub struct JSONReader {
    levels_back: Option<usize>,
    collapse_length: Option<usize>,
    ensure_ascii: bool,
    is_jsonl: bool,
    keep_structure_lines: bool,
}

impl JSONReader {
    /// LlamaIndex's defaults: no `levels_back`, no `collapse_length`,
    /// `ensure_ascii=False`, `is_jsonl=False`, `clean_json=True`.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many keys above each leaf to keep on its line (`0`: all).
    pub fn levels_back(mut self, levels_back: usize) -> Self {
        self.levels_back = Some(levels_back);
        self
    }

    /// Writes objects and lists of at most this many characters on one line
    /// (only with [`levels_back`](Self::levels_back)).
    pub fn collapse_length(mut self, collapse_length: usize) -> Self {
        self.collapse_length = Some(collapse_length);
        self
    }

    /// Whether non-ASCII characters are escaped (default `false`).
    pub fn ensure_ascii(mut self, ensure_ascii: bool) -> Self {
        self.ensure_ascii = ensure_ascii;
        self
    }

    /// Whether the file holds one JSON value per line (default `false`).
    pub fn is_jsonl(mut self, is_jsonl: bool) -> Self {
        self.is_jsonl = is_jsonl;
        self
    }

    /// Whether lines made only of `{}[],` are dropped (default `true`;
    /// ignored with [`levels_back`](Self::levels_back)).
    pub fn clean_json(mut self, clean_json: bool) -> Self {
        self.keep_structure_lines = !clean_json;
        self
    }

    /// The text of one JSON value.
    pub fn format_value(&self, data: &Value) -> String {
        match self.levels_back {
            None if !self.keep_structure_lines => dumps(data, Some(0), self.ensure_ascii)
                .split('\n')
                .filter(|line| !line.chars().all(|c| "{}[],".contains(c)))
                .collect::<Vec<_>>()
                .join("\n"),
            None => dumps(data, None, self.ensure_ascii),
            Some(levels_back) => {
                let mut lines = Vec::new();
                depth_first(
                    data,
                    levels_back,
                    self.collapse_length,
                    &mut Vec::new(),
                    self.ensure_ascii,
                    &mut lines,
                );
                lines.join("\n")
            }
        }
    }
}

#[async_trait]
impl FileReader for JSONReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let this = self.clone();
        run_guarded(path, move |path| {
            let text = read_utf8(path)?;
            let document =
                |text: String| Document::document(text).with_metadata_map(extra_info.clone());
            if !this.is_jsonl {
                let text = stream::render(&this, &text)
                    .map_err(|e| Error::corrupt(path, format!("not valid JSON: {e}")))?;
                return Ok(vec![document(text)]);
            }
            python_lines(&text)
                .enumerate()
                .map(|(i, line)| {
                    stream::render(&this, py_strip(line))
                        .map(document)
                        .map_err(|e| {
                            Error::corrupt(path, format!("line {} is not valid JSON: {e}", i + 1))
                        })
                })
                .collect()
        })
        .await
    }
}

/// The lines Python iterates in a text-mode file, without their breaks:
/// `\n`, `\r\n` and `\r` each end one, and a break at the end starts none.
fn python_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.find(['\r', '\n']) {
            Some(i) => {
                let after = if current[i..].starts_with("\r\n") {
                    i + 2
                } else {
                    i + 1
                };
                rest = Some(&current[after..]).filter(|r| !r.is_empty());
                Some(&current[..i])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// `_depth_first_yield` of llama-index-readers-json.
fn depth_first(
    data: &Value,
    levels_back: usize,
    collapse_length: Option<usize>,
    path: &mut Vec<String>,
    ensure_ascii: bool,
    out: &mut Vec<String>,
) {
    let tail = |path: &[String]| -> Vec<String> {
        // Python's `path[-levels_back:]`, where `-0` means the whole path.
        let start = if levels_back == 0 {
            0
        } else {
            path.len().saturating_sub(levels_back)
        };
        path[start..].to_vec()
    };
    match data {
        Value::Object(_) | Value::Array(_) => {
            // Only worth writing out when it may be collapsed (Python always does).
            if let Some(limit) = collapse_length {
                let json = dumps(data, None, ensure_ascii);
                if json.chars().count() <= limit {
                    let mut line = tail(path);
                    line.push(json);
                    out.push(line.join(" "));
                    return;
                }
            }
            // The recursive calls drop `ensure_ascii`, as LlamaIndex's do.
            match data {
                Value::Object(map) => {
                    for (key, value) in map {
                        path.push(key.clone());
                        depth_first(value, levels_back, collapse_length, path, false, out);
                        path.pop();
                    }
                }
                Value::Array(items) => {
                    for value in items {
                        depth_first(value, levels_back, collapse_length, path, false, out);
                    }
                }
                _ => {}
            }
        }
        leaf => {
            let mut line = tail(path);
            line.push(py_str_leaf(leaf));
            out.push(line.join(" "));
        }
    }
}

/// Python's `str()` of a JSON scalar.
fn py_str_leaf(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => number_text(n),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn number_text(n: &serde_json::Number) -> String {
    if n.is_f64() {
        n.as_f64().map_or_else(|| n.to_string(), float_repr)
    } else {
        n.to_string()
    }
}

/// Python's `json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)`:
/// `", "` and `": "` on one line; with an indent, items on their own lines
/// joined by `","`.
pub(crate) fn dumps(value: &Value, indent: Option<usize>, ensure_ascii: bool) -> String {
    let mut out = String::new();
    write_value(&mut out, value, indent, 0, ensure_ascii);
    out
}

fn write_value(out: &mut String, value: &Value, indent: Option<usize>, level: usize, ascii: bool) {
    let newline = |out: &mut String, level: usize| {
        if let Some(width) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', width * level));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => write_string(out, s, ascii),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write_value(out, item, indent, level + 1, ascii);
            }
            newline(out, level);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write_string(out, key, ascii);
                out.push_str(": ");
                write_value(out, item, indent, level + 1, ascii);
            }
            newline(out, level);
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str, ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04x}", unit));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_is_pythons() {
        let v = json!({"a": [1, 2.5, {"b": null}], "é": "x\"\n\u{1F600}", "e": {}});
        assert_eq!(
            dumps(&v, None, false),
            "{\"a\": [1, 2.5, {\"b\": null}], \"é\": \"x\\\"\\n\u{1F600}\", \"e\": {}}"
        );
        assert_eq!(
            dumps(&v, None, true),
            "{\"a\": [1, 2.5, {\"b\": null}], \"\\u00e9\": \"x\\\"\\n\\ud83d\\ude00\", \"e\": {}}"
        );
        assert_eq!(
            dumps(&json!({"a": [1, {}], "b": 2}), Some(0), false),
            "{\n\"a\": [\n1,\n{}\n],\n\"b\": 2\n}"
        );
        assert_eq!(
            dumps(&json!({"k": [1]}), Some(2), false),
            "{\n  \"k\": [\n    1\n  ]\n}"
        );
    }

    #[test]
    fn lines_split_as_python_iterates_a_text_file() {
        let old = |text: &str| -> Vec<String> {
            let text = text.replace("\r\n", "\n").replace('\r', "\n");
            let body = text.strip_suffix('\n').unwrap_or(&text);
            body.split('\n').map(str::to_string).collect()
        };
        let parts = ["a", "\n", "\r", "\r\n", "", "b c"];
        for n in 0..parts.len().pow(4) {
            let text: String = (0..4)
                .map(|i| parts[n / parts.len().pow(i) % parts.len()])
                .collect();
            let new: Vec<String> = python_lines(&text).map(str::to_string).collect();
            assert_eq!(new, old(&text), "{text:?}");
        }
    }

    #[test]
    fn leaves_print_as_python_str() {
        assert_eq!(py_str_leaf(&json!(true)), "True");
        assert_eq!(py_str_leaf(&json!(null)), "None");
        assert_eq!(py_str_leaf(&json!(1e20)), "1e+20");
        assert_eq!(py_str_leaf(&json!(3)), "3");
    }
}

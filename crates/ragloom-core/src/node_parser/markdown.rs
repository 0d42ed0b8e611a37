//! `MarkdownNodeParser`: one node per Markdown section, with the path of the
//! headers above it as `header_path` metadata, exactly as LlamaIndex 0.14.25 does.

use super::NodeParser;
use super::node_utils::build_nodes_with_source;
use super::options::{NodeParserOptions, node_parser_component, node_parser_options_setters};
use crate::error::Result;
use crate::schema::{Node, RelatedNodeInfo, is_py_space, py_strip};
use serde_json::{Value, json};

/// Splits documents at Markdown headers (LlamaIndex `MarkdownNodeParser`).
///
/// A line is a header when it starts with `#`s followed by one whitespace
/// character; lines between ```` ``` ```` fences (even indented ones) are
/// never headers. Each section's text starts with its header; its
/// `header_path` is the headers above it joined and surrounded by
/// `header_path_separator` (`"/"` alone at top level), e.g. `"/Title/Section/"`.
#[derive(Clone)]
pub struct MarkdownNodeParser {
    /// Metadata, Previous/Next links and node ids (every parser has them).
    pub options: NodeParserOptions,
    header_path_separator: String,
}

impl std::fmt::Debug for MarkdownNodeParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkdownNodeParser")
            .field("options", &self.options)
            .field("header_path_separator", &self.header_path_separator)
            .finish()
    }
}

impl Default for MarkdownNodeParser {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkdownNodeParser {
    /// Python's defaults: metadata and prev/next relationships included, separator `"/"`.
    pub fn new() -> Self {
        Self {
            options: NodeParserOptions::default(),
            header_path_separator: "/".into(),
        }
    }

    node_parser_options_setters!();

    /// The separator in `header_path` (default `"/"`).
    pub fn header_path_separator(mut self, sep: impl Into<String>) -> Self {
        self.header_path_separator = sep.into();
        self
    }

    /// The sections of one document, before offsets and relationships.
    pub fn get_nodes_from_node(&self, node: &Node) -> Vec<Node> {
        let mut out = Vec::new();
        let mut section = String::new();
        // Every section points to the document; the reference carries the
        // document's hash, computed once here rather than per section.
        let source = node.as_related_node_info();
        // (level, header text) of the headers enclosing the current line.
        let mut stack: Vec<(usize, &str)> = Vec::new();
        let mut in_code = false;
        for line in node.text.split('\n') {
            if line.trim_start_matches(is_py_space).starts_with("```") {
                in_code = !in_code;
                section.push_str(line);
                section.push('\n');
                continue;
            }
            if !in_code {
                if let Some((level, header)) = parse_header(line) {
                    self.push_section(&mut out, &section, node, &source, &stack);
                    while stack.last().is_some_and(|(l, _)| *l >= level) {
                        stack.pop();
                    }
                    stack.push((level, header));
                    section.clear();
                    section.push_str(&"#".repeat(level));
                    section.push(' ');
                    section.push_str(header);
                    section.push('\n');
                    continue;
                }
            }
            section.push_str(line);
            section.push('\n');
        }
        self.push_section(&mut out, &section, node, &source, &stack);
        out
    }

    fn push_section(
        &self,
        out: &mut Vec<Node>,
        section: &str,
        doc: &Node,
        source: &RelatedNodeInfo,
        stack: &[(usize, &str)],
    ) {
        let text = py_strip(section);
        if text.is_empty() {
            return;
        }
        // The section's own header is the top of the stack; its path is what is above.
        let above = &stack[..stack.len().saturating_sub(1)];
        let path = above
            .iter()
            .map(|(_, h)| *h)
            .collect::<Vec<_>>()
            .join(&self.header_path_separator);
        let built = build_nodes_with_source(
            vec![text.to_string()],
            doc,
            source,
            self.options.id_func.as_ref(),
        );
        for mut node in built {
            if self.options.include_metadata {
                let sep = &self.header_path_separator;
                let value = if path.is_empty() {
                    sep.clone()
                } else {
                    format!("{sep}{path}{sep}")
                };
                node.metadata
                    .insert("header_path".into(), Value::String(value));
            }
            out.push(node);
        }
    }
}

/// Python's `re.match(r"^(#+)\s(.*)", line)`: the level and the text after
/// the one whitespace character that follows the `#`s.
fn parse_header(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|b| *b == b'#').count();
    if level == 0 {
        return None;
    }
    let rest = &line[level..];
    let ws = rest.chars().next().filter(|c| is_py_space(*c))?;
    Some((level, &rest[ws.len_utf8()..]))
}

impl NodeParser for MarkdownNodeParser {
    fn get_nodes_from_documents(&self, documents: &[Node]) -> Result<Vec<Node>> {
        let mut all = Vec::new();
        for doc in documents {
            all.extend(self.get_nodes_from_node(doc));
        }
        self.options.postprocess(&mut all, documents);
        Ok(all)
    }
}

node_parser_component!(MarkdownNodeParser, "MarkdownNodeParser", |p| json!({
    "header_path_separator": p.header_path_separator,
}));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_need_one_whitespace_after_the_hashes() {
        assert_eq!(parse_header("## Two"), Some((2, "Two")));
        assert_eq!(parse_header("#\tTab"), Some((1, "Tab")));
        assert_eq!(parse_header("#  x "), Some((1, " x ")));
        assert_eq!(parse_header("#hashtag"), None);
        assert_eq!(parse_header("# "), Some((1, "")));
        assert_eq!(parse_header("text"), None);
    }
}

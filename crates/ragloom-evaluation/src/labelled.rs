//! Labelled questions for comparing retrieval: a question with the file and
//! words (or node ids) that answer it, read from JSONL or written by an LLM.

use super::qa_dataset::{QaGenerationOptions, generate_qa_embedding_pairs};
use ragloom_core::llms::Llm;
use ragloom_core::query_engine::passage::file_path;
use ragloom_core::schema::{MetadataMode, Node, NodeWithScore};
use ragloom_core::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One labelled question (a line of a JSONL question set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelledQuestion {
    /// The question as a user would ask it.
    pub question: String,
    /// The file that answers it, as ingested (a name or a path under the folder).
    pub file: String,
    /// Words of the file that answer it: a retrieved node holding them is a hit.
    pub answer_span: String,
    /// The answer a judge compares with (correctness), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answer: Option<String>,
    /// Whether the question was reworded away from the text's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paraphrased: Option<bool>,
    /// Node ids that answer it (questions an LLM wrote from a node); when
    /// given, they decide relevance instead of `file` and `answer_span`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_ids: Vec<String>,
}

impl LabelledQuestion {
    /// The predicate that says which retrieved nodes answer this question.
    pub fn relevance(&self) -> Relevance {
        Relevance {
            span: squash(&self.answer_span),
            file: self.file.replace('\\', "/"),
            ids: self.node_ids.iter().cloned().collect(),
        }
    }
}

/// Which retrieved nodes answer a [`LabelledQuestion`]: one whose id is
/// labelled, or else one from the labelled file whose text holds the answer
/// span (whitespace runs compared as one space, so spans match across lines).
#[derive(Clone, Debug)]
pub struct Relevance {
    span: String,
    file: String,
    ids: HashSet<String>,
}

impl Relevance {
    /// Whether `node` answers the question.
    pub fn is_relevant(&self, node: &NodeWithScore) -> bool {
        if !self.ids.is_empty() {
            return self.ids.contains(node.node.node_id());
        }
        same_file(file_path(&node.node.metadata), &self.file)
            && squash(&node.node.get_content(MetadataMode::None)).contains(&self.span)
    }
}

/// Runs of whitespace as one space.
pub(crate) fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `path` (a node's `file_path`) is the labelled `file` (already with `/`).
fn same_file(path: &str, file: &str) -> bool {
    let path = path.replace('\\', "/");
    path == file || path.ends_with(&format!("/{file}"))
}

/// Reads a JSONL question set: one [`LabelledQuestion`] per line, blank
/// lines skipped. A line that does not parse, or labels nothing (no answer
/// span and no node id), is an [`Error::InvalidInput`] naming it; a file
/// that cannot be read is an [`Error::Io`].
pub fn read_labelled_questions(path: &Path) -> Result<Vec<LabelledQuestion>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("reading", path, e))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: LabelledQuestion = serde_json::from_str(line).map_err(|e| {
            Error::invalid(
                format!(
                    "{} line {} (each line needs \"question\", \"file\" and \"answer_span\" strings)",
                    path.display(),
                    i + 1
                ),
                e,
            )
        })?;
        if row.answer_span.trim().is_empty() && row.node_ids.is_empty() {
            return Err(Error::InvalidInput(format!(
                "{} line {}: empty answer_span (give the words of the file that answer the question)",
                path.display(),
                i + 1
            )));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(Error::InvalidInput(format!(
            "{} holds no questions (one JSON object per line)",
            path.display()
        )));
    }
    Ok(rows)
}

/// Up to `n` questions an LLM writes about nodes spread evenly over `nodes`
/// (two per node, LlamaIndex's `generate_qa_embedding_pairs`), each labelled
/// with the node it was written from. Documents among `nodes` are skipped.
pub async fn generate_labelled_questions(
    nodes: Vec<Node>,
    llm: &dyn Llm,
    n: usize,
    show_progress: bool,
) -> Result<Vec<LabelledQuestion>> {
    if n == 0 {
        return Err(Error::InvalidInput(
            "generating questions needs n of at least 1".to_owned(),
        ));
    }
    let mut nodes: Vec<Node> = nodes.into_iter().filter(|n| !n.is_document()).collect();
    nodes.sort_by(|a, b| a.node_id().cmp(b.node_id()));
    let wanted = n.div_ceil(2).min(nodes.len()).max(1);
    let step = (nodes.len() / wanted).max(1);
    let picked: Vec<Node> = nodes.into_iter().step_by(step).take(wanted).collect();
    let options = QaGenerationOptions {
        show_progress,
        ..QaGenerationOptions::default()
    };
    let ds = generate_qa_embedding_pairs(&picked, llm, &options).await?;
    let by_id: HashMap<&str, &Node> = picked.iter().map(|n| (n.node_id(), n)).collect();
    let mut out: Vec<LabelledQuestion> = ds
        .queries
        .iter()
        .map(|(id, q)| {
            let ids = ds.relevant_docs.get(id).cloned().unwrap_or_default();
            let file = ids
                .first()
                .and_then(|i| by_id.get(i.as_str()))
                .map(|n| file_path(&n.metadata).to_owned())
                .unwrap_or_default();
            LabelledQuestion {
                question: q.clone(),
                file,
                answer_span: String::new(),
                reference_answer: None,
                paraphrased: None,
                node_ids: ids,
            }
        })
        .collect();
    out.truncate(n);
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(path: &str, text: &str) -> NodeWithScore {
        let mut node = Node::text_node(text);
        node.metadata.insert("file_path".into(), json!(path));
        NodeWithScore::new(node, None)
    }

    fn question(file: &str, span: &str) -> LabelledQuestion {
        serde_json::from_value(json!({"question": "q", "file": file, "answer_span": span})).unwrap()
    }

    #[test]
    fn a_node_answers_when_it_is_from_the_file_and_holds_the_span() {
        let r = question("a/b.txt", "the  quick\nfox").relevance();
        assert!(r.is_relevant(&node("/data/a/b.txt", "see the quick fox run")));
        assert!(r.is_relevant(&node("a\\b.txt", "the quick fox")));
        assert!(!r.is_relevant(&node("/data/xa/b.txt", "the quick fox")));
        assert!(!r.is_relevant(&node("/data/a/b.txt", "the slow fox")));
    }

    #[test]
    fn labelled_node_ids_decide_alone() {
        let mut q = question("b.txt", "");
        let hit = node("elsewhere.txt", "anything");
        q.node_ids = vec![hit.node.node_id().to_owned()];
        assert!(q.relevance().is_relevant(&hit));
        assert!(!q.relevance().is_relevant(&node("b.txt", "")));
    }

    #[test]
    fn a_question_set_names_its_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("set.jsonl");
        std::fs::write(
            &path,
            "{\"question\":\"q\",\"file\":\"f\",\"answer_span\":\"s\"}\n\n{\"question\":1}\n",
        )
        .unwrap();
        let err = read_labelled_questions(&path).unwrap_err().to_string();
        assert!(err.contains("line 3"), "{err}");
        std::fs::write(
            &path,
            "{\"question\":\"q\",\"file\":\"f\",\"answer_span\":\" \"}\n",
        )
        .unwrap();
        let err = read_labelled_questions(&path).unwrap_err().to_string();
        assert!(err.contains("empty answer_span"), "{err}");
        std::fs::write(&path, "\n\n").unwrap();
        assert!(read_labelled_questions(&path).is_err());
        let missing = read_labelled_questions(&dir.path().join("none.jsonl")).unwrap_err();
        assert!(matches!(missing, Error::Io { .. }), "{missing}");
        std::fs::write(
            &path,
            "{\"question\":\"q\",\"file\":\"f\",\"answer_span\":\"s\"}\n",
        )
        .unwrap();
        assert_eq!(read_labelled_questions(&path).unwrap().len(), 1);
    }
}

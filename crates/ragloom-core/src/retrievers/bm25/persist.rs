//! Persisting a [`BM25Retriever`] in the folder layout of LlamaIndex's BM25
//! retriever (bm25s 0.3's `save`, plus `retriever.json`), so either side loads the other's.
//!
//! The layout: `params.index.json`, `vocab.index.json` (term → column),
//! `data.csc.index.npy` / `indices.csc.index.npy` / `indptr.csc.index.npy`
//! (the node × term weight matrix in compressed sparse columns: for each
//! term, the nodes containing it and their precomputed weights, which is the
//! retriever's inverted index as it is), `corpus.jsonl` (one node per line,
//! as `node_to_metadata_dict` plus `node_id`), `corpus.mmindex.json` (where
//! each line starts) and `retriever.json` (`similarity_top_k`, the filter mask).

use super::{BM25Retriever, Postings};
use crate::error::{Error, Result};
use crate::retrievers::tokenize::Bm25Tokenizer;
use crate::schema::Node;
use crate::utils::npy::{self, Dtype};
use crate::utils::{read_json_file as read_json, write_atomic};
use crate::vector_stores::{metadata_dict_to_node, node_to_metadata_dict};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

const PARAMS: &str = "params.index.json";
const VOCAB: &str = "vocab.index.json";
const DATA: &str = "data.csc.index.npy";
const INDICES: &str = "indices.csc.index.npy";
const INDPTR: &str = "indptr.csc.index.npy";
const NONOCCURRENCE: &str = "nonoccurrence_array.index.npy";
const CORPUS: &str = "corpus.jsonl";
const CORPUS_INDEX: &str = "corpus.mmindex.json";
const RETRIEVER: &str = "retriever.json";
/// The bm25s release whose file format this follows.
const BM25S_FORMAT_VERSION: &str = "0.3.16";

/// `params.index.json`, in bm25s's key order.
#[derive(Serialize, Deserialize)]
struct Params {
    #[serde(default = "default_k1")]
    k1: f64,
    #[serde(default = "default_b")]
    b: f64,
    #[serde(default)]
    delta: Option<f64>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    idf_method: Option<String>,
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    int_dtype: Option<String>,
    num_docs: usize,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    backend: Option<String>,
}

fn default_k1() -> f64 {
    super::DEFAULT_K1
}

fn default_b() -> f64 {
    super::DEFAULT_B
}

/// `retriever.json`: what LlamaIndex's `get_persist_args` writes.
#[derive(Serialize, Deserialize)]
struct RetrieverArgs {
    similarity_top_k: usize,
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    corpus_weight_mask: Option<Vec<i64>>,
}

impl BM25Retriever {
    /// Writes the index to `dir` (created if missing) in the layout
    /// LlamaIndex's `BM25Retriever.persist` writes, so Python's
    /// `BM25Retriever.from_persist_dir` loads it. Each file is written
    /// atomically. Nodes whose metadata is not flat are kept as they are
    /// (Python would have refused to index them).
    pub fn persist(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
        tracing::debug!(dir = %dir.display(), nodes = self.nodes.len(), "persisting BM25Retriever");

        let params = Params {
            k1: self.k1,
            b: self.b,
            delta: Some(0.5),
            method: Some("lucene".into()),
            idf_method: Some("lucene".into()),
            dtype: Some("float32".into()),
            int_dtype: Some("int32".into()),
            num_docs: self.nodes.len(),
            version: Some(BM25S_FORMAT_VERSION.into()),
            backend: Some("numpy".into()),
        };
        write_atomic(&dir.join(PARAMS), |w| {
            serde_json::to_writer_pretty(&mut *w, &params).map_err(std::io::Error::other)
        })?;

        // Terms by column, then bm25s's empty token, which has no column.
        let mut terms: Vec<(&str, u32)> =
            self.vocab.iter().map(|(t, &i)| (t.as_str(), i)).collect();
        terms.sort_unstable_by_key(|&(_, i)| i);
        let columns = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
        write_atomic(&dir.join(VOCAB), |w| {
            let mut map = serde_json::Map::new();
            for (term, id) in &terms {
                map.insert((*term).to_string(), Value::from(*id));
            }
            if !map.contains_key("") {
                map.insert(String::new(), Value::from(columns));
            }
            serde_json::to_writer(&mut *w, &map).map_err(std::io::Error::other)
        })?;

        let nnz: usize = self.postings.iter().map(Vec::len).sum();
        let mut data = Vec::with_capacity(nnz * 4);
        let mut indices = Vec::with_capacity(nnz * 4);
        let mut indptr = Vec::with_capacity((self.postings.len() + 1) * 8);
        let mut at: i64 = 0;
        indptr.extend_from_slice(&at.to_le_bytes());
        for list in &self.postings {
            for &(doc, weight) in list {
                data.extend_from_slice(&weight.to_le_bytes());
                indices.extend_from_slice(&i32::try_from(doc).unwrap_or(i32::MAX).to_le_bytes());
            }
            at += list.len() as i64;
            indptr.extend_from_slice(&at.to_le_bytes());
        }
        write_atomic(&dir.join(DATA), |w| npy::write(w, Dtype::F32, nnz, &data))?;
        write_atomic(&dir.join(INDICES), |w| {
            npy::write(w, Dtype::I32, nnz, &indices)
        })?;
        write_atomic(&dir.join(INDPTR), |w| {
            npy::write(w, Dtype::I64, self.postings.len() + 1, &indptr)
        })?;

        let lines: Vec<Vec<u8>> = self
            .nodes
            .par_iter()
            .map(|node| {
                let mut entry = node_to_metadata_dict(node, false, false)?;
                entry.insert("node_id".into(), Value::String(node.node_id().to_string()));
                let mut line = serde_json::to_vec(&entry)?;
                line.push(b'\n');
                Ok(line)
            })
            .collect::<Result<_>>()?;
        let mut offsets = Vec::with_capacity(lines.len());
        let mut offset = 0usize;
        for line in &lines {
            offsets.push(offset);
            offset += line.len();
        }
        write_atomic(&dir.join(CORPUS), |w| {
            lines.iter().try_for_each(|line| w.write_all(line))
        })?;
        write_atomic(&dir.join(CORPUS_INDEX), |w| {
            let text: Vec<String> = offsets.iter().map(usize::to_string).collect();
            write!(w, "[{}]", text.join(", "))
        })?;

        let args = RetrieverArgs {
            similarity_top_k: self.similarity_top_k,
            verbose: false,
            corpus_weight_mask: self
                .allowed
                .as_ref()
                .map(|a| a.iter().map(|&x| i64::from(x)).collect()),
        };
        write_atomic(&dir.join(RETRIEVER), |w| {
            serde_json::to_writer_pretty(&mut *w, &args).map_err(std::io::Error::other)
        })
    }

    /// Loads a retriever persisted by [`BM25Retriever::persist`] or by
    /// LlamaIndex's `BM25Retriever.persist`, with the default tokenizer
    /// (English stopwords and stemming, as Python's default).
    pub fn from_persist_dir(dir: impl AsRef<Path>) -> Result<Self> {
        Self::from_persist_dir_with_tokenizer(dir, Bm25Tokenizer::new())
    }

    /// [`from_persist_dir`](Self::from_persist_dir) with the tokenizer the
    /// index was built with (queries must be split the same way).
    ///
    /// A missing file is an [`Error::Io`] naming it; malformed contents an
    /// [`Error::CorruptFile`]; a bm25s variant with non-occurrence scores
    /// (`bm25l`, `bm25+`) an [`Error::Unsupported`].
    pub fn from_persist_dir_with_tokenizer(
        dir: impl AsRef<Path>,
        tokenizer: Bm25Tokenizer,
    ) -> Result<Self> {
        let dir = dir.as_ref();
        tracing::debug!(dir = %dir.display(), "loading BM25Retriever");
        let params: Params = read_json(&dir.join(PARAMS))?;
        if dir.join(NONOCCURRENCE).exists() {
            return Err(Error::Unsupported(format!(
                "{}: BM25 variant `{}` adds non-occurrence scores, which ragloom does not implement",
                dir.display(),
                params.method.as_deref().unwrap_or("?")
            )));
        }
        let vocab: HashMap<String, i64> = read_json(&dir.join(VOCAB))?;
        let postings = read_postings(dir, params.num_docs)?;
        let columns = postings.len() as i64;
        // The empty token (and any term without a column) can never score.
        let vocab: HashMap<String, u32> = vocab
            .into_iter()
            .filter(|(_, id)| (0..columns).contains(id))
            .filter_map(|(term, id)| Some((term, u32::try_from(id).ok()?)))
            .collect();
        let nodes = read_corpus(&dir.join(CORPUS))?;
        if nodes.len() != params.num_docs {
            return Err(Error::corrupt(
                dir.join(CORPUS),
                format!(
                    "{} nodes, but the index has {}",
                    nodes.len(),
                    params.num_docs
                ),
            ));
        }
        let args: RetrieverArgs = read_json(&dir.join(RETRIEVER))?;
        let allowed = match args.corpus_weight_mask {
            Some(mask) if mask.len() != nodes.len() => {
                return Err(Error::corrupt(
                    dir.join(RETRIEVER),
                    format!(
                        "corpus_weight_mask has {} entries for {} nodes",
                        mask.len(),
                        nodes.len()
                    ),
                ));
            }
            Some(mask) => Some(mask.into_iter().map(|m| m != 0).collect()),
            None => None,
        };
        if nodes.is_empty() {
            return Err(Error::corrupt(dir.join(CORPUS), "no nodes"));
        }
        Ok(Self {
            similarity_top_k: args.similarity_top_k.min(nodes.len()),
            nodes,
            vocab,
            postings,
            tokenizer,
            allowed,
            k1: params.k1,
            b: params.b,
        })
    }
}

/// The weight matrix's columns as postings, checked: `indptr` rises from 0
/// to the number of weights, and every node index is below `num_docs`.
fn read_postings(dir: &Path, num_docs: usize) -> Result<Postings> {
    let data_path = dir.join(DATA);
    let indices_path = dir.join(INDICES);
    let indptr_path = dir.join(INDPTR);
    let data = npy::read(&data_path)?
        .to_f32()
        .ok_or_else(|| Error::corrupt(&data_path, "weights are not floats"))?;
    let indices = npy::read(&indices_path)?
        .to_i64()
        .ok_or_else(|| Error::corrupt(&indices_path, "node indices are not integers"))?;
    let indptr = npy::read(&indptr_path)?
        .to_i64()
        .ok_or_else(|| Error::corrupt(&indptr_path, "column pointers are not integers"))?;
    if indices.len() != data.len() {
        return Err(Error::corrupt(
            &indices_path,
            format!("{} node indices for {} weights", indices.len(), data.len()),
        ));
    }
    let rises = indptr.first() == Some(&0)
        && indptr.windows(2).all(|w| w[0] <= w[1])
        && indptr.last().is_some_and(|&l| l as usize == data.len());
    if !rises {
        return Err(Error::corrupt(
            &indptr_path,
            "column pointers must rise from 0 to the number of weights",
        ));
    }
    let mut postings: Postings = Vec::with_capacity(indptr.len() - 1);
    for w in indptr.windows(2) {
        let span = w[0] as usize..w[1] as usize;
        let list = indices[span.clone()]
            .iter()
            .zip(&data[span])
            .map(|(&doc, &weight)| match u32::try_from(doc) {
                Ok(d) if (d as usize) < num_docs => Ok((d, weight)),
                _ => Err(Error::corrupt(
                    &indices_path,
                    format!("node index {doc} outside 0..{num_docs}"),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        postings.push(list);
    }
    Ok(postings)
}

/// The nodes of `corpus.jsonl`, one JSON object per line, in order.
fn read_corpus(path: &Path) -> Result<Vec<Node>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("reading", path, e))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(i, line)| {
            let entry: serde_json::Map<String, Value> = serde_json::from_str(line)
                .map_err(|e| Error::corrupt(path, format!("line {}: {e}", i + 1)))?;
            metadata_dict_to_node(&entry, None)
                .map_err(|e| Error::corrupt(path, format!("line {}: {e}", i + 1)))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::vector_stores::{MetadataFilter, MetadataFilters};

    fn corpus() -> Vec<Node> {
        [
            "The cat sat on the mat.",
            "Dogs chase cats around the garden.",
            "A bird in the hand is worth two in the bush.",
            "Cats and dogs, birds and bees: the garden is busy.",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Node::text_node(*t)
                .with_id(format!("n{i}"))
                .with_metadata("k", i as i64)
        })
        .collect()
    }

    fn ranked(r: &BM25Retriever, q: &str) -> Vec<(String, Option<f32>)> {
        r.retrieve_str(q)
            .into_iter()
            .map(|n| (n.node_id().to_string(), n.score))
            .collect()
    }

    #[test]
    fn a_persisted_retriever_answers_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let built = BM25Retriever::builder()
            .similarity_top_k(3)
            .filters(MetadataFilters::and([MetadataFilter::ne("k", 1)]))
            .build(corpus())
            .unwrap();
        built.persist(dir.path()).unwrap();
        let loaded = BM25Retriever::from_persist_dir(dir.path()).unwrap();
        assert_eq!(loaded.len(), 4);
        assert_eq!(loaded.similarity_top_k(), 3);
        for q in ["cats and dogs", "garden birds", "mat", "zebra"] {
            assert_eq!(ranked(&loaded, q), ranked(&built, q), "{q}");
        }
        // The filter mask survived: node 1 never comes back.
        assert!(
            ranked(&loaded, "dogs chase")
                .iter()
                .all(|(id, _)| id != "n1")
        );
        let retriever: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(RETRIEVER)).unwrap()).unwrap();
        assert_eq!(
            retriever["corpus_weight_mask"],
            serde_json::json!([1, 0, 1, 1])
        );
        let offsets: Vec<usize> =
            serde_json::from_slice(&std::fs::read(dir.path().join(CORPUS_INDEX)).unwrap()).unwrap();
        let corpus = std::fs::read(dir.path().join(CORPUS)).unwrap();
        assert_eq!(offsets.len(), 4);
        assert!(offsets[1..].iter().all(|&o| corpus[o - 1] == b'\n'));
    }

    #[test]
    fn damaged_folders_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        BM25Retriever::from_defaults(corpus(), 2)
            .unwrap()
            .persist(dir.path())
            .unwrap();
        // A corpus line short.
        let corpus_path = dir.path().join(CORPUS);
        let text = std::fs::read_to_string(&corpus_path).unwrap();
        let first_line_end = text.find('\n').unwrap() + 1;
        std::fs::write(&corpus_path, &text[first_line_end..]).unwrap();
        let err = BM25Retriever::from_persist_dir(dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("corpus.jsonl") && err.contains("3 nodes"),
            "{err}"
        );
        std::fs::write(&corpus_path, &text).unwrap();
        // Column pointers past the weights.
        let mut out = Vec::new();
        npy::write(
            &mut out,
            Dtype::I64,
            2,
            &[0u8, 0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        std::fs::write(dir.path().join(INDPTR), out).unwrap();
        let err = BM25Retriever::from_persist_dir(dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains(INDPTR), "{err}");
        std::fs::remove_file(dir.path().join(PARAMS)).unwrap();
        let err = BM25Retriever::from_persist_dir(dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains(PARAMS), "{err}");
    }
}

//! The fuzz targets' bodies: each takes arbitrary bytes and drives one public
//! parser of ragloom. `fuzz/` runs them under libFuzzer; `tests/replay.rs` replays the committed corpora.
//!
//! A crash is a panic escaping the public API, an abort, more than 2 GB of
//! memory or one input taking over 10 s. Errors are expected answers to bad
//! input and are ignored; the targets catch nothing themselves.

mod http;

pub use http::http_request;
use ragloom_core::Metadata;
use ragloom_core::Node;
use ragloom_core::node_parser::{NodeParser, SentenceSplitter};
use ragloom_core::readers::{FileReader, SimpleDirectoryReader};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Replaces libFuzzer's panic hook, which aborts on every panic, with a
/// silent one: the readers turn a parser's panic into an error (that is their
/// public behaviour), and a panic that escapes the target still aborts the
/// run through libFuzzer's own `catch_unwind`. Call it from the target's `init`.
pub fn let_the_api_catch_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// One fuzz target: its name (the folder of its corpus) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by the name `cargo xtask fuzz` and the corpora use.
pub const TARGETS: &[Target] = &[
    ("pdf", pdf),
    ("docx", docx),
    ("epub", epub),
    ("html", html),
    ("csv", csv),
    ("json_reader", json_reader),
    ("markdown", markdown),
    ("react_output", react_output),
    ("relaxed_json", relaxed_json),
    ("persisted_json", persisted_json),
    ("bm25_folder", bm25_folder),
    ("gguf", gguf),
    ("sentence_splitter", sentence_splitter),
    ("glob", glob),
    ("http_request", http_request),
];

/// The body of the target called `name`.
pub fn target(name: &str) -> Option<fn(&[u8])> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// A folder of this process for the files the readers need.
fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary folder"))
        .path()
}

/// `data` written to `name` in the scratch folder.
fn file(name: &str, data: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, data).expect("writing to the temporary folder");
    path
}

fn read_with(reader: &dyn FileReader, name: &str, data: &[u8]) {
    let path = file(name, data);
    let _ = futures::executor::block_on(reader.load_file(&path, Metadata::new()));
}

/// PDFReader; a 5 s extraction limit, so an input that the limit stops is
/// an answer, not a timeout.
pub fn pdf(data: &[u8]) {
    let reader = ragloom_readers_file::PDFReader::new().with_time_limit(Duration::from_secs(5));
    read_with(&reader, "f.pdf", data);
}

/// DocxReader.
pub fn docx(data: &[u8]) {
    read_with(&ragloom_readers_file::DocxReader::new(), "f.docx", data);
}

/// EpubReader.
pub fn epub(data: &[u8]) {
    read_with(&ragloom_readers_file::EpubReader::new(), "f.epub", data);
}

/// HTMLReader and HTMLTagReader.
pub fn html(data: &[u8]) {
    read_with(&ragloom_readers_file::HTMLReader::new(), "f.html", data);
    read_with(&ragloom_readers_file::HTMLTagReader::new(), "f.html", data);
}

/// CSVReader and PandasCSVReader.
pub fn csv(data: &[u8]) {
    read_with(&ragloom_readers_file::CSVReader::new(), "f.csv", data);
    read_with(&ragloom_readers_file::PandasCSVReader::new(), "f.csv", data);
}

/// JSONReader.
pub fn json_reader(data: &[u8]) {
    read_with(&ragloom_readers_file::JSONReader::new(), "f.json", data);
}

/// MarkdownReader.
pub fn markdown(data: &[u8]) {
    read_with(&ragloom_readers_file::MarkdownReader::new(), "f.md", data);
}

/// The ReAct output parser, whole and streaming.
pub fn react_output(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parser = ragloom_agent::react::output_parser::ReActOutputParser;
    let _ = parser.parse(&text, false);
    let _ = parser.parse(&text, true);
}

/// The JSON a model writes: fenced, cut to its braces, parsed leniently.
pub fn relaxed_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = ragloom_core::output_parsers::parse_relaxed_json(&text);
    let _ = ragloom_core::output_parsers::parse_json_markdown(&text);
}

/// LlamaIndex's persisted files: the same bytes as a docstore, an index
/// store, a vector store and a graph store.
pub fn persisted_json(data: &[u8]) {
    use ragloom_core::storage::{SimpleDocumentStore, SimpleIndexStore};
    let path = file("persisted.json", data);
    let _ = SimpleDocumentStore::from_persist_path(&path);
    let _ = SimpleIndexStore::from_persist_path(&path);
    if let Ok(store) = ragloom_core::vector_stores::SimpleVectorStore::from_persist_path(&path) {
        // A store that loads answers queries.
        let dim = store.dim().unwrap_or(0);
        let q = ragloom_core::vector_stores::VectorStoreQuery::new(vec![0.5; dim], 3);
        let _ = futures::executor::block_on(ragloom_core::vector_stores::VectorStore::query(
            &store, &q,
        ));
    }
    let _ = ragloom_core::storage::SimpleGraphStore::from_persist_path(&path);
}

/// The files of a persisted BM25 retriever, in the order
/// [`split_bm25_folder`] reads them from one input.
pub const BM25_FILES: &[&str] = &[
    "params.index.json",
    "vocab.index.json",
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
    "nonoccurrence_array.index.npy",
    "corpus.jsonl",
    "corpus.mmindex.json",
    "retriever.json",
];

/// What separates the files of a BM25 folder in one input.
pub const BM25_SEPARATOR: &[u8] = b"\n\x00--next file--\x00\n";

/// One input's parts, one per file of [`BM25_FILES`] (missing ones empty).
pub fn split_bm25_folder(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while parts.len() + 1 < BM25_FILES.len() {
        match rest
            .windows(BM25_SEPARATOR.len())
            .position(|w| w == BM25_SEPARATOR)
        {
            Some(i) => {
                parts.push(&rest[..i]);
                rest = &rest[i + BM25_SEPARATOR.len()..];
            }
            None => break,
        }
    }
    parts.push(rest);
    parts.resize(BM25_FILES.len(), &[]);
    parts
}

/// A BM25 retriever loaded from a folder (JSON and `.npy` files), then asked a question.
pub fn bm25_folder(data: &[u8]) {
    let dir = scratch().join("bm25");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creating the BM25 folder");
    for (name, part) in BM25_FILES.iter().zip(split_bm25_folder(data)) {
        std::fs::write(dir.join(name), part).expect("writing a BM25 file");
    }
    if let Ok(retriever) = ragloom_core::retrievers::BM25Retriever::from_persist_dir(&dir) {
        use ragloom_core::retrievers::Retriever;
        let _ = futures::executor::block_on(
            retriever.retrieve(&ragloom_core::QueryBundle::new("the rabbit and the queen")),
        );
    }
}

/// A GGUF file given to the candle LLM.
pub fn gguf(data: &[u8]) {
    let path = file("model.gguf", data);
    let _ = ragloom_llms_candle::CandleLlm::from_gguf(&path);
}

/// SentenceSplitter: the first two bytes choose the chunk size and overlap,
/// the rest is the text. Every chunk is a piece of the text, and the
/// offsets a chunk records re-slice the text to exactly that chunk.
pub fn sentence_splitter(data: &[u8]) {
    let (size, overlap, text) = match data {
        [a, b, rest @ ..] => (
            16 + usize::from(*a) * 4,
            usize::from(*b) % 64,
            String::from_utf8_lossy(rest).into_owned(),
        ),
        _ => return,
    };
    let splitter = SentenceSplitter::new()
        .chunk_size(size)
        .chunk_overlap(overlap);
    let doc = Node::document(text.clone());
    let Ok(nodes) = splitter.get_nodes_from_documents(std::slice::from_ref(&doc)) else {
        return;
    };
    let chars: Vec<char> = text.chars().collect();
    for node in &nodes {
        assert!(
            text.contains(&node.text),
            "a chunk is not a piece of the text: {:?}",
            node.text
        );
        if let (Some(start), Some(end)) = (node.start_char_idx, node.end_char_idx) {
            let slice: String = chars[start..end].iter().collect();
            assert_eq!(slice, node.text, "offsets {start}..{end}");
        }
    }
}

/// `exclude` patterns (LlamaIndex's globs), matched against a small tree;
/// the first byte says whether the walk is recursive.
pub fn glob(data: &[u8]) {
    let Some((flag, pattern)) = data.split_first() else {
        return;
    };
    let root = tree();
    let pattern = String::from_utf8_lossy(pattern);
    let _ = SimpleDirectoryReader::new(root)
        .recursive(flag & 1 == 1)
        .exclude([pattern.as_ref()])
        .input_files();
}

fn tree() -> &'static Path {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let root = scratch().join("tree");
        for f in [
            "a.txt",
            "b.md",
            "sub/c.txt",
            "sub/deep/d.txt",
            "x[1]/e.txt",
            "we*rd/f.txt",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("creating the tree");
            std::fs::write(&p, "x").expect("writing the tree");
        }
        root
    })
}

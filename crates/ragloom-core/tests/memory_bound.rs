//! Peak memory of every node parser on hostile texts (issue 40): each case
//! runs in a child process and must peak at 10x the text plus 100 MB.

use ragloom_core::Node;
use ragloom_core::node_parser::{
    HierarchicalNodeParser, MarkdownNodeParser, NodeParser, SentenceSplitter,
    SentenceWindowNodeParser, TokenTextSplitter,
};
use std::process::Command;

/// Names the case the child runs: `parser/input/bytes`. The child is this
/// test binary run again; it reports its own `VmHWM`, the kernel's record of
/// its peak resident memory, so tests running beside it do not disturb it.
const CASE_VAR: &str = "RAGLOOM_MEMORY_BOUND_CASE";
/// Bytes of text per case: large enough that the per-byte cost dwarfs the
/// allocator's and the tokenizer tables' fixed share, small enough for
/// debug builds to parse in seconds.
const INPUT_LEN: usize = 2 << 20;
/// The bound's fixed part: binary, tokenizer tables, thread stacks.
const FIXED: u64 = 100 << 20;
/// The bound's part per byte of text.
const PER_BYTE: u64 = 10;

/// Texts with no separator, or with one every byte or two: each splitter's
/// fallbacks, the Punkt tokenizer's candidates, and one huge
/// pre-tokenizer piece for the tokenizer's count. A `corpus:` unit is a
/// fuzzer seed (under `fuzz/corpus/`) repeated.
const INPUTS: &[(&str, &str)] = &[
    ("letter", "a"),
    ("nul", "\0"),
    ("a_space", "a "),
    ("a_dot", "a."),
    ("a_comma", "a,"),
    ("a_dot_space", "a. "),
    ("bang_space", "! "),
    ("multibyte", "東"),
    ("newlines", "\n"),
    ("spaces", " "),
    ("dot_space", ". "),
    ("prose", "corpus:sentence_splitter/seed-alice"),
    ("mixed", "corpus:sentence_splitter/seed-tiny"),
    ("markdown_guide", "corpus:markdown/seed-guide.md"),
];

/// Inputs whose parse is one node every few bytes: a sentence per `! ` for
/// the sentence-window parser, a section per `# a` line for the Markdown
/// parser. A node costs about 3 KB however short its text (see
/// docs/reliability.md), so these are bounded by the number of nodes,
/// which is Python's output too, not by the text.
const NODE_PER_FEW_BYTES: &[(&str, &str)] = &[
    ("sentence_window", "! "),
    // the text LlamaIndex's figure was taken on (its Punkt times out on `! `)
    ("sentence_window", "Go. "),
    ("sentence_window", "prose"),
    ("markdown", "# a\n"),
    ("markdown", "markdown_guide"),
];

/// The unit of `input`: a literal, or a corpus seed read from disk.
fn unit_of(input: &str) -> String {
    let unit = INPUTS
        .iter()
        .find(|(n, _)| *n == input)
        .map(|(_, u)| *u)
        .unwrap_or(input);
    match unit.strip_prefix("corpus:") {
        Some(seed) => {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fuzz/corpus")
                .join(seed);
            std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        }
        None => unit.to_string(),
    }
}

/// `unit` repeated to about `len` bytes.
fn hostile(unit: &str, len: usize) -> String {
    unit.repeat((len / unit.len().max(1)).max(1))
}

fn parser(name: &str) -> Option<Box<dyn NodeParser>> {
    Some(match name {
        "sentence" => Box::new(SentenceSplitter::new()),
        "sentence_256_50" => Box::new(SentenceSplitter::new().chunk_size(256).chunk_overlap(50)),
        "token" => Box::new(TokenTextSplitter::new()),
        "markdown" => Box::new(MarkdownNodeParser::new()),
        "sentence_window" => Box::new(SentenceWindowNodeParser::new()),
        "sentence_1024_20" => Box::new(SentenceSplitter::new().chunk_size(1024).chunk_overlap(20)),
        "hierarchical" => Box::new(HierarchicalNodeParser::from_defaults()),
        _ => return None,
    })
}

/// This process's peak resident memory in bytes (`VmHWM`, Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The child's side: parses one input and prints its peak. It does nothing
/// in a normal run, where the variable is unset.
#[test]
fn memory_bound_child() {
    let Ok(case) = std::env::var(CASE_VAR) else {
        return;
    };
    let mut parts = case.split('/');
    let (Some(name), Some(input), Some(len)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("bad case {case:?}");
    };
    let len: usize = len.parse().unwrap_or(INPUT_LEN);
    let unit = unit_of(input);
    let parser = parser(name).unwrap_or_else(|| panic!("no parser {name:?}"));
    let before = peak_rss().unwrap_or(0);
    let doc = Node::document(hostile(&unit, len)).with_id("hostile");
    let start = std::time::Instant::now();
    let nodes = parser
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .map(|n| n.len());
    let secs = start.elapsed().as_secs_f64();
    let peak = peak_rss().unwrap_or(u64::MAX);
    println!(
        "MEMORY_BOUND peak={peak} before={before} nodes={nodes:?} secs={secs:.2}",
        nodes = nodes.map_err(|e| e.to_string())
    );
}

/// Runs one case in a child and returns its peak in bytes.
fn child_peak(parser: &str, input: &str, len: usize) -> (u64, String) {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no test binary: {e}"));
    let out = Command::new(exe)
        .args([
            "--exact",
            "memory_bound_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CASE_VAR, format!("{parser}/{input}/{len}"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the child: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        // the harness's "test ... " may precede it on the line
        .find_map(|l| l.find("MEMORY_BOUND ").map(|at| &l[at..]))
        .unwrap_or_else(|| {
            panic!(
                "{parser}/{input}: child failed ({}):\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .to_string();
    let peak = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("peak="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(u64::MAX);
    (peak, line)
}

/// The text size: `RAGLOOM_MEMORY_BOUND_LEN` bytes, else [`INPUT_LEN`].
fn input_len() -> usize {
    std::env::var("RAGLOOM_MEMORY_BOUND_LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(INPUT_LEN)
}

/// Every input through `parser`, each within the bound; failures are
/// collected so one run shows every case over it.
fn check(parser: &str) {
    check_except(parser, &[]);
}

/// [`check`] but for the inputs named in `except`.
fn check_except(parser: &str, except: &[&str]) {
    let inputs = INPUTS
        .iter()
        .map(|(input, _)| *input)
        .filter(|input| !except.contains(input));
    check_inputs(parser, inputs, input_len());
}

fn check_inputs<'a>(parser: &str, inputs: impl Iterator<Item = &'a str>, len: usize) {
    let over = over_bound(parser, inputs, len);
    assert!(over.is_empty(), "{parser} over the bound: {over:#?}");
}

/// The inputs whose peak is over the bound, each figure printed as it comes.
fn over_bound<'a>(parser: &str, inputs: impl Iterator<Item = &'a str>, len: usize) -> Vec<String> {
    let bound = PER_BYTE * len as u64 + FIXED;
    let mut over = Vec::new();
    for input in inputs {
        let (peak, line) = child_peak(parser, input, len);
        eprintln!(
            "{parser}/{input}: {:.1} MB peak, {:.1} bytes per byte of text ({line})",
            peak as f64 / 1e6,
            peak as f64 / len as f64
        );
        if peak > bound {
            over.push(format!(
                "{input}: {:.1} MB > {:.1} MB",
                peak as f64 / 1e6,
                bound as f64 / 1e6
            ));
        }
    }
    over
}

#[test]
fn sentence_splitter_memory_is_bounded() {
    check("sentence");
}

#[test]
fn sentence_splitter_256_50_memory_is_bounded() {
    check("sentence_256_50");
}

/// The command line's settings.
#[test]
fn sentence_splitter_1024_20_memory_is_bounded() {
    check("sentence_1024_20");
}

#[test]
fn token_splitter_memory_is_bounded() {
    check("token");
}

/// Texts of many sections are [`NODE_PER_FEW_BYTES`]'s case.
#[test]
fn markdown_parser_memory_is_bounded() {
    check_except("markdown", &["markdown_guide"]);
}

/// Texts of many sentences are [`NODE_PER_FEW_BYTES`]'s case.
#[test]
fn sentence_window_parser_memory_is_bounded() {
    check_except(
        "sentence_window",
        &[
            "bang_space",
            "dot_space",
            "prose",
            "mixed",
            "markdown_guide",
        ],
    );
}

/// Its leaves are 128 tokens, a node every 108 bytes of a text whose
/// every byte is a token, at about 3 KB a node: 60 bytes per byte of such a
/// text, whatever the splitting costs (docs/reliability.md). Run with
/// `--ignored` to see the figures.
#[test]
#[ignore = "bounded by its node count, about 3 KB a node: over the bound on one-byte-token texts"]
fn hierarchical_parser_memory_is_bounded() {
    check("hierarchical");
}

/// The parsers whose output is a node every few bytes on some texts (see
/// [`NODE_PER_FEW_BYTES`]). Run with `--ignored` to see the figures.
#[test]
#[ignore = "bounded by its node count, about 3 KB a node, as Python's output is"]
fn node_per_few_bytes_parsers_memory_is_bounded() {
    // a sixteenth of the text: a node every two bytes is gigabytes already;
    // every case is measured before the verdict
    let over: Vec<String> = NODE_PER_FEW_BYTES
        .iter()
        .flat_map(|(parser, input)| {
            over_bound(parser, std::iter::once(*input), input_len() / 16)
                .into_iter()
                .map(move |o| format!("{parser}/{o}"))
        })
        .collect();
    assert!(over.is_empty(), "over the bound: {over:#?}");
}

//! Peak memory and time of the splitters on 60 MB of one repeated byte
//! (issue 40), each case in a child process that reports its own `VmHWM`.

use ragloom_core::Node;
use ragloom_core::node_parser::{NodeParser, SentenceSplitter, TokenTextSplitter};
use std::process::Command;
use std::time::Instant;

/// Names the case a child runs: `parser/byte`.
const CASE_VAR: &str = "RAGLOOM_SPLIT_MEMORY_CASE";

/// The cases: a parser and the byte its text repeats.
const CASES: &[(&str, &str)] = &[
    ("sentence", "a"),
    ("sentence", "nul"),
    ("sentence_1024_20", "a"),
    ("token", "a"),
];

fn parser(name: &str) -> Option<Box<dyn NodeParser>> {
    Some(match name {
        "sentence" => Box::new(SentenceSplitter::new()),
        "sentence_1024_20" => Box::new(SentenceSplitter::new().chunk_size(1024).chunk_overlap(20)),
        "token" => Box::new(TokenTextSplitter::new()),
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

/// The text's size: `RAGLOOM_SPLIT_MEMORY_MB`, else 60 (the figures in
/// docs/reliability.md, "Splitting memory").
fn megabytes() -> usize {
    std::env::var("RAGLOOM_SPLIT_MEMORY_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60)
}

/// The child: splits one text and prints its peak, the baseline before the
/// text existed, the node count and the time.
fn child(case: &str) {
    let (name, byte) = case.split_once('/').unwrap_or((case, "a"));
    let parser = parser(name).unwrap_or_else(|| panic!("no parser {name:?}"));
    let unit = if byte == "nul" { "\0" } else { byte };
    let before = peak_rss().unwrap_or(0);
    let doc = Node::document(unit.repeat(megabytes() << 20)).with_id("bench");
    let start = Instant::now();
    let nodes = parser
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .map(|n| n.len());
    let secs = start.elapsed().as_secs_f64();
    let peak = peak_rss().unwrap_or(0);
    println!("{peak} {before} {secs} {nodes:?}");
}

fn main() {
    if let Ok(case) = std::env::var(CASE_VAR) {
        child(&case);
        return;
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no bench binary: {e}"));
    let len = (megabytes() << 20) as f64;
    println!(
        "splitting {} MB of one repeated byte (peak RSS of a child process)",
        megabytes()
    );
    println!(
        "{:<18} {:>5} {:>10} {:>14} {:>8}  nodes",
        "parser", "byte", "peak MB", "bytes per byte", "secs"
    );
    for (name, byte) in CASES {
        let out = Command::new(&exe)
            .env(CASE_VAR, format!("{name}/{byte}"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run the child: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = stdout.split_whitespace().collect();
        let [peak, _before, secs, nodes] = fields[..] else {
            println!("{name:<18} {byte:>5}  failed: {}", out.status);
            continue;
        };
        let peak: f64 = peak.parse().unwrap_or(0.0);
        let secs: f64 = secs.parse().unwrap_or(0.0);
        println!(
            "{name:<18} {byte:>5} {:>10.1} {:>14.1} {secs:>8.2}  {nodes}",
            peak / 1e6,
            peak / len
        );
    }
}

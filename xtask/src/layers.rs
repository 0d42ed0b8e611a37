//! `cargo xtask layers`: the modules of ragloom-core and ragloom-workflow import
//! only from their own layer or below (docs/architecture.md, "The layers"),
//! checked by reading every `crate::` and `super::` path.

use std::fmt;
use std::path::{Path, PathBuf};

/// Layers, lowest first, each with a name and its top-level modules.
pub(crate) type Layers = &'static [(&'static str, &'static [&'static str])];

/// The layers of ragloom-core, lowest first, and the top-level modules in each.
/// A new top-level module must be placed here before the check passes.
pub(crate) const LAYERS: Layers = &[
    (
        "data model",
        &["schema", "error", "utils", "tokenizer", "data_structs"],
    ),
    (
        "models and prompts",
        &["llms", "embeddings", "prompts", "tools", "callbacks"],
    ),
    (
        "stores and parsing",
        &[
            "vector_stores",
            "storage",
            "readers",
            "node_parser",
            "extractors",
            "transform",
            "testing",
        ],
    ),
    (
        "indexing and retrieval",
        &[
            "ingestion",
            "durable",
            "indices",
            "objects",
            "retrievers",
            "postprocessor",
            "response_synthesizers",
            "selectors",
            "question_gen",
            "output_parsers",
            "settings",
        ],
    ),
    ("engines", &["query_engine", "chat_engine", "memory"]),
];

/// ragloom-workflow's modules, one layer each: a run's pieces from the event
/// up, so no two modules can import each other.
pub(crate) const WORKFLOW_LAYERS: Layers = &[
    ("events", &["event"]),
    ("run state", &["state"]),
    ("checkpoints", &["checkpoint"]),
    ("routing", &["routes"]),
    ("context", &["context"]),
    ("steps", &["step"]),
    ("run loop", &["run"]),
    ("handler", &["handler"]),
    ("workflow", &["workflow"]),
    ("drawing", &["draw"]),
];

/// The layer (1-based) of a top-level module, if it has one.
pub(crate) fn layer_of(layers: Layers, module: &str) -> Option<usize> {
    layers
        .iter()
        .position(|(_, modules)| modules.contains(&module))
        .map(|i| i + 1)
}

/// A module with its layer, as a violation names it.
fn describe(layers: Layers, module: &str) -> String {
    match layer_of(layers, module) {
        Some(l) => format!("`{module}` (layer {l}, {})", layers[l - 1].0),
        None => format!("`{module}` (no layer: add it to xtask's LAYERS)"),
    }
}

/// One reference from a module to a module in a higher layer, or to a module
/// that has no layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    pub file: PathBuf,
    pub line: usize,
    /// The importing module, with its layer.
    pub from: String,
    /// The imported module, with its layer.
    pub to: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} reaches up to {}",
            self.file.display(),
            self.line,
            self.from,
            self.to
        )
    }
}

/// Checks every `.rs` file under `src` (a crate's source folder). The crate
/// root (`lib.rs` and its inline modules, such as the prelude) re-exports every
/// layer and is not checked; every other file belongs to its top-level module.
pub(crate) fn check_crate(src: &Path, layers: Layers) -> Result<Vec<Violation>, String> {
    let mut files = Vec::new();
    collect_rs_files(src, &mut files)?;
    files.sort();
    let mut violations = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).map_err(|e| e.to_string())?;
        let module_path = module_path_of(rel);
        let Some(top) = module_path.first().cloned() else {
            continue;
        };
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let from_layer = layer_of(layers, &top);
        if from_layer.is_none() {
            violations.push(Violation {
                file: file.clone(),
                line: 1,
                from: describe(layers, &top),
                to: describe(layers, &top),
            });
            continue;
        }
        for (line, target) in referenced_top_modules(&text, &module_path) {
            if target == top {
                continue;
            }
            let upward = match layer_of(layers, &target) {
                Some(to) => Some(to) > from_layer,
                // `crate::some_macro!` and the like: names at the root that are not modules.
                None => false,
            };
            if upward {
                violations.push(Violation {
                    file: file.clone(),
                    line,
                    from: describe(layers, &top),
                    to: describe(layers, &target),
                });
            }
        }
    }
    Ok(violations)
}

fn collect_rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            collect_rs_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `tools/query_engine.rs` → `[tools, query_engine]`, `tools/mod.rs` → `[tools]`, `lib.rs` → `[]`.
fn module_path_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_string());
        }
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other,
}

/// Rust tokens that matter for paths, with their line; comments, strings and
/// character literals are skipped so that `"crate::x"` in a string is not a path.
fn tokenize(text: &str) -> Vec<(usize, Tok)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if at(i) == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            'r' | 'b' if is_raw_string_start(&chars, i) => {
                // r"..", r#".."#, br#".."#
                let mut j = i + 1;
                if chars[i] == 'b' {
                    j += 1;
                }
                let mut hashes = 0;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                j += 1; // the opening quote
                loop {
                    if j >= chars.len() {
                        break;
                    }
                    if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                        j += 1 + hashes;
                        break;
                    }
                    if chars[j] == '\n' {
                        line += 1;
                    }
                    j += 1;
                }
                i = j;
            }
            '\'' => {
                // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
                if at(i + 1) == '\\' {
                    let mut j = i + 2;
                    while j < chars.len() && chars[j] != '\'' {
                        j += 1;
                    }
                    i = j + 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let start = i;
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push((line, Tok::Ident(word.trim_start_matches('$').to_string())));
            }
            ':' if at(i + 1) == ':' => {
                out.push((line, Tok::PathSep));
                i += 2;
            }
            '{' => {
                out.push((line, Tok::Open));
                i += 1;
            }
            '}' => {
                out.push((line, Tok::Close));
                i += 1;
            }
            ',' => {
                out.push((line, Tok::Comma));
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                out.push((line, Tok::Other));
                i += 1;
            }
        }
    }
    out
}

fn is_raw_string_start(chars: &[char], i: usize) -> bool {
    let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    if prev_ident {
        return false;
    }
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
        if chars.get(j) != Some(&'r') {
            return false;
        }
    }
    j += 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

/// Every top-level module a file refers to through `crate::` or `super::`, with the line.
/// `module_path` is the file's module; inline `mod x { .. }` blocks are followed
/// so that `super::` inside them resolves correctly.
fn referenced_top_modules(text: &str, module_path: &[String]) -> Vec<(usize, String)> {
    let toks = tokenize(text);
    let mut out = Vec::new();
    // Inline modules open at this point: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let (line, tok) = &toks[i];
        match tok {
            Tok::Open => depth += 1,
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some((_, Tok::Ident(name))), Some((_, Tok::Open))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                }
            }
            Tok::Ident(w) if (w == "crate" || w == "super") && !preceded_by_sep(&toks, i) => {
                let mut current: Vec<String> = module_path.to_vec();
                current.extend(inline.iter().map(|(n, _)| n.clone()));
                let mut j = i;
                let mut rooted = w == "crate";
                if rooted {
                    current.clear();
                    j += 1;
                } else {
                    // super::super::...: climb one module per `super`.
                    while let Some((_, Tok::Ident(s))) = toks.get(j) {
                        if s != "super" {
                            break;
                        }
                        current.pop();
                        j += 1;
                        if toks.get(j).map(|t| &t.1) == Some(&Tok::PathSep) {
                            j += 1;
                        } else {
                            break;
                        }
                    }
                    j = j.saturating_sub(1);
                    rooted = current.is_empty();
                }
                if let Some(top) = current.first() {
                    out.push((*line, top.clone()));
                } else if rooted && toks.get(j).map(|t| &t.1) == Some(&Tok::PathSep) {
                    for name in path_heads(&toks, j + 1) {
                        out.push((*line, name));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn preceded_by_sep(toks: &[(usize, Tok)], i: usize) -> bool {
    i > 0 && toks[i - 1].1 == Tok::PathSep
}

/// The first segment of the path at `toks[i]`: `x` for `x::..`, and each
/// group member's first segment for `{x::.., y}`.
fn path_heads(toks: &[(usize, Tok)], i: usize) -> Vec<String> {
    match toks.get(i).map(|t| &t.1) {
        Some(Tok::Ident(name)) => vec![name.clone()],
        Some(Tok::Open) => {
            let mut heads = Vec::new();
            let mut depth = 0;
            let mut expect_head = true;
            for (_, tok) in &toks[i..] {
                match tok {
                    Tok::Open => {
                        depth += 1;
                        if depth > 1 {
                            expect_head = false;
                        }
                    }
                    Tok::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Comma if depth == 1 => expect_head = true,
                    Tok::Ident(name) if depth == 1 && expect_head => {
                        if name != "self" {
                            heads.push(name.clone());
                        }
                        expect_head = false;
                    }
                    _ => {}
                }
            }
            heads
        }
        _ => Vec::new(),
    }
}

/// The crates whose modules are layered, with their layers.
pub(crate) const CRATES: &[(&str, Layers)] = &[
    ("ragloom-core", LAYERS),
    ("ragloom-workflow", WORKFLOW_LAYERS),
];

/// `cargo xtask layers` on every layered crate.
pub(crate) fn run(root: &Path) -> Result<(), String> {
    let mut count = 0;
    for (krate, layers) in CRATES {
        eprintln!("==> layers: {krate} imports only downward");
        let violations = check_crate(&root.join("crates").join(krate).join("src"), layers)?;
        for v in &violations {
            eprintln!("{v}");
        }
        count += violations.len();
    }
    match count {
        0 => Ok(()),
        n => Err(format!(
            "{n} upward import(s) (layers: docs/architecture.md, xtask/src/layers.rs)"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn heads(text: &str, module: &[&str]) -> Vec<(usize, String)> {
        let path: Vec<String> = module.iter().map(|s| s.to_string()).collect();
        referenced_top_modules(text, &path)
    }

    #[test]
    fn paths_groups_and_lines() {
        let src = "use crate::schema::Node;\nuse crate::{llms::Llm, indices::{A, B}, self};\nfn f() { let _ = crate::agent::X; }\n";
        assert_eq!(
            heads(src, &["retrievers"]),
            vec![
                (1, "schema".to_string()),
                (2, "llms".to_string()),
                (2, "indices".to_string()),
                (3, "agent".to_string()),
            ]
        );
    }

    #[test]
    fn comments_strings_and_chars_are_not_paths() {
        let src = "// crate::agent\n/* crate::agent /* nested */ crate::agent */\nconst S: &str = \"crate::agent\";\nconst R: &str = r#\"crate::agent \"quoted\"\"#;\nconst C: char = '\"'; fn g<'a>(x: &'a str) {}\nuse crate::schema;\n";
        assert_eq!(heads(src, &["llms"]), vec![(6, "schema".to_string())]);
    }

    #[test]
    fn super_resolves_through_files_and_inline_modules() {
        // In indices/vector_store/base.rs, super::super is `indices`, and a third super the root.
        let src = "use super::retriever::R;\nuse super::super::query_engine::Q;\nmod tests { use super::super::super::agent::A; }\n";
        assert_eq!(
            heads(src, &["indices", "vector_store", "base"]),
            vec![
                (1, "indices".to_string()),
                (2, "indices".to_string()),
                (3, "indices".to_string()),
            ]
        );
        // From a top-level file, super:: is the crate root.
        assert_eq!(
            heads("use super::agent::A;\n", &["tools"]),
            vec![(1, "agent".to_string())]
        );
        assert_eq!(
            heads("mod tests { use super::super::agent::A; }\n", &["tools"]),
            vec![(1, "agent".to_string())]
        );
    }

    #[test]
    fn visibility_and_macro_crate_paths() {
        let src = "pub(crate) fn f() {}\nmacro_rules! m { () => { $crate::schema::X } }\n";
        assert_eq!(heads(src, &["llms"]), vec![(2, "schema".to_string())]);
    }

    /// The xtask folder, read at run time as `root()` does: the compile-time
    /// path can be another clone's when clones share one target directory.
    fn manifest_dir() -> PathBuf {
        std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
    }

    fn fixture(name: &str) -> PathBuf {
        manifest_dir().join("fixtures").join(name).join("src")
    }

    #[test]
    fn the_fixture_with_an_upward_import_fails_naming_file_line_and_layers() {
        let violations = check_crate(&fixture("layers-upward"), LAYERS).unwrap();
        assert_eq!(violations.len(), 2, "{violations:?}");
        let text: Vec<String> = violations.iter().map(ToString::to_string).collect();
        assert!(
            text[0].ends_with(
                "schema/mod.rs:4: `schema` (layer 1, data model) reaches up to `indices` (layer 4, indexing and retrieval)"
            ),
            "{}",
            text[0]
        );
        assert!(
            text[1].ends_with("tools.rs:6: `tools` (layer 2, models and prompts) reaches up to `query_engine` (layer 5, engines)"),
            "{}",
            text[1]
        );
    }

    #[test]
    fn a_module_without_a_layer_is_reported() {
        let violations = check_crate(&fixture("layers-unplaced"), LAYERS).unwrap();
        assert_eq!(violations.len(), 1);
        assert!(violations[0].to_string().contains("no layer"));
    }

    #[test]
    fn the_layered_crates_have_no_upward_import() {
        for (krate, layers) in CRATES {
            let src = manifest_dir().join("../crates").join(krate).join("src");
            let violations = check_crate(&src, layers).unwrap();
            let text: Vec<String> = violations.iter().map(ToString::to_string).collect();
            assert!(violations.is_empty(), "{krate}: {}", text.join("\n"));
        }
    }
}

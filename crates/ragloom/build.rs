//! Lists the README and every guide under docs/ that holds Rust code for the
//! doc tests of `src/lib.rs` (`mod guides`), so a new guide is compiled without being registered.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = root.join("docs");
    println!("cargo:rerun-if-changed={}", docs.display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("README.md").display()
    );
    let mut files = vec![root.join("README.md")];
    markdown_files(&docs, &mut files);
    files.sort();
    let top_level: HashSet<String> = files
        .iter()
        .filter(|f| f.parent() == Some(docs.as_path()))
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().to_lowercase()))
        .collect();
    let mut names = HashSet::new();
    let mut out = String::new();
    for file in files {
        // A guide that cannot be read or named fails the doc tests instead
        // of leaving its code untested.
        let Some(path) = file.to_str() else {
            let _ = writeln!(
                out,
                "compile_error!({:?});",
                format!("a guide's path is not UTF-8: {}", file.display())
            );
            continue;
        };
        let text = match fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) => {
                let _ = writeln!(
                    out,
                    "compile_error!({:?});",
                    format!("cannot read {path}: {e}")
                );
                continue;
            }
        };
        // Only guides with Rust blocks: rustdoc would take an unlabelled
        // fence in a prose-only page for Rust.
        if !text.contains("```rust") {
            continue;
        }
        let key = guide_key(file.strip_prefix(&root).unwrap_or(&file), &top_level);
        let mut name = format!("Guide{}", type_name(&key));
        while !names.insert(name.clone()) {
            name.push('_');
        }
        let _ = writeln!(
            out,
            "#[cfg(any(not(guide_only), guide = {key:?}))]\n#[doc = include_str!({path:?})]\npub struct {name};"
        );
    }
    let target = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default()).join("guides.rs");
    if let Err(e) = fs::write(&target, out) {
        println!("cargo:warning=could not write {}: {e}", target.display());
    }
}

/// The Markdown files under `dir`, links not followed.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => markdown_files(&path, out),
            Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "md") => out.push(path),
            _ => {}
        }
    }
}

/// What `--cfg guide="..."` names: `readme`, the file's name for
/// docs/querying.md and docs/integrations/mcp.md, and `integration-tools`
/// for docs/integrations/tools.md, whose name a guide above it has.
fn guide_key(relative: &Path, top_level: &HashSet<String>) -> String {
    let stem = relative
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let nested = relative.components().count() > 2;
    if nested && top_level.contains(&stem) {
        format!("integration-{stem}")
    } else {
        stem
    }
}

/// `file-readers` → `FileReaders`.
fn type_name(key: &str) -> String {
    key.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

//! Helpers shared by the integration tests that run Python LlamaIndex.
#![allow(dead_code)]

use std::ffi::OsString;

/// The reference Python (`RAGLOOM_PYTHON`, set by `cargo xtask ci`), or
/// `None` off CI after saying the test is skipped; on CI its absence fails.
pub(crate) fn reference_python(needs: &str) -> Option<OsString> {
    if let Some(python) = std::env::var_os("RAGLOOM_PYTHON") {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must set RAGLOOM_PYTHON (cargo xtask ci does)"
    );
    eprintln!("skipped: set RAGLOOM_PYTHON to a python with {needs} (cargo xtask ci does)");
    None
}

/// Runs `tests/py/<script>` with `args` under `python`; its stdout, after
/// asserting it succeeded (its stderr in the failure message).
pub(crate) fn run_script<I, A>(python: &std::ffi::OsStr, script: &str, args: I) -> Vec<u8>
where
    I: IntoIterator<Item = A>,
    A: AsRef<std::ffi::OsStr>,
{
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(script);
    let out = std::process::Command::new(python)
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()));
    assert!(
        out.status.success(),
        "python {script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The shared corpus folder (`paul_graham_essay.txt`, `sources/`), not
/// shipped with the crate: `$RAGLOOM_CORPUS_DIR`, else the nearest
/// `shared/corpus` above this crate (beside the repository or inside it).
pub(crate) fn find_corpus_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("RAGLOOM_CORPUS_DIR") {
        return Some(dir.into());
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/corpus"))
        .find(|c| c.join("paul_graham_essay.txt").is_file())
}

/// [`find_corpus_dir`], or a panic saying how to point at the corpus.
pub(crate) fn corpus_dir() -> std::path::PathBuf {
    find_corpus_dir().unwrap_or_else(|| {
        panic!(
            "the corpus folder shared/corpus was not found above {}; set \
             RAGLOOM_CORPUS_DIR to the folder holding paul_graham_essay.txt and sources/",
            env!("CARGO_MANIFEST_DIR")
        )
    })
}

//! Replays every committed fuzz input on stable: the seed corpora and the
//! crash cases turned regressions (`fuzz/corpus/<target>/`,
//! `fuzz/regressions/<target>/`). Each must return, without a panic, within 10 s.

use std::path::Path;
use std::time::{Duration, Instant};

const FUZZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");

/// The committed inputs of `kind` for `target`: in `corpus/`, the `seed-*`
/// files (what libFuzzer adds beside them is not committed); in
/// `regressions/`, every file.
fn inputs(kind: &str, target: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(FUZZ).join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            kind != "corpus"
                || p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_committed_input_runs_clean() {
    let mut replayed = 0;
    for (name, body) in ragloom_fuzz::TARGETS {
        let corpus = inputs("corpus", name);
        assert!(!corpus.is_empty(), "no seed corpus for target `{name}`");
        for path in corpus.iter().chain(&inputs("regressions", name)) {
            let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let started = Instant::now();
            body(&data);
            let took = started.elapsed();
            assert!(
                took < Duration::from_secs(10),
                "{name}: {} took {took:?}",
                path.display()
            );
            replayed += 1;
        }
    }
    assert!(replayed >= ragloom_fuzz::TARGETS.len());
}

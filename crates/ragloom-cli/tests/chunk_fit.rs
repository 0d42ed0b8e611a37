//! `--chunk-fit`: chunks sized to what a local embedding model reads whole,
//! counted with its own tokenizer; remembered by the index, shown by `status`.

#![allow(clippy::unwrap_used)]
// The local model needs the command's `local-models` feature; CI tests with every feature.
#![cfg(feature = "huggingface")]

mod common;
use common::{json_of, ragloom};
use std::path::{Path, PathBuf};

/// The committed tiny BERT folder, copied with `max_seq_length` 64: at its
/// own 16 tokens, a node's metadata alone (its path, a token per letter in
/// this tiny vocabulary) would not fit.
fn tiny_bert(home: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../integrations/embeddings/huggingface/tests/data/tiny_bert");
    let dest = home.join("tiny_bert");
    for entry in walk(&src) {
        let to = dest.join(entry.strip_prefix(&src).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    let config = dest.join("sentence_bert_config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    v["max_seq_length"] = 64.into();
    std::fs::write(&config, v.to_string()).unwrap();
    dest
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn status(home: &Path, data: &Path) -> serde_json::Value {
    let out = ragloom(home)
        .args(["--json", "status", "--files"])
        .arg(data)
        .assert()
        .success();
    json_of(&out.get_output().stdout)
}

#[test]
fn chunk_fit_counts_with_the_model_and_is_kept_until_undone() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("cats.txt"),
        // Words outside the tiny vocabulary: a token per letter for the model.
        "Zebras gallop through golden meadows. Elephants remember everything.\n".repeat(6),
    )
    .unwrap();
    let model = tiny_bert(home.path());
    let hf = |cmd: &mut assert_cmd::Command| {
        cmd.arg("--embed")
            .arg("huggingface")
            .arg("--embed-model")
            .arg(&model);
    };

    let mut ingest = ragloom(home.path());
    hf(&mut ingest);
    ingest
        .args(["ingest", "--chunk-fit"])
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["chunk_tokenizer"], "embedding-model", "{s}");
    // The model reads 64 tokens, 2 of them [CLS] and [SEP]; the overlap is a fifth.
    assert_eq!(
        (s["chunk_size"].as_u64(), s["chunk_overlap"].as_u64()),
        (Some(62), Some(12))
    );
    let fitted_nodes = s["nodes"].as_u64().unwrap();
    assert!(fitted_nodes > 5, "{s}");

    // No flag: the index keeps counting with the model.
    let mut again = ragloom(home.path());
    hf(&mut again);
    again.arg("ingest").arg(&data).assert().success();
    assert_eq!(
        status(home.path(), &data)["chunk_tokenizer"],
        "embedding-model"
    );

    // A smaller fitted size (the overlap kept: it still fits) stays through
    // later ingests without flags.
    let mut smaller = ragloom(home.path());
    hf(&mut smaller);
    smaller
        .args(["ingest", "--chunk-fit", "--chunk-size", "40"])
        .arg(&data)
        .assert()
        .success();
    let mut plain = ragloom(home.path());
    hf(&mut plain);
    plain.arg("ingest").arg(&data).assert().success();
    let s = status(home.path(), &data);
    assert_eq!(
        (s["chunk_size"].as_u64(), s["chunk_overlap"].as_u64()),
        (Some(40), Some(12)),
        "{s}"
    );

    // A size beyond what the model reads is refused.
    let mut too_big = ragloom(home.path());
    hf(&mut too_big);
    let out = too_big
        .args(["ingest", "--chunk-fit", "--chunk-size", "63"])
        .arg(&data)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("at most 62"));

    // Undone: cl100k tokens and the usual defaults, in a new build.
    let mut undo = ragloom(home.path());
    hf(&mut undo);
    undo.args(["ingest", "--no-chunk-fit"])
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["chunk_tokenizer"], "cl100k");
    assert_eq!(
        (s["chunk_size"].as_u64(), s["chunk_overlap"].as_u64()),
        (Some(1024), Some(200))
    );
    assert!(s["nodes"].as_u64().unwrap() < fitted_nodes);

    // A model that does not say its input length cannot be fitted.
    let out = ragloom(home.path())
        .args([
            "--embed",
            "ollama",
            "--embed-model",
            "m",
            "ingest",
            "--chunk-fit",
        ])
        .arg(&data)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("maximum input length"));
}

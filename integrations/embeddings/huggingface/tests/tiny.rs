//! Always-run parity tests on a tiny random BERT folder committed under
//! tests/data/tiny_bert: every pooling mode, instructions, truncation and
//! normalisation against vectors recorded from Python sentence-transformers.
#![allow(clippy::unwrap_used)]

use ragloom_core::Error;
use ragloom_core::embeddings::{Embedding, embed_in_batches};
use ragloom_embeddings_huggingface::{HuggingFaceEmbedding, PoolingMode};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn reference() -> Value {
    let text = std::fs::read_to_string(data().join("tiny_reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol,
            "{what}: component {i}: got {g}, want {w}"
        );
    }
}

/// A copy of the tiny folder with its own files, for changing them.
fn copy_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = data().join("tiny_bert");
    for entry in walk(&src) {
        let rel = entry.strip_prefix(&src).unwrap();
        let dest = dir.path().join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, dest).unwrap();
    }
    dir
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn every_pooling_mode_matches_sentence_transformers() {
    let reference = reference();
    let sentences = strings(&reference["sentences"]);
    let cases = reference["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 16);
    for case in cases {
        let dir = copy_folder();
        let cfg = serde_json::to_string(&case["pooling_config"]).unwrap();
        std::fs::write(dir.path().join("1_Pooling/config.json"), cfg).unwrap();
        let prompt = case["prompt"].as_str().unwrap();
        let normalize = case["normalize"].as_bool().unwrap();
        let embed = HuggingFaceEmbedding::builder(dir.path())
            .text_instruction(prompt)
            .normalize(normalize)
            .embed_batch_size(2)
            .build()
            .unwrap();
        let what = format!(
            "{} prompt={prompt:?} normalize={normalize}",
            case["pooling"]
        );
        let got = embed_in_batches(&embed, &sentences, false).await.unwrap();
        for (i, (g, w)) in got
            .iter()
            .zip(case["vectors"].as_array().unwrap())
            .enumerate()
        {
            assert_close(g, &floats(w), 1e-4, &format!("{what}, sentence {i}"));
        }
        assert_eq!(embed.dimensions(), Some(got[0].len()), "{what}");
    }
}

#[tokio::test]
async fn committed_folder_loads_as_saved_by_sentence_transformers_6() {
    let embed = HuggingFaceEmbedding::from_folder(data().join("tiny_bert")).unwrap();
    // Saved as `"pooling_mode": "mean"`, max length in tokenizer_config.json.
    assert_eq!(embed.pooling().modes, vec![PoolingMode::Mean]);
    assert_eq!(embed.max_length(), 16);
    assert!(embed.normalize(), "LlamaIndex's default normalize=True");
    assert_eq!(embed.embed_batch_size(), 10);
    assert!(embed.model_name().ends_with("tiny_bert"));
    let reference = reference();
    let case = reference["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["pooling"] == "mean_without_prompt" && c["prompt"] == "" && c["normalize"] == true
        })
        .unwrap();
    let sentences = strings(&reference["sentences"]);
    let got = embed.embed_texts(&sentences).await.unwrap();
    for (i, (g, w)) in got
        .iter()
        .zip(case["vectors"].as_array().unwrap())
        .enumerate()
    {
        assert_close(g, &floats(w), 1e-4, &format!("sentence {i}"));
    }
    // The query path uses the query instruction ("" here), so it matches too.
    let q = embed.embed_query(&sentences[0]).await.unwrap();
    assert_close(&q, &got[0], 1e-5, "query");
}

#[tokio::test]
async fn batching_and_order_do_not_change_vectors() {
    let reference = reference();
    let sentences = strings(&reference["sentences"]);
    let one = HuggingFaceEmbedding::builder(data().join("tiny_bert"))
        .embed_batch_size(1)
        .build()
        .unwrap();
    let all = HuggingFaceEmbedding::builder(data().join("tiny_bert"))
        .embed_batch_size(64)
        .build()
        .unwrap();
    let a = one.embed_texts(&sentences).await.unwrap();
    let b = all.embed_texts(&sentences).await.unwrap();
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_close(x, y, 1e-5, &format!("sentence {i}"));
    }
    assert!(one.embed_texts(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn max_length_override_cuts_long_texts() {
    let long = "the cat sits on the mat ".repeat(5);
    let short = HuggingFaceEmbedding::builder(data().join("tiny_bert"))
        .max_length(4)
        .build()
        .unwrap();
    // [CLS] the cat [SEP]: everything after "cat" is cut.
    let a = short
        .embed_texts(std::slice::from_ref(&long))
        .await
        .unwrap();
    let b = short.embed_texts(&["the cat".to_owned()]).await.unwrap();
    assert_close(&a[0], &b[0], 1e-5, "cut at 4 tokens");
    let full = HuggingFaceEmbedding::from_folder(data().join("tiny_bert")).unwrap();
    let c = full.embed_texts(&[long]).await.unwrap();
    assert!(a[0].iter().zip(&c[0]).any(|(x, y)| (x - y).abs() > 1e-3));
}

#[test]
fn bad_settings_and_files_are_clear_errors() {
    let folder = data().join("tiny_bert");
    let e = HuggingFaceEmbedding::builder(&folder)
        .embed_batch_size(0)
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    let e = HuggingFaceEmbedding::builder(&folder)
        .max_length(65)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("max_position_embeddings"), "{e}");

    let dir = copy_folder();
    std::fs::write(dir.path().join("model.safetensors"), b"not safetensors").unwrap();
    let e = HuggingFaceEmbedding::from_folder(dir.path()).unwrap_err();
    assert!(
        matches!(e, Error::CorruptFile { ref path, .. } if path.ends_with("model.safetensors")),
        "{e}"
    );

    let dir = copy_folder();
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    let e = HuggingFaceEmbedding::from_folder(dir.path()).unwrap_err();
    assert!(e.to_string().contains("model.safetensors"), "{e}");

    let dir = copy_folder();
    std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
    let e = HuggingFaceEmbedding::from_folder(dir.path()).unwrap_err();
    assert!(e.to_string().contains("tokenizer.json"), "{e}");

    let dir = copy_folder();
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    let e = HuggingFaceEmbedding::from_folder(dir.path()).unwrap_err();
    assert!(e.to_string().contains("tokenizer.json"), "{e}");

    let dir = copy_folder();
    let cfg_path = dir.path().join("config.json");
    let cfg = std::fs::read_to_string(&cfg_path).unwrap();
    std::fs::write(&cfg_path, cfg.replace("\"bert\"", "\"xlm-roberta\"")).unwrap();
    let e = HuggingFaceEmbedding::from_folder(dir.path()).unwrap_err();
    assert!(
        matches!(e, Error::Unsupported(_)) && e.to_string().contains("xlm-roberta"),
        "{e}"
    );

    let e = HuggingFaceEmbedding::from_folder(data().join("no_such_model")).unwrap_err();
    assert!(e.to_string().contains("no_such_model"), "{e}");
}

#[test]
fn debug_shows_settings() {
    let embed = HuggingFaceEmbedding::builder(data().join("tiny_bert"))
        .model_name("tiny")
        .query_instruction("query: ")
        .build()
        .unwrap();
    let dbg = format!("{embed:?}");
    assert!(
        dbg.contains("\"tiny\"") && dbg.contains("query: ") && dbg.contains("Mean"),
        "{dbg}"
    );
}

#[test]
fn chunks_split_with_the_model_tokenizer_fit_what_the_model_reads() {
    use ragloom_core::node_parser::{NodeParser, SentenceSplitter};
    use ragloom_core::{MetadataMode, Node, Tokenizer};
    use ragloom_embeddings_huggingface::ModelTokenizer;
    use std::sync::Arc;

    let t = ModelTokenizer::from_folder(&data().join("tiny_bert")).unwrap();
    assert_eq!(
        (t.max_length(), t.special_tokens(), t.chunk_budget()),
        (16, 2, 14)
    );
    // The folder's tokenizer lowercases and splits unknown words into letters.
    assert_eq!(t.count("The CAT"), t.count("the cat"));
    // Words outside the tiny vocabulary become a token per letter: many
    // more tokens for the model than for cl100k.
    let text =
        "The cat sits on the mat. Zebras gallop through golden meadows. Stock markets fell today. \
                Elephants remember everything. Which animal is resting on the mat?"
            .repeat(3);
    let doc = Node::document(text).with_metadata("k", "v");
    let budget = t.chunk_budget();
    let fitted = SentenceSplitter::new()
        .chunk_size(budget)
        .chunk_overlap(2)
        .tokenizer(Arc::new(t.clone()))
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .unwrap();
    assert!(fitted.len() > 5);
    for n in &fitted {
        let seen = n.get_content(MetadataMode::Embed);
        assert!(
            t.count(&seen) <= budget,
            "{seen:?}: {} tokens",
            t.count(&seen)
        );
    }
    // Counted in cl100k tokens, chunks of the same size run past what the model reads.
    let cl100k = SentenceSplitter::new()
        .chunk_size(budget)
        .chunk_overlap(2)
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .unwrap();
    assert!(
        cl100k
            .iter()
            .any(|n| t.count(&n.get_content(MetadataMode::Embed)) > budget)
    );
}

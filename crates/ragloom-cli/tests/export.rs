//! `ragloom export --llamaindex`: Python LlamaIndex loads the folder with
//! `load_index_from_storage` and sees the same nodes, hashes and top-k as the
//! live index (run live under `RAGLOOM_PYTHON`, which `cargo xtask ci` sets).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{json_of, live_db, ollama_embeddings as embeddings, ragloom};
use ragloom::sqlite::SqliteStore;
use ragloom::storage::docstore::DocStore;
use ragloom::vector_stores::{VectorStore, VectorStoreQuery};
use ragloom_core::testing::FaultServer;
use std::collections::BTreeMap;
use std::path::Path;

fn python() -> Option<std::ffi::OsString> {
    if let Some(p) = std::env::var_os("RAGLOOM_PYTHON") {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must set RAGLOOM_PYTHON"
    );
    eprintln!("skipped: set RAGLOOM_PYTHON to a python with llama-index-core");
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_loads_the_export_with_the_same_nodes_hashes_and_top_k() {
    let Some(python) = python() else { return };
    let server = FaultServer::start(vec![embeddings()]).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    std::fs::create_dir_all(&data).unwrap();
    for (name, text) in [
        (
            "boat.txt",
            "The boat engine was serviced in March by the harbour mechanic.",
        ),
        (
            "bees.txt",
            "The bees swarmed in June and settled in the old apple tree.",
        ),
        (
            "garden.md",
            "# Garden\n\nThe tomatoes grow along the south fence.\n\nMint spreads.",
        ),
    ] {
        std::fs::write(data.join(name), text).unwrap();
    }
    let url = server.url().to_owned();
    let (home_path, data_path) = (home.path().to_path_buf(), data.clone());
    let out_dir = home.path().join("exported");
    let out = out_dir.clone();
    let exported = tokio::task::spawn_blocking(move || {
        ragloom(&home_path)
            .env("OLLAMA_HOST", &url)
            .args(["ingest", "--embed", "ollama", "--embed-model", "m"])
            .arg(&data_path)
            .assert()
            .success();
        let done = ragloom(&home_path)
            .args(["export", "--json", "--llamaindex"])
            .arg(&out)
            .arg("--files")
            .arg(&data_path)
            .assert()
            .success();
        // A second export into the same folder is refused, not merged.
        ragloom(&home_path)
            .args(["export", "--llamaindex"])
            .arg(&out)
            .arg("--files")
            .arg(&data_path)
            .assert()
            .code(2);
        json_of(&done.get_output().stdout)
    })
    .await
    .unwrap();
    for f in [
        "docstore.json",
        "index_store.json",
        "default__vector_store.json",
        "image__vector_store.json",
        "graph_store.json",
    ] {
        assert!(out_dir.join(f).exists(), "{f}");
    }

    // What the live index holds.
    let store = SqliteStore::open(live_db(home.path())).unwrap();
    let docs = store.docstore().docs().await.unwrap();
    assert!(docs.len() >= 3);
    assert_eq!(exported["export"]["nodes"], docs.len());
    assert_eq!(exported["export"]["vectors"], docs.len());
    let nodes: BTreeMap<String, (String, String)> = docs
        .iter()
        .map(|n| (n.id_.clone(), (n.hash(), n.text.clone())))
        .collect();
    let hashes = store.docstore().get_all_document_hashes().await.unwrap();
    let query = vec![3.0f32, 2.0, 1.0, 1.0];
    let top = store
        .vector_store()
        .query(&VectorStoreQuery::new(query.clone(), 3))
        .await
        .unwrap();

    // What Python sees.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/load_export.py");
    let run = std::process::Command::new(&python)
        .arg(&script)
        .arg(&out_dir)
        .arg(serde_json::to_string(&query).unwrap())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen = json_of(&run.stdout);
    assert_eq!(seen["index_type"], "VectorStoreIndex");
    let py_nodes: BTreeMap<String, (String, String)> =
        serde_json::from_value(seen["nodes"].clone()).unwrap();
    assert_eq!(py_nodes, nodes);
    let indexed: Vec<String> = serde_json::from_value(seen["index_nodes"].clone()).unwrap();
    assert_eq!(indexed, nodes.keys().cloned().collect::<Vec<_>>());
    let py_hashes: BTreeMap<String, String> =
        serde_json::from_value(seen["hashes"].clone()).unwrap();
    assert_eq!(py_hashes, hashes);
    let py_top: Vec<(String, f32)> = serde_json::from_value(seen["top"].clone()).unwrap();
    assert_eq!(
        py_top.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>(),
        top.ids
    );
    for ((_, py), rs) in py_top.iter().zip(&top.similarities) {
        assert!((py - rs).abs() < 1e-5, "{py} vs {rs}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_without_vectors_exports_its_nodes_under_an_index_struct() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("a.txt"), "Alpha text about herons.").unwrap();
    std::fs::write(data.join("b.txt"), "Beta text about reeds.").unwrap();
    let out = home.path().join("exported");
    let (h, d, o) = (home.path().to_path_buf(), data.clone(), out.clone());
    tokio::task::spawn_blocking(move || {
        ragloom(&h).arg("ingest").arg(&d).assert().success();
        ragloom(&h)
            .args(["export", "--llamaindex"])
            .arg(&o)
            .arg("--files")
            .arg(&d)
            .assert()
            .success();
    })
    .await
    .unwrap();
    let context = ragloom::storage::StorageContext::from_persist_dir(&out)
        .await
        .unwrap();
    let docs = context.docstore.docs().await.unwrap();
    assert_eq!(docs.len(), 2);
    let structs = ragloom::storage::index_store::IndexStore::index_structs(&*context.index_store)
        .await
        .unwrap();
    let [ragloom::data_structs::IndexStruct::IndexDict(dict)] = structs.as_slice() else {
        panic!("{structs:?}");
    };
    let mut listed: Vec<&String> = dict.nodes_dict.keys().collect();
    listed.sort();
    let mut ids: Vec<&String> = docs.iter().map(|n| &n.id_).collect();
    ids.sort();
    assert_eq!(listed, ids);
}

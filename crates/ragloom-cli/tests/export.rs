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

/// Asserts the live index holds the nodes, document hashes and top-k that
/// Python printed (`nodes`, `hashes`, `top` of the scripts in tests/py).
async fn assert_as_python(
    docstore: &dyn DocStore,
    vectors: &dyn VectorStore,
    python: &serde_json::Value,
    query: Vec<f32>,
) {
    let nodes: BTreeMap<String, (String, String)> = docstore
        .docs()
        .await
        .unwrap()
        .iter()
        .map(|n| (n.id_.clone(), (n.hash(), n.text.clone())))
        .collect();
    let want: BTreeMap<String, (String, String)> =
        serde_json::from_value(python["nodes"].clone()).unwrap();
    assert_eq!(nodes, want);
    let hashes = docstore.get_all_document_hashes().await.unwrap();
    let want: BTreeMap<String, String> = serde_json::from_value(python["hashes"].clone()).unwrap();
    assert_eq!(hashes, want);
    assert_top(vectors, python, "top", VectorStoreQuery::new(query, 3)).await;
}

/// Asserts `vectors` answers `query` with the ids and scores Python printed under `key`.
async fn assert_top(
    vectors: &dyn VectorStore,
    python: &serde_json::Value,
    key: &str,
    mut query: VectorStoreQuery,
) {
    let want: Vec<(String, f32)> = serde_json::from_value(python[key].clone()).unwrap();
    assert!(!want.is_empty(), "{key}: {python}");
    query.similarity_top_k = want.len();
    let top = vectors.query(&query).await.unwrap();
    assert_eq!(
        want.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>(),
        top.ids,
        "{key}"
    );
    for ((_, py), rs) in want.iter().zip(&top.similarities) {
        assert!((py - rs).abs() < 1e-5, "{key}: {py} vs {rs}");
    }
}

/// Runs `tests/py/<script> FOLDER QUERY` and parses what it prints.
fn run_python(
    python: &std::ffi::OsStr,
    script: &str,
    folder: &Path,
    query: &[f32],
) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(script);
    let run = std::process::Command::new(python)
        .arg(&script)
        .arg(folder)
        .arg(serde_json::to_string(query).unwrap())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    json_of(&run.stdout)
}

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

    let store = SqliteStore::open(live_db(home.path())).unwrap();
    let docs = store.docstore().docs().await.unwrap();
    assert!(docs.len() >= 3);
    assert_eq!(exported["export"]["nodes"], docs.len());
    assert_eq!(exported["export"]["vectors"], docs.len());

    // What Python sees of the export is what the live index holds.
    let query = vec![3.0f32, 2.0, 1.0, 1.0];
    let seen = run_python(&python, "load_export.py", &out_dir, &query);
    assert_eq!(seen["index_type"], "VectorStoreIndex");
    let mut ids: Vec<String> = docs.iter().map(|n| n.id_.clone()).collect();
    ids.sort();
    let indexed: Vec<String> = serde_json::from_value(seen["index_nodes"].clone()).unwrap();
    assert_eq!(indexed, ids);
    assert_as_python(&*store.docstore(), &*store.vector_store(), &seen, query).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_python_persisted_imports_with_its_nodes_hashes_and_top_k() {
    let Some(python) = python() else { return };
    let server = FaultServer::start(vec![embeddings()]).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let folder = home.path().join("python_index");
    let query = vec![3.0f32, 2.0, 1.0, 1.0];
    let python_saw = run_python(&python, "persist_index.py", &folder, &query);

    let source = home.path().join("notes");
    std::fs::create_dir_all(&source).unwrap();
    let url = server.url().to_owned();
    let (h, s, f) = (home.path().to_path_buf(), source.clone(), folder.clone());
    let answer = tokio::task::spawn_blocking(move || {
        // Vectors without the model that made them are refused.
        ragloom(&h)
            .arg("import")
            .arg(&f)
            .arg("--files")
            .arg(&s)
            .assert()
            .code(3);
        ragloom(&h)
            .env("OLLAMA_HOST", &url)
            .args(["import", "--embed", "ollama", "--embed-model", "m"])
            .arg(&f)
            .arg("--files")
            .arg(&s)
            .assert()
            .success();
        let out = ragloom(&h)
            .env("OLLAMA_HOST", &url)
            .args([
                "query",
                "--json",
                "--embed",
                "ollama",
                "--embed-model",
                "m",
                "heron in the reeds",
                "--files",
            ])
            .arg(&s)
            .assert()
            .success();
        json_of(&out.get_output().stdout)
    })
    .await
    .unwrap();
    assert!(answer.to_string().contains("heron"), "{answer}");

    let store = SqliteStore::open(live_db(home.path())).unwrap();
    assert_as_python(
        &*store.docstore(),
        &*store.vector_store(),
        &python_saw,
        query,
    )
    .await;
}

/// The build `ragloom --store postgres://...` made live for `home`: its name.
fn live_pg_build(url: &str, home: &Path) -> String {
    let schema = common::schema_for(home);
    let (rt, mut conn) = common::pg_connect(url);
    let entry: String = rt
        .block_on(
            sqlx::query_scalar(&format!(
                "SELECT value::text FROM {schema}.data_ragloom_indexes"
            ))
            .fetch_one(&mut conn),
        )
        .unwrap();
    let entry: serde_json::Value = serde_json::from_str(&entry).unwrap();
    entry["name"].as_str().unwrap().to_string()
}

/// Python's PostgreSQL stores open the tables an ingest in PostgreSQL mode
/// wrote: the same nodes, hashes and dense top-k, and the same full-text
/// top-k; `export` from PostgreSQL writes the same folder Python loads.
#[test]
fn python_opens_the_postgres_tables_with_the_same_nodes_hashes_and_top_k() {
    common::in_postgres(python_opens_postgres);
}

fn python_opens_postgres() {
    let Some(python) = python() else { return };
    let url = common::current_pg_url().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FaultServer::start(vec![embeddings()])).unwrap();
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
    ragloom(home.path())
        .env("OLLAMA_HOST", server.url())
        .args(["ingest", "--embed", "ollama", "--embed-model", "m"])
        .arg(&data)
        .assert()
        .success();
    let name = live_pg_build(&url, home.path());
    let schema = common::schema_for(home.path());
    let query = vec![3.0f32, 2.0, 1.0, 1.0];
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/load_postgres.py");
    let run = std::process::Command::new(&python)
        .arg(&script)
        .args([&url, &schema, &name])
        .arg(serde_json::to_string(&query).unwrap())
        .arg("bees swarmed in the apple tree")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen = json_of(&run.stdout);
    assert_eq!(seen["index_type"], "VectorStoreIndex");

    let store = rt
        .block_on(
            ragloom::postgres::PostgresStore::builder(&url)
                .schema(&schema)
                .name(&name)
                .embed_dim(4)
                .hybrid_search(true)
                .build(),
        )
        .unwrap();
    rt.block_on(async {
        let mut ids: Vec<String> = store
            .docstore()
            .docs()
            .await
            .unwrap()
            .iter()
            .map(|n| n.id_.clone())
            .collect();
        ids.sort();
        let indexed: Vec<String> = serde_json::from_value(seen["index_nodes"].clone()).unwrap();
        assert_eq!(indexed, ids);
        let vectors = store.vector_store();
        assert_as_python(&*store.docstore(), &*vectors, &seen, query.clone()).await;
        let mut text = VectorStoreQuery::new(query.clone(), 3);
        text.mode = ragloom::vector_stores::VectorStoreQueryMode::TextSearch;
        text.query_str = Some("bees swarmed in the apple tree".into());
        assert_top(&*vectors, &seen, "text_top", text).await;
    });

    // Export from PostgreSQL: the folder Python loads holds the same nodes.
    let out = home.path().join("exported");
    ragloom(home.path())
        .args(["export", "--llamaindex"])
        .arg(&out)
        .arg("--files")
        .arg(&data)
        .assert()
        .success();
    let loaded = run_python(&python, "load_export.py", &out, &query);
    assert_eq!(loaded["nodes"], seen["nodes"]);
    assert_eq!(loaded["hashes"], seen["hashes"]);
    assert_eq!(loaded["top"].as_array().map(Vec::len), Some(3));
}

/// Python persists an index; `ragloom import` makes it the index of a new
/// folder under `home` and answers a question from it by hybrid retrieval.
/// Returns what Python saw, the folder and the query vector.
fn import_python_index(
    python: &std::ffi::OsStr,
    home: &Path,
) -> (serde_json::Value, std::path::PathBuf, Vec<f32>) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FaultServer::start(vec![embeddings()])).unwrap();
    let folder = home.join("python_index");
    let query = vec![3.0f32, 2.0, 1.0, 1.0];
    let python_saw = run_python(python, "persist_index.py", &folder, &query);
    let source = home.join("notes");
    std::fs::create_dir_all(&source).unwrap();
    let with_model = ["--embed", "ollama", "--embed-model", "m"];
    ragloom(home)
        .env("OLLAMA_HOST", server.url())
        .arg("import")
        .args(with_model)
        .arg(&folder)
        .arg("--files")
        .arg(&source)
        .assert()
        .success();
    let out = ragloom(home)
        .env("OLLAMA_HOST", server.url())
        .args(["query", "--json"])
        .args(with_model)
        .args(["heron in the reeds", "--files"])
        .arg(&source)
        .assert()
        .success();
    let answer = json_of(&out.get_output().stdout);
    assert_eq!(answer["retrieval"], "hybrid", "{answer}");
    assert!(answer.to_string().contains("heron"), "{answer}");
    (python_saw, source, query)
}

/// A folder Python persisted imports into PostgreSQL and answers there.
#[test]
fn a_folder_python_persisted_imports_into_postgres() {
    common::in_postgres(import_into_postgres);
}

fn import_into_postgres() {
    let Some(python) = python() else { return };
    let url = common::current_pg_url().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (python_saw, _, query) = import_python_index(&python, home.path());
    let name = live_pg_build(&url, home.path());
    assert!(
        name.contains("_i"),
        "an import is a build of its own: {name}"
    );
    let store = rt
        .block_on(
            ragloom::postgres::PostgresStore::builder(&url)
                .schema(common::schema_for(home.path()))
                .name(&name)
                .embed_dim(4)
                .hybrid_search(true)
                .build(),
        )
        .unwrap();
    rt.block_on(assert_as_python(
        &*store.docstore(),
        &*store.vector_store(),
        &python_saw,
        query,
    ));
}

/// A folder Python persisted imports into Qdrant (as one generation of a
/// build of its own) and answers there; `export` from Qdrant writes the
/// folder back with the same nodes and hashes, which Python loads.
#[test]
fn a_folder_python_persisted_imports_into_qdrant_and_exports_back() {
    common::in_qdrant(import_into_qdrant);
}

fn import_into_qdrant() {
    let Some(python) = python() else { return };
    let url = common::current_qdrant_url().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (python_saw, source, query) = import_python_index(&python, home.path());

    // The live build, read as queries read it: Python's nodes, hashes, top-k.
    let prefix = common::qdrant_prefix(home.path());
    let markers =
        ragloom::qdrant::CommitMarkers::remote(&url, None, &format!("{prefix}ragloom_indexes"))
            .unwrap();
    rt.block_on(async {
        let all = markers.all().await.unwrap();
        let entry = &all[0].1;
        let name = entry["name"].as_str().unwrap();
        assert!(
            name.contains("_i"),
            "an import is a build of its own: {name}"
        );
        let g = ragloom::qdrant::Generation::read(entry["generation"].as_u64().unwrap());
        assert_eq!(g.committed(), 1);
        let kv = ragloom::qdrant::QdrantKv::remote(&url, None, &format!("{name}_kv"), g)
            .await
            .unwrap();
        let docstore = ragloom::storage::docstore::KvDocumentStore::from_backend(
            std::sync::Arc::new(kv),
            None,
        );
        let vectors = ragloom::qdrant::QdrantVectorStore::remote(&url)
            .collection_name(name)
            .enable_hybrid(true)
            .generation(g)
            .build()
            .unwrap();
        assert_as_python(&docstore, &vectors, &python_saw, query.clone()).await;
    });

    let out = home.path().join("exported");
    ragloom(home.path())
        .args(["export", "--llamaindex"])
        .arg(&out)
        .arg("--files")
        .arg(&source)
        .assert()
        .success();
    let loaded = run_python(&python, "load_export.py", &out, &query);
    assert_eq!(loaded["nodes"], python_saw["nodes"]);
    assert_eq!(loaded["hashes"], python_saw["hashes"]);
    // Vectors went through Qdrant as f32: scores within 1e-5.
    let top = |v: &serde_json::Value| -> Vec<(String, f64)> {
        serde_json::from_value(v["top"].clone()).unwrap()
    };
    let (got, want) = (top(&loaded), top(&python_saw));
    assert!(!want.is_empty() && got.len() >= want.len(), "{got:?}");
    for ((gi, gs), (wi, ws)) in got.iter().zip(&want) {
        assert_eq!(gi, wi);
        assert!((gs - ws).abs() < 1e-5, "{gs} vs {ws}");
    }
}

//! IngestionPipeline: cache hits, docstore strategies (with the bugs
//! LlamaIndex users reported), parallel runs, persistence and Python's folder.
#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use ragloom_core::embeddings::{Embedding, HashEmbedding};
use ragloom_core::ingestion::{
    DocstoreStrategy, IngestionCache, IngestionPipeline, transformation_hash,
};
use ragloom_core::node_parser::{IdFunc, NodeParser, SentenceSplitter};
use ragloom_core::readers::{Reader, SimpleDirectoryReader};
use ragloom_core::storage::docstore::{DocStore, SimpleDocumentStore};
use ragloom_core::{Document, Node, Result, SimpleVectorStore, TransformComponent};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts calls to the transformation it wraps, and the nodes it was given.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn TransformComponent>,
    calls: AtomicUsize,
    nodes_in: AtomicUsize,
}

impl Counting {
    fn new(inner: Arc<dyn TransformComponent>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            calls: AtomicUsize::new(0),
            nodes_in: AtomicUsize::new(0),
        })
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl TransformComponent for Counting {
    fn class_name(&self) -> &'static str {
        self.inner.class_name()
    }
    fn settings(&self) -> Value {
        self.inner.settings()
    }
    async fn transform(&self, nodes: Vec<Node>) -> Result<Vec<Node>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.nodes_in.fetch_add(nodes.len(), Ordering::SeqCst);
        self.inner.transform(nodes).await
    }
}

/// Counts the texts an embedding model is asked to embed.
#[derive(Debug)]
struct CountingEmbedding {
    inner: HashEmbedding,
    texts: AtomicUsize,
}

impl CountingEmbedding {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: HashEmbedding::new(16),
            texts: AtomicUsize::new(0),
        })
    }
    fn texts(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Embedding for CountingEmbedding {
    fn model_name(&self) -> &str {
        self.inner.model_name()
    }
    fn dimensions(&self) -> Option<usize> {
        self.inner.dimensions()
    }
    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        self.inner.embed_query(query).await
    }
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed_texts(texts).await
    }
}

/// Chunk ids derived from the document id, so runs can be compared.
fn stable_ids() -> IdFunc {
    Arc::new(|i, doc: &Node| format!("{}-chunk-{i}", doc.id_))
}

fn splitter() -> SentenceSplitter {
    SentenceSplitter::new().chunk_size(40).chunk_overlap(0)
}

fn docs() -> Vec<Document> {
    vec![
        Document::document("Alice was beginning to get very tired. She had peeped into the book her sister was reading. It had no pictures or conversations in it. What is the use of a book without pictures?")
            .with_id("alice.txt")
            .with_metadata("file_name", "alice.txt"),
        Document::document("The Rabbit took a watch out of its waistcoat-pocket. It looked at it, and then hurried on.")
            .with_id("rabbit.txt")
            .with_metadata("file_name", "rabbit.txt"),
        Document::document("Down, down, down. Would the fall never come to an end?")
            .with_id("fall.txt")
            .with_metadata("file_name", "fall.txt"),
    ]
}

struct Setup {
    split: Arc<Counting>,
    embed: Arc<CountingEmbedding>,
    docstore: Arc<SimpleDocumentStore>,
    vector_store: Arc<SimpleVectorStore>,
}

impl Setup {
    fn new() -> Self {
        Self {
            split: Counting::new(Arc::new(splitter())),
            embed: CountingEmbedding::new(),
            docstore: Arc::new(SimpleDocumentStore::new()),
            vector_store: Arc::new(SimpleVectorStore::new()),
        }
    }
    fn pipeline(&self, strategy: DocstoreStrategy) -> IngestionPipeline {
        IngestionPipeline::new(vec![self.split.clone()])
            .embedding(self.embed.clone())
            .docstore(self.docstore.clone())
            .vector_store(self.vector_store.clone())
            .docstore_strategy(strategy)
    }
    fn refs_in_vector_store(&self) -> Vec<String> {
        // SimpleVectorStore ids are node ids; chunks of a document share its ref.
        self.vector_store.node_ids()
    }
}

#[tokio::test]
async fn a_second_run_is_answered_from_the_cache() {
    let split = Counting::new(Arc::new(splitter()));
    let embed = CountingEmbedding::new();
    let pipeline = IngestionPipeline::new(vec![split.clone()]).embedding(embed.clone());

    let first = pipeline.run_with_stats(docs()).await.unwrap();
    assert_eq!(split.calls(), 3, "one call per document");
    let embedded = embed.texts();
    assert_eq!(embedded, first.nodes.len());
    assert!(first.nodes.len() > 3);
    assert_eq!((first.stats.cache_hits, first.stats.cache_misses), (0, 6));

    let second = pipeline.run_with_stats(docs()).await.unwrap();
    assert_eq!(split.calls(), 3, "no splitting on the second run");
    assert_eq!(embed.texts(), embedded, "no embedding on the second run");
    assert_eq!((second.stats.cache_hits, second.stats.cache_misses), (6, 0));
    assert_eq!(
        second.nodes, first.nodes,
        "cached nodes are the same nodes, ids included"
    );
    assert!(second.nodes.iter().all(|n| n.embedding.is_some()));
}

#[tokio::test]
async fn changing_one_document_recomputes_only_that_document() {
    let split = Counting::new(Arc::new(splitter()));
    let embed = CountingEmbedding::new();
    let pipeline = IngestionPipeline::new(vec![split.clone()]).embedding(embed.clone());
    pipeline.run(docs()).await.unwrap();
    let (calls, texts) = (split.calls(), embed.texts());

    let mut changed = docs();
    changed[1].text.push_str(" Oh dear!");
    let out = pipeline.run_with_stats(changed).await.unwrap();
    assert_eq!(split.calls(), calls + 1);
    let rabbit_nodes = out
        .nodes
        .iter()
        .filter(|n| n.ref_doc_id() == Some("rabbit.txt"))
        .count();
    assert_eq!(embed.texts(), texts + rabbit_nodes);
    assert_eq!(out.stats.cache_hits, 4);
}

#[tokio::test]
async fn disabled_cache_always_computes() {
    let split = Counting::new(Arc::new(splitter()));
    let pipeline = IngestionPipeline::new(vec![split.clone()]).disable_cache(true);
    pipeline.run(docs()).await.unwrap();
    pipeline.run(docs()).await.unwrap();
    assert_eq!(split.calls(), 6);
    assert!(pipeline.get_cache().is_empty(None));
}

#[test]
fn cache_keys_do_not_collide() {
    let s: &dyn TransformComponent = &splitter();
    let ab_c = [
        Node::text_node("ab").with_id("1"),
        Node::text_node("c").with_id("2"),
    ];
    let a_bc = [
        Node::text_node("a").with_id("1"),
        Node::text_node("bc").with_id("2"),
    ];
    // LlamaIndex's key concatenates contents: these two would share one.
    assert_ne!(
        transformation_hash(&ab_c, s).unwrap(),
        transformation_hash(&a_bc, s).unwrap()
    );
    // Same text, other document: a hit would hand back nodes of the wrong document.
    let d1 = [Document::document("same").with_id("d1")];
    let d2 = [Document::document("same").with_id("d2")];
    assert_ne!(
        transformation_hash(&d1, s).unwrap(),
        transformation_hash(&d2, s).unwrap()
    );
    // Other settings, other key; same input and settings, same key.
    let other: &dyn TransformComponent = &SentenceSplitter::new().chunk_size(41).chunk_overlap(0);
    assert_ne!(
        transformation_hash(&d1, s).unwrap(),
        transformation_hash(&d1, other).unwrap()
    );
    assert_eq!(
        transformation_hash(&d1, s).unwrap(),
        transformation_hash(&d1, &splitter()).unwrap()
    );
}

#[tokio::test]
async fn upserts_skip_unchanged_and_replace_changed_documents() {
    let s = Setup::new();
    let pipeline = s.pipeline(DocstoreStrategy::Upserts);
    let first = pipeline.run_with_stats(docs()).await.unwrap();
    assert_eq!(first.stats.transformed, 3);
    let stored = s.vector_store.len();
    assert_eq!(stored, first.nodes.len());
    for d in docs() {
        assert_eq!(
            s.docstore.get_document_hash(&d.id_).await.unwrap(),
            Some(d.hash())
        );
    }

    // Re-ingesting the same documents: nothing runs, nothing is duplicated.
    let second = pipeline.run_with_stats(docs()).await.unwrap();
    assert_eq!((second.stats.skipped, second.stats.transformed), (3, 0));
    assert!(second.nodes.is_empty());
    assert_eq!(s.split.calls(), 3);
    assert_eq!(
        s.vector_store.len(),
        stored,
        "no duplicate nodes after re-ingesting"
    );

    // A changed document replaces its old nodes everywhere.
    let mut changed = docs();
    changed[0].text = "Alice is now a short text.".into();
    let third = pipeline.run_with_stats(changed.clone()).await.unwrap();
    assert_eq!(
        (
            third.stats.replaced,
            third.stats.transformed,
            third.stats.skipped
        ),
        (1, 1, 2)
    );
    let alice_before = first
        .nodes
        .iter()
        .filter(|n| n.ref_doc_id() == Some("alice.txt"))
        .count();
    assert_eq!(
        s.vector_store.len(),
        stored - alice_before + third.nodes.len()
    );
    let ids = s.refs_in_vector_store();
    for old in first
        .nodes
        .iter()
        .filter(|n| n.ref_doc_id() == Some("alice.txt"))
    {
        assert!(
            !ids.contains(&old.id_),
            "old chunk {} still stored",
            old.id_
        );
    }
    assert_eq!(
        s.docstore.get_document_hash("alice.txt").await.unwrap(),
        Some(changed[0].hash())
    );
    let stored_doc = s.docstore.get_document("alice.txt").await.unwrap().unwrap();
    assert_eq!(stored_doc.text, "Alice is now a short text.");
}

#[tokio::test]
async fn upserts_and_delete_removes_vanished_documents() {
    let s = Setup::new();
    let pipeline = s.pipeline(DocstoreStrategy::UpsertsAndDelete);
    let first = pipeline.run(docs()).await.unwrap();
    let rabbit: Vec<String> = first
        .iter()
        .filter(|n| n.ref_doc_id() == Some("rabbit.txt"))
        .map(|n| n.id_.clone())
        .collect();
    assert!(!rabbit.is_empty());

    let without_rabbit: Vec<Document> = docs()
        .into_iter()
        .filter(|d| d.id_ != "rabbit.txt")
        .collect();
    let out = pipeline.run_with_stats(without_rabbit).await.unwrap();
    assert_eq!(
        (out.stats.deleted, out.stats.skipped, out.stats.transformed),
        (1, 2, 0)
    );
    let ids = s.vector_store.node_ids();
    assert!(rabbit.iter().all(|id| !ids.contains(id)));
    assert_eq!(s.vector_store.len(), first.len() - rabbit.len());
    assert!(!s.docstore.document_exists("rabbit.txt").await.unwrap());
    assert_eq!(
        s.docstore.get_document_hash("rabbit.txt").await.unwrap(),
        None
    );
    // With plain upserts nothing vanishes.
    let s2 = Setup::new();
    s2.pipeline(DocstoreStrategy::Upserts)
        .run(docs())
        .await
        .unwrap();
    let out = s2
        .pipeline(DocstoreStrategy::Upserts)
        .run_with_stats(docs()[..1].to_vec())
        .await
        .unwrap();
    assert_eq!(out.stats.deleted, 0);
    assert!(s2.docstore.document_exists("rabbit.txt").await.unwrap());
}

#[tokio::test]
async fn duplicates_only_skips_content_seen_under_any_id() {
    let s = Setup::new();
    let pipeline = s.pipeline(DocstoreStrategy::DuplicatesOnly);
    pipeline.run(docs()).await.unwrap();
    // Same text and metadata under a new id: a duplicate.
    let copy = docs()[0].clone().with_id("copy-of-alice");
    let dup_in_batch = docs()[1].clone().with_id("rabbit-2");
    let out = pipeline
        .run_with_stats(vec![
            copy,
            dup_in_batch.clone(),
            dup_in_batch.with_id("rabbit-3"),
        ])
        .await
        .unwrap();
    assert_eq!((out.stats.skipped, out.stats.transformed), (3, 0));
    let fresh = Document::document("A new text.").with_id("new");
    let out = pipeline
        .run_with_stats(vec![fresh.clone(), fresh.with_id("new-2")])
        .await
        .unwrap();
    assert_eq!(
        (out.stats.skipped, out.stats.transformed),
        (1, 1),
        "a duplicate within one run too"
    );
}

#[tokio::test]
async fn a_docstore_without_vector_store_falls_back_to_duplicates_only() {
    let docstore = Arc::new(SimpleDocumentStore::new());
    let pipeline = IngestionPipeline::new(vec![Arc::new(splitter())])
        .docstore(docstore.clone())
        .docstore_strategy(DocstoreStrategy::UpsertsAndDelete);
    pipeline.run(docs()).await.unwrap();
    let out = pipeline.run_with_stats(docs()[..1].to_vec()).await.unwrap();
    assert_eq!((out.stats.skipped, out.stats.deleted), (1, 0));
    assert!(docstore.document_exists("fall.txt").await.unwrap());
}

#[tokio::test]
async fn pre_split_nodes_keep_every_chunk_on_upsert() {
    // LlamaIndex #22046 kept only the last chunk of each document; #14931
    // looked their hash up under the document id but stored it under the
    // chunk ids, so every re-run added them again.
    let small = || SentenceSplitter::new().chunk_size(20).chunk_overlap(0);
    let chunks = small().get_nodes_from_documents(&docs()[..1]).unwrap();
    assert!(chunks.len() >= 3);
    let embed = CountingEmbedding::new();
    let docstore = Arc::new(SimpleDocumentStore::new());
    let vector_store = Arc::new(SimpleVectorStore::new());
    let pipeline = IngestionPipeline::new(vec![])
        .embedding(embed.clone())
        .docstore(docstore.clone())
        .vector_store(vector_store.clone());
    let out = pipeline.run_with_stats(chunks.clone()).await.unwrap();
    assert_eq!(out.nodes.len(), chunks.len());
    assert_eq!(
        vector_store.len(),
        chunks.len(),
        "every chunk is stored, not just the last"
    );
    assert_eq!(out.stats.documents, 1);

    // The same chunks again, even re-split with fresh ids: skipped, no duplicates.
    let resplit = small().get_nodes_from_documents(&docs()[..1]).unwrap();
    assert_ne!(resplit[0].id_, chunks[0].id_);
    let again = pipeline.run_with_stats(resplit).await.unwrap();
    assert_eq!(again.stats.skipped, 1);
    assert_eq!(vector_store.len(), chunks.len());
    assert_eq!(embed.texts(), chunks.len());

    // One chunk changes: the document's chunks are replaced as a whole.
    let mut changed = chunks.clone();
    changed[0].text.push_str(" Changed.");
    let out = pipeline.run_with_stats(changed).await.unwrap();
    assert_eq!(out.stats.replaced, 1);
    assert_eq!(vector_store.len(), chunks.len());
}

#[tokio::test]
async fn filename_as_id_makes_reruns_incremental() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("a.txt", "First file. It has two sentences."),
        ("b.txt", "Second file."),
        ("c.txt", "Third."),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().to_path_buf();
    let load = || {
        let path = path.clone();
        async move {
            SimpleDirectoryReader::new(path)
                .filename_as_id(true)
                .load_data()
                .await
                .unwrap()
        }
    };
    let s = Setup::new();
    let pipeline = s.pipeline(DocstoreStrategy::UpsertsAndDelete);
    let first = pipeline.run_with_stats(load().await).await.unwrap();
    assert_eq!(first.stats.transformed, 3);
    let again = pipeline.run_with_stats(load().await).await.unwrap();
    assert_eq!((again.stats.skipped, again.stats.transformed), (3, 0));

    std::fs::write(dir.path().join("b.txt"), "Second file, edited.").unwrap();
    std::fs::remove_file(dir.path().join("c.txt")).unwrap();
    let third = pipeline.run_with_stats(load().await).await.unwrap();
    assert_eq!(
        (
            third.stats.replaced,
            third.stats.deleted,
            third.stats.skipped
        ),
        (1, 1, 1)
    );
    assert_eq!(
        s.vector_store.len(),
        first.nodes.len() - 1,
        "b replaced one for one, c gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_and_serial_runs_give_the_same_nodes() {
    // The public-domain copy kept with the examples.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/alice29.txt"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let documents: Vec<Document> = text
        .split("CHAPTER")
        .enumerate()
        .map(|(i, t)| Document::document(t).with_id(format!("chapter-{i}")))
        .collect();
    assert!(documents.len() > 8);
    let make = |workers| {
        IngestionPipeline::new(vec![Arc::new(
            SentenceSplitter::new()
                .chunk_size(128)
                .chunk_overlap(16)
                .id_func(stable_ids()),
        )])
        .embedding(Arc::new(HashEmbedding::new(32)))
        .num_workers(workers)
    };
    let serial = make(1).run(documents.clone()).await.unwrap();
    let parallel = make(4).run(documents).await.unwrap();
    assert!(serial.len() > 50);
    assert_eq!(serial, parallel);
}

#[tokio::test]
async fn arun_is_run() {
    let pipeline = IngestionPipeline::new(vec![Arc::new(splitter().id_func(stable_ids()))]);
    assert_eq!(
        pipeline.arun(docs()).await.unwrap(),
        pipeline.run(docs()).await.unwrap()
    );
}

#[tokio::test]
async fn persist_and_load_use_llama_index_layout() {
    let dir = tempfile::tempdir().unwrap();
    let s = Setup::new();
    let pipeline = s.pipeline(DocstoreStrategy::Upserts);
    pipeline.run(docs()).await.unwrap();
    pipeline.persist(dir.path()).await.unwrap();
    assert!(dir.path().join("llama_cache").is_file());
    assert!(dir.path().join("docstore.json").is_file());
    let cache_json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("llama_cache")).unwrap())
            .unwrap();
    assert_eq!(cache_json["llama_cache"].as_object().unwrap().len(), 6);

    // A fresh pipeline with the loaded docstore skips everything.
    let s2 = Setup::new();
    let mut reloaded = s2.pipeline(DocstoreStrategy::Upserts);
    assert!(reloaded.load_if_present(dir.path()).await.unwrap());
    let out = reloaded.run_with_stats(docs()).await.unwrap();
    assert_eq!(out.stats.skipped, 3);
    assert_eq!(s2.split.calls(), 0);

    // Without a docstore, the loaded cache answers every step (`load` would
    // also bring the docstore back, as in Python, so the cache goes alone).
    let only_cache = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.path().join("llama_cache"),
        only_cache.path().join("llama_cache"),
    )
    .unwrap();
    let s3 = Setup::new();
    let mut cache_only = IngestionPipeline::new(vec![s3.split.clone()]).embedding(s3.embed.clone());
    cache_only.load(only_cache.path()).await.unwrap();
    assert!(cache_only.get_docstore().is_none());
    let out = cache_only.run_with_stats(docs()).await.unwrap();
    assert_eq!((out.stats.cache_hits, out.stats.cache_misses), (6, 0));
    assert_eq!((s3.split.calls(), s3.embed.texts()), (0, 0));

    // Nothing persisted yet: load_if_present says so, load names the file.
    let empty = tempfile::tempdir().unwrap();
    assert!(!cache_only.load_if_present(empty.path()).await.unwrap());
    let err = cache_only.load(empty.path()).await.unwrap_err().to_string();
    assert!(err.contains("llama_cache"), "{err}");
}

#[tokio::test]
async fn a_failed_run_changes_no_store() {
    #[derive(Debug)]
    struct Failing;
    #[async_trait]
    impl TransformComponent for Failing {
        fn class_name(&self) -> &'static str {
            "Failing"
        }
        async fn transform(&self, _nodes: Vec<Node>) -> Result<Vec<Node>> {
            Err(ragloom_core::Error::Other("boom".into()))
        }
    }
    let s = Setup::new();
    s.pipeline(DocstoreStrategy::Upserts)
        .run(docs())
        .await
        .unwrap();
    let stored = s.vector_store.len();
    let failing = IngestionPipeline::new(vec![Arc::new(Failing)])
        .docstore(s.docstore.clone())
        .vector_store(s.vector_store.clone());
    let mut changed = docs();
    changed[0].text = "changed".into();
    assert!(failing.run(changed).await.is_err());
    assert_eq!(
        s.vector_store.len(),
        stored,
        "old nodes kept when the new ones failed"
    );
    assert_eq!(
        s.docstore.get_document_hash("alice.txt").await.unwrap(),
        Some(docs()[0].hash())
    );
}

#[tokio::test]
async fn a_pipeline_persisted_by_python_loads_and_agrees() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ingestion");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("documents.json")).unwrap())
            .unwrap();
    let documents: Vec<Document> = recorded["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let doc = Document::document(d["text"].as_str().unwrap())
                .with_id(d["id"].as_str().unwrap())
                .with_metadata_map(d["metadata"].as_object().unwrap().clone());
            assert_eq!(
                doc.hash(),
                d["hash"].as_str().unwrap(),
                "document hash as Python's"
            );
            doc
        })
        .collect();

    let s = Setup::new();
    let mut pipeline = s.pipeline(DocstoreStrategy::Upserts);
    pipeline.load(data.join("python_pipeline")).await.unwrap();
    let docstore = pipeline.get_docstore().unwrap().clone();
    assert!(docstore.document_exists("alice.txt").await.unwrap());

    let cache: &IngestionCache = pipeline.get_cache();
    let keys: Vec<String> = cache
        .kvstore()
        .get_all("llama_cache")
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 2, "Python caches one entry per transformation");
    for key in &keys {
        let nodes = cache.get(key, None).unwrap().unwrap();
        assert_eq!(nodes.len() as u64, recorded["num_nodes"].as_u64().unwrap());
    }

    // Python's docstore knows these documents: nothing to do.
    let out = pipeline.run_with_stats(documents.clone()).await.unwrap();
    assert_eq!((out.stats.skipped, out.stats.transformed), (2, 0));
    assert_eq!(s.split.calls(), 0);
    let mut changed = documents;
    changed[1].text.push_str(" Oh my ears and whiskers!");
    let out = pipeline.run_with_stats(changed).await.unwrap();
    assert_eq!((out.stats.replaced, out.stats.skipped), (1, 1));
}

#[tokio::test]
async fn upserts_and_delete_with_pre_split_nodes_deletes_documents_not_chunks() {
    let small = || SentenceSplitter::new().chunk_size(20).chunk_overlap(0);
    let all = small().get_nodes_from_documents(&docs()).unwrap();
    let docstore = Arc::new(SimpleDocumentStore::new());
    let vector_store = Arc::new(SimpleVectorStore::new());
    let pipeline = IngestionPipeline::new(vec![])
        .embedding(CountingEmbedding::new())
        .docstore(docstore.clone())
        .vector_store(vector_store.clone())
        .docstore_strategy(DocstoreStrategy::UpsertsAndDelete);
    pipeline.run(all.clone()).await.unwrap();
    assert_eq!(vector_store.len(), all.len());

    // Alice's chunks are gone from the input: Alice goes, the others' chunks stay.
    let rest: Vec<Node> = all
        .iter()
        .filter(|n| n.ref_doc_id() != Some("alice.txt"))
        .cloned()
        .collect();
    let out = pipeline.run_with_stats(rest.clone()).await.unwrap();
    assert_eq!((out.stats.deleted, out.stats.skipped), (1, 2));
    assert_eq!(vector_store.len(), rest.len());
    assert!(
        docstore
            .get_ref_doc_info("alice.txt")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        docstore
            .get_ref_doc_info("rabbit.txt")
            .await
            .unwrap()
            .is_some()
    );
}

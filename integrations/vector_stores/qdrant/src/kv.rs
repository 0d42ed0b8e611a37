//! `QdrantKv`: LlamaIndex's key-value collections (docstore, index store,
//! state beside them) as points of a Qdrant collection, by generation.
//!
//! One point per key (its id a UUID of collection and key) holds the
//! committed value and, while a generation is written, the pending one with
//! that generation's number; a reader of generation `C` takes the pending
//! value when its generation is at most `C`, else the committed one. Values
//! are stored as JSON text, so their key order survives. A writer keeps its
//! changes in memory and writes them as pending values when they grow past
//! [`FLUSH_BYTES`] and at [`QdrantKv::flush`]; nothing it writes is seen by
//! readers until the generation's commit marker moves (see `generation`).
//!
//! The document and index stores call their key-value back end
//! synchronously, so the Qdrant client runs on a thread of its own and
//! those calls wait for it.

use crate::backend::{Backend, CreateSpec, Hit, Point, Using};
use crate::filters::{Cond, Plan, Range};
use crate::generation::Generation;
use crate::store::{Distance, Target};
use futures::future::BoxFuture;
use indexmap::IndexMap;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::Metadata;
use ragloom_core::storage::kvstore::{KvBackend, KvCollection, KvTable, KvValue};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Pending bytes a writer holds in memory before writing them to Qdrant.
pub const FLUSH_BYTES: usize = 16 << 20;
/// Points per request when writing pending values.
const BATCH: usize = 256;

const NAMESPACE: &str = "namespace";
const KEY: &str = "key";
const SEQ: &str = "seq";
const VALUE: &str = "value";
const HAS_VALUE: &str = "has_value";
const NEXT: &str = "next";
const NEXT_GEN: &str = "next_generation";
const NEXT_DELETED: &str = "next_deleted";

type Job = Box<dyn for<'a> FnOnce(&'a Backend) -> BoxFuture<'a, ()> + Send>;

/// The Qdrant client on a thread of its own, for synchronous callers.
struct Bridge {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

impl Bridge {
    fn start(target: Target, collection: String) -> Result<Self> {
        let (jobs, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("ragloom-qdrant-kv".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready_tx.send(Err(Error::failed(
                            "starting the Qdrant key-value thread",
                            e,
                        )));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let backend = match Backend::open(&target, &collection) {
                        Ok(b) => b,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    while let Some(job) = rx.recv().await {
                        job(&backend).await;
                    }
                });
            })
            .map_err(|e| Error::failed("starting the Qdrant key-value thread", e))?;
        ready_rx
            .recv()
            .map_err(|_| Error::Other("the Qdrant key-value thread stopped".into()))??;
        Ok(Self { jobs })
    }

    fn send(&self, job: Job) -> Result<()> {
        self.jobs
            .send(job)
            .map_err(|_| Error::Other("the Qdrant key-value thread stopped".into()))
    }

    /// Runs `f` on the client's thread and waits for it, from synchronous
    /// code (a std channel: tokio's would refuse to block inside a runtime).
    fn run_blocking<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: for<'a> FnOnce(&'a Backend) -> BoxFuture<'a, Result<R>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Box::new(move |b| {
            Box::pin(async move {
                let _ = tx.send(f(b).await);
            })
        }))?;
        rx.recv()
            .map_err(|_| Error::Other("the Qdrant key-value thread stopped".into()))?
    }

    async fn run<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: for<'a> FnOnce(&'a Backend) -> BoxFuture<'a, Result<R>> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Box::new(move |b| {
            Box::pin(async move {
                let _ = tx.send(f(b).await);
            })
        }))?;
        rx.await
            .map_err(|_| Error::Other("the Qdrant key-value thread stopped".into()))?
    }
}

/// One key's point as read back.
#[derive(Clone, Debug)]
struct Stored {
    key: String,
    seq: u64,
    value: Option<String>,
    next_generation: Option<u64>,
    next: Option<String>,
    next_deleted: bool,
}

impl Stored {
    fn from_hit(hit: &Hit) -> Option<Self> {
        let p = &hit.payload;
        let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
        text(NAMESPACE)?;
        Some(Self {
            key: text(KEY)?,
            seq: p.get(SEQ).and_then(Value::as_u64).unwrap_or(0),
            value: if p.get(HAS_VALUE).and_then(Value::as_bool).unwrap_or(false) {
                text(VALUE)
            } else {
                None
            },
            next_generation: p.get(NEXT_GEN).and_then(Value::as_u64),
            next: text(NEXT),
            next_deleted: p
                .get(NEXT_DELETED)
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// The value a store viewing generation `view` sees (JSON text).
    fn visible(&self, view: u64) -> Option<&str> {
        match self.next_generation {
            Some(g) if g <= view => {
                if self.next_deleted {
                    None
                } else {
                    self.next.as_deref()
                }
            }
            _ => self.value.as_deref(),
        }
    }
}

fn parse(text: &str, key: &str) -> Result<KvValue> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::InvalidInput(format!(
            "the stored value of `{key}` is not a JSON object"
        ))),
        Err(e) => Err(Error::invalid(
            format!("the stored value of `{key}` is damaged"),
            e,
        )),
    }
}

/// About how many bytes `v` takes as JSON, without writing it (the flush
/// threshold needs no more; the value is written once, at the flush).
fn approx_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => a.iter().map(approx_len).sum::<usize>() + 2,
        Value::Object(m) => {
            m.iter()
                .map(|(k, v)| k.len() + 3 + approx_len(v))
                .sum::<usize>()
                + 2
        }
        _ => 8,
    }
}

/// The id of `key`'s point in `collection`.
fn key_id(collection: &str, key: &str) -> String {
    crate::generation::marker_id(&format!("kv\u{0}{collection}\u{0}{key}"))
}

#[derive(Clone, Debug)]
struct Pending {
    /// `None`: deleted.
    value: Option<KvValue>,
    /// Its place in order, if the key is new.
    seq: u64,
}

#[derive(Debug, Default)]
struct Overlay {
    entries: HashMap<(String, String), Pending>,
    bytes: usize,
    next_seq: u64,
}

struct Inner {
    bridge: Bridge,
    collection: String,
    generation: Generation,
    overlay: Mutex<Overlay>,
    known: Mutex<Known>,
    /// Set when a flush failed: its changes are lost, so the store refuses
    /// to write or flush again (a commit must not publish a partial write).
    poisoned: std::sync::atomic::AtomicBool,
    /// Whether the collection is known to exist (then not asked again).
    exists: std::sync::atomic::AtomicBool,
    /// Serialises writes, as the other back ends' transactions do.
    writer: Mutex<()>,
}

/// What this store already knows of the server, to spare round trips: the
/// values it fetched (a store's view never changes under it) and the keys
/// it wrote as pending values (before any, a store at generation 0 knows
/// the server holds nothing it can see).
#[derive(Debug, Default)]
struct Known {
    fetched: HashMap<(String, String), Option<KvValue>>,
    flushed: std::collections::HashSet<(String, String)>,
}

/// LlamaIndex's key-value collections in one Qdrant collection, read at one
/// [`Generation`] and, for a writer, written at the next.
#[derive(Clone)]
pub struct QdrantKv {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for QdrantKv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QdrantKv")
            .field("collection", &self.inner.collection)
            .field("generation", &self.inner.generation)
            .finish_non_exhaustive()
    }
}

impl QdrantKv {
    /// The collections in Qdrant collection `collection` on the server at
    /// `url`, at `generation`. A writer creates a missing collection; a
    /// reader of a missing one sees nothing.
    pub async fn remote(
        url: &str,
        api_key: Option<&str>,
        collection: &str,
        generation: Generation,
    ) -> Result<Self> {
        let target = Target::Remote {
            url: url.to_string(),
            api_key: api_key.map(str::to_string),
        };
        let bridge = Bridge::start(target, collection.to_string())?;
        if generation.writing().is_ok() {
            bridge
                .run(|b| {
                    Box::pin(async move {
                        if b.vector_names().await?.is_none() {
                            b.create(&CreateSpec {
                                dense: None,
                                sparse: None,
                                distance: Distance::Cosine,
                                keyword_indexes: vec![NAMESPACE.into()],
                                integer_indexes: vec![NEXT_GEN.into()],
                            })
                            .await?;
                        }
                        Ok(())
                    })
                })
                .await?;
        }
        let next_seq = generation.view() << 32;
        Ok(Self {
            inner: Arc::new(Inner {
                bridge,
                collection: collection.to_string(),
                generation,
                overlay: Mutex::new(Overlay {
                    next_seq,
                    ..Overlay::default()
                }),
                known: Mutex::new(Known::default()),
                poisoned: std::sync::atomic::AtomicBool::new(false),
                exists: std::sync::atomic::AtomicBool::new(generation.writing().is_ok()),
                writer: Mutex::new(()),
            }),
        })
    }

    /// The generation this store reads (and writes).
    pub fn generation(&self) -> Generation {
        self.inner.generation
    }

    /// Undoes what an unfinished writer after the committed generation
    /// left and drops keys deleted before it (run before writing).
    pub async fn recover(&self) -> Result<()> {
        let c = self.inner.generation.committed();
        self.inner
            .bridge
            .run(move |b| {
                Box::pin(async move {
                    if b.vector_names().await?.is_none() {
                        return Ok(());
                    }
                    let after = Cond::Range(
                        NEXT_GEN.into(),
                        Range {
                            gt: Some(c as f64),
                            ..Range::default()
                        },
                    );
                    let up_to = Cond::Range(
                        NEXT_GEN.into(),
                        Range {
                            lte: Some(c.saturating_sub(1) as f64),
                            ..Range::default()
                        },
                    );
                    b.delete(&Plan {
                        must: vec![after.clone(), Cond::Bool(HAS_VALUE.into(), false)],
                        ..Plan::default()
                    })
                    .await?;
                    b.delete_payload(
                        &Plan {
                            must: vec![after],
                            ..Plan::default()
                        },
                        &[NEXT, NEXT_GEN, NEXT_DELETED],
                    )
                    .await?;
                    // Keys deleted before the committed generation: readers
                    // of it and of the one before it never see them.
                    if c < 2 {
                        return Ok(());
                    }
                    b.delete(&Plan {
                        must: vec![up_to, Cond::Bool(NEXT_DELETED.into(), true)],
                        ..Plan::default()
                    })
                    .await
                })
            })
            .await
    }

    /// Writes every pending change to Qdrant (still invisible to readers
    /// until the generation is committed).
    pub async fn flush(&self) -> Result<()> {
        let result = match self.take_pending()? {
            Some(w) => self.inner.bridge.run(move |b| Box::pin(w.write(b))).await,
            None => Ok(()),
        };
        self.poison_on(result)
    }

    fn flush_blocking(&self) -> Result<()> {
        let result = match self.take_pending()? {
            Some(w) => self
                .inner
                .bridge
                .run_blocking(move |b| Box::pin(w.write(b))),
            None => Ok(()),
        };
        self.poison_on(result)
    }

    fn poison_on(&self, result: Result<()>) -> Result<()> {
        if result.is_err() {
            self.inner
                .poisoned
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        result
    }

    fn refuse_if_poisoned(&self) -> Result<()> {
        if self
            .inner
            .poisoned
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Err(Error::Other(format!(
                "an earlier write to Qdrant collection `{}` failed: this generation cannot be completed; start the write again",
                self.inner.collection
            )));
        }
        Ok(())
    }

    /// The pending changes, the overlay emptied.
    fn take_pending(&self) -> Result<Option<PendingWrite>> {
        let generation = self.inner.generation;
        generation.writing()?;
        self.refuse_if_poisoned()?;
        let entries: Vec<((String, String), Pending)> = {
            let mut overlay = self.lock_overlay()?;
            overlay.bytes = 0;
            overlay.entries.drain().collect()
        };
        {
            let mut known = self.lock_known()?;
            for (k, p) in &entries {
                known.flushed.insert(k.clone());
                known.fetched.insert(k.clone(), p.value.clone());
            }
        }
        Ok((!entries.is_empty()).then(|| PendingWrite {
            entries,
            collection: self.inner.collection.clone(),
            generation,
        }))
    }

    fn known_to_exist(&self) -> bool {
        self.inner.exists.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn set_exists(&self, yes: bool) {
        if yes {
            self.inner
                .exists
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn lock_known(&self) -> Result<std::sync::MutexGuard<'_, Known>> {
        self.inner
            .known
            .lock()
            .map_err(|_| Error::Other("a Qdrant key-value reader panicked".into()))
    }

    /// Whether the server can hold nothing this store sees in `namespace`
    /// (or, with a key, under that key).
    fn surely_empty(&self, namespace: &str, key: Option<&str>) -> Result<bool> {
        if self.inner.generation.committed() > 0 {
            return Ok(false);
        }
        let known = self.lock_known()?;
        Ok(match key {
            Some(k) => !known
                .flushed
                .contains(&(namespace.to_string(), k.to_string())),
            None => !known.flushed.iter().any(|(ns, _)| ns == namespace),
        })
    }

    fn lock_overlay(&self) -> Result<std::sync::MutexGuard<'_, Overlay>> {
        self.inner
            .overlay
            .lock()
            .map_err(|_| Error::Other("a Qdrant key-value writer panicked".into()))
    }

    /// The stored value of `key` in `namespace`, as this store sees it.
    fn fetch(&self, namespace: &str, key: &str) -> Result<Option<KvValue>> {
        let k = (namespace.to_string(), key.to_string());
        if let Some(v) = self.lock_known()?.fetched.get(&k) {
            return Ok(v.clone());
        }
        if self.surely_empty(namespace, Some(key))? {
            return Ok(None);
        }
        let value = self.fetch_remote(namespace, key)?;
        // A flush meanwhile knows better than this read.
        Ok(self.lock_known()?.fetched.entry(k).or_insert(value).clone())
    }

    fn fetch_remote(&self, namespace: &str, key: &str) -> Result<Option<KvValue>> {
        let id = key_id(&self.inner.collection, &format!("{namespace}\u{0}{key}"));
        let known = self.known_to_exist();
        let (hits, exists) = self.inner.bridge.run_blocking(move |b| {
            Box::pin(async move {
                if !known && b.vector_names().await?.is_none() {
                    return Ok((Vec::new(), false));
                }
                Ok((b.retrieve(&[id]).await?, true))
            })
        })?;
        self.set_exists(exists);
        let view = self.inner.generation.view();
        match hits.first().and_then(Stored::from_hit) {
            Some(s) => s.visible(view).map(|t| parse(t, key)).transpose(),
            None => Ok(None),
        }
    }

    /// Every stored key of `namespace` this store sees, with its place in order.
    fn fetch_all(&self, namespace: &str) -> Result<Vec<(u64, String, KvValue)>> {
        if self.surely_empty(namespace, None)? {
            return Ok(Vec::new());
        }
        let plan = Plan {
            must: vec![Cond::Keyword(NAMESPACE.into(), namespace.into())],
            ..Plan::default()
        };
        let known = self.known_to_exist();
        let (hits, exists) = self.inner.bridge.run_blocking(move |b| {
            Box::pin(async move {
                if !known && b.vector_names().await?.is_none() {
                    return Ok((Vec::new(), false));
                }
                Ok((b.scroll(&plan, usize::MAX).await?, true))
            })
        })?;
        self.set_exists(exists);
        let view = self.inner.generation.view();
        let mut out = Vec::new();
        for s in hits.iter().filter_map(Stored::from_hit) {
            if let Some(t) = s.visible(view) {
                out.push((s.seq, s.key.clone(), parse(t, &s.key)?));
            }
        }
        Ok(out)
    }
}

/// Changes taken from a writer's memory, to be written as pending values.
struct PendingWrite {
    entries: Vec<((String, String), Pending)>,
    collection: String,
    generation: Generation,
}

impl PendingWrite {
    async fn write(self, b: &Backend) -> Result<()> {
        let g = self.generation;
        let writing = g.writing()?;
        let (entries, collection) = (self.entries, self.collection);
        for chunk in entries.chunks(BATCH) {
            let ids: Vec<String> = chunk
                .iter()
                .map(|((ns, k), _)| key_id(&collection, &format!("{ns}\u{0}{k}")))
                .collect();
            let current: HashMap<String, Stored> = b
                .retrieve(&ids)
                .await?
                .iter()
                .filter_map(|h| Some((h.id.clone(), Stored::from_hit(h)?)))
                .collect();
            let mut points = Vec::with_capacity(chunk.len());
            for (((ns, key), pending), id) in chunk.iter().zip(ids) {
                let cur = current.get(&id);
                let base = cur.and_then(|c| c.visible(g.committed()));
                if base.is_none() && pending.value.is_none() && cur.is_none() {
                    continue;
                }
                let mut payload = Metadata::new();
                payload.insert(NAMESPACE.into(), ns.clone().into());
                payload.insert(KEY.into(), key.clone().into());
                payload.insert(SEQ.into(), cur.map_or(pending.seq, |c| c.seq).into());
                payload.insert(HAS_VALUE.into(), base.is_some().into());
                if let Some(v) = base {
                    payload.insert(VALUE.into(), v.into());
                }
                match &pending.value {
                    Some(v) => {
                        payload.insert(NEXT.into(), serde_json::to_string(v)?.into());
                        payload.insert(NEXT_DELETED.into(), false.into());
                    }
                    None => {
                        payload.insert(NEXT_DELETED.into(), true.into());
                    }
                }
                payload.insert(NEXT_GEN.into(), writing.into());
                points.push(Point {
                    id,
                    vector: None,
                    sparse: None,
                    payload,
                });
            }
            b.upsert(&Using::default(), points, BATCH, 1).await?;
        }
        Ok(())
    }
}

/// A view for one `read` or `write` call: its own changes over the store's.
struct View<'a> {
    kv: &'a QdrantKv,
    /// This call's changes (a write's) in order, applied only when it succeeds.
    scratch: IndexMap<(String, String), Option<KvValue>>,
    writable: bool,
}

impl View<'_> {
    fn lookup(&mut self, key: &str, collection: &str) -> Result<Option<KvValue>> {
        let k = (collection.to_string(), key.to_string());
        if let Some(v) = self.scratch.get(&k) {
            return Ok(v.clone());
        }
        if let Some(p) = self.kv.lock_overlay()?.entries.get(&k) {
            return Ok(p.value.clone());
        }
        self.kv.fetch(collection, key)
    }

    fn refuse_read_only(&self) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::InvalidInput(
                "a write inside a read of the Qdrant key-value store".into(),
            ))
        }
    }
}

impl KvTable for View<'_> {
    fn get(&mut self, key: &str, collection: &str) -> Result<Option<Cow<'_, KvValue>>> {
        Ok(self.lookup(key, collection)?.map(Cow::Owned))
    }

    fn put(&mut self, key: &str, val: KvValue, collection: &str) -> Result<()> {
        self.refuse_read_only()?;
        self.kv.inner.generation.writing()?;
        self.scratch
            .insert((collection.to_string(), key.to_string()), Some(val));
        Ok(())
    }

    fn delete(&mut self, key: &str, collection: &str) -> Result<bool> {
        self.refuse_read_only()?;
        self.kv.inner.generation.writing()?;
        let existed = self.lookup(key, collection)?.is_some();
        if existed {
            self.scratch
                .insert((collection.to_string(), key.to_string()), None);
        }
        Ok(existed)
    }

    fn get_all(&mut self, collection: &str) -> Result<Cow<'_, KvCollection>> {
        let mut rows: HashMap<String, (u64, Option<KvValue>)> = self
            .kv
            .fetch_all(collection)?
            .into_iter()
            .map(|(seq, k, v)| (k, (seq, Some(v))))
            .collect();
        {
            let overlay = self.kv.lock_overlay()?;
            for ((ns, k), p) in &overlay.entries {
                if ns == collection {
                    let seq = rows.get(k).map_or(p.seq, |r| r.0);
                    rows.insert(k.clone(), (seq, p.value.clone()));
                }
            }
        }
        for ((ns, k), v) in &self.scratch {
            if ns == collection {
                let seq = rows.get(k).map_or(u64::MAX, |r| r.0);
                rows.insert(k.clone(), (seq, v.clone()));
            }
        }
        let mut rows: Vec<(u64, String, KvValue)> = rows
            .into_iter()
            .filter_map(|(k, (seq, v))| Some((seq, k, v?)))
            .collect();
        rows.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        Ok(Cow::Owned(
            rows.into_iter().map(|(_, k, v)| (k, v)).collect(),
        ))
    }
}

impl KvBackend for QdrantKv {
    fn read<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        let mut view = View {
            kv: self,
            scratch: IndexMap::new(),
            writable: false,
        };
        f(&mut view)
    }

    fn write<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        self.refuse_if_poisoned()?;
        let _one_writer = self
            .inner
            .writer
            .lock()
            .map_err(|_| Error::Other("a Qdrant key-value writer panicked".into()))?;
        let mut view = View {
            kv: self,
            scratch: IndexMap::new(),
            writable: true,
        };
        let out = f(&mut view)?;
        let scratch = std::mem::take(&mut view.scratch);
        let full = {
            let mut overlay = self.lock_overlay()?;
            for (k, v) in scratch {
                let size = k.0.len()
                    + k.1.len()
                    + v.as_ref()
                        .map_or(0, |v| v.iter().map(|(k, v)| k.len() + approx_len(v)).sum());
                overlay.bytes += size;
                let seq = match overlay.entries.get(&k) {
                    Some(p) => p.seq,
                    None => {
                        overlay.next_seq += 1;
                        overlay.next_seq
                    }
                };
                overlay.entries.insert(k, Pending { value: v, seq });
            }
            overlay.bytes > FLUSH_BYTES
        };
        if full {
            self.flush_blocking()?;
        }
        Ok(out)
    }
}

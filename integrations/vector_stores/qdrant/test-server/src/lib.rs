//! A Qdrant gRPC server for tests: qdrant-client's `Collections` and `Points`
//! services on 127.0.0.1, backed by Qdrant's engine (qdrant-edge), one shard per collection.

#![warn(missing_docs)]

// The conversions are written from Qdrant's protocol definitions
// (`collections.proto`, `points.proto`, `json_with_int.proto`), with no code
// shared with a store that uses this server, so the client's real wire format
// meets the real engine and neither side can mirror the other's mistakes.

mod collections;
mod convert;
mod filter;
mod points;
mod query;

use qdrant_client::qdrant::collections_server::CollectionsServer;
use qdrant_client::qdrant::points_server::PointsServer;
use qdrant_edge::external::uuid::Uuid;
use qdrant_edge::{
    EdgeConfig, EdgeConfigBuilder, EdgeShard, EdgeVectorParamsBuilder, PointId,
    PointInsertOperations, PointOperations, PointStruct, ScrollRequest, UpdateOperation,
    VectorInternal, VectorStructInternal, WithPayloadInterface, WithVector,
};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tonic::Status;

/// A running server; it stops, and its temporary folder goes, when dropped.
#[derive(Debug)]
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// What the server holds, for tests that look inside (upsert sizes, indexes).
    pub state: Arc<State>,
    _dir: Option<tempfile::TempDir>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
        // Shards write their last state on drop: before the folder goes.
        lock(&self.state.collections).clear();
    }
}

#[derive(Debug)]
pub(crate) struct Collection {
    pub(crate) shard: EdgeShard,
}

/// The server's collections, one engine shard each, in `<dir>/<name>`.
#[derive(Debug)]
pub struct State {
    dir: PathBuf,
    collections: Mutex<HashMap<String, Arc<Collection>>>,
    /// Field indexes requested (collection, field), for assertions.
    pub field_indexes: Mutex<Vec<(String, String)>>,
    /// Points per upsert request received, for assertions.
    pub upsert_sizes: Mutex<Vec<usize>>,
}

/// A poisoned lock only means another request panicked; the data is whole.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    pub(crate) fn get(&self, name: &str) -> Result<Arc<Collection>, Status> {
        lock(&self.collections)
            .get(name)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("Collection `{name}` doesn't exist!")))
    }

    /// Creates a collection's shard, unless the name is taken.
    pub(crate) fn create(&self, name: &str, config: EdgeConfig) -> Result<(), Status> {
        // Qdrant's rule; it also keeps the name one folder under `dir`.
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
            return Err(Status::invalid_argument(format!(
                "Wrong input: collection name `{name}` cannot be empty or contain / \\ or NUL"
            )));
        }
        let mut all = lock(&self.collections);
        if all.contains_key(name) {
            return Err(Status::already_exists(format!(
                "Wrong input: Collection `{name}` already exists!"
            )));
        }
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| Status::internal(e.to_string()))?;
        let shard = EdgeShard::new(&dir, config).map_err(convert::engine)?;
        all.insert(name.into(), Arc::new(Collection { shard }));
        Ok(())
    }

    /// Drops a collection and its folder; whether it existed.
    pub(crate) fn delete(&self, name: &str) -> bool {
        let Some(removed) = lock(&self.collections).remove(name) else {
            return false;
        };
        // A request still holding the shard keeps its files; the next
        // `create` of that name then fails rather than mixing the two.
        if let Some(collection) = Arc::into_inner(removed) {
            drop(collection);
            let _ = std::fs::remove_dir_all(self.dir.join(name));
        }
        true
    }

    pub(crate) fn exists(&self, name: &str) -> bool {
        lock(&self.collections).contains_key(name)
    }

    pub(crate) fn names(&self) -> Vec<String> {
        lock(&self.collections).keys().cloned().collect()
    }

    /// Creates a collection with one unnamed vector, as LlamaIndex does
    /// without hybrid search (to replay recorded data into it).
    pub fn create_unnamed(&self, name: &str, dim: usize) {
        let config = EdgeConfigBuilder::new()
            .vector(
                "",
                EdgeVectorParamsBuilder::new(dim, qdrant_edge::Distance::Cosine).build(),
            )
            .build();
        self.create(name, config).expect("collection created");
    }

    /// The engine's dense vector names of a collection (`""`: unnamed).
    pub fn vector_names(&self, name: &str) -> Vec<String> {
        let c = self.get(name).expect("collection exists");
        let mut names: Vec<String> = c.shard.config().vectors.keys().cloned().collect();
        names.sort();
        names
    }

    /// The engine's sparse vector names of a collection.
    pub fn sparse_vector_names(&self, name: &str) -> Vec<String> {
        let c = self.get(name).expect("collection exists");
        let mut names: Vec<String> = c.shard.config().sparse_vectors.keys().cloned().collect();
        names.sort();
        names
    }

    /// Every point of a collection with a UUID id and an unnamed dense
    /// vector, as stored by the engine, sorted by id.
    pub fn points(&self, name: &str) -> Vec<(Uuid, Vec<f32>, Value)> {
        let c = self.get(name).expect("collection exists");
        let (records, _) = c
            .shard
            .scroll(ScrollRequest {
                offset: None,
                limit: Some(100_000),
                filter: None,
                with_payload: Some(WithPayloadInterface::Bool(true)),
                with_vector: WithVector::Bool(true),
                order_by: None,
            })
            .expect("scroll");
        let mut out: Vec<_> = records
            .into_iter()
            .map(|r| {
                let PointId::Uuid(id) = r.id else {
                    panic!("numeric id {:?}", r.id)
                };
                let vector = match r.vector {
                    Some(VectorStructInternal::Single(v)) => v,
                    Some(VectorStructInternal::Named(mut m)) => match m.remove("") {
                        Some(VectorInternal::Dense(v)) => v,
                        other => panic!("{id}: no unnamed dense vector: {other:?}"),
                    },
                    other => panic!("{id}: {other:?}"),
                };
                let payload = r.payload.map(|p| p.0).unwrap_or_default();
                (id, vector, Value::Object(payload.into_iter().collect()))
            })
            .collect();
        out.sort_by_key(|(id, _, _)| *id);
        out
    }

    /// Writes points straight into the engine (to replay recorded data).
    pub fn replay(&self, collection: &str, points: Vec<(Uuid, Vec<f32>, Value)>) {
        let c = self.get(collection).expect("collection exists");
        let points = points
            .into_iter()
            .map(|(id, v, payload)| PointStruct::new(PointId::Uuid(id), v, payload).into())
            .collect();
        c.shard
            .update(UpdateOperation::PointOperation(
                PointOperations::UpsertPoints(PointInsertOperations::PointsList(points)),
            ))
            .expect("points written");
    }
}

/// Starts a server on a free port of 127.0.0.1, its data in a temporary folder.
pub async fn start() -> TestServer {
    start_with(0, None).await.expect("test server started")
}

/// Starts a server on `port` of 127.0.0.1 (0: any free port). With `dir`,
/// collections live there (and those already there are served); without, in a
/// temporary folder removed when the server is dropped.
pub async fn start_with(port: u16, dir: Option<&Path>) -> std::io::Result<TestServer> {
    let (temp, dir) = match dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            (None, d.to_path_buf())
        }
        None => {
            let t = tempfile::tempdir()?;
            let d = t.path().to_path_buf();
            (Some(t), d)
        }
    };
    let state = Arc::new(State {
        collections: Mutex::new(load_collections(&dir)?),
        dir,
        field_indexes: Mutex::new(Vec::new()),
        upsert_sizes: Mutex::new(Vec::new()),
    });
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    let addr = listener.local_addr()?;
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    let svc = Service(state.clone());
    let task = tokio::spawn(async move {
        let served = tonic::transport::Server::builder()
            .add_service(CollectionsServer::new(svc.clone()))
            .add_service(PointsServer::new(svc))
            .serve_with_incoming(incoming)
            .await;
        if let Err(e) = served {
            eprintln!("qdrant test server stopped: {e}");
        }
    });
    Ok(TestServer {
        url: format!("http://{addr}"),
        state,
        _dir: temp,
        task,
    })
}

/// The collections a data folder already holds: each folder in which the
/// engine wrote its config (`edge_config.json`, a name qdrant-edge keeps private).
fn load_collections(dir: &Path) -> std::io::Result<HashMap<String, Arc<Collection>>> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).map(String::from);
        let Some(name) = name.filter(|_| path.join("edge_config.json").is_file()) else {
            continue;
        };
        let shard = EdgeShard::load(&path, None)
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
        out.insert(name, Arc::new(Collection { shard }));
    }
    Ok(out)
}

/// Both services over one state.
#[derive(Debug, Clone)]
pub(crate) struct Service(pub(crate) Arc<State>);

//! A Qdrant gRPC server for tests: qdrant-client's generated `Collections` and
//! `Points` services, served on 127.0.0.1, backed by Qdrant's engine (qdrant-edge).
//!
//! Its conversions are written from Qdrant's protocol definitions
//! (`collections.proto`, `points.proto`, `json_with_int.proto`), with no
//! code shared with the store, so the client's real wire format meets the
//! real engine and neither side can mirror the other's mistakes. Only the
//! calls the store makes are implemented; the rest answer `unimplemented`.

#![allow(dead_code, clippy::unwrap_used)]

use qdrant_client::qdrant as pb;
use qdrant_client::qdrant::collections_server::{Collections, CollectionsServer};
use qdrant_client::qdrant::points_server::{Points, PointsServer};
use qdrant_edge::external::ordered_float::OrderedFloat;
use qdrant_edge::external::uuid::Uuid;
use qdrant_edge::{
    Condition, EdgeConfigBuilder, EdgeShard, EdgeVectorParamsBuilder, FieldCondition, Filter,
    JsonPath, Match, NamedQuery, PointId, PointInsertOperations, PointOperations, PointStruct,
    QueryEnum, Range, ScrollRequest, SearchRequest, UpdateOperation, VectorInternal, Vectors,
    WithPayloadInterface, WithVector,
};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tonic::{Request, Response, Status};

/// A running server; dropped with the test.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    pub state: Arc<State>,
    _dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Collection {
    shard: Arc<EdgeShard>,
    vectors: pb::VectorsConfig,
}

/// The server's collections, one engine shard each.
pub struct State {
    dir: PathBuf,
    collections: Mutex<HashMap<String, Arc<Collection>>>,
    /// Field indexes requested (collection, field), for assertions.
    pub field_indexes: Mutex<Vec<(String, String)>>,
    /// Points per upsert request received, for assertions.
    pub upsert_sizes: Mutex<Vec<usize>>,
}

impl State {
    fn get(&self, name: &str) -> Result<Arc<Collection>, Status> {
        self.collections
            .lock()
            .unwrap()
            .get(name)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("Collection `{name}` doesn't exist!")))
    }

    /// Creates a collection with one unnamed vector, as LlamaIndex does
    /// without hybrid search (to replay recorded data into it).
    pub fn create_unnamed(&self, name: &str, dim: usize) {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let config = EdgeConfigBuilder::new()
            .vector(
                "",
                EdgeVectorParamsBuilder::new(dim, qdrant_edge::Distance::Cosine).build(),
            )
            .build();
        let shard = EdgeShard::new(&dir, config).unwrap();
        let vectors = pb::VectorsConfig {
            config: Some(pb::vectors_config::Config::Params(pb::VectorParams {
                size: dim as u64,
                distance: pb::Distance::Cosine as i32,
                ..Default::default()
            })),
        };
        self.collections.lock().unwrap().insert(
            name.into(),
            Arc::new(Collection {
                shard: Arc::new(shard),
                vectors,
            }),
        );
    }

    /// The engine's vector names of a collection (`""`: unnamed).
    pub fn vector_names(&self, name: &str) -> Vec<String> {
        let c = self.get(name).unwrap();
        let mut names: Vec<String> = c.shard.config().vectors.keys().cloned().collect();
        names.sort();
        names
    }

    /// Every point of a collection as stored by the engine, by id.
    pub fn points(&self, name: &str) -> Vec<(Uuid, Vec<f32>, Value)> {
        let c = self.get(name).unwrap();
        let (records, _) = c
            .shard
            .scroll(ScrollRequest {
                offset: None,
                limit: Some(10_000),
                filter: None,
                with_payload: Some(WithPayloadInterface::Bool(true)),
                with_vector: WithVector::Bool(true),
                order_by: None,
            })
            .unwrap();
        let mut out: Vec<_> = records
            .into_iter()
            .map(|r| {
                let PointId::Uuid(id) = r.id else {
                    panic!("numeric id")
                };
                let vector = match r.vector {
                    Some(qdrant_edge::VectorStructInternal::Single(v)) => v,
                    Some(qdrant_edge::VectorStructInternal::Named(mut m)) => match m.remove("") {
                        Some(VectorInternal::Dense(v)) => v,
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                };
                (id, vector, Value::Object(r.payload.unwrap().0))
            })
            .collect();
        out.sort_by_key(|(id, _, _)| id.to_string());
        out
    }

    /// Writes points straight into the engine (to replay recorded data).
    pub fn replay(&self, collection: &str, points: Vec<(Uuid, Vec<f32>, Value)>) {
        let c = self.get(collection).unwrap();
        let points = points
            .into_iter()
            .map(|(id, v, payload)| PointStruct::new(PointId::Uuid(id), v, payload).into())
            .collect();
        c.shard
            .update(UpdateOperation::PointOperation(
                PointOperations::UpsertPoints(PointInsertOperations::PointsList(points)),
            ))
            .unwrap();
    }
}

/// Starts a server on a free port of 127.0.0.1.
pub async fn start() -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let state = Arc::new(State {
        dir: dir.path().to_path_buf(),
        collections: Mutex::new(HashMap::new()),
        field_indexes: Mutex::new(Vec::new()),
        upsert_sizes: Mutex::new(Vec::new()),
    });
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    let svc = Service(state.clone());
    let task = tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(CollectionsServer::new(svc.clone()))
            .add_service(PointsServer::new(svc))
            .serve_with_incoming(incoming)
            .await
            .unwrap();
    });
    TestServer {
        url: format!("http://{addr}"),
        state,
        _dir: dir,
        task,
    }
}

#[derive(Clone)]
struct Service(Arc<State>);

fn engine(e: qdrant_edge::OperationError) -> Status {
    Status::internal(e.to_string())
}

fn bad(msg: impl Into<String>) -> Status {
    Status::invalid_argument(msg.into())
}

// ---- values (json_with_int.proto) ----------------------------------------

fn from_pb_value(v: pb::Value) -> Value {
    use pb::value::Kind;
    match v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::IntegerValue(i)) => Value::Number(i.into()),
        Some(Kind::DoubleValue(d)) => Number::from_f64(d).map_or(Value::Null, Value::Number),
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.into_iter().map(from_pb_value).collect()),
        Some(Kind::StructValue(s)) => Value::Object(
            s.fields
                .into_iter()
                .map(|(k, v)| (k, from_pb_value(v)))
                .collect(),
        ),
    }
}

fn to_pb_value(v: &Value) -> pb::Value {
    use pb::value::Kind;
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Kind::IntegerValue(i),
            None => Kind::DoubleValue(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(a) => Kind::ListValue(pb::ListValue {
            values: a.iter().map(to_pb_value).collect(),
        }),
        Value::Object(o) => Kind::StructValue(pb::Struct {
            fields: o.iter().map(|(k, v)| (k.clone(), to_pb_value(v))).collect(),
        }),
    };
    pb::Value { kind: Some(kind) }
}

fn to_pb_payload(p: Option<qdrant_edge::Payload>) -> HashMap<String, pb::Value> {
    p.map(|p| {
        p.0.iter()
            .map(|(k, v)| (k.clone(), to_pb_value(v)))
            .collect()
    })
    .unwrap_or_default()
}

// ---- ids ------------------------------------------------------------------

fn from_pb_id(id: &pb::PointId) -> Result<PointId, Status> {
    use pb::point_id::PointIdOptions;
    match &id.point_id_options {
        Some(PointIdOptions::Num(n)) => Ok(PointId::NumId(*n)),
        Some(PointIdOptions::Uuid(s)) => Uuid::parse_str(s)
            .map(PointId::Uuid)
            .map_err(|_| bad(format!("Unable to parse UUID: {s}"))),
        None => Err(bad("point id is empty")),
    }
}

fn to_pb_id(id: PointId) -> pb::PointId {
    use pb::point_id::PointIdOptions;
    pb::PointId {
        point_id_options: Some(match id {
            PointId::NumId(n) => PointIdOptions::Num(n),
            PointId::Uuid(u) => PointIdOptions::Uuid(u.to_string()),
        }),
    }
}

// ---- filters (points.proto: Filter, Condition, FieldCondition, Match, Range) --

fn from_pb_filter(f: &pb::Filter) -> Result<Filter, Status> {
    if f.min_should.is_some() {
        return Err(Status::unimplemented("min_should"));
    }
    // An empty repeated field is an absent clause in the protocol.
    let clause = |cs: &[pb::Condition]| -> Result<Option<Vec<Condition>>, Status> {
        if cs.is_empty() {
            return Ok(None);
        }
        cs.iter()
            .map(from_pb_condition)
            .collect::<Result<_, _>>()
            .map(Some)
    };
    Ok(Filter {
        must: clause(&f.must)?,
        should: clause(&f.should)?,
        must_not: clause(&f.must_not)?,
        min_should: None,
    })
}

fn path(key: &str) -> Result<JsonPath, Status> {
    key.parse()
        .map_err(|_| bad(format!("bad payload key `{key}`")))
}

fn from_pb_condition(c: &pb::Condition) -> Result<Condition, Status> {
    use pb::condition::ConditionOneOf as C;
    match &c.condition_one_of {
        Some(C::Filter(f)) => Ok(Condition::Filter(from_pb_filter(f)?)),
        Some(C::IsEmpty(e)) => {
            // The engine does not export `PayloadField`; its JSON form is `{"key": ...}`.
            path(&e.key)?;
            let cond: qdrant_edge::IsEmptyCondition =
                serde_json::from_value(serde_json::json!({"is_empty": {"key": e.key}}))
                    .map_err(|e| bad(e.to_string()))?;
            Ok(Condition::IsEmpty(cond))
        }
        Some(C::HasId(h)) => Ok(Condition::HasId(
            h.has_id.iter().map(from_pb_id).collect::<Result<_, _>>()?,
        )),
        Some(C::Field(fc)) => from_pb_field(fc),
        _ => Err(Status::unimplemented("condition kind")),
    }
}

fn from_pb_field(fc: &pb::FieldCondition) -> Result<Condition, Status> {
    use pb::r#match::MatchValue as M;
    let key = path(&fc.key)?;
    if let Some(m) = &fc.r#match {
        let m = match &m.match_value {
            Some(M::Keyword(s)) => Match::from(s.clone()),
            Some(M::Integer(i)) => Match::from(*i),
            Some(M::Boolean(b)) => Match::from(*b),
            Some(M::Text(t)) => Match::new_text(t),
            Some(M::Keywords(ks)) => Match::from(ks.strings.clone()),
            Some(M::Integers(is)) => {
                // `any` of integers: one match per value, any of them.
                let conds = is
                    .integers
                    .iter()
                    .map(|i| {
                        Condition::Field(FieldCondition::new_match(key.clone(), Match::from(*i)))
                    })
                    .collect();
                return Ok(Condition::Filter(Filter {
                    should: Some(conds),
                    ..Filter::default()
                }));
            }
            _ => return Err(Status::unimplemented("match kind")),
        };
        return Ok(Condition::Field(FieldCondition::new_match(key, m)));
    }
    if let Some(r) = &fc.range {
        let range = Range {
            lt: r.lt.map(OrderedFloat),
            gt: r.gt.map(OrderedFloat),
            gte: r.gte.map(OrderedFloat),
            lte: r.lte.map(OrderedFloat),
        };
        return Ok(Condition::Field(FieldCondition::new_range(key, range)));
    }
    Err(Status::unimplemented("field condition kind"))
}

fn with_payload(sel: &Option<pb::WithPayloadSelector>) -> Result<bool, Status> {
    use pb::with_payload_selector::SelectorOptions as S;
    match sel.as_ref().and_then(|s| s.selector_options.as_ref()) {
        None => Ok(false),
        Some(S::Enable(b)) => Ok(*b),
        Some(_) => Err(Status::unimplemented("payload selectors")),
    }
}

// ---- collections ----------------------------------------------------------

fn distance(d: i32) -> Result<qdrant_edge::Distance, Status> {
    match pb::Distance::try_from(d) {
        Ok(pb::Distance::Cosine) => Ok(qdrant_edge::Distance::Cosine),
        Ok(pb::Distance::Dot) => Ok(qdrant_edge::Distance::Dot),
        Ok(pb::Distance::Euclid) => Ok(qdrant_edge::Distance::Euclid),
        Ok(pb::Distance::Manhattan) => Ok(qdrant_edge::Distance::Manhattan),
        _ => Err(bad(format!("unknown distance {d}"))),
    }
}

#[tonic::async_trait]
impl Collections for Service {
    async fn get(
        &self,
        request: Request<pb::GetCollectionInfoRequest>,
    ) -> Result<Response<pb::GetCollectionInfoResponse>, Status> {
        let c = self.0.get(&request.get_ref().collection_name)?;
        let info = pb::CollectionInfo {
            status: pb::CollectionStatus::Green as i32,
            points_count: Some(c.shard.info().points_count as u64),
            config: Some(pb::CollectionConfig {
                params: Some(pb::CollectionParams {
                    vectors_config: Some(c.vectors.clone()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        Ok(Response::new(pb::GetCollectionInfoResponse {
            result: Some(info),
            time: 0.0,
        }))
    }

    async fn create(
        &self,
        request: Request<pb::CreateCollection>,
    ) -> Result<Response<pb::CollectionOperationResponse>, Status> {
        use pb::vectors_config::Config;
        let req = request.into_inner();
        let name = req.collection_name;
        let vectors = req
            .vectors_config
            .ok_or_else(|| bad("vectors_config is required"))?;
        let mut config = EdgeConfigBuilder::new();
        let named: Vec<(String, pb::VectorParams)> = match vectors.config.clone() {
            Some(Config::Params(p)) => vec![(String::new(), p)],
            Some(Config::ParamsMap(m)) => m.map.into_iter().collect(),
            None => return Err(bad("vectors_config is empty")),
        };
        for (vname, p) in named {
            config = config.vector(
                vname,
                EdgeVectorParamsBuilder::new(p.size as usize, distance(p.distance)?).build(),
            );
        }
        let mut all = self.0.collections.lock().unwrap();
        if all.contains_key(&name) {
            return Err(Status::already_exists(format!(
                "Wrong input: Collection `{name}` already exists!"
            )));
        }
        let dir = self.0.dir.join(&name);
        std::fs::create_dir_all(&dir).map_err(|e| Status::internal(e.to_string()))?;
        let shard = EdgeShard::new(&dir, config.build()).map_err(engine)?;
        all.insert(
            name,
            Arc::new(Collection {
                shard: Arc::new(shard),
                vectors,
            }),
        );
        Ok(Response::new(pb::CollectionOperationResponse {
            result: true,
            time: 0.0,
        }))
    }

    async fn delete(
        &self,
        request: Request<pb::DeleteCollection>,
    ) -> Result<Response<pb::CollectionOperationResponse>, Status> {
        let name = &request.get_ref().collection_name;
        let removed = self.0.collections.lock().unwrap().remove(name);
        if removed.is_some() {
            drop(removed);
            let _ = std::fs::remove_dir_all(self.0.dir.join(name));
        }
        Ok(Response::new(pb::CollectionOperationResponse {
            result: true,
            time: 0.0,
        }))
    }

    async fn collection_exists(
        &self,
        request: Request<pb::CollectionExistsRequest>,
    ) -> Result<Response<pb::CollectionExistsResponse>, Status> {
        let exists = self
            .0
            .collections
            .lock()
            .unwrap()
            .contains_key(&request.get_ref().collection_name);
        Ok(Response::new(pb::CollectionExistsResponse {
            result: Some(pb::CollectionExists { exists }),
            time: 0.0,
        }))
    }

    async fn list(
        &self,
        _: Request<pb::ListCollectionsRequest>,
    ) -> Result<Response<pb::ListCollectionsResponse>, Status> {
        Err(Status::unimplemented("list"))
    }
    async fn update(
        &self,
        _: Request<pb::UpdateCollection>,
    ) -> Result<Response<pb::CollectionOperationResponse>, Status> {
        Err(Status::unimplemented("update"))
    }
    async fn update_aliases(
        &self,
        _: Request<pb::ChangeAliases>,
    ) -> Result<Response<pb::CollectionOperationResponse>, Status> {
        Err(Status::unimplemented("update_aliases"))
    }
    async fn list_collection_aliases(
        &self,
        _: Request<pb::ListCollectionAliasesRequest>,
    ) -> Result<Response<pb::ListAliasesResponse>, Status> {
        Err(Status::unimplemented("list_collection_aliases"))
    }
    async fn list_aliases(
        &self,
        _: Request<pb::ListAliasesRequest>,
    ) -> Result<Response<pb::ListAliasesResponse>, Status> {
        Err(Status::unimplemented("list_aliases"))
    }
    async fn collection_cluster_info(
        &self,
        _: Request<pb::CollectionClusterInfoRequest>,
    ) -> Result<Response<pb::CollectionClusterInfoResponse>, Status> {
        Err(Status::unimplemented("collection_cluster_info"))
    }
    async fn update_collection_cluster_setup(
        &self,
        _: Request<pb::UpdateCollectionClusterSetupRequest>,
    ) -> Result<Response<pb::UpdateCollectionClusterSetupResponse>, Status> {
        Err(Status::unimplemented("update_collection_cluster_setup"))
    }
    async fn create_shard_key(
        &self,
        _: Request<pb::CreateShardKeyRequest>,
    ) -> Result<Response<pb::CreateShardKeyResponse>, Status> {
        Err(Status::unimplemented("create_shard_key"))
    }
    async fn delete_shard_key(
        &self,
        _: Request<pb::DeleteShardKeyRequest>,
    ) -> Result<Response<pb::DeleteShardKeyResponse>, Status> {
        Err(Status::unimplemented("delete_shard_key"))
    }
    async fn list_shard_keys(
        &self,
        _: Request<pb::ListShardKeysRequest>,
    ) -> Result<Response<pb::ListShardKeysResponse>, Status> {
        Err(Status::unimplemented("list_shard_keys"))
    }
}

// ---- points -----------------------------------------------------------------

fn done() -> Response<pb::PointsOperationResponse> {
    Response::new(pb::PointsOperationResponse {
        result: Some(pb::UpdateResult {
            operation_id: Some(0),
            status: pb::UpdateStatus::Completed as i32,
        }),
        time: 0.0,
        usage: None,
    })
}

/// A dense vector as sent: the `vector` oneof (`Dense`) or the older `data` field.
#[allow(deprecated)] // older clients still send `data`; the protocol keeps it
fn dense(v: pb::Vector) -> Result<Vec<f32>, Status> {
    use pb::vector::Vector as V;
    match v.vector {
        Some(V::Dense(d)) => Ok(d.data),
        None if v.indices.is_none() => Ok(v.data),
        _ => Err(Status::unimplemented("only dense vectors")),
    }
}

fn edge_vectors(v: Option<pb::Vectors>) -> Result<Vectors, Status> {
    use pb::vectors::VectorsOptions as O;
    match v.and_then(|v| v.vectors_options) {
        Some(O::Vector(v)) => Ok(dense(v)?.into()),
        Some(O::Vectors(named)) => {
            let mut out = Vec::new();
            for (name, v) in named.vectors {
                out.push((name, dense(v)?));
            }
            Ok(Vectors::new_named(out))
        }
        None => Err(bad("point has no vectors")),
    }
}

#[tonic::async_trait]
impl Points for Service {
    async fn upsert(
        &self,
        request: Request<pb::UpsertPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        self.0.upsert_sizes.lock().unwrap().push(req.points.len());
        let mut points = Vec::with_capacity(req.points.len());
        for p in req.points {
            let id = from_pb_id(p.id.as_ref().ok_or_else(|| bad("point without id"))?)?;
            let payload: Map<String, Value> = p
                .payload
                .into_iter()
                .map(|(k, v)| (k, from_pb_value(v)))
                .collect();
            points.push(
                PointStruct::new(id, edge_vectors(p.vectors)?, Value::Object(payload)).into(),
            );
        }
        c.shard
            .update(UpdateOperation::PointOperation(
                PointOperations::UpsertPoints(PointInsertOperations::PointsList(points)),
            ))
            .map_err(engine)?;
        Ok(done())
    }

    async fn delete(
        &self,
        request: Request<pb::DeletePoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        use pb::points_selector::PointsSelectorOneOf as S;
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let op = match req.points.and_then(|p| p.points_selector_one_of) {
            Some(S::Points(list)) => PointOperations::DeletePoints {
                ids: list.ids.iter().map(from_pb_id).collect::<Result<_, _>>()?,
            },
            Some(S::Filter(f)) => PointOperations::DeletePointsByFilter(from_pb_filter(&f)?),
            None => return Err(bad("points selector is required")),
        };
        c.shard
            .update(UpdateOperation::PointOperation(op))
            .map_err(engine)?;
        Ok(done())
    }

    async fn get(
        &self,
        request: Request<pb::GetPoints>,
    ) -> Result<Response<pb::GetResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let ids = req
            .ids
            .iter()
            .map(from_pb_id)
            .collect::<Result<Vec<_>, _>>()?;
        let payload = with_payload(&req.with_payload)?;
        let records = c
            .shard
            .retrieve(&ids, Some(WithPayloadInterface::Bool(payload)), None)
            .map_err(engine)?;
        Ok(Response::new(pb::GetResponse {
            result: records
                .into_iter()
                .map(|r| pb::RetrievedPoint {
                    id: Some(to_pb_id(r.id)),
                    payload: to_pb_payload(r.payload),
                    ..Default::default()
                })
                .collect(),
            time: 0.0,
            usage: None,
        }))
    }

    async fn create_field_index(
        &self,
        request: Request<pb::CreateFieldIndexCollection>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        self.0.get(&req.collection_name)?;
        self.0
            .field_indexes
            .lock()
            .unwrap()
            .push((req.collection_name, req.field_name));
        Ok(done())
    }

    async fn scroll(
        &self,
        request: Request<pb::ScrollPoints>,
    ) -> Result<Response<pb::ScrollResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let (records, next) = c
            .shard
            .scroll(ScrollRequest {
                offset: req.offset.as_ref().map(from_pb_id).transpose()?,
                limit: Some(req.limit.unwrap_or(10) as usize),
                filter: req.filter.as_ref().map(from_pb_filter).transpose()?,
                with_payload: Some(WithPayloadInterface::Bool(with_payload(&req.with_payload)?)),
                with_vector: WithVector::Bool(false),
                order_by: None,
            })
            .map_err(engine)?;
        Ok(Response::new(pb::ScrollResponse {
            next_page_offset: next.map(to_pb_id),
            result: records
                .into_iter()
                .map(|r| pb::RetrievedPoint {
                    id: Some(to_pb_id(r.id)),
                    payload: to_pb_payload(r.payload),
                    ..Default::default()
                })
                .collect(),
            time: 0.0,
            usage: None,
        }))
    }

    async fn query(
        &self,
        request: Request<pb::QueryPoints>,
    ) -> Result<Response<pb::QueryResponse>, Status> {
        use pb::query::Variant;
        use pb::vector_input::Variant as Input;
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let vector = match req.query.and_then(|q| q.variant) {
            Some(Variant::Nearest(pb::VectorInput {
                variant: Some(Input::Dense(d)),
            })) => d.data,
            _ => return Err(Status::unimplemented("only nearest to a dense vector")),
        };
        let using = req.using.unwrap_or_default();
        let points = c
            .shard
            .search(SearchRequest {
                query: QueryEnum::Nearest(NamedQuery::new(VectorInternal::Dense(vector), using)),
                filter: req.filter.as_ref().map(from_pb_filter).transpose()?,
                params: None,
                limit: req.limit.unwrap_or(10) as usize,
                offset: req.offset.unwrap_or(0) as usize,
                with_payload: Some(WithPayloadInterface::Bool(with_payload(&req.with_payload)?)),
                with_vector: Some(WithVector::Bool(false)),
                score_threshold: req.score_threshold,
            })
            .map_err(engine)?;
        Ok(Response::new(pb::QueryResponse {
            result: points
                .into_iter()
                .map(|p| pb::ScoredPoint {
                    id: Some(to_pb_id(p.id)),
                    payload: to_pb_payload(p.payload),
                    score: p.score,
                    version: p.version,
                    ..Default::default()
                })
                .collect(),
            time: 0.0,
            usage: None,
        }))
    }

    async fn count(
        &self,
        request: Request<pb::CountPoints>,
    ) -> Result<Response<pb::CountResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let count = c
            .shard
            .count(qdrant_edge::CountRequest {
                filter: req.filter.as_ref().map(from_pb_filter).transpose()?,
                exact: true,
            })
            .map_err(engine)?;
        Ok(Response::new(pb::CountResponse {
            result: Some(pb::CountResult {
                count: count as u64,
            }),
            time: 0.0,
            usage: None,
        }))
    }

    async fn update_vectors(
        &self,
        _: Request<pb::UpdatePointVectors>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("update_vectors"))
    }
    async fn delete_vectors(
        &self,
        _: Request<pb::DeletePointVectors>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("delete_vectors"))
    }
    async fn set_payload(
        &self,
        _: Request<pb::SetPayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("set_payload"))
    }
    async fn overwrite_payload(
        &self,
        _: Request<pb::SetPayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("overwrite_payload"))
    }
    async fn delete_payload(
        &self,
        _: Request<pb::DeletePayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("delete_payload"))
    }
    async fn clear_payload(
        &self,
        _: Request<pb::ClearPayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("clear_payload"))
    }
    async fn delete_field_index(
        &self,
        _: Request<pb::DeleteFieldIndexCollection>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("delete_field_index"))
    }
    async fn create_vector_name(
        &self,
        _: Request<pb::CreateVectorNameRequest>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("create_vector_name"))
    }
    async fn delete_vector_name(
        &self,
        _: Request<pb::DeleteVectorNameRequest>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        Err(Status::unimplemented("delete_vector_name"))
    }
    async fn search(
        &self,
        _: Request<pb::SearchPoints>,
    ) -> Result<Response<pb::SearchResponse>, Status> {
        Err(Status::unimplemented("search"))
    }
    async fn search_batch(
        &self,
        _: Request<pb::SearchBatchPoints>,
    ) -> Result<Response<pb::SearchBatchResponse>, Status> {
        Err(Status::unimplemented("search_batch"))
    }
    async fn search_groups(
        &self,
        _: Request<pb::SearchPointGroups>,
    ) -> Result<Response<pb::SearchGroupsResponse>, Status> {
        Err(Status::unimplemented("search_groups"))
    }
    async fn recommend(
        &self,
        _: Request<pb::RecommendPoints>,
    ) -> Result<Response<pb::RecommendResponse>, Status> {
        Err(Status::unimplemented("recommend"))
    }
    async fn recommend_batch(
        &self,
        _: Request<pb::RecommendBatchPoints>,
    ) -> Result<Response<pb::RecommendBatchResponse>, Status> {
        Err(Status::unimplemented("recommend_batch"))
    }
    async fn recommend_groups(
        &self,
        _: Request<pb::RecommendPointGroups>,
    ) -> Result<Response<pb::RecommendGroupsResponse>, Status> {
        Err(Status::unimplemented("recommend_groups"))
    }
    async fn discover(
        &self,
        _: Request<pb::DiscoverPoints>,
    ) -> Result<Response<pb::DiscoverResponse>, Status> {
        Err(Status::unimplemented("discover"))
    }
    async fn discover_batch(
        &self,
        _: Request<pb::DiscoverBatchPoints>,
    ) -> Result<Response<pb::DiscoverBatchResponse>, Status> {
        Err(Status::unimplemented("discover_batch"))
    }
    async fn update_batch(
        &self,
        _: Request<pb::UpdateBatchPoints>,
    ) -> Result<Response<pb::UpdateBatchResponse>, Status> {
        Err(Status::unimplemented("update_batch"))
    }
    async fn query_batch(
        &self,
        _: Request<pb::QueryBatchPoints>,
    ) -> Result<Response<pb::QueryBatchResponse>, Status> {
        Err(Status::unimplemented("query_batch"))
    }
    async fn query_groups(
        &self,
        _: Request<pb::QueryPointGroups>,
    ) -> Result<Response<pb::QueryGroupsResponse>, Status> {
        Err(Status::unimplemented("query_groups"))
    }
    async fn facet(
        &self,
        _: Request<pb::FacetCounts>,
    ) -> Result<Response<pb::FacetResponse>, Status> {
        Err(Status::unimplemented("facet"))
    }
    async fn search_matrix_pairs(
        &self,
        _: Request<pb::SearchMatrixPoints>,
    ) -> Result<Response<pb::SearchMatrixPairsResponse>, Status> {
        Err(Status::unimplemented("search_matrix_pairs"))
    }
    async fn search_matrix_offsets(
        &self,
        _: Request<pb::SearchMatrixPoints>,
    ) -> Result<Response<pb::SearchMatrixOffsetsResponse>, Status> {
        Err(Status::unimplemented("search_matrix_offsets"))
    }
}

//! The two places points live: a Qdrant server over gRPC (qdrant-client) and,
//! with `qdrant-embedded`, Qdrant's engine in this process (qdrant-edge).

use crate::filters::Plan;
use crate::sparse::SparseVector;
use crate::store::{Distance, PROVIDER, Target};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::Metadata;

/// One point to write: id (a UUID string), its vectors, payload.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    pub id: String,
    /// The dense vector (absent in a keyword-only point).
    pub vector: Option<Vec<f32>>,
    /// The sparse keyword vector of a hybrid collection.
    pub sparse: Option<SparseVector>,
    pub payload: Metadata,
}

/// A collection's vectors by name (`""`: the unnamed dense vector).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorNames {
    pub dense: Vec<String>,
    pub sparse: Vec<String>,
}

/// The vectors a new collection gets.
#[derive(Clone, Debug)]
pub(crate) struct CreateSpec {
    /// Dense vector name and dimension.
    pub dense: Option<(String, usize)>,
    /// Sparse vector name (with Qdrant's IDF modifier).
    pub sparse: Option<String>,
    pub distance: Distance,
    /// Keyword payload indexes to create.
    pub keyword_indexes: Vec<String>,
    /// Integer payload indexes to create.
    pub integer_indexes: Vec<String>,
}

/// Which vector names a write or query uses.
#[derive(Clone, Debug, Default)]
pub(crate) struct Using {
    pub dense: Option<String>,
    pub sparse: Option<String>,
}

/// A nearest-neighbour query.
#[derive(Clone, Debug)]
pub(crate) enum Search {
    Dense(String, Vec<f32>),
    Sparse(String, SparseVector),
    /// Both sides fetched (`dense_limit`, `sparse_limit`) and fused by Qdrant with RRF.
    Hybrid {
        dense: (String, Vec<f32>),
        dense_limit: usize,
        sparse: (String, SparseVector),
        sparse_limit: usize,
    },
}

/// One point read back.
#[derive(Clone, Debug)]
pub(crate) struct Hit {
    pub id: String,
    pub score: f32,
    pub payload: Metadata,
}

pub(crate) enum Backend {
    Remote(remote::Remote),
    #[cfg(feature = "qdrant-embedded")]
    Embedded(embedded::Embedded),
}

/// Dispatch to whichever back end this is.
macro_rules! each {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            Backend::Remote($b) => $e,
            #[cfg(feature = "qdrant-embedded")]
            Backend::Embedded($b) => $e,
        }
    };
}

impl Backend {
    pub(crate) fn open(target: &Target, collection: &str) -> Result<Self> {
        match target {
            Target::Remote { url, api_key } => Ok(Backend::Remote(remote::Remote::connect(
                url,
                api_key.as_deref(),
                collection,
            )?)),
            #[cfg(feature = "qdrant-embedded")]
            Target::Embedded { path } => Ok(Backend::Embedded(embedded::Embedded::new(
                path.join(collection),
            ))),
            #[cfg(not(feature = "qdrant-embedded"))]
            Target::Embedded { .. } => Err(Error::Unsupported(
                "embedded Qdrant needs the `qdrant-embedded` feature".into(),
            )),
        }
    }

    /// The collection's vector names, or `None` when it does not exist.
    pub(crate) async fn vector_names(&self) -> Result<Option<VectorNames>> {
        each!(self, b => b.vector_names().await)
    }

    pub(crate) async fn create(&self, spec: &CreateSpec) -> Result<()> {
        each!(self, b => b.create(spec).await)
    }

    pub(crate) async fn upsert(
        &self,
        using: &Using,
        points: Vec<Point>,
        batch_size: usize,
        parallel: usize,
    ) -> Result<()> {
        each!(self, b => b.upsert(using, points, batch_size, parallel).await)
    }

    pub(crate) async fn search(
        &self,
        search: &Search,
        limit: usize,
        plan: &Plan,
    ) -> Result<Vec<Hit>> {
        each!(self, b => b.search(search, limit, plan).await)
    }

    /// Sets payload keys (merged into each payload) on the points `plan` selects.
    pub(crate) async fn set_payload(&self, plan: &Plan, payload: Metadata) -> Result<()> {
        each!(self, b => b.set_payload(plan, payload).await)
    }

    /// Removes payload keys from the points `plan` selects.
    pub(crate) async fn delete_payload(&self, plan: &Plan, keys: &[&str]) -> Result<()> {
        each!(self, b => b.delete_payload(plan, keys).await)
    }

    pub(crate) async fn retrieve(&self, ids: &[String]) -> Result<Vec<Hit>> {
        each!(self, b => b.retrieve(ids).await)
    }

    pub(crate) async fn scroll(&self, plan: &Plan, limit: usize) -> Result<Vec<Hit>> {
        each!(self, b => b.scroll(plan, limit).await)
    }

    pub(crate) async fn delete(&self, plan: &Plan) -> Result<()> {
        each!(self, b => b.delete(plan).await)
    }

    /// Points `plan` selects with their dense vector `name` (`""`: unnamed).
    pub(crate) async fn scroll_vectors(
        &self,
        plan: &Plan,
        limit: usize,
        name: &str,
    ) -> Result<Vec<(Hit, Option<Vec<f32>>)>> {
        match self {
            Backend::Remote(b) => b.scroll_vectors(plan, limit, name).await,
            #[cfg(feature = "qdrant-embedded")]
            Backend::Embedded(_) => Err(Error::Unsupported(
                "reading vectors back from embedded Qdrant".into(),
            )),
        }
    }

    pub(crate) async fn drop_collection(&self) -> Result<()> {
        each!(self, b => b.drop_collection().await)
    }
}

fn provider_error(
    what: impl std::fmt::Display,
    e: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    Error::provider(PROVIDER, format!("{what}: {e}"), e)
}

pub(crate) mod remote {
    use super::{CreateSpec, Hit, Point, Search, Using, VectorNames, provider_error};
    use crate::filters::{Cond, Plan};
    use crate::store::Distance;
    use futures::{StreamExt, TryStreamExt};
    use qdrant_client::Qdrant;
    use qdrant_client::qdrant::{
        self as pb, Condition, CreateCollection, CreateFieldIndexCollection, DeletePayloadPoints,
        DeletePoints, FieldType, Filter, GetPoints, PointId, PointStruct, PointsSelector,
        PrefetchQuery, Query, QueryPoints, ScrollPoints, SetPayloadPoints, SparseVectorConfig,
        SparseVectorParams, UpsertPoints, VectorInput, VectorParams, VectorParamsMap, Vectors,
        VectorsConfig, point_id::PointIdOptions, vector_input, vectors_config,
    };
    use ragloom_core::error::Result;
    use ragloom_core::schema::Metadata;
    use std::collections::HashMap;

    pub(crate) struct Remote {
        client: Qdrant,
        collection: String,
    }

    impl Remote {
        pub(crate) fn connect(url: &str, api_key: Option<&str>, collection: &str) -> Result<Self> {
            let mut builder = Qdrant::from_url(url).skip_compatibility_check();
            if let Some(key) = api_key {
                builder = builder.api_key(key);
            }
            let client = builder
                .build()
                .map_err(|e| provider_error(format_args!("connecting to Qdrant at {url}"), e))?;
            Ok(Self {
                client,
                collection: collection.to_string(),
            })
        }

        fn err(&self, what: &str, e: qdrant_client::QdrantError) -> ragloom_core::Error {
            provider_error(format_args!("{what} (collection `{}`)", self.collection), e)
        }

        pub(crate) async fn vector_names(&self) -> Result<Option<VectorNames>> {
            let exists = self
                .client
                .collection_exists(self.collection.as_str())
                .await
                .map_err(|e| self.err("checking the collection", e))?;
            if !exists {
                return Ok(None);
            }
            let info = self
                .client
                .collection_info(self.collection.as_str())
                .await
                .map_err(|e| self.err("reading the collection's configuration", e))?;
            let params = info.result.and_then(|r| r.config).and_then(|c| c.params);
            let mut names = VectorNames::default();
            if let Some(p) = params {
                names.dense = match p.vectors_config.and_then(|v| v.config) {
                    Some(vectors_config::Config::Params(_)) => vec![String::new()],
                    Some(vectors_config::Config::ParamsMap(map)) => map.map.into_keys().collect(),
                    None => Vec::new(),
                };
                names.sparse = p
                    .sparse_vectors_config
                    .map(|s| s.map.into_keys().collect())
                    .unwrap_or_default();
            }
            names.dense.sort();
            names.sparse.sort();
            Ok(Some(names))
        }

        pub(crate) async fn create(&self, spec: &CreateSpec) -> Result<()> {
            let vectors_config = spec.dense.as_ref().map(|(name, dim)| {
                let params = VectorParams {
                    size: *dim as u64,
                    distance: proto_distance(spec.distance) as i32,
                    ..Default::default()
                };
                let config = if name.is_empty() {
                    vectors_config::Config::Params(params)
                } else {
                    vectors_config::Config::ParamsMap(VectorParamsMap {
                        map: HashMap::from([(name.clone(), params)]),
                    })
                };
                VectorsConfig {
                    config: Some(config),
                }
            });
            let sparse_vectors_config = spec.sparse.as_ref().map(|name| SparseVectorConfig {
                map: HashMap::from([(
                    name.clone(),
                    SparseVectorParams {
                        index: None,
                        modifier: Some(pb::Modifier::Idf as i32),
                    },
                )]),
            });
            let request = CreateCollection {
                collection_name: self.collection.clone(),
                vectors_config,
                sparse_vectors_config,
                ..Default::default()
            };
            if let Err(e) = self.client.create_collection(request).await {
                // Another writer may have created it meanwhile, as LlamaIndex tolerates.
                if !e.to_string().contains("already exists") {
                    return Err(self.err("creating the collection", e));
                }
            }
            let indexes = spec
                .keyword_indexes
                .iter()
                .map(|k| (k, FieldType::Keyword))
                .chain(spec.integer_indexes.iter().map(|k| (k, FieldType::Integer)));
            for (field, kind) in indexes {
                let request = CreateFieldIndexCollection {
                    collection_name: self.collection.clone(),
                    wait: Some(true),
                    field_name: field.clone(),
                    field_type: Some(kind as i32),
                    ..Default::default()
                };
                self.client
                    .create_field_index(request)
                    .await
                    .map_err(|e| self.err(&format!("indexing `{field}`"), e))?;
            }
            Ok(())
        }

        pub(crate) async fn upsert(
            &self,
            using: &Using,
            points: Vec<Point>,
            batch_size: usize,
            parallel: usize,
        ) -> Result<()> {
            let requests: Vec<UpsertPoints> = points
                .chunks(batch_size)
                .map(|chunk| UpsertPoints {
                    collection_name: self.collection.clone(),
                    wait: Some(true),
                    points: chunk.iter().map(|p| to_point(using, p)).collect(),
                    ..Default::default()
                })
                .collect();
            futures::stream::iter(requests)
                .map(|r| async move {
                    self.client
                        .upsert_points(r)
                        .await
                        .map_err(|e| self.err("upserting points", e))
                })
                .buffer_unordered(parallel)
                .try_collect::<Vec<_>>()
                .await
                .map(|_| ())
        }

        pub(crate) async fn search(
            &self,
            search: &Search,
            limit: usize,
            plan: &Plan,
        ) -> Result<Vec<Hit>> {
            let using = |name: &str| (!name.is_empty()).then(|| name.to_string());
            let mut request = QueryPoints {
                collection_name: self.collection.clone(),
                filter: filter(plan),
                limit: Some(limit as u64),
                with_payload: Some(true.into()),
                ..Default::default()
            };
            match search {
                Search::Dense(name, v) => {
                    request.query = Some(Query::new_nearest(v.clone()));
                    request.using = using(name);
                }
                Search::Sparse(name, v) => {
                    request.query = Some(Query::new_nearest(sparse_input(v)));
                    request.using = using(name);
                }
                Search::Hybrid {
                    dense,
                    dense_limit,
                    sparse,
                    sparse_limit,
                } => {
                    request.prefetch = vec![
                        PrefetchQuery {
                            query: Some(Query::new_nearest(dense.1.clone())),
                            using: using(&dense.0),
                            filter: filter(plan),
                            limit: Some(*dense_limit as u64),
                            ..Default::default()
                        },
                        PrefetchQuery {
                            query: Some(Query::new_nearest(sparse_input(&sparse.1))),
                            using: using(&sparse.0),
                            filter: filter(plan),
                            limit: Some(*sparse_limit as u64),
                            ..Default::default()
                        },
                    ];
                    request.query = Some(Query::new_fusion(pb::Fusion::Rrf));
                }
            }
            let response = self
                .client
                .query(request)
                .await
                .map_err(|e| self.err("querying", e))?;
            Ok(response
                .result
                .into_iter()
                .map(|p| hit(p.id, p.score, p.payload))
                .collect())
        }

        pub(crate) async fn set_payload(&self, plan: &Plan, payload: Metadata) -> Result<()> {
            let request = SetPayloadPoints {
                collection_name: self.collection.clone(),
                wait: Some(true),
                payload: payload.into_iter().map(|(k, v)| (k, v.into())).collect(),
                points_selector: Some(PointsSelector::from(filter(plan).unwrap_or_default())),
                ..Default::default()
            };
            self.client
                .set_payload(request)
                .await
                .map_err(|e| self.err("setting payload", e))
                .map(|_| ())
        }

        pub(crate) async fn delete_payload(&self, plan: &Plan, keys: &[&str]) -> Result<()> {
            let request = DeletePayloadPoints {
                collection_name: self.collection.clone(),
                wait: Some(true),
                keys: keys.iter().map(|k| k.to_string()).collect(),
                points_selector: Some(PointsSelector::from(filter(plan).unwrap_or_default())),
                ..Default::default()
            };
            self.client
                .delete_payload(request)
                .await
                .map_err(|e| self.err("deleting payload", e))
                .map(|_| ())
        }

        pub(crate) async fn retrieve(&self, ids: &[String]) -> Result<Vec<Hit>> {
            let request = GetPoints {
                collection_name: self.collection.clone(),
                ids: ids.iter().map(|id| PointId::from(id.as_str())).collect(),
                with_payload: Some(true.into()),
                ..Default::default()
            };
            let response = self
                .client
                .get_points(request)
                .await
                .map_err(|e| self.err("getting points", e))?;
            Ok(response
                .result
                .into_iter()
                .map(|p| hit(p.id, 1.0, p.payload))
                .collect())
        }

        pub(crate) async fn scroll(&self, plan: &Plan, limit: usize) -> Result<Vec<Hit>> {
            let hits = self.scroll_points(plan, limit, None).await?;
            Ok(hits.into_iter().map(|(h, _)| h).collect())
        }

        pub(crate) async fn scroll_vectors(
            &self,
            plan: &Plan,
            limit: usize,
            name: &str,
        ) -> Result<Vec<(Hit, Option<Vec<f32>>)>> {
            self.scroll_points(plan, limit, Some(name)).await
        }

        /// Pages through the points `plan` selects, with the dense vector
        /// `vector` (by name) when asked.
        async fn scroll_points(
            &self,
            plan: &Plan,
            limit: usize,
            vector: Option<&str>,
        ) -> Result<Vec<(Hit, Option<Vec<f32>>)>> {
            let mut out = Vec::new();
            let mut offset = None;
            while out.len() < limit {
                let request = ScrollPoints {
                    collection_name: self.collection.clone(),
                    filter: filter(plan),
                    offset: offset.take(),
                    limit: Some((limit - out.len()).min(1000) as u32),
                    with_payload: Some(true.into()),
                    with_vectors: vector.map(|_| true.into()),
                    ..Default::default()
                };
                let response = self
                    .client
                    .scroll(request)
                    .await
                    .map_err(|e| self.err("scrolling", e))?;
                for p in response.result {
                    let v = vector.and_then(|name| dense_output(p.vectors?, name));
                    out.push((hit(p.id, 1.0, p.payload), v));
                }
                match response.next_page_offset {
                    Some(next) => offset = Some(next),
                    None => break,
                }
            }
            Ok(out)
        }

        pub(crate) async fn delete(&self, plan: &Plan) -> Result<()> {
            let request = DeletePoints {
                collection_name: self.collection.clone(),
                wait: Some(true),
                points: Some(PointsSelector::from(filter(plan).unwrap_or_default())),
                ..Default::default()
            };
            self.client
                .delete_points(request)
                .await
                .map_err(|e| self.err("deleting points", e))
                .map(|_| ())
        }

        pub(crate) async fn drop_collection(&self) -> Result<()> {
            if self.vector_names().await?.is_some() {
                self.client
                    .delete_collection(self.collection.as_str())
                    .await
                    .map_err(|e| self.err("deleting the collection", e))?;
            }
            Ok(())
        }
    }

    fn proto_distance(d: Distance) -> pb::Distance {
        match d {
            Distance::Cosine => pb::Distance::Cosine,
            Distance::Dot => pb::Distance::Dot,
            Distance::Euclid => pb::Distance::Euclid,
            Distance::Manhattan => pb::Distance::Manhattan,
        }
    }

    fn sparse_input(v: &crate::sparse::SparseVector) -> VectorInput {
        VectorInput {
            variant: Some(vector_input::Variant::Sparse(pb::SparseVector {
                values: v.values.clone(),
                indices: v.indices.clone(),
            })),
        }
    }

    fn to_point(using: &Using, p: &Point) -> PointStruct {
        let dense_name = using.dense.as_deref().unwrap_or("");
        let vectors: Vectors =
            if let (Some(v), true) = (&p.vector, dense_name.is_empty() && using.sparse.is_none()) {
                v.clone().into()
            } else {
                let mut map: HashMap<String, pb::Vector> = HashMap::new();
                if let Some(v) = &p.vector {
                    map.insert(dense_name.to_string(), v.clone().into());
                }
                if let (Some(s), Some(name)) = (&p.sparse, &using.sparse) {
                    let sv = pb::SparseVector {
                        values: s.values.clone(),
                        indices: s.indices.clone(),
                    };
                    map.insert(name.clone(), sv.into());
                }
                map.into()
            };
        PointStruct::new(p.id.clone(), vectors, p.payload.clone())
    }

    /// The dense vector `name` of a point read back (`""`: the unnamed one).
    fn dense_output(v: pb::VectorsOutput, name: &str) -> Option<Vec<f32>> {
        use pb::vectors_output::VectorsOptions;
        let one = match v.vectors_options? {
            VectorsOptions::Vector(one) if name.is_empty() => one,
            VectorsOptions::Vector(_) => return None,
            VectorsOptions::Vectors(mut named) => named.vectors.remove(name)?,
        };
        #[allow(deprecated)]
        match one.vector {
            Some(pb::vector_output::Vector::Dense(d)) => Some(d.data),
            Some(_) => None,
            None if one.indices.is_none() => Some(one.data),
            None => None,
        }
    }

    fn point_id_string(id: Option<PointId>) -> String {
        match id.and_then(|id| id.point_id_options) {
            Some(PointIdOptions::Uuid(s)) => s,
            Some(PointIdOptions::Num(n)) => n.to_string(),
            None => String::new(),
        }
    }

    fn hit(id: Option<PointId>, score: f32, payload: HashMap<String, pb::Value>) -> Hit {
        let payload: Metadata = payload.into_iter().map(|(k, v)| (k, v.into())).collect();
        Hit {
            id: point_id_string(id),
            score,
            payload,
        }
    }

    /// The plan as a gRPC filter; `None` when it has no condition.
    pub(crate) fn filter(plan: &Plan) -> Option<Filter> {
        (!plan.is_empty()).then(|| to_filter(plan))
    }

    fn to_filter(plan: &Plan) -> Filter {
        let conds = |cs: &[Cond]| cs.iter().map(to_condition).collect::<Vec<_>>();
        Filter {
            must: conds(&plan.must),
            should: conds(&plan.should),
            must_not: conds(&plan.must_not),
            ..Default::default()
        }
    }

    fn to_condition(c: &Cond) -> Condition {
        match c {
            Cond::Filter(p) => to_filter(p).into(),
            Cond::Keyword(k, v) => Condition::matches(k.clone(), v.clone()),
            Cond::Integer(k, v) => Condition::matches(k.clone(), *v),
            Cond::Bool(k, v) => Condition::matches(k.clone(), *v),
            Cond::AnyKeyword(k, v) => Condition::matches(k.clone(), v.clone()),
            Cond::AnyInteger(k, v) => Condition::matches(k.clone(), v.clone()),
            Cond::Range(k, r) => Condition::range(
                k.clone(),
                pb::Range {
                    gt: r.gt,
                    gte: r.gte,
                    lt: r.lt,
                    lte: r.lte,
                },
            ),
            Cond::Text(k, v) => Condition::matches_text(k.clone(), v.clone()),
            Cond::IsEmpty(k) => Condition::is_empty(k.clone()),
            Cond::HasId(ids) => Condition::has_id(ids.iter().map(|id| PointId::from(id.as_str()))),
        }
    }
}

#[cfg(feature = "qdrant-embedded")]
pub(crate) mod embedded {
    use super::{CreateSpec, Hit, Point, Search, Using, VectorNames, provider_error};
    use crate::filters::{Cond, Plan};
    use crate::store::Distance;
    use qdrant_edge::external::uuid::Uuid;
    use qdrant_edge::{
        DeletePayloadOp, EdgeConfigBuilder, EdgeShard, EdgeVectorParamsBuilder, Filter, JsonPath,
        NamedQuery, PayloadOps, PointId, PointInsertOperations, PointOperations, PointStruct,
        QueryEnum, ScrollRequest, SearchRequest, SetPayloadOp, UpdateOperation, VectorInternal,
        Vectors, WithPayloadInterface, WithVector,
    };
    use ragloom_core::error::{Error, Result};
    use ragloom_core::schema::Metadata;
    use serde_json::{Value, json};
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

    /// The file qdrant-edge writes into a shard's folder.
    const CONFIG_FILE: &str = "edge_config.json";

    pub(crate) struct Embedded {
        dir: PathBuf,
        shard: Mutex<Option<Arc<EdgeShard>>>,
    }

    fn edge_error(what: String, e: qdrant_edge::OperationError) -> Error {
        provider_error(what, e)
    }

    impl Embedded {
        pub(crate) fn new(dir: PathBuf) -> Self {
            Self {
                dir,
                shard: Mutex::new(None),
            }
        }

        fn cached(&self) -> Option<Arc<EdgeShard>> {
            self.shard.lock().ok().and_then(|g| g.clone())
        }

        fn set(&self, shard: Option<Arc<EdgeShard>>) {
            if let Ok(mut g) = self.shard.lock() {
                *g = shard;
            }
        }

        /// Runs the engine's blocking call off the async threads.
        async fn blocking<T: Send + 'static>(
            &self,
            what: &'static str,
            f: impl FnOnce() -> std::result::Result<T, qdrant_edge::OperationError> + Send + 'static,
        ) -> Result<T> {
            let dir = self.dir.display().to_string();
            tokio::task::spawn_blocking(f)
                .await
                .map_err(|e| provider_error(format_args!("{what} in {dir}"), e))?
                .map_err(|e| edge_error(format!("{what} in {dir}"), e))
        }

        /// The open shard, loaded from disk on first use; `None` when the
        /// folder holds none.
        async fn shard(&self) -> Result<Option<Arc<EdgeShard>>> {
            if let Some(s) = self.cached() {
                return Ok(Some(s));
            }
            if !self.dir.join(CONFIG_FILE).is_file() {
                return Ok(None);
            }
            let dir = self.dir.clone();
            let shard = self
                .blocking("opening the embedded Qdrant collection", move || {
                    EdgeShard::load(&dir, None)
                })
                .await?;
            let shard = Arc::new(shard);
            self.set(Some(shard.clone()));
            Ok(Some(shard))
        }

        async fn require(&self) -> Result<Arc<EdgeShard>> {
            self.shard().await?.ok_or_else(|| {
                Error::NotFound(format!(
                    "embedded Qdrant collection in {}",
                    self.dir.display()
                ))
            })
        }

        pub(crate) async fn vector_names(&self) -> Result<Option<VectorNames>> {
            Ok(self.shard().await?.map(|s| VectorNames {
                dense: s.config().vectors.keys().cloned().collect(),
                sparse: Vec::new(),
            }))
        }

        pub(crate) async fn create(&self, spec: &CreateSpec) -> Result<()> {
            let (Some((name, dim)), None) = (spec.dense.clone(), &spec.sparse) else {
                return Err(unsupported());
            };
            let dir = self.dir.clone();
            let distance = match spec.distance {
                Distance::Cosine => qdrant_edge::Distance::Cosine,
                Distance::Dot => qdrant_edge::Distance::Dot,
                Distance::Euclid => qdrant_edge::Distance::Euclid,
                Distance::Manhattan => qdrant_edge::Distance::Manhattan,
            };
            std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
                op: "creating",
                path: dir.clone(),
                source: e,
            })?;
            let shard = self
                .blocking("creating the embedded Qdrant collection", move || {
                    let config = EdgeConfigBuilder::new()
                        .vector(name, EdgeVectorParamsBuilder::new(dim, distance).build())
                        .build();
                    EdgeShard::new(&dir, config)
                })
                .await?;
            self.set(Some(Arc::new(shard)));
            Ok(())
        }

        pub(crate) async fn upsert(
            &self,
            using: &Using,
            points: Vec<Point>,
            batch_size: usize,
            _parallel: usize,
        ) -> Result<()> {
            let shard = self.require().await?;
            let vector_name = using.dense.clone().unwrap_or_default();
            let mut batches = Vec::new();
            for chunk in points.chunks(batch_size) {
                let mut batch = Vec::with_capacity(chunk.len());
                for p in chunk {
                    let (Some(vector), None) = (p.vector.clone(), &p.sparse) else {
                        return Err(unsupported());
                    };
                    let vectors: Vectors = if vector_name.is_empty() {
                        vector.into()
                    } else {
                        Vectors::new_named([(vector_name.clone(), vector)])
                    };
                    let point = PointStruct::new(
                        edge_id(&p.id)?,
                        vectors,
                        Value::Object(p.payload.clone()),
                    );
                    batch.push(point.into());
                }
                batches.push(batch);
            }
            self.blocking("upserting points", move || {
                for batch in batches {
                    shard.update(UpdateOperation::PointOperation(
                        PointOperations::UpsertPoints(PointInsertOperations::PointsList(batch)),
                    ))?;
                }
                shard.flush();
                Ok(())
            })
            .await
        }

        pub(crate) async fn search(
            &self,
            search: &Search,
            limit: usize,
            plan: &Plan,
        ) -> Result<Vec<Hit>> {
            let Search::Dense(vector_name, vector) = search else {
                return Err(unsupported());
            };
            let (vector_name, vector) = (vector_name.as_str(), vector.clone());
            let shard = self.require().await?;
            let request = SearchRequest {
                query: QueryEnum::Nearest(NamedQuery::new(
                    VectorInternal::Dense(vector),
                    vector_name,
                )),
                filter: filter(plan)?,
                params: None,
                limit,
                offset: 0,
                with_payload: Some(WithPayloadInterface::Bool(true)),
                with_vector: Some(WithVector::Bool(false)),
                score_threshold: None,
            };
            let points = self
                .blocking("searching", move || shard.search(request))
                .await?;
            Ok(points
                .into_iter()
                .map(|p| hit(p.id, p.score, p.payload))
                .collect())
        }

        pub(crate) async fn retrieve(&self, ids: &[String]) -> Result<Vec<Hit>> {
            let shard = self.require().await?;
            let ids = ids
                .iter()
                .map(|id| edge_id(id))
                .collect::<Result<Vec<_>>>()?;
            let records = self
                .blocking("retrieving points", move || {
                    shard.retrieve(&ids, Some(WithPayloadInterface::Bool(true)), None)
                })
                .await?;
            Ok(records
                .into_iter()
                .map(|r| hit(r.id, 1.0, r.payload))
                .collect())
        }

        pub(crate) async fn scroll(&self, plan: &Plan, limit: usize) -> Result<Vec<Hit>> {
            let shard = self.require().await?;
            let filter = filter(plan)?;
            let records = self
                .blocking("scrolling", move || {
                    let mut out = Vec::new();
                    let mut offset = None;
                    while out.len() < limit {
                        let (records, next) = shard.scroll(ScrollRequest {
                            offset: offset.take(),
                            limit: Some(limit - out.len()),
                            filter: filter.clone(),
                            with_payload: Some(WithPayloadInterface::Bool(true)),
                            with_vector: WithVector::Bool(false),
                            order_by: None,
                        })?;
                        out.extend(records);
                        match next {
                            Some(n) => offset = Some(n),
                            None => break,
                        }
                    }
                    Ok(out)
                })
                .await?;
            Ok(records
                .into_iter()
                .map(|r| hit(r.id, 1.0, r.payload))
                .collect())
        }

        pub(crate) async fn delete(&self, plan: &Plan) -> Result<()> {
            let shard = self.require().await?;
            // Qdrant's empty filter selects every point.
            let filter = filter(plan)?.unwrap_or_default();
            self.blocking("deleting points", move || {
                shard.update(UpdateOperation::PointOperation(
                    PointOperations::DeletePointsByFilter(filter),
                ))?;
                shard.flush();
                Ok(())
            })
            .await
        }

        pub(crate) async fn set_payload(&self, plan: &Plan, payload: Metadata) -> Result<()> {
            let op = PayloadOps::SetPayload(SetPayloadOp {
                payload: payload.into(),
                points: None,
                filter: Some(filter(plan)?.unwrap_or_default()),
                key: None,
            });
            self.payload_op("setting payload", op).await
        }

        pub(crate) async fn delete_payload(&self, plan: &Plan, keys: &[&str]) -> Result<()> {
            let keys = keys
                .iter()
                .map(|k| {
                    JsonPath::try_from(*k).map_err(|_| {
                        Error::InvalidInput(format!("`{k}` is not a Qdrant payload key"))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let op = PayloadOps::DeletePayload(DeletePayloadOp {
                keys,
                points: None,
                filter: Some(filter(plan)?.unwrap_or_default()),
            });
            self.payload_op("deleting payload", op).await
        }

        async fn payload_op(&self, what: &'static str, op: PayloadOps) -> Result<()> {
            let shard = self.require().await?;
            self.blocking(what, move || {
                shard.update(UpdateOperation::PayloadOperation(op))?;
                shard.flush();
                Ok(())
            })
            .await
        }

        pub(crate) async fn drop_collection(&self) -> Result<()> {
            let shard = self.shard().await?;
            self.set(None);
            drop(shard);
            if self.dir.exists() {
                std::fs::remove_dir_all(&self.dir).map_err(|e| Error::Io {
                    op: "deleting",
                    path: self.dir.clone(),
                    source: e,
                })?;
            }
            Ok(())
        }
    }

    /// What the embedded engine is not wired for yet.
    fn unsupported() -> Error {
        Error::Unsupported(
            "embedded Qdrant keeps one dense vector per point: sparse vectors and hybrid search need a Qdrant server".into(),
        )
    }

    fn edge_id(id: &str) -> Result<PointId> {
        Uuid::parse_str(id)
            .map(PointId::Uuid)
            .map_err(|e| Error::invalid(format!("point id `{id}` is not a UUID"), e))
    }

    fn hit(id: PointId, score: f32, payload: Option<qdrant_edge::Payload>) -> Hit {
        let payload: Metadata = payload.map(|p| p.0).unwrap_or_default();
        let id = match id {
            PointId::Uuid(u) => u.hyphenated().to_string(),
            PointId::NumId(n) => n.to_string(),
        };
        Hit { id, score, payload }
    }

    /// The plan as the engine's filter, through Qdrant's documented JSON
    /// shape of a filter (the engine's own serde format).
    fn filter(plan: &Plan) -> Result<Option<Filter>> {
        if plan.is_empty() {
            return Ok(None);
        }
        serde_json::from_value(filter_json(plan))
            .map(Some)
            .map_err(|e| Error::invalid("filter rejected by Qdrant's engine", e))
    }

    fn filter_json(plan: &Plan) -> Value {
        let mut out = serde_json::Map::new();
        for (name, conds) in [
            ("must", &plan.must),
            ("should", &plan.should),
            ("must_not", &plan.must_not),
        ] {
            if !conds.is_empty() {
                out.insert(
                    name.into(),
                    Value::Array(conds.iter().map(condition_json).collect()),
                );
            }
        }
        Value::Object(out)
    }

    fn condition_json(c: &Cond) -> Value {
        match c {
            Cond::Filter(p) => filter_json(p),
            Cond::Keyword(k, v) => json!({"key": k, "match": {"value": v}}),
            Cond::Integer(k, v) => json!({"key": k, "match": {"value": v}}),
            Cond::Bool(k, v) => json!({"key": k, "match": {"value": v}}),
            Cond::AnyKeyword(k, v) => json!({"key": k, "match": {"any": v}}),
            Cond::AnyInteger(k, v) => json!({"key": k, "match": {"any": v}}),
            Cond::Range(k, r) => {
                json!({"key": k, "range": {"gt": r.gt, "gte": r.gte, "lt": r.lt, "lte": r.lte}})
            }
            Cond::Text(k, v) => json!({"key": k, "match": {"text": v}}),
            Cond::IsEmpty(k) => json!({"is_empty": {"key": k}}),
            Cond::HasId(ids) => json!({ "has_id": ids }),
        }
    }
}

//! The `Collections` service: create (dense, sparse, or no vectors), get,
//! exists, list and delete; the rest answers `unimplemented`.

use crate::Service;
use crate::convert::bad;
use qdrant_client::qdrant as pb;
use qdrant_client::qdrant::collections_server::Collections;
use qdrant_edge::{
    Distance, EdgeConfig, EdgeConfigBuilder, EdgeSparseVectorParamsBuilder, EdgeVectorParams,
    EdgeVectorParamsBuilder, Modifier,
};
use tonic::{Request, Response, Status};

fn distance(d: i32) -> Result<Distance, Status> {
    match pb::Distance::try_from(d) {
        Ok(pb::Distance::Cosine) => Ok(Distance::Cosine),
        Ok(pb::Distance::Dot) => Ok(Distance::Dot),
        Ok(pb::Distance::Euclid) => Ok(Distance::Euclid),
        Ok(pb::Distance::Manhattan) => Ok(Distance::Manhattan),
        _ => Err(bad(format!("Wrong input: unknown distance {d}"))),
    }
}

fn pb_distance(d: Distance) -> pb::Distance {
    match d {
        Distance::Cosine => pb::Distance::Cosine,
        Distance::Dot => pb::Distance::Dot,
        Distance::Euclid => pb::Distance::Euclid,
        Distance::Manhattan => pb::Distance::Manhattan,
    }
}

fn dense_params(name: &str, p: &pb::VectorParams) -> Result<EdgeVectorParams, Status> {
    if p.size == 0 {
        return Err(bad(format!(
            "Wrong input: vector `{name}`: size must be at least 1"
        )));
    }
    if p.multivector_config.is_some() {
        return Err(Status::unimplemented("multi-dense vectors"));
    }
    Ok(EdgeVectorParamsBuilder::new(p.size as usize, distance(p.distance)?).build())
}

/// The engine's configuration for a `CreateCollection`: the unnamed dense
/// vector or named ones, named sparse ones, or none at all.
fn config(req: &pb::CreateCollection) -> Result<EdgeConfig, Status> {
    use pb::vectors_config::Config;
    let mut config = EdgeConfigBuilder::new();
    match req.vectors_config.as_ref().and_then(|v| v.config.as_ref()) {
        Some(Config::Params(p)) => config = config.vector("", dense_params("", p)?),
        Some(Config::ParamsMap(m)) => {
            for (name, p) in &m.map {
                config = config.vector(name.clone(), dense_params(name, p)?);
            }
        }
        // A collection may hold sparse vectors only, or no vectors.
        None => {}
    }
    for (name, p) in req.sparse_vectors_config.iter().flat_map(|s| &s.map) {
        let mut b = EdgeSparseVectorParamsBuilder::new();
        match p.modifier.map(pb::Modifier::try_from) {
            None | Some(Ok(pb::Modifier::None)) => {}
            Some(Ok(pb::Modifier::Idf)) => b = b.modifier(Modifier::Idf),
            Some(Err(_)) => return Err(bad(format!("Wrong input: `{name}`: unknown modifier"))),
        }
        config = config.sparse_vector(name.clone(), b.build());
    }
    Ok(config.build())
}

/// What `get` reports: the layout a client reads to find its vectors.
fn params(config: &EdgeConfig) -> pb::CollectionParams {
    use pb::vectors_config::Config;
    let dense = |p: &EdgeVectorParams| pb::VectorParams {
        size: p.size as u64,
        distance: pb_distance(p.distance) as i32,
        ..Default::default()
    };
    let vectors = match config.vectors.get("") {
        Some(p) if config.vectors.len() == 1 => Config::Params(dense(p)),
        _ => Config::ParamsMap(pb::VectorParamsMap {
            map: config
                .vectors
                .iter()
                .map(|(k, p)| (k.clone(), dense(p)))
                .collect(),
        }),
    };
    let sparse = (!config.sparse_vectors.is_empty()).then(|| pb::SparseVectorConfig {
        map: config
            .sparse_vectors
            .iter()
            .map(|(k, p)| {
                let modifier = match p.modifier {
                    Some(Modifier::Idf) => Some(pb::Modifier::Idf as i32),
                    Some(Modifier::None) => Some(pb::Modifier::None as i32),
                    None => None,
                };
                (
                    k.clone(),
                    pb::SparseVectorParams {
                        index: None,
                        modifier,
                    },
                )
            })
            .collect(),
    });
    pb::CollectionParams {
        shard_number: 1,
        vectors_config: Some(pb::VectorsConfig {
            config: Some(vectors),
        }),
        sparse_vectors_config: sparse,
        ..Default::default()
    }
}

fn done(result: bool) -> Response<pb::CollectionOperationResponse> {
    Response::new(pb::CollectionOperationResponse { result, time: 0.0 })
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
            segments_count: 1,
            config: Some(pb::CollectionConfig {
                params: Some(params(&c.shard.config())),
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
        let req = request.into_inner();
        self.0.create(&req.collection_name, config(&req)?)?;
        Ok(done(true))
    }

    async fn delete(
        &self,
        request: Request<pb::DeleteCollection>,
    ) -> Result<Response<pb::CollectionOperationResponse>, Status> {
        Ok(done(self.0.delete(&request.get_ref().collection_name)))
    }

    async fn collection_exists(
        &self,
        request: Request<pb::CollectionExistsRequest>,
    ) -> Result<Response<pb::CollectionExistsResponse>, Status> {
        let exists = self.0.exists(&request.get_ref().collection_name);
        Ok(Response::new(pb::CollectionExistsResponse {
            result: Some(pb::CollectionExists { exists }),
            time: 0.0,
        }))
    }

    async fn list(
        &self,
        _: Request<pb::ListCollectionsRequest>,
    ) -> Result<Response<pb::ListCollectionsResponse>, Status> {
        let mut names = self.0.names();
        names.sort();
        Ok(Response::new(pb::ListCollectionsResponse {
            collections: names
                .into_iter()
                .map(|name| pb::CollectionDescription { name })
                .collect(),
            time: 0.0,
        }))
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

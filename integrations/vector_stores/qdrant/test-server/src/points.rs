//! The `Points` service: upsert, delete, get, scroll, query, count, payload
//! updates and field indexes; the rest answers `unimplemented`.

use crate::convert::{
    bad, engine, from_pb_id, from_pb_ids, from_pb_payload, path, record_vectors, to_pb_id,
    to_pb_payload, vectors_in, with_payload, with_vectors,
};
use crate::filter::{from_pb_filter, optional};
use crate::{Collection, Service, lock};
use qdrant_client::qdrant as pb;
use qdrant_client::qdrant::points_server::Points;
use qdrant_edge::{
    CountRequest, DeletePayloadOp, Filter, Payload, PayloadOps, PointId, PointInsertOperations,
    PointOperations, PointStruct, ScrollRequest, SetPayloadOp, UpdateOperation,
};
use serde_json::Value;
use tonic::{Request, Response, Status};

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

/// The engine applies each update before answering, so `wait` holds either way.
fn apply(
    c: &Collection,
    op: UpdateOperation,
) -> Result<Response<pb::PointsOperationResponse>, Status> {
    c.shard.update(op).map_err(engine)?;
    Ok(done())
}

/// The points a selector names: a list of ids, or a filter.
fn selected(
    s: Option<pb::PointsSelector>,
) -> Result<(Option<Vec<PointId>>, Option<Filter>), Status> {
    use pb::points_selector::PointsSelectorOneOf as S;
    match s.and_then(|p| p.points_selector_one_of) {
        Some(S::Points(list)) => Ok((Some(from_pb_ids(&list.ids)?), None)),
        Some(S::Filter(f)) => Ok((None, Some(from_pb_filter(&f)?))),
        None => Err(bad("Wrong input: points selector is required")),
    }
}

/// The operation a selector asks for: `by_ids` on its list of ids, or
/// `by_filter` on its filter.
fn by_selector<T>(
    s: Option<pb::PointsSelector>,
    by_ids: impl FnOnce(Vec<PointId>) -> T,
    by_filter: impl FnOnce(Filter) -> T,
) -> Result<T, Status> {
    match selected(s)? {
        (Some(ids), _) => Ok(by_ids(ids)),
        (None, Some(filter)) => Ok(by_filter(filter)),
        (None, None) => Err(bad("Wrong input: points selector is required")),
    }
}

fn set_payload_op(req: pb::SetPayloadPoints) -> Result<SetPayloadOp, Status> {
    let (points, filter) = selected(req.points_selector)?;
    Ok(SetPayloadOp {
        payload: Payload(from_pb_payload(req.payload)),
        points,
        filter,
        key: req.key.as_deref().map(path).transpose()?,
    })
}

fn scored(p: qdrant_edge::ScoredPoint, asked: &qdrant_edge::WithVector) -> pb::ScoredPoint {
    pb::ScoredPoint {
        id: Some(to_pb_id(p.id)),
        payload: to_pb_payload(p.payload),
        score: p.score,
        version: p.version,
        vectors: record_vectors(p.vector, asked),
        ..Default::default()
    }
}

fn retrieved(r: qdrant_edge::Record, asked: &qdrant_edge::WithVector) -> pb::RetrievedPoint {
    pb::RetrievedPoint {
        id: Some(to_pb_id(r.id)),
        payload: to_pb_payload(r.payload),
        vectors: record_vectors(r.vector, asked),
        ..Default::default()
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
        if req.update_filter.is_some() {
            return Err(Status::unimplemented("conditional upsert (update_filter)"));
        }
        lock(&self.0.upsert_sizes).push(req.points.len());
        let mut points = Vec::with_capacity(req.points.len());
        for p in req.points {
            let id = from_pb_id(p.id.as_ref().ok_or_else(|| bad("point without id"))?)?;
            let payload = Value::Object(from_pb_payload(p.payload));
            points.push(PointStruct::new(id, vectors_in(p.vectors)?, payload).into());
        }
        apply(
            &c,
            UpdateOperation::PointOperation(PointOperations::UpsertPoints(
                PointInsertOperations::PointsList(points),
            )),
        )
    }

    async fn delete(
        &self,
        request: Request<pb::DeletePoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let op = by_selector(
            req.points,
            |ids| PointOperations::DeletePoints { ids },
            PointOperations::DeletePointsByFilter,
        )?;
        apply(&c, UpdateOperation::PointOperation(op))
    }

    async fn get(
        &self,
        request: Request<pb::GetPoints>,
    ) -> Result<Response<pb::GetResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let ids = from_pb_ids(&req.ids)?;
        let asked = with_vectors(req.with_vectors);
        let records = c
            .shard
            .retrieve(&ids, with_payload(req.with_payload)?, Some(asked.clone()))
            .map_err(engine)?;
        Ok(Response::new(pb::GetResponse {
            result: records.into_iter().map(|r| retrieved(r, &asked)).collect(),
            time: 0.0,
            usage: None,
        }))
    }

    async fn set_payload(
        &self,
        request: Request<pb::SetPayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let op = set_payload_op(req)?;
        apply(
            &c,
            UpdateOperation::PayloadOperation(PayloadOps::SetPayload(op)),
        )
    }

    async fn overwrite_payload(
        &self,
        request: Request<pb::SetPayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let op = set_payload_op(req)?;
        if op.key.is_some() {
            return Err(bad("Wrong input: overwrite_payload takes no key"));
        }
        apply(
            &c,
            UpdateOperation::PayloadOperation(PayloadOps::OverwritePayload(op)),
        )
    }

    async fn delete_payload(
        &self,
        request: Request<pb::DeletePayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let (points, filter) = selected(req.points_selector)?;
        let keys = req.keys.iter().map(|k| path(k)).collect::<Result<_, _>>()?;
        let op = DeletePayloadOp {
            keys,
            points,
            filter,
        };
        apply(
            &c,
            UpdateOperation::PayloadOperation(PayloadOps::DeletePayload(op)),
        )
    }

    async fn clear_payload(
        &self,
        request: Request<pb::ClearPayloadPoints>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let op = by_selector(
            req.points,
            |points| PayloadOps::ClearPayload { points },
            PayloadOps::ClearPayloadByFilter,
        )?;
        apply(&c, UpdateOperation::PayloadOperation(op))
    }

    async fn create_field_index(
        &self,
        request: Request<pb::CreateFieldIndexCollection>,
    ) -> Result<Response<pb::PointsOperationResponse>, Status> {
        let req = request.into_inner();
        self.0.get(&req.collection_name)?;
        lock(&self.0.field_indexes).push((req.collection_name, req.field_name));
        Ok(done())
    }

    async fn scroll(
        &self,
        request: Request<pb::ScrollPoints>,
    ) -> Result<Response<pb::ScrollResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        if req.order_by.is_some() {
            return Err(Status::unimplemented("scroll order_by"));
        }
        let asked = with_vectors(req.with_vectors);
        let (records, next) = c
            .shard
            .scroll(ScrollRequest {
                offset: req.offset.as_ref().map(from_pb_id).transpose()?,
                limit: Some(req.limit.unwrap_or(10) as usize),
                filter: optional(req.filter.as_ref())?,
                with_payload: with_payload(req.with_payload)?,
                with_vector: asked.clone(),
                order_by: None,
            })
            .map_err(engine)?;
        Ok(Response::new(pb::ScrollResponse {
            next_page_offset: next.map(to_pb_id),
            result: records.into_iter().map(|r| retrieved(r, &asked)).collect(),
            time: 0.0,
            usage: None,
        }))
    }

    async fn query(
        &self,
        request: Request<pb::QueryPoints>,
    ) -> Result<Response<pb::QueryResponse>, Status> {
        let req = request.into_inner();
        let c = self.0.get(&req.collection_name)?;
        let (request, offset) = crate::query::request(req, &c.shard.config())?;
        let asked = request.with_vector.clone();
        let points = c.shard.query(request).map_err(engine)?;
        Ok(Response::new(pb::QueryResponse {
            result: points
                .into_iter()
                .skip(offset)
                .map(|p| scored(p, &asked))
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
            .count(CountRequest {
                filter: optional(req.filter.as_ref())?,
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

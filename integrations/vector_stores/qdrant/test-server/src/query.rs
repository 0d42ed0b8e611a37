//! `Points::query` as the engine's universal query: nearest on a dense or
//! sparse vector, prefetches fused by RRF or DBSF, filters, limits, thresholds.

use crate::convert::{bad, sparse, with_payload, with_vectors};
use crate::filter::optional;
use qdrant_client::qdrant as pb;
use qdrant_edge::external::ordered_float::OrderedFloat;
use qdrant_edge::{
    EdgeConfig, Fusion, NamedQuery, Prefetch, QueryEnum, QueryRequest, Sample, ScoringQuery,
    VectorInternal,
};
use tonic::Status;

/// Qdrant's `k` for RRF when the request names none (`Fusion::Rrf`).
const DEFAULT_RRF_K: usize = 2;

/// Qdrant's `limit` when the request names none.
const DEFAULT_LIMIT: u64 = 10;

/// The engine's request for a `QueryPoints`, and the offset to skip in its
/// answer: the engine returns `offset + limit` points, as Qdrant's shards do,
/// and leaves the skipping to the collection above them.
pub(crate) fn request(
    req: pb::QueryPoints,
    config: &EdgeConfig,
) -> Result<(QueryRequest, usize), Status> {
    if req.lookup_from.is_some() {
        return Err(Status::unimplemented("lookup_from"));
    }
    let offset = req.offset.unwrap_or(0) as usize;
    let request = QueryRequest {
        prefetches: req
            .prefetch
            .into_iter()
            .map(|p| prefetch(p, config))
            .collect::<Result<_, _>>()?,
        query: scoring(req.query, req.using, config)?,
        filter: optional(req.filter.as_ref())?,
        score_threshold: req.score_threshold.map(OrderedFloat),
        limit: req.limit.unwrap_or(DEFAULT_LIMIT) as usize,
        offset,
        params: None,
        with_vector: with_vectors(req.with_vectors),
        with_payload: with_payload(req.with_payload)?.unwrap_or_default(),
    };
    Ok((request, offset))
}

fn prefetch(p: pb::PrefetchQuery, config: &EdgeConfig) -> Result<Prefetch, Status> {
    if p.lookup_from.is_some() {
        return Err(Status::unimplemented("lookup_from"));
    }
    Ok(Prefetch {
        prefetches: p
            .prefetch
            .into_iter()
            .map(|p| prefetch(p, config))
            .collect::<Result<_, _>>()?,
        query: scoring(p.query, p.using, config)?,
        limit: p.limit.unwrap_or(DEFAULT_LIMIT) as usize,
        params: None,
        filter: optional(p.filter.as_ref())?,
        score_threshold: p.score_threshold.map(OrderedFloat),
    })
}

fn scoring(
    query: Option<pb::Query>,
    using: Option<String>,
    config: &EdgeConfig,
) -> Result<Option<ScoringQuery>, Status> {
    use pb::query::Variant as V;
    let Some(variant) = query.and_then(|q| q.variant) else {
        // No query: points in id order, as a scroll.
        return Ok(None);
    };
    Ok(Some(match variant {
        V::Nearest(input) => {
            let using = using.unwrap_or_default();
            let vector = input_vector(input)?;
            check_using(config, &using, &vector)?;
            ScoringQuery::Vector(QueryEnum::Nearest(NamedQuery::new(vector, using)))
        }
        V::Fusion(f) => ScoringQuery::Fusion(match pb::Fusion::try_from(f) {
            Ok(pb::Fusion::Rrf) => Fusion::Rrf {
                k: DEFAULT_RRF_K,
                weights: None,
            },
            Ok(pb::Fusion::Dbsf) => Fusion::Dbsf,
            Err(_) => return Err(bad(format!("Wrong input: unknown fusion {f}"))),
        }),
        V::Rrf(rrf) => ScoringQuery::Fusion(Fusion::Rrf {
            k: rrf.k.map_or(DEFAULT_RRF_K, |k| k as usize),
            weights: (!rrf.weights.is_empty())
                .then(|| rrf.weights.into_iter().map(OrderedFloat).collect()),
        }),
        V::Sample(s) => match pb::Sample::try_from(s) {
            Ok(pb::Sample::Random) => ScoringQuery::Sample(Sample::Random),
            Err(_) => return Err(bad(format!("Wrong input: unknown sample {s}"))),
        },
        _ => return Err(Status::unimplemented("query kind")),
    }))
}

fn input_vector(input: pb::VectorInput) -> Result<VectorInternal, Status> {
    use pb::vector_input::Variant as I;
    match input.variant {
        Some(I::Dense(d)) => Ok(VectorInternal::Dense(d.data)),
        Some(I::Sparse(s)) => sparse(s.indices, s.values),
        Some(I::Id(_)) => Err(Status::unimplemented("nearest to a point id")),
        Some(_) => Err(Status::unimplemented("vector input kind")),
        None => Err(bad("Wrong input: query vector is empty")),
    }
}

/// Qdrant refuses a query on a vector the collection lacks, or of the other
/// kind, as bad input before searching.
fn check_using(config: &EdgeConfig, using: &str, vector: &VectorInternal) -> Result<(), Status> {
    let dense = config.vectors.contains_key(using);
    let sparse = config.sparse_vectors.contains_key(using);
    if !dense && !sparse {
        return Err(bad(format!(
            "Wrong input: Not existing vector name error: {using}"
        )));
    }
    match vector {
        VectorInternal::Sparse(_) if !sparse => Err(bad(format!(
            "Wrong input: vector `{using}` is dense, the query is sparse"
        ))),
        VectorInternal::Dense(_) if !dense => Err(bad(format!(
            "Wrong input: vector `{using}` is sparse, the query is dense"
        ))),
        _ => Ok(()),
    }
}

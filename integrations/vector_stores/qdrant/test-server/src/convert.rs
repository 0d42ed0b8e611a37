//! Conversions between Qdrant's gRPC messages and the engine's types: payload
//! values, point ids, vectors, payload and vector selectors, and errors.

use qdrant_client::qdrant as pb;
use qdrant_edge::external::uuid::Uuid;
use qdrant_edge::{
    JsonPath, OperationError, PayloadSelector, PayloadSelectorExclude, PayloadSelectorInclude,
    PointId, SparseVector, VectorInternal, VectorStructInternal, Vectors, WithPayloadInterface,
    WithVector,
};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use tonic::Status;

/// The status Qdrant answers an engine error with: bad input is the caller's
/// fault (`InvalidArgument`, "Wrong input: ..."), a missing point is
/// `NotFound`, anything else the server's.
pub(crate) fn engine(e: OperationError) -> Status {
    match e {
        OperationError::WrongVectorDimension { .. }
        | OperationError::VectorNameNotExists { .. }
        | OperationError::ValidationError { .. }
        | OperationError::WrongSparse
        | OperationError::WrongMulti
        | OperationError::TypeError { .. }
        | OperationError::TypeInferenceError { .. } => {
            Status::invalid_argument(format!("Wrong input: {e}"))
        }
        OperationError::PointIdError { .. } => Status::not_found(e.to_string()),
        _ => Status::internal(e.to_string()),
    }
}

pub(crate) fn bad(msg: impl Into<String>) -> Status {
    Status::invalid_argument(msg.into())
}

// ---- values (json_with_int.proto) ----------------------------------------

pub(crate) fn from_pb_value(v: pb::Value) -> Value {
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

pub(crate) fn from_pb_payload(p: HashMap<String, pb::Value>) -> Map<String, Value> {
    p.into_iter().map(|(k, v)| (k, from_pb_value(v))).collect()
}

pub(crate) fn to_pb_payload(p: Option<qdrant_edge::Payload>) -> HashMap<String, pb::Value> {
    p.map(|p| {
        p.0.iter()
            .map(|(k, v)| (k.clone(), to_pb_value(v)))
            .collect()
    })
    .unwrap_or_default()
}

pub(crate) fn path(key: &str) -> Result<JsonPath, Status> {
    key.parse()
        .map_err(|_| bad(format!("bad payload key `{key}`")))
}

// ---- ids ------------------------------------------------------------------

pub(crate) fn from_pb_id(id: &pb::PointId) -> Result<PointId, Status> {
    use pb::point_id::PointIdOptions;
    match &id.point_id_options {
        Some(PointIdOptions::Num(n)) => Ok(PointId::NumId(*n)),
        Some(PointIdOptions::Uuid(s)) => Uuid::parse_str(s)
            .map(PointId::Uuid)
            .map_err(|_| bad(format!("Unable to parse UUID: {s}"))),
        None => Err(bad("point id is empty")),
    }
}

pub(crate) fn from_pb_ids(ids: &[pb::PointId]) -> Result<Vec<PointId>, Status> {
    ids.iter().map(from_pb_id).collect()
}

pub(crate) fn to_pb_id(id: PointId) -> pb::PointId {
    use pb::point_id::PointIdOptions;
    pb::PointId {
        point_id_options: Some(match id {
            PointId::NumId(n) => PointIdOptions::Num(n),
            PointId::Uuid(u) => PointIdOptions::Uuid(u.to_string()),
        }),
    }
}

// ---- vectors ----------------------------------------------------------------

pub(crate) fn sparse(indices: Vec<u32>, values: Vec<f32>) -> Result<VectorInternal, Status> {
    SparseVector::new(indices, values)
        .map(VectorInternal::Sparse)
        .map_err(|e| bad(format!("Wrong input: bad sparse vector: {e}")))
}

/// One vector as a client sends it: the `vector` oneof, or the fields that
/// came before it (`data`, with `indices` for a sparse vector), which older
/// clients still fill.
#[allow(deprecated)] // reading the older fields is the point
fn vector_in(v: pb::Vector) -> Result<VectorInternal, Status> {
    use pb::vector::Vector as V;
    match v.vector {
        Some(V::Dense(d)) => Ok(VectorInternal::Dense(d.data)),
        Some(V::Sparse(s)) => sparse(s.indices, s.values),
        Some(V::MultiDense(_)) => Err(Status::unimplemented("multi-dense vectors")),
        Some(V::Document(_) | V::Image(_) | V::Object(_)) => {
            Err(Status::unimplemented("inference of vectors"))
        }
        None => match (v.indices, v.vectors_count) {
            (Some(indices), _) => sparse(indices.data, v.data),
            (None, Some(_)) => Err(Status::unimplemented("multi-dense vectors")),
            (None, None) => Ok(VectorInternal::Dense(v.data)),
        },
    }
}

/// A point's vectors; none at all is a point without vectors, which a
/// collection without vectors (or with only optional named ones) accepts.
pub(crate) fn vectors_in(v: Option<pb::Vectors>) -> Result<Vectors, Status> {
    use pb::vectors::VectorsOptions as O;
    match v.and_then(|v| v.vectors_options) {
        Some(O::Vector(v)) => Ok(match vector_in(v)? {
            VectorInternal::Dense(d) => Vectors(VectorStructInternal::Single(d)),
            other => Vectors(VectorStructInternal::Named([(String::new(), other)].into())),
        }),
        Some(O::Vectors(named)) => {
            let mut out = HashMap::new();
            for (name, v) in named.vectors {
                out.insert(name, vector_in(v)?);
            }
            Ok(Vectors(VectorStructInternal::Named(out)))
        }
        None => Ok(Vectors(VectorStructInternal::Named(HashMap::new()))),
    }
}

/// Both the `vector` oneof and the older fields, so that a client of either
/// generation reads the vector.
#[allow(deprecated)] // filled for older clients
fn vector_out(v: VectorInternal) -> pb::VectorOutput {
    use pb::vector_output::Vector as V;
    match v {
        VectorInternal::Dense(data) => pb::VectorOutput {
            data: data.clone(),
            indices: None,
            vectors_count: None,
            vector: Some(V::Dense(pb::DenseVector { data })),
        },
        VectorInternal::Sparse(s) => pb::VectorOutput {
            data: s.values.clone(),
            indices: Some(pb::SparseIndices {
                data: s.indices.clone(),
            }),
            vectors_count: None,
            vector: Some(V::Sparse(pb::SparseVector {
                values: s.values,
                indices: s.indices,
            })),
        },
        VectorInternal::MultiDense(m) => {
            let vectors: Vec<pb::DenseVector> = m
                .multi_vectors()
                .map(|v| pb::DenseVector { data: v.to_vec() })
                .collect();
            pb::VectorOutput {
                data: vectors.iter().flat_map(|v| v.data.clone()).collect(),
                indices: None,
                vectors_count: Some(vectors.len() as u32),
                vector: Some(V::MultiDense(pb::MultiDenseVector { vectors })),
            }
        }
    }
}

/// The unnamed vector alone travels as a single vector, named ones as a map.
pub(crate) fn vectors_out(v: VectorStructInternal) -> pb::VectorsOutput {
    use pb::vectors_output::VectorsOptions as O;
    let single = |v| pb::VectorsOutput {
        vectors_options: Some(O::Vector(vector_out(v))),
    };
    match v {
        VectorStructInternal::Single(d) => single(VectorInternal::Dense(d)),
        VectorStructInternal::MultiDense(m) => single(VectorInternal::MultiDense(m)),
        VectorStructInternal::Named(mut map) if map.len() == 1 && map.contains_key("") => {
            match map.remove("") {
                Some(v) => single(v),
                None => pb::VectorsOutput::default(),
            }
        }
        VectorStructInternal::Named(map) => pb::VectorsOutput {
            vectors_options: Some(O::Vectors(pb::NamedVectorsOutput {
                vectors: map.into_iter().map(|(k, v)| (k, vector_out(v))).collect(),
            })),
        },
    }
}

// ---- selectors --------------------------------------------------------------

/// `None` leaves the call's own default (Qdrant: payload for get and scroll,
/// none for query).
pub(crate) fn with_payload(
    sel: Option<pb::WithPayloadSelector>,
) -> Result<Option<WithPayloadInterface>, Status> {
    use pb::with_payload_selector::SelectorOptions as S;
    let paths = |fields: Vec<String>| fields.iter().map(|f| path(f)).collect::<Result<_, _>>();
    Ok(match sel.and_then(|s| s.selector_options) {
        None => None,
        Some(S::Enable(b)) => Some(WithPayloadInterface::Bool(b)),
        Some(S::Include(i)) => Some(WithPayloadInterface::Selector(PayloadSelector::Include(
            PayloadSelectorInclude {
                include: paths(i.fields)?,
            },
        ))),
        Some(S::Exclude(e)) => Some(WithPayloadInterface::Selector(PayloadSelector::Exclude(
            PayloadSelectorExclude {
                exclude: paths(e.fields)?,
            },
        ))),
    })
}

pub(crate) fn with_vectors(sel: Option<pb::WithVectorsSelector>) -> WithVector {
    use pb::with_vectors_selector::SelectorOptions as S;
    match sel.and_then(|s| s.selector_options) {
        None => WithVector::Bool(false),
        Some(S::Enable(b)) => WithVector::Bool(b),
        Some(S::Include(names)) => WithVector::Selector(names.names),
    }
}

/// A retrieved record's vectors, when any were asked for.
pub(crate) fn record_vectors(
    v: Option<VectorStructInternal>,
    asked: &WithVector,
) -> Option<pb::VectorsOutput> {
    match asked {
        WithVector::Bool(false) => None,
        _ => {
            Some(vectors_out(v.unwrap_or_else(|| {
                VectorStructInternal::Named(HashMap::new())
            })))
        }
    }
}

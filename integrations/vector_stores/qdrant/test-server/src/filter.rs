//! Qdrant's filters (`points.proto`: Filter, Condition, FieldCondition, Match,
//! Range, ValuesCount) as the engine's `Filter`.

use crate::convert::{bad, from_pb_ids, path};
use qdrant_client::qdrant as pb;
use qdrant_edge::external::ordered_float::OrderedFloat;
use qdrant_edge::{
    Condition, FieldCondition, Filter, HasVectorCondition, IsEmptyCondition, IsNullCondition,
    Match, MatchExcept, MatchPhrase, MatchTextAny, MinShould, Nested, NestedCondition, Range,
    RangeInterface, ValuesCount,
};
use tonic::Status;

pub(crate) fn from_pb_filter(f: &pb::Filter) -> Result<Filter, Status> {
    // An empty repeated field is an absent clause in the protocol.
    let clause = |cs: &[pb::Condition]| -> Result<Option<Vec<Condition>>, Status> {
        if cs.is_empty() {
            return Ok(None);
        }
        conditions(cs).map(Some)
    };
    let min_should = match &f.min_should {
        None => None,
        Some(m) => Some(MinShould {
            conditions: conditions(&m.conditions)?,
            min_count: usize::try_from(m.min_count).map_err(|_| bad("min_count too large"))?,
        }),
    };
    Ok(Filter {
        must: clause(&f.must)?,
        should: clause(&f.should)?,
        must_not: clause(&f.must_not)?,
        min_should,
    })
}

pub(crate) fn optional(f: Option<&pb::Filter>) -> Result<Option<Filter>, Status> {
    f.map(from_pb_filter).transpose()
}

fn conditions(cs: &[pb::Condition]) -> Result<Vec<Condition>, Status> {
    cs.iter().map(from_pb_condition).collect()
}

fn from_pb_condition(c: &pb::Condition) -> Result<Condition, Status> {
    use pb::condition::ConditionOneOf as C;
    match &c.condition_one_of {
        Some(C::Filter(f)) => Ok(Condition::Filter(from_pb_filter(f)?)),
        Some(C::IsEmpty(e)) => Ok(Condition::IsEmpty(IsEmptyCondition::from(path(&e.key)?))),
        Some(C::IsNull(n)) => Ok(Condition::IsNull(IsNullCondition::from(path(&n.key)?))),
        Some(C::HasId(h)) => Ok(Condition::HasId(
            from_pb_ids(&h.has_id)?.into_iter().collect(),
        )),
        Some(C::HasVector(v)) => Ok(Condition::HasVector(HasVectorCondition::from(
            v.has_vector.clone(),
        ))),
        Some(C::Nested(n)) => {
            let filter = n
                .filter
                .as_ref()
                .ok_or_else(|| bad("nested condition without a filter"))?;
            Ok(Condition::Nested(NestedCondition::new(Nested {
                key: path(&n.key)?,
                filter: from_pb_filter(filter)?,
            })))
        }
        Some(C::Field(fc)) => from_pb_field(fc),
        Some(C::Slice(_)) => Err(Status::unimplemented("slice condition")),
        None => Err(bad("condition is empty")),
    }
}

fn from_pb_field(fc: &pb::FieldCondition) -> Result<Condition, Status> {
    if fc.geo_bounding_box.is_some() || fc.geo_radius.is_some() || fc.geo_polygon.is_some() {
        return Err(Status::unimplemented("geo conditions"));
    }
    if fc.datetime_range.is_some() {
        return Err(Status::unimplemented("datetime range"));
    }
    let field = FieldCondition {
        key: path(&fc.key)?,
        r#match: fc.r#match.as_ref().map(from_pb_match).transpose()?,
        // Bounds are doubles on the wire; integer payload values compare as numbers.
        range: fc.range.map(|r| {
            RangeInterface::Float(Range {
                lt: r.lt.map(OrderedFloat),
                gt: r.gt.map(OrderedFloat),
                gte: r.gte.map(OrderedFloat),
                lte: r.lte.map(OrderedFloat),
            })
        }),
        geo_bounding_box: None,
        geo_radius: None,
        geo_polygon: None,
        values_count: fc.values_count.map(|v| ValuesCount {
            lt: v.lt.map(|n| n as usize),
            gt: v.gt.map(|n| n as usize),
            gte: v.gte.map(|n| n as usize),
            lte: v.lte.map(|n| n as usize),
        }),
        is_empty: fc.is_empty,
        is_null: fc.is_null,
    };
    if field.r#match.is_none()
        && field.range.is_none()
        && field.values_count.is_none()
        && field.is_empty.is_none()
        && field.is_null.is_none()
    {
        return Err(bad(format!(
            "field condition on `{}` has no condition",
            fc.key
        )));
    }
    Ok(Condition::Field(field))
}

fn from_pb_match(m: &pb::Match) -> Result<Match, Status> {
    use pb::r#match::MatchValue as M;
    Ok(match &m.match_value {
        Some(M::Keyword(s)) => Match::from(s.clone()),
        Some(M::Integer(i)) => Match::from(*i),
        Some(M::Boolean(b)) => Match::from(*b),
        Some(M::Text(t)) => Match::new_text(t),
        Some(M::TextAny(t)) => Match::TextAny(MatchTextAny {
            text_any: t.clone(),
        }),
        Some(M::Phrase(p)) => Match::Phrase(MatchPhrase { phrase: p.clone() }),
        Some(M::Keywords(ks)) => Match::from(ks.strings.clone()),
        Some(M::Integers(is)) => Match::from(is.integers.clone()),
        Some(M::ExceptKeywords(ks)) => Match::Except(MatchExcept::from(ks.strings.clone())),
        Some(M::ExceptIntegers(is)) => Match::Except(MatchExcept::from(is.integers.clone())),
        Some(M::Prefix(_) | M::Substring(_)) => {
            return Err(Status::unimplemented("prefix and substring match"));
        }
        None => return Err(bad("match is empty")),
    })
}

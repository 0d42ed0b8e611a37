//! `FixedRecencyPostprocessor`: keeps the `top_k` most recent nodes by a date
//! in their metadata, parsing the common date and date-time forms.

use super::NodePostprocessor;
use crate::error::{Error, Result};
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde_json::Value;

/// Sorts nodes newest first by `metadata[date_key]` and keeps `top_k` of them
/// (LlamaIndex `FixedRecencyPostprocessor`).
///
/// Dates are read by [`parse_date`]. Nodes with equal dates come out in the
/// reverse of their input order, as Python's `np.flip(argsort(..))` gives for
/// the short lists retrieval returns. Scores are left as they were.
///
/// Differences from Python, where pandas' `to_datetime` reads the dates:
/// date-times with different UTC offsets are compared as instants (pandas
/// refuses to mix offsets); a missing or unreadable date is an error naming
/// the node (pandas raises too); and the query is not required.
#[derive(Clone, Debug)]
pub struct FixedRecencyPostprocessor {
    /// How many nodes to keep (default 1).
    pub top_k: usize,
    /// The metadata key holding the date (default `"date"`).
    pub date_key: String,
}

impl Default for FixedRecencyPostprocessor {
    fn default() -> Self {
        Self {
            top_k: 1,
            date_key: "date".to_string(),
        }
    }
}

impl FixedRecencyPostprocessor {
    /// LlamaIndex's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `top_k`.
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k;
        self
    }

    /// Sets `date_key`.
    pub fn date_key(mut self, key: impl Into<String>) -> Self {
        self.date_key = key.into();
        self
    }
}

/// Date-time forms tried after RFC 3339 and RFC 2822, read as UTC.
const NAIVE_DATETIME_FORMATS: &[&str] = &[
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
    "%Y/%m/%d %H:%M:%S%.f",
    "%Y/%m/%d %H:%M",
    "%m/%d/%Y %H:%M:%S%.f",
    "%m/%d/%Y %H:%M",
];

/// Date-time forms with a UTC offset that RFC 3339 does not accept.
const OFFSET_DATETIME_FORMATS: &[&str] = &[
    "%Y-%m-%d %H:%M:%S%.f%:z",
    "%Y-%m-%d %H:%M:%S%.f%z",
    "%Y-%m-%dT%H:%M:%S%.f%z",
    "%Y-%m-%d %H:%M:%S%.f %z",
];

/// Date forms (midnight UTC). Slashed dates are month first, as pandas reads them.
const DATE_FORMATS: &[&str] = &[
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%Y.%m.%d",
    "%Y%m%d",
    "%m/%d/%Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%B %d %Y",
    "%b %d %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%A, %B %d, %Y",
];

/// Reads a metadata date as a UTC instant: RFC 3339 / ISO 8601 date-times
/// (with or without an offset; without one they count as UTC), RFC 2822,
/// `YYYY-MM-DD HH:MM[:SS[.f]]`, dates such as `2024-03-01`, `2024/03/01`,
/// `03/01/2024` (month first), `March 1, 2024`, `1 Mar 2024`, `2024-03`,
/// `2024`, and numbers as Unix seconds. `None` when none of these fits.
pub fn parse_date(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::Number(n) => {
            let secs = n.as_f64()?;
            if !secs.is_finite() {
                return None;
            }
            let whole = secs.floor();
            let nanos = ((secs - whole) * 1e9).round().min(999_999_999.0) as u32;
            DateTime::from_timestamp(whole as i64, nanos)
        }
        Value::String(s) => parse_date_str(s.trim()),
        _ => None,
    }
}

fn parse_date_str(s: &str) -> Option<DateTime<Utc>> {
    if s.is_empty() {
        return None;
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.with_timezone(&Utc));
    }
    for f in OFFSET_DATETIME_FORMATS {
        if let Ok(d) = DateTime::parse_from_str(s, f) {
            return Some(d.with_timezone(&Utc));
        }
    }
    if let Ok(d) = DateTime::parse_from_rfc2822(s) {
        return Some(d.with_timezone(&Utc));
    }
    let naive_utc = |d: NaiveDateTime| Some(d.and_utc());
    // a trailing "Z" that RFC 3339 rejected (no seconds, say) still means UTC
    let bare = s.strip_suffix('Z').unwrap_or(s);
    for f in NAIVE_DATETIME_FORMATS {
        if let Ok(d) = NaiveDateTime::parse_from_str(bare, f) {
            return naive_utc(d);
        }
    }
    for f in DATE_FORMATS {
        if let Ok(d) = NaiveDate::parse_from_str(s, f) {
            return naive_utc(d.and_hms_opt(0, 0, 0)?);
        }
    }
    // year-month and bare year, as pandas reads them: the first day
    if let Ok(d) = NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d") {
        return naive_utc(d.and_hms_opt(0, 0, 0)?);
    }
    if s.len() == 4 && s.chars().all(|c| c.is_ascii_digit()) {
        let d = NaiveDate::parse_from_str(&format!("{s}-01-01"), "%Y-%m-%d").ok()?;
        return naive_utc(d.and_hms_opt(0, 0, 0)?);
    }
    None
}

#[async_trait]
impl NodePostprocessor for FixedRecencyPostprocessor {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        let mut dated = Vec::with_capacity(nodes.len());
        for n in nodes {
            let raw = n.node.metadata.get(&self.date_key).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "node {}: no metadata `{}` to sort by recency",
                    n.node.node_id(),
                    self.date_key
                ))
            })?;
            let date = parse_date(raw).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "node {}: metadata `{}` is not a date: {raw}",
                    n.node.node_id(),
                    self.date_key
                ))
            })?;
            dated.push((date, n));
        }
        // ascending and stable, then reversed: Python's np.flip(argsort(dates))
        dated.sort_by_key(|(d, _)| *d);
        Ok(dated
            .into_iter()
            .rev()
            .take(self.top_k)
            .map(|(_, n)| n)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ts(v: Value) -> Option<i64> {
        parse_date(&v).map(|d| d.timestamp())
    }

    #[test]
    fn reads_common_forms() {
        let day = Some(1_709_251_200); // 2024-03-01T00:00:00Z
        for s in [
            "2024-03-01",
            "2024/03/01",
            "03/01/2024",
            "March 1, 2024",
            "Mar 1, 2024",
            "1 March 2024",
            "2024-03-01T00:00:00Z",
            "2024-03-01T00:00:00",
            "2024-03-01 00:00",
            "2024-03-01T01:00:00+01:00",
            "2024-03-01 01:00:00+0100",
            "Fri, 01 Mar 2024 00:00:00 +0000",
            "2024-03",
            " 2024-03-01 ",
        ] {
            assert_eq!(ts(json!(s)), day, "{s}");
        }
        assert_eq!(ts(json!("2024")), Some(1_704_067_200));
        assert_eq!(ts(json!(1_709_251_200)), day);
        assert_eq!(ts(json!(1.5)).map(|_| ()), Some(()));
        assert_eq!(ts(json!("2024-03-01T00:00:00.250Z")), day);
    }

    #[test]
    fn rejects_what_is_not_a_date() {
        for v in [
            json!("yesterday"),
            json!(""),
            json!(null),
            json!([1]),
            json!("2024-13-01"),
        ] {
            assert_eq!(ts(v.clone()), None, "{v}");
        }
    }
}

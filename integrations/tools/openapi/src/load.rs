//! Reading a spec and the documents it refers to, and replacing every
//! `$ref` by what it points at: cycles cut, size and depth bounded.

use crate::yaml;
use ragloom_core::error::{Error, Result};
use ragloom_tools_requests::RequestsToolSpec;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use url::Url;

/// The most documents one spec may pull in through `$ref`s.
const MAX_DOCUMENTS: usize = 100;
/// The most values the dereferenced spec may hold (a `$ref` copies its
/// target, so a spec can ask for far more than it holds).
const MAX_VALUES: usize = 2_000_000;
/// The deepest the dereferenced spec may nest, references followed included.
const MAX_DEPTH: usize = 200;
/// The most bytes of text (strings and keys) the dereferenced spec may hold.
const MAX_BYTES: usize = 64 << 20;

/// Where a document came from: what its relative `$ref`s are read against.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Location {
    /// Given as a value: only `#/...` references.
    Inline,
    /// A file (canonical path), and the folder its references must stay in.
    File(PathBuf, PathBuf),
    /// A URL (without fragment).
    Url(String),
}

impl Location {
    fn describe(&self) -> String {
        match self {
            Location::Inline => "the spec".into(),
            Location::File(p, _) => p.display().to_string(),
            Location::Url(u) => u.clone(),
        }
    }

    /// The document `reference` (its part before `#`) names, from here.
    fn join(&self, reference: &str) -> Result<Location> {
        match self {
            Location::Inline => Err(Error::InvalidInput(format!(
                "`$ref: {reference}` names another document; a spec given as a value may only refer within itself (load it with from_file or from_url)"
            ))),
            Location::File(path, root) => {
                if Url::parse(reference).is_ok() {
                    return Err(Error::InvalidInput(format!(
                        "`$ref: {reference}` in {} names a URL; a spec read from a file may only refer to files",
                        path.display()
                    )));
                }
                let decoded = percent_decode(reference);
                if Path::new(&decoded).is_absolute() {
                    return Err(Error::InvalidInput(format!(
                        "`$ref: {reference}` in {} is an absolute path; references are relative to the spec",
                        path.display()
                    )));
                }
                let base = path.parent().unwrap_or(Path::new("."));
                let joined = base.join(&decoded);
                let canonical = joined.canonicalize().map_err(|e| {
                    Error::io(
                        "reading a document a $ref names",
                        joined.display().to_string(),
                        e,
                    )
                })?;
                // Links followed: the file itself must be in the folder.
                if !canonical.starts_with(root) {
                    return Err(Error::InvalidInput(format!(
                        "`$ref: {reference}` in {} leaves {}; read the spec with from_file_in and a wider folder if that is meant",
                        path.display(),
                        root.display()
                    )));
                }
                Ok(Location::File(canonical, root.clone()))
            }
            Location::Url(url) => {
                let base =
                    Url::parse(url).map_err(|e| Error::invalid(format!("url `{url}`"), e))?;
                let mut joined = base
                    .join(reference)
                    .map_err(|e| Error::invalid(format!("`$ref: {reference}`"), e))?;
                joined.set_fragment(None);
                Ok(Location::Url(joined.to_string()))
            }
        }
    }
}

/// `%20` and the like in a reference.
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Reads a spec file; the files its references name must be inside `root`
/// (default: the spec's own folder).
pub(crate) fn read_file(path: &Path, root: Option<&Path>) -> Result<(Location, Value)> {
    let canonical = path
        .canonicalize()
        .map_err(|e| Error::io("opening the OpenAPI spec", path.display().to_string(), e))?;
    let root = match root {
        Some(r) => r
            .canonicalize()
            .map_err(|e| Error::io("opening the spec's folder", r.display().to_string(), e))?,
        None => canonical.parent().unwrap_or(Path::new("/")).to_path_buf(),
    };
    if !canonical.starts_with(&root) {
        return Err(Error::InvalidInput(format!(
            "{} is not inside {}",
            canonical.display(),
            root.display()
        )));
    }
    let value = parse_file(&canonical)?;
    Ok((Location::File(canonical, root), value))
}

/// A regular file of at most [`yaml::MAX_DOCUMENT_BYTES`] (read no further:
/// a device or a pipe may claim any size), parsed as an object.
fn parse_file(path: &Path) -> Result<Value> {
    use std::io::Read;
    let shown = path.display().to_string();
    let io = |e| Error::io("reading the OpenAPI spec", shown.clone(), e);
    if !std::fs::metadata(path).map_err(io)?.is_file() {
        return Err(Error::InvalidInput(format!(
            "{shown} is not a regular file"
        )));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(yaml::MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    let value = yaml::parse(&text, &shown)?;
    if !value.is_object() {
        return Err(Error::InvalidInput(format!(
            "{shown} is not a JSON or YAML mapping (a spec document must be one)"
        )));
    }
    Ok(value)
}

/// Reads a URL through `requests`' guards (allowed origins, no internal
/// addresses, size caps).
pub(crate) async fn fetch(url: &str, requests: &RequestsToolSpec) -> Result<Value> {
    // A spec may be larger than a tool's response; a longer one is cut and
    // then refused by its size.
    let requests = requests
        .clone()
        .max_response_bytes(yaml::MAX_DOCUMENT_BYTES);
    let value = match requests.get_request(url, None).await? {
        Value::String(text) => yaml::parse(&text, url)?,
        json => json,
    };
    if !value.is_object() {
        return Err(Error::InvalidInput(format!(
            "{url} is not a JSON or YAML mapping (a spec document must be one)"
        )));
    }
    Ok(value)
}

/// Every document `root` refers to, read: files from disk, URLs through
/// `requests` (refused when there is none).
pub(crate) async fn gather(
    root: Location,
    root_value: Value,
    requests: Option<&RequestsToolSpec>,
) -> Result<BTreeMap<Location, Value>> {
    let mut docs = BTreeMap::new();
    let mut queue = VecDeque::new();
    queue.push_back((root.clone(), root_value));
    while let Some((loc, value)) = queue.pop_front() {
        let mut refs = Vec::new();
        collect_refs(&value, &mut refs);
        docs.insert(loc.clone(), value);
        for reference in refs {
            let Some((doc, _)) = split_ref(&reference) else {
                continue;
            };
            if doc.is_empty() {
                continue;
            }
            let target = loc.join(doc)?;
            if docs.contains_key(&target) || queue.iter().any(|(l, _)| *l == target) {
                continue;
            }
            if docs.len() + queue.len() >= MAX_DOCUMENTS {
                return Err(Error::InvalidInput(format!(
                    "the spec refers to more than {MAX_DOCUMENTS} documents"
                )));
            }
            let value = match &target {
                Location::File(path, _) => parse_file(path)?,
                Location::Url(url) => match requests {
                    Some(r) => fetch(url, r).await?,
                    None => {
                        return Err(Error::InvalidInput(format!(
                            "`$ref: {reference}` names {url}, which needs a RequestsToolSpec to fetch"
                        )));
                    }
                },
                Location::Inline => continue,
            };
            queue.push_back((target, value));
        }
    }
    Ok(docs)
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r.clone());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// `doc.yaml#/a/b` → (`doc.yaml`, `/a/b`).
fn split_ref(reference: &str) -> Option<(&str, &str)> {
    Some(reference.split_once('#').unwrap_or((reference, "")))
}

/// The value at a JSON pointer (`/components/schemas/Pet`).
fn pointer<'a>(doc: &'a Value, fragment: &str) -> Option<&'a Value> {
    if fragment.is_empty() || fragment == "/" && doc.get("").is_none() {
        return Some(doc);
    }
    let decoded = percent_decode(fragment);
    let mut at = doc;
    for part in decoded.strip_prefix('/')?.split('/') {
        let key = part.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(map) => map.get(&key)?,
            Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Replaces references by their targets.
pub(crate) struct Dereferencer<'a> {
    docs: &'a BTreeMap<Location, Value>,
    values: usize,
    bytes: usize,
    depth: usize,
    stack: std::collections::HashSet<(Location, String)>,
}

impl<'a> Dereferencer<'a> {
    pub(crate) fn new(docs: &'a BTreeMap<Location, Value>) -> Self {
        Self {
            docs,
            values: 0,
            bytes: 0,
            depth: 0,
            stack: std::collections::HashSet::new(),
        }
    }

    /// `value` (in the document at `loc`) with every `$ref` replaced by its
    /// target, as LlamaIndex's dereferencing does (a `$ref`'s sibling keys
    /// dropped). A reference back into one being expanded stays a `$ref`.
    pub(crate) fn deref(&mut self, value: &Value, loc: &Location) -> Result<Value> {
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(Error::InvalidInput(format!(
                "the spec's references expand to more than {MAX_VALUES} values"
            )));
        }
        if self.depth > MAX_DEPTH {
            return Err(Error::InvalidInput(format!(
                "the spec's references nest deeper than {MAX_DEPTH}"
            )));
        }
        self.bytes += match value {
            Value::String(s) => s.len(),
            Value::Object(map) => map.keys().map(String::len).sum(),
            _ => 8,
        };
        if self.bytes > MAX_BYTES {
            return Err(Error::InvalidInput(format!(
                "the spec's references expand to more than {MAX_BYTES} bytes of text"
            )));
        }
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    return self.follow(reference, loc);
                }
                let mut out = Map::with_capacity(map.len());
                for (k, v) in map {
                    self.depth += 1;
                    let resolved = self.deref(v, loc);
                    self.depth -= 1;
                    out.insert(k.clone(), resolved?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .map(|v| {
                    self.depth += 1;
                    let resolved = self.deref(v, loc);
                    self.depth -= 1;
                    resolved
                })
                .collect::<Result<Vec<_>>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }

    fn follow(&mut self, reference: &str, loc: &Location) -> Result<Value> {
        let (doc, fragment) = split_ref(reference).unwrap_or((reference, ""));
        let target_loc = if doc.is_empty() {
            loc.clone()
        } else {
            loc.join(doc)?
        };
        let key = (target_loc.clone(), fragment.to_owned());
        if self.stack.contains(&key) {
            // A cycle: the reference stays, for the reader to follow.
            return Ok(json!({ "$ref": reference }));
        }
        let target_doc = self.docs.get(&target_loc).ok_or_else(|| {
            Error::InvalidInput(format!(
                "`$ref: {reference}`: {} was not read",
                target_loc.describe()
            ))
        })?;
        let target = pointer(target_doc, fragment).ok_or_else(|| {
            Error::InvalidInput(format!(
                "`$ref: {reference}` in {} points at nothing",
                loc.describe()
            ))
        })?;
        self.stack.insert(key.clone());
        self.depth += 1;
        let resolved = self.deref(target, &target_loc);
        self.depth -= 1;
        self.stack.remove(&key);
        resolved
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn deref_inline(spec: Value) -> Result<Value> {
        let docs = BTreeMap::from([(Location::Inline, spec.clone())]);
        Dereferencer::new(&docs).deref(&spec, &Location::Inline)
    }

    #[test]
    fn references_are_replaced_and_cycles_cut() {
        let spec = json!({
            "a": {"$ref": "#/defs/B", "description": "dropped, as LlamaIndex drops it"},
            "defs": {
                "B": {"type": "object", "properties": {"child": {"$ref": "#/defs/B"}, "x~y": {"$ref": "#/defs/C~0D"}}},
                "C~D": {"type": "string"}
            }
        });
        let out = deref_inline(spec).unwrap();
        assert_eq!(out["a"]["type"], "object");
        assert_eq!(out["a"]["properties"]["child"], json!({"$ref": "#/defs/B"}));
        assert_eq!(out["a"]["properties"]["x~y"], json!({"type": "string"}));
        assert!(out["a"].get("description").is_none());
    }

    #[test]
    fn bad_and_explosive_references_are_errors() {
        assert!(deref_inline(json!({"a": {"$ref": "#/nowhere"}})).is_err());
        assert!(deref_inline(json!({"a": {"$ref": "other.yaml#/x"}})).is_err());
        // Each level doubles: 2^40 values if followed blindly.
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "string"}));
        for i in 1..40 {
            defs.insert(format!("d{i}"), json!({"allOf": [{"$ref": format!("#/defs/d{}", i - 1)}, {"$ref": format!("#/defs/d{}", i - 1)}]}));
        }
        let spec = json!({"root": {"$ref": "#/defs/d39"}, "defs": defs});
        let err = deref_inline(spec).unwrap_err().to_string();
        assert!(err.contains("expand to more than"), "{err}");
    }
}

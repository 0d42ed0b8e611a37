//! A spec's text as JSON: JSON parsed strictly, anything else as YAML with
//! budgets on aliases, nodes and depth, keys read as the text they are.

use ragloom_core::error::{Error, Result};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// The most bytes of one spec document read.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// `text` as a JSON value: a JSON document, or YAML (of which JSON is a
/// subset). YAML keys that are numbers or booleans (`200:`) become their
/// text, as the OpenAPI documents that write them mean.
pub(crate) fn parse(text: &str, what: &str) -> Result<Value> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(Error::InvalidInput(format!(
            "{what} is {} bytes, more than the {MAX_DOCUMENT_BYTES} an OpenAPI document may have",
            text.len()
        )));
    }
    if text.trim_start().starts_with('{')
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return Ok(value);
    }
    let parsed: Keyed = serde_saphyr::from_str(text)
        .map_err(|e| Error::invalid(format!("{what} is neither JSON nor YAML"), e))?;
    Ok(parsed.0)
}

/// A JSON value whose object keys may arrive as any scalar.
struct Keyed(Value);

impl<'de> de::Deserialize<'de> for Keyed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor).map(Keyed)
    }
}

/// A map key of any scalar kind, as text.
struct Key(String);

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match d.deserialize_any(ValueVisitor)? {
            Value::String(s) => Ok(Key(s)),
            Value::Null => Ok(Key("null".into())),
            v @ (Value::Bool(_) | Value::Number(_)) => Ok(Key(v.to_string())),
            _ => Err(de::Error::custom("a mapping key must be a scalar")),
        }
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        // YAML's .nan and .inf have no JSON form: their text stays.
        Ok(Number::from_f64(v).map_or_else(|| Value::String(v.to_string()), Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Keyed(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some((Key(k), Keyed(v))) = map.next_entry()? {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_and_json_read_alike() {
        let yaml = "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: ok\n";
        let v = parse(yaml, "spec").unwrap();
        assert_eq!(
            v["paths"]["/a"]["get"]["responses"]["200"]["description"],
            "ok"
        );
        assert_eq!(
            parse("{\"a\": [1, 2.5]}", "spec").unwrap(),
            json!({"a": [1, 2.5]})
        );
        assert!(parse("a: [unclosed", "spec").is_err());
    }

    #[test]
    fn an_alias_bomb_is_refused() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in 'b'..='k' {
            bomb.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = name;
        }
        assert!(parse(&bomb, "spec").is_err());
    }
}

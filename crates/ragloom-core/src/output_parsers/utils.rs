//! Finding the JSON in a model's reply (LlamaIndex's `_marshal_llm_to_json` and
//! `parse_json_markdown`) and a lenient parser for the YAML-flavoured JSON models write.

use crate::error::{Error, Result};
use serde_json::{Map, Number, Value};

/// The span of `output` from the first `[` or `{` (whichever comes first) to
/// the last matching closer, as LlamaIndex's `_marshal_llm_to_json` cuts it;
/// empty when there is none.
pub fn marshal_llm_to_json(output: &str) -> &str {
    let output = output.trim();
    let square = output.find('[');
    let brace = output.find('{');
    let use_square = match (square, brace) {
        (Some(s), Some(b)) => s < b,
        (_, None) => true,
        (None, Some(_)) => false,
    };
    let (left, right) = if use_square {
        (square, output.rfind(']'))
    } else {
        (brace, output.rfind('}'))
    };
    match (left, right) {
        (Some(l), Some(r)) if l <= r => &output[l..=r],
        _ => "",
    }
}

/// LlamaIndex's `parse_json_markdown`: the body of a ```` ```json ```` fence
/// if there is one, cut to its JSON with [`marshal_llm_to_json`], parsed
/// strictly, else leniently (see [`parse_relaxed_json`]) as LlamaIndex falls
/// back to YAML. Nothing parseable is [`Error::OutputParse`] quoting `text`.
pub fn parse_json_markdown(text: &str) -> Result<Value> {
    let mut body = text;
    if let Some((_, after)) = text.split_once("```json") {
        body = after.trim().trim_matches('`').trim();
    }
    let candidate = marshal_llm_to_json(body);
    parse_candidate(candidate).ok_or_else(|| {
        Error::OutputParse(format!(
            "no valid JSON in the model's reply (looked for a JSON list or object); the reply was: {text:?}"
        ))
    })
}

/// Strict JSON first, then the lenient parser; `None` for empty or unparseable text.
pub(crate) fn parse_candidate(candidate: &str) -> Option<Value> {
    if candidate.trim().is_empty() {
        return None;
    }
    serde_json::from_str(candidate)
        .ok()
        .or_else(|| parse_relaxed_json(candidate).ok())
}

/// The character of the JSON escape whose letter is `chars[*pos]` (the
/// character after a backslash), moving `pos` past the escape: `\n`, `\t`,
/// `\r`, `\b`, `\f`, `\uXXXX` (a surrogate pair joined; a lone surrogate
/// becomes U+FFFD) and any other character as itself. A `\u` not followed
/// by four hex digits is an error quoting them; with `signed_hex` a leading
/// `+` counts among the four, as Python's `int(.., 16)` in the `dirtyjson`
/// package reads them.
pub fn json_escape(
    chars: &[char],
    pos: &mut usize,
    signed_hex: bool,
) -> std::result::Result<char, String> {
    let Some(&e) = chars.get(*pos) else {
        return Err("a string ends in a backslash".to_owned());
    };
    *pos += 1;
    Ok(match e {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'u' => {
            let high = hex4(chars, pos, signed_hex)?;
            let code = if (0xD800..0xDC00).contains(&high)
                && chars.get(*pos) == Some(&'\\')
                && chars.get(*pos + 1) == Some(&'u')
            {
                *pos += 2;
                let low = hex4(chars, pos, signed_hex)?;
                0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF)
            } else {
                high
            };
            char::from_u32(code).unwrap_or('\u{FFFD}')
        }
        other => other,
    })
}

fn hex4(chars: &[char], pos: &mut usize, signed: bool) -> std::result::Result<u32, String> {
    let digits: String = chars.iter().skip(*pos).take(4).collect();
    let unsigned = digits
        .strip_prefix('+')
        .filter(|_| signed)
        .unwrap_or(&digits);
    if digits.chars().count() != 4 || !unsigned.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("bad \\u escape {digits:?}"));
    }
    let code =
        u32::from_str_radix(&digits, 16).map_err(|_| format!("bad \\u escape {digits:?}"))?;
    *pos += 4;
    Ok(code)
}

/// Parses JSON as models often write it, where LlamaIndex falls back to
/// `yaml.safe_load`: unquoted keys (`{choice: 1}`), single-quoted strings,
/// trailing commas, unquoted scalar values, Python's `True`/`False`/`None`.
/// The error says where parsing stopped.
pub fn parse_relaxed_json(text: &str) -> std::result::Result<Value, String> {
    let mut p = Relaxed {
        chars: text.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let value = p.value(false)?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(format!(
            "unexpected {:?} after the value at character {}",
            p.chars[p.pos], p.pos
        ));
    }
    Ok(value)
}

/// Nesting deeper than this is refused (as serde_json refuses it), so a
/// hostile reply cannot exhaust the stack.
const MAX_DEPTH: usize = 128;

struct Relaxed {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Relaxed {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn value(&mut self, in_container: bool) -> std::result::Result<Value, String> {
        self.skip_ws();
        match self.peek() {
            None => Err("the text ended where a value was expected".to_owned()),
            Some('{' | '[') if self.depth >= MAX_DEPTH => {
                Err(format!("nested more than {MAX_DEPTH} levels deep"))
            }
            Some('{') => {
                self.depth += 1;
                let v = self.object();
                self.depth -= 1;
                v
            }
            Some('[') => {
                self.depth += 1;
                let v = self.array();
                self.depth -= 1;
                v
            }
            Some('"') => self.double_quoted().map(Value::String),
            Some('\'') => self.single_quoted().map(Value::String),
            Some(_) => Ok(scalar(&self.bare(in_container, false))),
        }
    }

    fn object(&mut self) -> std::result::Result<Value, String> {
        self.pos += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                None => return Err("an object is not closed".to_owned()),
                _ => {}
            }
            let key = match self.peek() {
                Some('"') => self.double_quoted()?,
                Some('\'') => self.single_quoted()?,
                _ => self.bare(true, true),
            };
            if key.is_empty() {
                return Err(format!(
                    "an object key is missing at character {}",
                    self.pos
                ));
            }
            self.skip_ws();
            if self.peek() != Some(':') {
                return Err(format!("`:` expected after the key {key:?}"));
            }
            self.pos += 1;
            let value = self.value(true)?;
            map.insert(key, value);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                Some(c) => {
                    return Err(format!(
                        "`,` or `}}` expected, found {c:?} at character {}",
                        self.pos
                    ));
                }
                None => return Err("an object is not closed".to_owned()),
            }
        }
    }

    fn array(&mut self) -> std::result::Result<Value, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                None => return Err("a list is not closed".to_owned()),
                _ => {}
            }
            items.push(self.value(true)?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {}
                Some(c) => {
                    return Err(format!(
                        "`,` or `]` expected, found {c:?} at character {}",
                        self.pos
                    ));
                }
                None => return Err("a list is not closed".to_owned()),
            }
        }
    }

    /// A JSON string, escapes decoded.
    fn double_quoted(&mut self) -> std::result::Result<String, String> {
        self.pos += 1;
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '"' => return Ok(out),
                '\\' => {
                    if self.peek().is_none() {
                        break;
                    }
                    out.push(json_escape(&self.chars, &mut self.pos, false)?);
                }
                other => out.push(other),
            }
        }
        Err("a string is not closed".to_owned())
    }

    /// A YAML single-quoted string: `''` stands for one quote, no other escapes.
    fn single_quoted(&mut self) -> std::result::Result<String, String> {
        self.pos += 1;
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == '\'' {
                if self.peek() == Some('\'') {
                    self.pos += 1;
                    out.push('\'');
                } else {
                    return Ok(out);
                }
            } else {
                out.push(c);
            }
        }
        Err("a string is not closed".to_owned())
    }

    /// An unquoted key or scalar, up to the next delimiter, trimmed.
    fn bare(&mut self, in_container: bool, is_key: bool) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let stop = (is_key && c == ':')
                || (in_container && matches!(c, ',' | '}' | ']' | '\n'))
                || (!in_container && c == '\n');
            if stop {
                break;
            }
            self.pos += 1;
        }
        self.chars[start..self.pos]
            .iter()
            .collect::<String>()
            .trim()
            .to_owned()
    }
}

/// An unquoted scalar as YAML reads it: booleans, nulls, numbers, else text.
fn scalar(text: &str) -> Value {
    match text {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        "null" | "Null" | "NULL" | "None" | "~" | "" => return Value::Null,
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::Number(i.into());
    }
    if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
        return Value::Number(n);
    }
    Value::String(text.to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn escape(text: &str, signed_hex: bool) -> std::result::Result<char, String> {
        let chars: Vec<char> = text.chars().collect();
        let mut pos = 0;
        let c = json_escape(&chars, &mut pos, signed_hex)?;
        assert_eq!(pos, chars.len(), "{text:?} read to its end");
        Ok(c)
    }

    #[test]
    fn json_escapes_decode_as_python_reads_them() {
        assert_eq!(escape("n", false), Ok('\n'));
        assert_eq!(escape("q", false), Ok('q'));
        assert_eq!(escape("u00e9", false), Ok('é'));
        assert_eq!(escape("ud83d\\ude00", false), Ok('😀'));
        assert_eq!(escape("ud83d", false), Ok('\u{FFFD}'));
        // dirtyjson's int(.., 16) takes a sign; the strict reader does not.
        assert_eq!(escape("u+041", true), Ok('A'));
        assert!(escape("u+041", false).unwrap_err().contains("+041"));
        assert!(escape("u++41", true).is_err());
        assert!(escape("u12", false).is_err());
        assert!(escape("", false).is_err());
    }

    #[test]
    fn marshal_takes_the_outermost_span() {
        assert_eq!(
            marshal_llm_to_json("x [1, {\"a\": 2}] y"),
            "[1, {\"a\": 2}]"
        );
        assert_eq!(marshal_llm_to_json("say {\"a\": [1]} ok"), "{\"a\": [1]}");
        assert_eq!(marshal_llm_to_json("nothing here"), "");
        assert_eq!(marshal_llm_to_json("] before ["), "");
    }

    #[test]
    fn relaxed_json_reads_yaml_flavoured_lists() {
        let v = parse_relaxed_json("[\n {\n choice: 3,\n reason: \"why\"\n },\n]").unwrap();
        assert_eq!(v, json!([{"choice": 3, "reason": "why"}]));
        let v = parse_relaxed_json("[{'choice': 1, 'reason': 'it''s so'}]").unwrap();
        assert_eq!(v, json!([{"choice": 1, "reason": "it's so"}]));
        let v = parse_relaxed_json("{a: True, b: None, c: 1.5, d: some words}").unwrap();
        assert_eq!(
            v,
            json!({"a": true, "b": null, "c": 1.5, "d": "some words"})
        );
        let v = parse_relaxed_json(r#"["\u00e9\ud83d\ude00\n"]"#).unwrap();
        assert_eq!(v, json!(["é😀\n"]));
        assert!(parse_relaxed_json("[1, 2").is_err());
        assert!(parse_relaxed_json("{\"a\" 1}").is_err());
        assert!(parse_relaxed_json("[1] trailing").is_err());
        assert!(parse_relaxed_json(&"[".repeat(100_000)).is_err_and(|e| e.contains("deep")));
        assert!(parse_relaxed_json(r#"["\u12"]"#).is_err());
    }

    #[test]
    fn json_markdown_prefers_the_fenced_block() {
        let v = parse_json_markdown("Sure:\n```json\n{\"items\": []}\n```\nbye").unwrap();
        assert_eq!(v, json!({"items": []}));
        assert!(matches!(
            parse_json_markdown("no json"),
            Err(Error::OutputParse(m)) if m.contains("no json")
        ));
    }
}

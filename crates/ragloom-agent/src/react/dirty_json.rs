//! A lenient JSON reader for the action inputs weaker models write: what the
//! `dirtyjson` package LlamaIndex uses accepts, where the meaning is unambiguous.
//!
//! Accepted beyond JSON: single-quoted strings, bare identifier keys, trailing
//! commas, `//` and `/* */` comments, raw newlines inside strings, numbers
//! with a leading `+`, leading zeros, a leading `.` or in hex, and text after
//! the first value (ignored). Rejected as dirtyjson rejects them: Python
//! literals (`True`, `None`), doubled commas, bare keys with other characters.

use ragloom_core::output_parsers::utils::json_escape;
use serde_json::{Map, Number, Value};

/// Parses the first value in `text` leniently; `Err` says where it failed.
pub(super) fn loads(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
    };
    p.skip_ws()?;
    p.value(0)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 256;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at character {}", self.pos))
    }

    fn skip_ws(&mut self) -> Result<(), String> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => self.pos += 1,
                Some('/') if self.chars.get(self.pos + 1) == Some(&'/') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some('/') if self.chars.get(self.pos + 1) == Some(&'*') => {
                    self.pos += 2;
                    loop {
                        match self.peek() {
                            None => return self.err("unterminated comment"),
                            Some('*') if self.chars.get(self.pos + 1) == Some(&'/') => {
                                self.pos += 2;
                                break;
                            }
                            Some(_) => self.pos += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        match self.peek() {
            Some('{') => self.object(depth),
            Some('[') => self.array(depth),
            Some(q @ ('"' | '\'')) => Ok(Value::String(self.string(q)?)),
            Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_alphabetic() => {
                let word = self.identifier();
                match word.as_str() {
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "null" => Ok(Value::Null),
                    _ => self.err("expecting value"),
                }
            }
            _ => self.err("expecting value"),
        }
    }

    fn identifier(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '$' {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws()?;
            let key = match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                Some(q @ ('"' | '\'')) => self.string(q)?,
                Some(c) if c.is_alphabetic() || c == '_' || c == '$' => self.identifier(),
                _ => return self.err("expecting property name"),
            };
            self.skip_ws()?;
            if self.peek() != Some(':') {
                return self.err("expecting ':' delimiter");
            }
            self.pos += 1;
            self.skip_ws()?;
            let value = self.value(depth + 1)?;
            map.insert(key, value);
            self.skip_ws()?;
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return self.err("expecting ',' delimiter"),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            if self.peek() == Some(']') {
                self.pos += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws()?;
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {}
                _ => return self.err("expecting ',' delimiter"),
            }
        }
    }

    fn string(&mut self, quote: char) -> Result<String, String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            self.pos += 1;
            if c == quote {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            if self.peek().is_none() {
                return self.err("unterminated string");
            }
            match json_escape(&self.chars, &mut self.pos, true) {
                Ok(c) => out.push(c),
                Err(_) => return self.err("bad \\u escape"),
            }
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        let mut negative = false;
        if let Some(sign @ ('-' | '+')) = self.peek() {
            negative = sign == '-';
            self.pos += 1;
        }
        if self.peek() == Some('0') && matches!(self.chars.get(self.pos + 1), Some('x' | 'X')) {
            self.pos += 2;
            let digits_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let digits: String = self.chars[digits_start..self.pos].iter().collect();
            let magnitude =
                i64::from_str_radix(&digits, 16).or_else(|_| self.err("bad hex number"))?;
            return Ok(Value::from(if negative { -magnitude } else { magnitude }));
        }
        let mut int_part = String::new();
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            int_part.push(c);
            self.pos += 1;
        }
        let mut frac = String::new();
        let mut is_float = false;
        if self.peek() == Some('.') {
            is_float = true;
            self.pos += 1;
            while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                frac.push(c);
                self.pos += 1;
            }
        }
        let mut exp = String::new();
        if matches!(self.peek(), Some('e' | 'E')) {
            is_float = true;
            self.pos += 1;
            if let Some(s @ ('-' | '+')) = self.peek() {
                exp.push(s);
                self.pos += 1;
            }
            while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                exp.push(c);
                self.pos += 1;
            }
        }
        if int_part.is_empty() && frac.is_empty() {
            self.pos = start;
            return self.err("expecting value");
        }
        let int_part = int_part.trim_start_matches('0');
        let mut normal = String::new();
        if negative {
            normal.push('-');
        }
        normal.push_str(if int_part.is_empty() { "0" } else { int_part });
        if is_float {
            normal.push('.');
            normal.push_str(if frac.is_empty() { "0" } else { &frac });
            if !exp.is_empty() {
                normal.push('e');
                normal.push_str(&exp);
            }
        }
        match serde_json::from_str::<Number>(&normal) {
            Ok(n) => Ok(Value::Number(n)),
            Err(_) => self.err("bad number"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_what_dirtyjson_accepts() {
        assert_eq!(
            loads("{a: 'x', \"b\": [1,2,],}").unwrap(),
            json!({"a": "x", "b": [1, 2]})
        );
        assert_eq!(loads("{'a': \"it's\"}").unwrap(), json!({"a": "it's"}));
        assert_eq!(loads("{\"a\": 01}").unwrap(), json!({"a": 1}));
        assert_eq!(loads("{\"a\": .5}").unwrap(), json!({"a": 0.5}));
        assert_eq!(loads("{\"a\": 1 /* c */}").unwrap(), json!({"a": 1}));
        assert_eq!(loads("{\"a\": 1}}").unwrap(), json!({"a": 1}));
        assert_eq!(
            loads("{\"a\": \"x\"} {\"b\": 2}").unwrap(),
            json!({"a": "x"})
        );
        assert_eq!(
            loads("{\"a\": \"line\nbreak\"}").unwrap(),
            json!({"a": "line\nbreak"})
        );
        assert_eq!(loads("{\"a\": 'x\\'y'}").unwrap(), json!({"a": "x'y"}));
        assert_eq!(
            loads("{\"a\": +1, \"b\": 0x10}").unwrap(),
            json!({"a": 1, "b": 16})
        );
        assert_eq!(loads("{\"k\": \"v\",\n}").unwrap(), json!({"k": "v"}));
        assert_eq!(
            loads("{\"e\": \"\\u00e9\\ud83d\\ude00\"}").unwrap(),
            json!({"e": "é😀"})
        );
    }

    #[test]
    fn rejects_what_dirtyjson_rejects() {
        for bad in [
            "{\"a\": True}",
            "{a-b: 1}",
            "{\"a\": 1,, \"b\": 2}",
            "{\"a\": [1,,2]}",
            "{\"a\": 1",
            "{\"a\": \"open",
            "",
        ] {
            assert!(loads(bad).is_err(), "{bad:?} should fail");
        }
        let deep = "[".repeat(10_000);
        assert!(loads(&deep).is_err());
    }
}

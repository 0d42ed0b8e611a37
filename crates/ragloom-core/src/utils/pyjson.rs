//! Python's `json.dumps` byte for byte (`", "` and `": "` separators, `\uXXXX`
//! escapes or not, floats as `repr`): the one Python-style JSON writer of the crate.

use crate::error::{Error, Result};
use crate::schema::float_repr;
use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CharEscape, Formatter};
use std::io::{self, Write};

/// Serialises `value` to `w` exactly as Python's `json.dumps(value)` does with
/// its defaults: `", "` and `": "` separators, every non-ASCII character as a
/// `\uXXXX` escape (astral ones as surrogate pairs), floats as Python's `repr`.
pub fn write_python_json<T: Serialize + ?Sized>(w: &mut dyn Write, value: &T) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, PythonFormatter::default());
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// `value` as Python's `json.dumps(value, ensure_ascii=False)` writes it:
/// [`write_python_json`]'s layout with non-ASCII characters written as they are.
pub fn to_python_json_string_unescaped<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter::unescaped());
    value.serialize(&mut ser)?;
    String::from_utf8(out).map_err(|e| Error::failed("the JSON written is not UTF-8", e))
}

/// A JSON value as Python's `json.dumps(value, ensure_ascii=False)` writes
/// it (LlamaIndex's `fn_schema_str` and tool-call arguments in prompts).
pub fn json_dumps(value: &Value) -> String {
    // Writing a `Value` into memory cannot fail; the compact form is a safe fallback.
    to_python_json_string_unescaped(value).unwrap_or_else(|_| value.to_string())
}

/// `value` as Python's `json.dumps(value)` writes it (see [`write_python_json`]).
pub fn to_python_json_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    write_python_json(&mut out, value).map_err(|e| Error::failed("writing JSON", e))?;
    // Every byte written is ASCII: non-ASCII characters are escaped.
    String::from_utf8(out).map_err(|e| Error::failed("the JSON written is not UTF-8", e))
}

/// A `serde_json` formatter producing Python `json.dumps` output; the
/// default escapes non-ASCII characters as `json.dumps` does by default.
#[derive(Debug, Clone, Copy)]
pub struct PythonFormatter {
    ensure_ascii: bool,
}

impl Default for PythonFormatter {
    fn default() -> Self {
        Self { ensure_ascii: true }
    }
}

impl PythonFormatter {
    /// `ensure_ascii=False`: non-ASCII characters written as they are.
    pub fn unescaped() -> Self {
        Self {
            ensure_ascii: false,
        }
    }
}

impl Formatter for PythonFormatter {
    fn write_f32<W: ?Sized + Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        // json.dumps spells the non-finite values as JavaScript does.
        let text = if value.is_nan() {
            "NaN".to_string()
        } else if value.is_infinite() {
            if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
        } else {
            float_repr(value)
        };
        writer.write_all(text.as_bytes())
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Python escapes everything outside printable ASCII (' '..='~');
        // quotes, backslashes and controls reach `write_char_escape` instead.
        if !self.ensure_ascii {
            return writer.write_all(fragment.as_bytes());
        }
        let bytes = fragment.as_bytes();
        let mut start = 0;
        for (i, ch) in fragment.char_indices() {
            if (' '..='~').contains(&ch) {
                continue;
            }
            writer.write_all(&bytes[start..i])?;
            let mut units = [0u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = i + ch.len_utf8();
        }
        writer.write_all(&bytes[start..])
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        let s: &[u8] = match char_escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(byte) => return write!(writer, "\\u{byte:04x}"),
        };
        writer.write_all(s)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        separator(writer, first)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        separator(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }
}

/// Python's item separator, `", "`, before every item but the first.
fn separator<W: ?Sized + Write>(writer: &mut W, first: bool) -> io::Result<()> {
    if first {
        Ok(())
    } else {
        writer.write_all(b", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_as_python_json() {
        let mut out = Vec::new();
        write_python_json(&mut out, "a\"\\\n\u{7f}é😀\u{1}").unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#""a\"\\\n\u007f\u00e9\ud83d\ude00\u0001""#
        );
        let v = serde_json::json!({"k": [1, 2.5, 1e-7, null, true], "é": "x"});
        assert_eq!(
            to_python_json_string(&v).unwrap_or_default(),
            r#"{"k": [1, 2.5, 1e-07, null, true], "\u00e9": "x"}"#
        );
        assert_eq!(
            json_dumps(&v),
            "{\"k\": [1, 2.5, 1e-07, null, true], \"é\": \"x\"}"
        );
        assert_eq!(
            json_dumps(&serde_json::json!("a\n\u{1}é")),
            r#""a\n\u0001é""#
        );
    }
}

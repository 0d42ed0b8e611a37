//! Python's `str()` and `repr()` of JSON values, so that metadata renders and
//! hashes exactly as LlamaIndex renders and hashes it (`True`, `None`, `1.0`, `{'k': 'v'}`).

use serde_json::{Number, Value};
use std::fmt::Write;

/// Python's `str(value)`: strings unquoted, everything else as `repr`.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr(value)` for the value as `json.loads` would have produced it.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// Python's `repr(dict)` of a JSON object, without wrapping it in a `Value`.
pub(super) fn py_repr_object(map: &serde_json::Map<String, Value>) -> String {
    let mut out = String::new();
    write_object_repr(&mut out, map);
    out
}

fn write_object_repr(out: &mut String, map: &serde_json::Map<String, Value>) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str_repr(out, k);
        out.push_str(": ");
        write_repr(out, v);
    }
    out.push('}');
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&number_repr(n)),
        Value::String(s) => write_str_repr(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object_repr(out, map),
    }
}

fn number_repr(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) => float_repr(f),
        None => n.to_string(),
    }
}

/// Python's `repr(float)`: the shortest round-tripping digits, fixed notation
/// for decimal exponents in `-4..16`, scientific (`1e-05`, `1.5e+16`) otherwise.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let (sign, digits, exp) = shortest_digits(f);
    if (-4..16).contains(&exp) {
        let point = exp + 1; // position of the decimal point within the digits
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            let (a, b) = digits.split_at(point as usize);
            format!("{a}.{b}")
        };
        format!("{sign}{body}")
    } else {
        let mant = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

/// The shortest round-tripping decimal digits of a finite, non-zero `f` (no
/// leading or trailing zeros), its sign and the decimal exponent of its first
/// digit. Where two shortest candidates are equally near `f` (f32 values
/// widened to f64 often sit exactly halfway, e.g. 750.34869384765625), Python
/// picks the even one: so do serde_json's Ryū-style formatter, which is used
/// here, whereas `format!("{:e}")` rounds such ties up (`...563` for `...562`).
fn shortest_digits(f: f64) -> (&'static str, String, i32) {
    let mut buf = Vec::with_capacity(24);
    // Writing into a Vec cannot fail; an error would leave `buf` empty and
    // fall back to Rust's own shortest digits below.
    let _ =
        serde_json::ser::Formatter::write_f64(&mut serde_json::ser::CompactFormatter, &mut buf, f);
    let text = match String::from_utf8(buf) {
        Ok(t) if !t.is_empty() => t,
        _ => format!("{f:e}"),
    };
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    // The formatter writes either `123.45`, `1.5e-7` or `1e16`: read the
    // mantissa's digits and where its point sits, whatever the layout.
    let (mantissa, exp) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i32>().unwrap_or(0)),
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int_part.chars().chain(frac_part.chars()).collect();
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_string();
    let first_digit_exp = int_part.len() as i32 + exp - leading as i32 - 1;
    (sign, digits, first_digit_exp)
}

/// Python's `repr(str)`: single quotes unless the text holds `'` and no `"`.
fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_py_printable(c) => out.push(c),
            c => {
                let cp = c as u32;
                let _ = if cp < 0x100 {
                    write!(out, "\\x{cp:02x}")
                } else if cp < 0x10000 {
                    write!(out, "\\u{cp:04x}")
                } else {
                    write!(out, "\\U{cp:08x}")
                };
            }
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable` for one character: false for control, format,
/// separator (except the ASCII space), private-use and surrogate code points.
/// Unassigned code points are treated as printable (ragloom carries no Unicode
/// age tables); Python would escape them.
fn is_py_printable(c: char) -> bool {
    let cp = c as u32;
    if c == ' ' {
        return true;
    }
    if c.is_control() {
        return false;
    }
    !matches!(cp,
        0xA0 | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890 | 0x891 | 0x8E2
        | 0x1680 | 0x180E | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x2064
        | 0x2066..=0x206F | 0x3000 | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD
        | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001
        | 0xE0020..=0xE007F | 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// Python's `str.strip()` with no argument.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python's `str.isspace` for one character.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_python_does() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (2.5, "2.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456.789, "123456.789"),
            (-0.5, "-0.5"),
            (1.5e-7, "1.5e-07"),
            (1.2345e20, "1.2345e+20"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn values_repr_as_python_dicts() {
        let v = json!({"a": 1, "b": true, "c": null, "d": 1.0, "e": [1, "x"], "f": {"k": 2.5}});
        assert_eq!(
            py_repr(&v),
            "{'a': 1, 'b': True, 'c': None, 'd': 1.0, 'e': [1, 'x'], 'f': {'k': 2.5}}"
        );
        assert_eq!(py_repr(&json!("it's")), "\"it's\"");
        assert_eq!(py_repr(&json!("a'b\"c")), "'a\\'b\"c'");
        assert_eq!(py_repr(&json!("tab\tnl\n\u{1}é")), "'tab\\tnl\\n\\x01é'");
        assert_eq!(py_str(&json!("plain")), "plain");
        assert_eq!(py_str(&json!(false)), "False");
    }
}

//! PostgreSQL's text output of a value, read into what Python's driver
//! (psycopg2) would return: `Decimal`, `datetime`, `UUID`, lists, dicts.

use crate::value::SqlValue;
use serde_json::Value;

/// Type OIDs PostgreSQL assigns its built-in types (`pg_type.oid`).
mod oid {
    pub(super) const BOOL: u32 = 16;
    pub(super) const BYTEA: u32 = 17;
    pub(super) const INT8: u32 = 20;
    pub(super) const INT2: u32 = 21;
    pub(super) const INT4: u32 = 23;
    pub(super) const OID: u32 = 26;
    pub(super) const JSON: u32 = 114;
    pub(super) const FLOAT4: u32 = 700;
    pub(super) const FLOAT8: u32 = 701;
    pub(super) const DATE: u32 = 1082;
    pub(super) const TIME: u32 = 1083;
    pub(super) const TIMESTAMP: u32 = 1114;
    pub(super) const TIMETZ: u32 = 1266;
    pub(super) const TIMESTAMPTZ: u32 = 1184;
    pub(super) const INTERVAL: u32 = 1186;
    pub(super) const NUMERIC: u32 = 1700;
    pub(super) const UUID: u32 = 2950;
    pub(super) const JSONB: u32 = 3802;
}

/// The element type of a built-in array type, if `oid` is one.
fn array_element(type_oid: u32) -> Option<u32> {
    Some(match type_oid {
        1000 => oid::BOOL,
        1001 => oid::BYTEA,
        1005 => oid::INT2,
        1007 => oid::INT4,
        1016 => oid::INT8,
        1028 => oid::OID,
        199 => oid::JSON,
        1021 => oid::FLOAT4,
        1022 => oid::FLOAT8,
        1182 => oid::DATE,
        1183 => oid::TIME,
        1115 => oid::TIMESTAMP,
        1185 => oid::TIMESTAMPTZ,
        1187 => oid::INTERVAL,
        1231 => oid::NUMERIC,
        2951 => oid::UUID,
        3807 => oid::JSONB,
        // text[], varchar[], bpchar[], name[], char[]: strings.
        1009 | 1015 | 1014 | 1003 | 1002 => 25,
        _ => return None,
    })
}

/// A value of type `type_oid` from its text form. What cannot be read as
/// its type (an `infinity` date, a BC year) stays the text PostgreSQL sent.
pub(crate) fn from_text(type_oid: u32, text: &str) -> SqlValue {
    if let Some(element) = array_element(type_oid) {
        return parse_array(text, element).unwrap_or_else(|| SqlValue::Text(text.to_owned()));
    }
    read(type_oid, text).unwrap_or_else(|| SqlValue::Text(text.to_owned()))
}

fn read(type_oid: u32, text: &str) -> Option<SqlValue> {
    // psycopg2 reads PostgreSQL's infinities as Python's largest and smallest.
    let text = match (type_oid, text) {
        (oid::DATE, "infinity") => "9999-12-31",
        (oid::DATE, "-infinity") => "0001-01-01",
        (oid::TIMESTAMP, "infinity") => "9999-12-31 23:59:59.999999",
        (oid::TIMESTAMP, "-infinity") => "0001-01-01 00:00:00",
        _ => text,
    };
    Some(match type_oid {
        oid::BOOL => SqlValue::Bool(text == "t"),
        oid::INT2 | oid::INT4 | oid::INT8 | oid::OID => SqlValue::Integer(text.parse().ok()?),
        oid::FLOAT4 | oid::FLOAT8 => SqlValue::Real(match text {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            _ => text.parse().ok()?,
        }),
        oid::NUMERIC => SqlValue::Decimal(text.to_owned()),
        oid::BYTEA => SqlValue::Blob(hex_bytes(text.strip_prefix("\\x")?)?),
        oid::JSON | oid::JSONB => SqlValue::Json(serde_json::from_str::<Value>(text).ok()?),
        oid::UUID => SqlValue::Other {
            repr: format!("UUID('{text}')"),
            str: text.to_owned(),
        },
        oid::DATE => {
            let (y, m, d) = date(text)?;
            SqlValue::Other {
                repr: format!("datetime.date({y}, {m}, {d})"),
                str: text.to_owned(),
            }
        }
        oid::TIMETZ => {
            let at = text.find(['+', '-'])?;
            let t = time(&text[..at])?;
            let offset = offset_seconds(&text[at..])?;
            SqlValue::Other {
                repr: format!(
                    "datetime.time({}, tzinfo={})",
                    t.repr_args(),
                    timezone_repr(offset)
                ),
                str: format!("{t}{}", offset_str(offset)),
            }
        }
        oid::TIME => {
            let t = time(text)?;
            SqlValue::Other {
                repr: format!("datetime.time({})", t.repr_args()),
                str: t.to_string(),
            }
        }
        oid::TIMESTAMP | oid::TIMESTAMPTZ => {
            let (day, rest) = text.split_once(' ')?;
            let (y, m, d) = date(day)?;
            let (clock, offset) = match rest.find(['+', '-']) {
                Some(at) => (&rest[..at], Some(offset_seconds(&rest[at..])?)),
                None => (rest, None),
            };
            let t = time(clock)?;
            let tz = offset.map_or(String::new(), |s| format!(", tzinfo={}", timezone_repr(s)));
            let tz_str = offset.map_or(String::new(), offset_str);
            SqlValue::Other {
                repr: format!("datetime.datetime({y}, {m}, {d}, {}{tz})", t.repr_args()),
                str: format!("{day} {t}{tz_str}"),
            }
        }
        oid::INTERVAL => {
            let micros = interval_micros(text)?;
            SqlValue::Other {
                repr: timedelta_repr(micros),
                str: timedelta_str(micros),
            }
        }
        _ => return None,
    })
}

fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

fn date(text: &str) -> Option<(i32, u32, u32)> {
    let mut parts = text.splitn(3, '-');
    let y: i32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    (y >= 1 && (1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

/// A time of day as Python's `datetime.time` holds it.
struct Clock {
    h: u32,
    m: u32,
    s: u32,
    us: u32,
}

impl Clock {
    /// The constructor's arguments as Python's `repr` writes them: the
    /// seconds and microseconds only when not zero.
    fn repr_args(&self) -> String {
        let mut out = format!("{}, {}", self.h, self.m);
        if self.s != 0 || self.us != 0 {
            out.push_str(&format!(", {}", self.s));
        }
        if self.us != 0 {
            out.push_str(&format!(", {}", self.us));
        }
        out
    }
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02}:{:02}:{:02}", self.h, self.m, self.s)?;
        if self.us != 0 {
            write!(f, ".{:06}", self.us)?;
        }
        Ok(())
    }
}

fn time(text: &str) -> Option<Clock> {
    let (hms, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut parts = hms.splitn(3, ':');
    let h: u32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let s: u32 = parts.next()?.parse().ok()?;
    let us = fraction_micros(frac)?;
    (h < 24 && m < 60 && s < 60).then_some(Clock { h, m, s, us })
}

/// `.5` → 500000 microseconds.
fn fraction_micros(frac: &str) -> Option<u32> {
    if frac.is_empty() {
        return Some(0);
    }
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    format!("{frac:0<6}").parse().ok()
}

/// `+05:30` → 19800.
fn offset_seconds(text: &str) -> Option<i64> {
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let mut parts = text[1..].split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    let s: i64 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    Some(sign * (h * 3600 + m * 60 + s))
}

fn timezone_repr(seconds: i64) -> String {
    if seconds == 0 {
        "datetime.timezone.utc".to_owned()
    } else {
        format!(
            "datetime.timezone({})",
            timedelta_repr(i128::from(seconds) * 1_000_000)
        )
    }
}

/// Python's `str` of an aware datetime's offset: `+05:30`.
fn offset_str(seconds: i64) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let s = seconds.abs();
    let mut out = format!("{sign}{:02}:{:02}", s / 3600, s % 3600 / 60);
    if s % 60 != 0 {
        out.push_str(&format!(":{:02}", s % 60));
    }
    out
}

/// An interval in PostgreSQL's default output (`1 year 2 mons 3 days
/// 04:05:06.5`, `-00:00:01`) as microseconds, a month counted as 30 days
/// and a year as 365 (psycopg2's reading).
fn interval_micros(text: &str) -> Option<i128> {
    const DAY: i128 = 86_400_000_000;
    let mut total: i128 = 0;
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if word.contains(':') {
            let negative = word.starts_with('-');
            let clock = word.trim_start_matches(['-', '+']);
            let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
            let mut parts = hms.split(':');
            let h: i128 = parts.next()?.parse().ok()?;
            let m: i128 = parts.next()?.parse().ok()?;
            let s: i128 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
            let us = i128::from(fraction_micros(frac)?);
            let micros = ((h * 60 + m) * 60 + s) * 1_000_000 + us;
            total += if negative { -micros } else { micros };
            continue;
        }
        let n: i128 = word.parse().ok()?;
        let unit = words.next()?;
        total += n * match unit.trim_end_matches('s') {
            "year" => 365 * DAY,
            "mon" => 30 * DAY,
            "day" => DAY,
            _ => return None,
        };
    }
    Some(total)
}

/// Python's `repr(datetime.timedelta(microseconds=micros))`.
fn timedelta_repr(micros: i128) -> String {
    let (days, seconds, us) = timedelta_parts(micros);
    let mut args = Vec::new();
    if days != 0 {
        args.push(format!("days={days}"));
    }
    if seconds != 0 {
        args.push(format!("seconds={seconds}"));
    }
    if us != 0 {
        args.push(format!("microseconds={us}"));
    }
    if args.is_empty() {
        "datetime.timedelta(0)".to_owned()
    } else {
        format!("datetime.timedelta({})", args.join(", "))
    }
}

/// Python's `str` of a timedelta: `1 day, 2:00:00`, `-1 day, 23:59:59`.
fn timedelta_str(micros: i128) -> String {
    let (days, seconds, us) = timedelta_parts(micros);
    let clock = format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    );
    let clock = if us != 0 {
        format!("{clock}.{us:06}")
    } else {
        clock
    };
    match days {
        0 => clock,
        1 | -1 => format!("{days} day, {clock}"),
        _ => format!("{days} days, {clock}"),
    }
}

/// Days (any sign), seconds (0..86400) and microseconds, as Python normalises.
fn timedelta_parts(micros: i128) -> (i128, i128, i128) {
    let days = micros.div_euclid(86_400_000_000);
    let rest = micros.rem_euclid(86_400_000_000);
    (days, rest / 1_000_000, rest % 1_000_000)
}

/// `{1,2,NULL}`, `{"a b",c}`, `{{1,2},{3,4}}` as a list of `element` values.
fn parse_array(text: &str, element: u32) -> Option<SqlValue> {
    // `[0:1]={...}`: explicit bounds; the values are what matter.
    let text = match text.split_once("]={") {
        Some((_, rest)) if text.starts_with('[') => &text[text.len() - rest.len() - 1..],
        _ => text,
    };
    let mut chars = text.char_indices().peekable();
    let value = array_level(text, &mut chars, element)?;
    chars.next().is_none().then_some(value)
}

fn array_level(
    text: &str,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    element: u32,
) -> Option<SqlValue> {
    if chars.next()?.1 != '{' {
        return None;
    }
    let mut items = Vec::new();
    if chars.peek()?.1 == '}' {
        chars.next();
        return Some(SqlValue::List(items));
    }
    loop {
        match chars.peek()?.1 {
            '{' => items.push(array_level(text, chars, element)?),
            '"' => {
                chars.next();
                let mut item = String::new();
                loop {
                    match chars.next()?.1 {
                        '\\' => item.push(chars.next()?.1),
                        '"' => break,
                        c => item.push(c),
                    }
                }
                items.push(from_element(element, &item));
            }
            _ => {
                let (start, _) = *chars.peek()?;
                let mut end = start;
                while let Some(&(i, c)) = chars.peek() {
                    if c == ',' || c == '}' {
                        break;
                    }
                    end = i + c.len_utf8();
                    chars.next();
                }
                let item = &text[start..end];
                items.push(if item == "NULL" {
                    SqlValue::Null
                } else {
                    from_element(element, item)
                });
            }
        }
        match chars.next()?.1 {
            ',' => continue,
            '}' => return Some(SqlValue::List(items)),
            _ => return None,
        }
    }
}

fn from_element(element: u32, text: &str) -> SqlValue {
    read(element, text).unwrap_or_else(|| SqlValue::Text(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(type_oid: u32, text: &str) -> String {
        from_text(type_oid, text).py_repr()
    }

    #[test]
    fn dates_and_times_print_as_python_does() {
        assert_eq!(repr(oid::DATE, "2024-01-02"), "datetime.date(2024, 1, 2)");
        assert_eq!(
            repr(oid::TIMESTAMP, "2024-01-02 03:04:00"),
            "datetime.datetime(2024, 1, 2, 3, 4)"
        );
        assert_eq!(
            repr(oid::TIMESTAMPTZ, "2024-01-02 03:04:05.12+00"),
            "datetime.datetime(2024, 1, 2, 3, 4, 5, 120000, tzinfo=datetime.timezone.utc)"
        );
        assert_eq!(
            repr(oid::TIMESTAMPTZ, "2024-01-02 03:04:05-03:30"),
            "datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(days=-1, seconds=73800)))"
        );
        assert_eq!(repr(oid::TIME, "00:00:00"), "datetime.time(0, 0)");
        assert_eq!(
            repr(oid::INTERVAL, "1 year 2 mons 3 days 04:05:06.5"),
            "datetime.timedelta(days=428, seconds=14706, microseconds=500000)"
        );
        assert_eq!(
            repr(oid::INTERVAL, "-00:00:01"),
            "datetime.timedelta(days=-1, seconds=86399)"
        );
        assert_eq!(repr(oid::INTERVAL, "00:00:00"), "datetime.timedelta(0)");
        assert_eq!(
            from_text(oid::INTERVAL, "-00:00:01").py_str(),
            "-1 day, 23:59:59"
        );
        assert_eq!(repr(oid::DATE, "infinity"), "datetime.date(9999, 12, 31)");
        assert_eq!(repr(oid::DATE, "2024-13-01"), "'2024-13-01'");
    }

    #[test]
    fn arrays_json_and_the_rest() {
        assert_eq!(repr(1007, "{1,2,NULL}"), "[1, 2, None]");
        assert_eq!(
            repr(1009, r#"{"a b",c,"it's \"q\""}"#),
            r#"['a b', 'c', 'it\'s "q"']"#
        );
        assert_eq!(repr(1007, "{{1,2},{3,4}}"), "[[1, 2], [3, 4]]");
        assert_eq!(repr(1231, "{1.50}"), "[Decimal('1.50')]");
        assert_eq!(repr(1007, "{}"), "[]");
        assert_eq!(
            repr(oid::JSONB, r#"{"a": [1, true, null]}"#),
            "{'a': [1, True, None]}"
        );
        assert_eq!(repr(oid::BYTEA, "\\x00ff"), "b'\\x00\\xff'");
        assert_eq!(repr(oid::BOOL, "f"), "False");
        assert_eq!(repr(oid::FLOAT8, "-Infinity"), "-inf");
        assert_eq!(repr(oid::NUMERIC, "12.50"), "Decimal('12.50')");
        assert_eq!(
            repr(oid::UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            "UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')"
        );
        assert_eq!(repr(869, "127.0.0.1"), "'127.0.0.1'");
    }
}

//! CSV readers: `CSVReader` (Python's `csv` module, header row included) and
//! `PandasCSVReader` (pandas' `read_csv`, the default for `.csv` in LlamaIndex).

use crate::util::{file_name, merged, read_utf8, run_guarded, suffix};
use async_trait::async_trait;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result, float_repr};
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

/// Reads a CSV file with Python's `csv` rules (LlamaIndex `CSVReader`):
/// every row, the header included, as its fields joined with `", "`.
///
/// With `concat_rows` (the default) the rows, joined with `"\n"`, are one
/// document; without it each row is a document (a blank line is an empty
/// row, as Python's `csv.reader` yields it). Metadata: `filename`,
/// `extension`, then the file's metadata. Line endings are read as Python's
/// text mode reads them (`\r\n` and `\r` become `\n`, inside quotes too).
#[derive(Debug, Clone)]
pub struct CSVReader {
    concat_rows: bool,
}

impl Default for CSVReader {
    fn default() -> Self {
        Self { concat_rows: true }
    }
}

impl CSVReader {
    /// A reader that makes one document per file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether all rows form one document (default `true`) or each row its own.
    pub fn concat_rows(mut self, concat_rows: bool) -> Self {
        self.concat_rows = concat_rows;
        self
    }
}

#[async_trait]
impl FileReader for CSVReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let concat = self.concat_rows;
        run_guarded(path, move |path| {
            let text = read_utf8(path)?;
            let rows: Vec<String> = python_csv_rows(&text)
                .into_iter()
                .map(|r| r.join(", "))
                .collect();
            let mut meta = Metadata::new();
            meta.insert("filename".into(), Value::String(file_name(path)));
            meta.insert("extension".into(), Value::String(suffix(path)));
            let meta = merged(meta, &extra_info);
            Ok(if concat {
                vec![Document::document(rows.join("\n")).with_metadata_map(meta)]
            } else {
                rows.into_iter()
                    .map(|r| Document::document(r).with_metadata_map(meta.clone()))
                    .collect()
            })
        })
        .await
    }
}

/// Reads a CSV file as pandas' `read_csv` with its defaults does (LlamaIndex
/// `PandasCSVReader`, the reader LlamaIndex's `SimpleDirectoryReader` uses
/// for `.csv`): the first row is the header and is left out; each row is its
/// values as strings joined with `col_joiner` (`", "`); with `concat_rows`
/// (the default) rows are joined with `row_joiner` (`"\n"`) into one
/// document, else each row is a document. Metadata is the file's alone.
///
/// Values are spelled as pandas spells them after its type inference: a
/// column whose values are all integers prints them as integers, a numeric
/// column with a float or a missing value prints floats as Python does
/// (`2.0`, `1e-07`, `nan`), `True`/`true`/`TRUE` columns print `True`, other
/// columns print the text as written and missing values as `nan`. As in
/// pandas, a row made of integer and float columns is printed as floats
/// (`1.0, 2.5`). Blank lines are skipped, a UTF-8 byte order mark is
/// dropped, and a first data row with one field more than the header makes
/// the first column the index (left out), as pandas does.
///
/// Floats are parsed with pandas' own rounding (its `precise_xstrtod`, which
/// keeps 17 significant digits), so long numbers print as pandas prints them.
///
/// Not reproduced: `pandas_config` (pandas' other `read_csv` options),
/// separator sniffing, and some columns holding integers beyond the signed
/// 64-bit range, where pandas' choice (unsigned, float or text) depends on
/// the order of the values; the common cases (a lone unsigned column, a
/// first value too large for any integer type) match. A row with more
/// fields than the header is an [`Error::CorruptFile`], as pandas' "Error
/// tokenizing data" is.
#[derive(Debug, Clone)]
pub struct PandasCSVReader {
    concat_rows: bool,
    col_joiner: String,
    row_joiner: String,
}

impl Default for PandasCSVReader {
    fn default() -> Self {
        Self {
            concat_rows: true,
            col_joiner: ", ".into(),
            row_joiner: "\n".into(),
        }
    }
}

impl PandasCSVReader {
    /// LlamaIndex's defaults: one document, `", "` between values, `"\n"` between rows.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether all rows form one document (default `true`) or each row its own.
    pub fn concat_rows(mut self, concat_rows: bool) -> Self {
        self.concat_rows = concat_rows;
        self
    }

    /// The separator between a row's values (default `", "`).
    pub fn col_joiner(mut self, col_joiner: impl Into<String>) -> Self {
        self.col_joiner = col_joiner.into();
        self
    }

    /// The separator between rows when `concat_rows` (default `"\n"`).
    pub fn row_joiner(mut self, row_joiner: impl Into<String>) -> Self {
        self.row_joiner = row_joiner.into();
        self
    }
}

#[async_trait]
impl FileReader for PandasCSVReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let this = self.clone();
        run_guarded(path, move |path| {
            let text = read_utf8(path)?;
            let rows = pandas_rows(path, &text, &this.col_joiner)?;
            Ok(if this.concat_rows {
                vec![Document::document(rows.join(&this.row_joiner)).with_metadata_map(extra_info)]
            } else {
                rows.into_iter()
                    .map(|r| Document::document(r).with_metadata_map(extra_info.clone()))
                    .collect()
            })
        })
        .await
    }
}

// ---------------------------------------------------------------------------
// Python's csv module (excel dialect, strict=False) over text-mode input.

#[derive(Clone, Copy, PartialEq)]
enum PyState {
    StartRecord,
    StartField,
    InField,
    InQuoted,
    QuoteInQuoted,
    EatNewline,
}

/// The records `csv.reader(open(file))` yields. The text is first given
/// universal newlines as Python's text mode does; then each line is run
/// through CPython's reader states followed by an end-of-line step, which is
/// where records end (a newline inside quotes keeps the record open).
pub(crate) fn python_csv_rows(text: &str) -> Vec<Vec<String>> {
    let text = if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_string()
    };
    // Every byte the reader looks for is ASCII, so slicing the text at
    // them never splits a character.
    let s = text.as_str();
    let b = s.as_bytes();
    let mut rows = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut state = PyState::StartRecord;
    let mut pos = 0;
    while pos < b.len() {
        let end = b[pos..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |k| pos + k + 1);
        let line = &s[pos..end];
        // Most lines hold no quote: their fields are the text between commas.
        if state == PyState::StartRecord && !line.contains('"') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            rows.push(if body.is_empty() {
                Vec::new()
            } else {
                body.split(',').map(str::to_string).collect()
            });
            pos = end;
            continue;
        }
        let mut i = pos;
        while i < end {
            match state {
                PyState::StartRecord => {
                    if b[i] == b'\n' {
                        state = PyState::EatNewline;
                        i += 1;
                    } else {
                        state = PyState::StartField;
                    }
                }
                PyState::StartField => match b[i] {
                    b'\n' => {
                        fields.push(std::mem::take(&mut field));
                        state = PyState::EatNewline;
                        i += 1;
                    }
                    b'"' => {
                        state = PyState::InQuoted;
                        i += 1;
                    }
                    b',' => {
                        fields.push(String::new());
                        i += 1;
                    }
                    // Any other character starts the field's text.
                    _ => state = PyState::InField,
                },
                PyState::InField => {
                    let k = b[i..end]
                        .iter()
                        .position(|&c| c == b',' || c == b'\n')
                        .unwrap_or(end - i);
                    field.push_str(&s[i..i + k]);
                    i += k;
                    if i < end {
                        fields.push(std::mem::take(&mut field));
                        state = if b[i] == b',' {
                            PyState::StartField
                        } else {
                            PyState::EatNewline
                        };
                        i += 1;
                    }
                }
                PyState::InQuoted => match b[i..end].iter().position(|&c| c == b'"') {
                    Some(k) => {
                        field.push_str(&s[i..i + k]);
                        i += k + 1;
                        state = PyState::QuoteInQuoted;
                    }
                    None => {
                        field.push_str(&s[i..end]);
                        i = end;
                    }
                },
                PyState::QuoteInQuoted => match b[i] {
                    b'"' => {
                        field.push('"');
                        state = PyState::InQuoted;
                        i += 1;
                    }
                    b',' => {
                        fields.push(std::mem::take(&mut field));
                        state = PyState::StartField;
                        i += 1;
                    }
                    b'\n' => {
                        fields.push(std::mem::take(&mut field));
                        state = PyState::EatNewline;
                        i += 1;
                    }
                    // Text after a closing quote joins the field (not strict).
                    _ => state = PyState::InField,
                },
                // After universal newlines, a line's only newline is its last byte.
                PyState::EatNewline => i += 1,
            }
        }
        // The end-of-line step.
        match state {
            PyState::InQuoted => {}
            PyState::StartRecord | PyState::EatNewline => {
                rows.push(std::mem::take(&mut fields));
                state = PyState::StartRecord;
            }
            PyState::StartField | PyState::InField | PyState::QuoteInQuoted => {
                fields.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut fields));
                state = PyState::StartRecord;
            }
        }
        pos = end;
    }
    // End of input inside a quoted field: Python (not strict) keeps what it has.
    if state == PyState::InQuoted || !field.is_empty() {
        fields.push(field);
        rows.push(fields);
    }
    rows
}

// ---------------------------------------------------------------------------
// pandas' C tokenizer and type inference, for the defaults LlamaIndex uses.

/// The records pandas' tokenizer makes of `text`: `\n`, `\r` and `\r\n`
/// end records outside quotes, and kept verbatim inside them; lines that
/// are empty or only spaces and tabs are skipped.
pub(crate) fn pandas_records(path: &Path, text: &str) -> Result<Vec<Vec<String>>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Every byte the tokenizer looks for is ASCII, so slicing the text at
    // them never splits a character.
    let bytes = text.as_bytes();
    let mut records = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut i = 0;
    let is_eol = |b: u8| b == b'\n' || b == b'\r';
    // Consumes a line terminator at `i` (`\r\n` counts as one).
    let skip_eol = |i: usize| -> usize {
        if bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        }
    };
    while i < bytes.len() {
        // Start of a record: skip blank and whitespace-only lines.
        let mut j = i;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        if j == bytes.len() {
            break;
        }
        if is_eol(bytes[j]) {
            i = skip_eol(j);
            continue;
        }
        // One record, field by field.
        loop {
            let mut field = String::new();
            if bytes.get(i) == Some(&b'"') {
                i += 1;
                loop {
                    let Some(k) = bytes[i..].iter().position(|&b| b == b'"') else {
                        return Err(Error::corrupt(
                            path,
                            format!(
                                "end of file inside a quoted field of row {}",
                                records.len() + 1
                            ),
                        ));
                    };
                    field.push_str(&text[i..i + k]);
                    i += k + 1;
                    if bytes.get(i) == Some(&b'"') {
                        field.push('"');
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            // Unquoted text, or what follows a closing quote, up to the next
            // delimiter or line end.
            let k = bytes[i..]
                .iter()
                .position(|&b| b == b',' || is_eol(b))
                .unwrap_or(bytes.len() - i);
            field.push_str(&text[i..i + k]);
            i += k;
            fields.push(field);
            match bytes.get(i) {
                Some(b',') => {
                    i += 1;
                    continue;
                }
                Some(_) => {
                    i = skip_eol(i);
                    break;
                }
                None => break,
            }
        }
        records.push(std::mem::take(&mut fields));
    }
    Ok(records)
}

/// The strings pandas treats as missing by default (`na_values`).
const NA_VALUES: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Int,
    /// Integers with gaps: pandas reads them as integers, then makes the
    /// column float (so `-0` prints `0.0`, where a float column has `-0.0`).
    IntWithGaps,
    /// Integers beyond `i64` that fit `u64`, with no gaps.
    UInt,
    Float,
    Bool,
    Object,
}

#[derive(Clone, Debug)]
enum Cell {
    Missing,
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(String),
}

/// The bytes C's `isspace` accepts, which pandas skips around numbers.
const C_SPACE: [char; 6] = [' ', '\t', '\n', '\u{b}', '\u{c}', '\r'];

/// A field pandas reads as an integer (sign and digits, spaces around):
/// `Some(Some(value))`, or `Some(None)` when too large even for `i128`.
fn int_like(s: &str) -> Option<Option<i128>> {
    let t = s.trim_matches(C_SPACE);
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.bytes().try_fold(0i128, |n, b| {
        n.checked_mul(10)?.checked_add(i128::from(b - b'0'))
    });
    Some(magnitude.map(|m| if negative { -m } else { m }))
}

fn fits_i64(v: i128) -> bool {
    i128::from(i64::MIN) <= v && v <= i128::from(i64::MAX)
}

fn fits_u64(v: i128) -> bool {
    0 <= v && v <= i128::from(u64::MAX)
}

/// `10^n` as the C literal `1en` is, for `n` in `0..=308`.
fn power_of_ten(n: usize) -> f64 {
    static TABLE: LazyLock<Vec<f64>> = LazyLock::new(|| {
        (0..=308)
            .map(|n| format!("1e{n}").parse().unwrap_or(f64::INFINITY))
            .collect()
    });
    TABLE.get(n).copied().unwrap_or(f64::INFINITY)
}

/// pandas' default float parser (`precise_xstrtod`), reproduced for its
/// rounding: at most 17 significant digits are accumulated in a double,
/// then scaled by a power of ten, so long numbers round as pandas rounds
/// them (`9223372036854775807` gives `9.223372036854778e+18`). Numbers
/// beyond the double range are not floats to pandas (the column stays text).
fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim_matches(C_SPACE);
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity") {
        return Some(if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    const MAX_DIGITS: u32 = 17;
    let bytes = t.as_bytes();
    let mut i = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut number = 0f64;
    let mut exponent: i64 = 0;
    let mut digits = 0u32;
    while let Some(d) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
        if digits < MAX_DIGITS {
            number = number * 10.0 + f64::from(d - b'0');
            digits += 1;
        } else {
            exponent += 1;
        }
        i += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let mut decimals = 0;
        while let Some(d) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            if digits < MAX_DIGITS {
                number = number * 10.0 + f64::from(d - b'0');
                digits += 1;
                decimals += 1;
            }
            i += 1;
        }
        exponent -= decimals;
    }
    if digits == 0 {
        return None;
    }
    if negative {
        number = -number;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let exp_negative = match bytes.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut n: i64 = 0;
        while let Some(d) = bytes.get(j).filter(|b| b.is_ascii_digit()) {
            n = n.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            j += 1;
        }
        // "1e" or "1e+" leave the `e` unread, so the field is not a number.
        if j > start {
            exponent = exponent.saturating_add(if exp_negative { -n } else { n });
            i = j;
        }
    }
    if i != bytes.len() {
        return None;
    }
    let value = if exponent > 308 {
        return None;
    } else if exponent > 0 {
        number * power_of_ten(exponent as usize)
    } else if exponent < -308 {
        if exponent < -616 {
            0.0 * number.signum()
        } else {
            number / power_of_ten((-308 - exponent) as usize) / power_of_ten(308)
        }
    } else {
        number / power_of_ten((-exponent) as usize)
    };
    value.is_finite().then_some(value)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "True" | "TRUE" | "true" => Some(true),
        "False" | "FALSE" | "false" => Some(false),
        _ => None,
    }
}

/// pandas' inferred type of one column, from its raw values.
fn column_kind(values: &[Option<&str>]) -> Kind {
    let present: Vec<&str> = values.iter().flatten().copied().collect();
    let any_missing = present.len() < values.len();
    if present.is_empty() {
        return Kind::Float;
    }
    let ints: Vec<Option<Option<i128>>> = present.iter().map(|v| int_like(v)).collect();
    if ints.iter().all(Option::is_some) {
        let values: Vec<Option<i128>> = ints.into_iter().flatten().collect();
        if values.iter().all(|v| v.is_some_and(fits_i64)) {
            return if any_missing {
                Kind::IntWithGaps
            } else {
                Kind::Int
            };
        }
        if !any_missing && values.iter().all(|v| v.is_some_and(fits_u64)) {
            return Kind::UInt;
        }
        return Kind::Object;
    }
    // An integer too large for 64 bits keeps the whole column as text.
    if ints
        .iter()
        .flatten()
        .any(|v| !v.is_some_and(|v| fits_i64(v) || fits_u64(v)))
    {
        return Kind::Object;
    }
    if present.iter().all(|v| parse_float(v).is_some()) {
        return Kind::Float;
    }
    if !any_missing && present.iter().all(|v| parse_bool(v).is_some()) {
        return Kind::Bool;
    }
    Kind::Object
}

fn cell(kind: Kind, raw: Option<&str>) -> Cell {
    let int = |v: &str| int_like(v).flatten();
    match (kind, raw) {
        (Kind::IntWithGaps, Some(v)) => int(v).map_or(Cell::Missing, |i| Cell::Float(i as f64)),
        (Kind::Int | Kind::UInt, Some(v)) => int(v).map_or(Cell::Missing, Cell::Int),
        (Kind::Float, Some(v)) => parse_float(v).map_or(Cell::Missing, Cell::Float),
        (Kind::Bool, Some(v)) => parse_bool(v).map_or(Cell::Missing, Cell::Bool),
        (Kind::Object, Some(v)) => Cell::Text(v.to_string()),
        (_, None) => Cell::Missing,
    }
}

/// The text of each row as `PandasCSVReader` makes it.
pub(crate) fn pandas_rows(path: &Path, text: &str, col_joiner: &str) -> Result<Vec<String>> {
    let mut records = pandas_records(path, text)?.into_iter();
    let Some(header) = records.next() else {
        return Err(Error::corrupt(
            path,
            "no columns to parse from the file (it is empty)",
        ));
    };
    let ncols = header.len();
    let data: Vec<Vec<String>> = records.collect();
    // pandas takes the first column as the index when the first data row
    // has exactly one field more than the header.
    let index_col = data.first().is_some_and(|r| r.len() == ncols + 1);
    let width = if index_col { ncols + 1 } else { ncols };
    for (i, row) in data.iter().enumerate() {
        if row.len() > width {
            return Err(Error::corrupt(
                path,
                format!(
                    "line {} has {} fields, the header has {width}",
                    i + 2,
                    row.len()
                ),
            ));
        }
    }
    let skip = usize::from(index_col);
    fn raw(row: &[String], c: usize) -> Option<&str> {
        row.get(c)
            .map(String::as_str)
            .filter(|v| !NA_VALUES.contains(v))
    }
    let kinds: Vec<Kind> = (0..ncols)
        .map(|c| {
            let values: Vec<Option<&str>> = data.iter().map(|r| raw(r, c + skip)).collect();
            let kind = column_kind(&values);
            // A column of booleans with gaps is object-typed but holds bools.
            if kind == Kind::Object
                && values.iter().flatten().all(|v| parse_bool(v).is_some())
                && values.iter().any(Option::is_some)
            {
                return Kind::Bool;
            }
            kind
        })
        .collect();
    // The type each row takes when pandas makes a Series of it.
    // numpy's promotion: int64 with uint64 gives float64.
    let row_kind =
        if kinds.iter().all(|k| *k == Kind::Int) || kinds.iter().all(|k| *k == Kind::UInt) {
            Kind::Int
        } else if kinds
            .iter()
            .all(|k| matches!(k, Kind::Int | Kind::UInt | Kind::IntWithGaps | Kind::Float))
        {
            Kind::Float
        } else {
            Kind::Object
        };
    Ok(data
        .iter()
        .map(|row| {
            let mut line = String::new();
            for (c, kind) in kinds.iter().enumerate() {
                if c > 0 {
                    line.push_str(col_joiner);
                }
                line.push_str(&spell(&cell(*kind, raw(row, c + skip)), row_kind));
            }
            line
        })
        .collect())
}

/// A value as `str()` prints it within a row of type `row_kind`.
fn spell(cell: &Cell, row_kind: Kind) -> String {
    match cell {
        Cell::Missing => "nan".to_string(),
        Cell::Int(i) if row_kind == Kind::Float => float_repr(*i as f64),
        Cell::Int(i) => i.to_string(),
        Cell::Float(f) => float_repr(*f),
        Cell::Bool(true) => "True".to_string(),
        Cell::Bool(false) => "False".to_string(),
        Cell::Text(t) => t.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(text: &str) -> Vec<String> {
        python_csv_rows(text)
            .into_iter()
            .map(|r| r.join("|"))
            .collect()
    }

    #[test]
    fn python_csv_quotes_and_blank_lines() {
        assert_eq!(py("a,b\n\nc,\"d,e\"\n"), ["a|b", "", "c|d,e"]);
        assert_eq!(py("\"ab\"cd,e"), ["abcd|e"]);
        assert_eq!(py("a\"b,c\n"), ["a\"b|c"]);
        assert_eq!(py("x,\"multi\nline\",y\n"), ["x|multi\nline|y"]);
        assert_eq!(py("x,\"open\n"), ["x|open\n"]);
        assert_eq!(py("a,\n"), ["a|"]);
        assert_eq!(py("a\r\nb\rc"), ["a", "b", "c"]);
    }

    fn pd(text: &str) -> Vec<String> {
        pandas_rows(Path::new("t.csv"), text, ", ").unwrap_or_else(|e| vec![format!("ERR {e}")])
    }

    #[test]
    fn pandas_matches_recorded_edge_cases() {
        // Each expectation was printed by pandas 2.3.3 (see gen_expected.py).
        assert_eq!(pd("a,b\n 5,6 \n7,8\n"), ["5, 6", "7, 8"]);
        assert_eq!(pd("a,b\ninf,-Infinity\nINF,1\n"), ["inf, -inf", "inf, 1.0"]);
        assert_eq!(
            pd("a,b\nNA,1\nnull,2\nNone,3\n"),
            ["nan, 1.0", "nan, 2.0", "nan, 3.0"]
        );
        assert_eq!(pd("a,b\n   \n1,2\n\t\n3,4\n"), ["1, 2", "3, 4"]);
        assert_eq!(pd("a,b\n1,2,3\n4,5\n"), ["2.0, 3.0", "5.0, nan"]);
        assert_eq!(pd("a,b\n1\n4,5\n"), ["1.0, nan", "4.0, 5.0"]);
        assert!(pd("a,b\n").is_empty());
        assert!(pd("")[0].starts_with("ERR"));
        assert_eq!(pd("a,b\nTrue,1\n,2\n"), ["True, 1", "nan, 2"]);
        assert_eq!(pd("a,b\nTrue,x\nyes,2\n"), ["True, x", "yes, 2"]);
        assert_eq!(pd("a,b\n1.5,True\n2,False\n"), ["1.5, True", "2.0, False"]);
        assert_eq!(pd("a,b\n1,True\n"), ["1, True"]);
        assert_eq!(pd("\u{feff}a,b\n1,2\n"), ["1, 2"]);
        assert_eq!(pd("a,b\n1_000,2\n0x10,3\n"), ["1_000, 2", "0x10, 3"]);
        assert_eq!(pd("a,b\n1.,2\n.5,3\n"), ["1.0, 2.0", "0.5, 3.0"]);
        assert_eq!(pd("a,b\n1e400,2\n"), ["1e400, 2"]);
        assert_eq!(pd("a\n1\n2.0\n"), ["1.0", "2.0"]);
        assert_eq!(pd("a,b\n\"1\",\"x\"\n"), ["1, x"]);
        assert_eq!(pd("a,b\n1,2\r3,4\r"), ["1, 2", "3, 4"]);
        assert_eq!(pd("a,b\n\"ab\"cd,e\n"), ["abcd, e"]);
        assert_eq!(pd("a,b\n nan,1\n"), [" nan, 1"]);
        assert_eq!(pd("a,b\n1e5,1\n"), ["100000.0, 1.0"]);
        assert_eq!(pd("a,b\n-0,1\n+0.0,1\n"), ["-0.0, 1.0", "0.0, 1.0"]);
        assert_eq!(
            pd("a,b\n12345678901234567,1.5\n"),
            ["1.2345678901234568e+16, 1.5"]
        );
        assert_eq!(pd("a,b\n1,x\n,y\n"), ["1.0, x", "nan, y"]);
        assert_eq!(pd("a,b\n1,\n2,\n"), ["1.0, nan", "2.0, nan"]);
        assert_eq!(pd("a,b\n1, \n2,\n"), ["1,  ", "2, nan"]);
        assert!(pd("a,b\n1,2\n3,4,5,6\n")[0].starts_with("ERR"));
        // pandas' own float rounding and 64-bit integer limits.
        assert_eq!(
            pd("a\n9223372036854775807\n1.5\n"),
            ["9.223372036854778e+18", "1.5"]
        );
        assert_eq!(
            pd("a\n9223372036854775807\nNA\n"),
            ["9.223372036854776e+18", "nan"]
        );
        assert_eq!(pd("a\n0.1234567890123456789\n"), ["0.1234567890123456"]);
        assert_eq!(
            pd("a\n123456789.123456789\n3.14159265358979323846\n"),
            ["123456789.12345678", "3.1415926535897927"]
        );
        assert_eq!(
            pd("a\n1e-310\n1e-320\n1e-330\n"),
            ["1e-310", "1e-320", "0.0"]
        );
        assert_eq!(pd("a\n1e308\n1.5e308\n"), ["1e+308", "1.5e+308"]);
        assert_eq!(pd("a\n-0\nNA\n"), ["0.0", "nan"]);
        assert_eq!(pd("a\n-0\n1.5\n"), ["-0.0", "1.5"]);
        assert_eq!(
            pd("a,b\n18446744073709551615,x\n"),
            ["18446744073709551615, x"]
        );
        assert_eq!(
            pd("a\n18446744073709551615\n-1\n"),
            ["18446744073709551615", "-1"]
        );
        assert_eq!(
            pd("a\n18446744073709551615\n1.5\n"),
            ["1.8446744073709552e+19", "1.5"]
        );
        assert_eq!(
            pd("a\n123456789012345678901234567890\n1.5\n"),
            ["123456789012345678901234567890", "1.5"]
        );
        assert_eq!(pd("a\n1e\n"), ["1e"]);
        assert_eq!(pd("a\n1e+\n2\n"), ["1e+", "2"]);
        assert_eq!(pd("a\n.\n"), ["."]);
        assert_eq!(pd("a\n-.5\n"), ["-0.5"]);
        assert_eq!(pd("a\n+inf\nInfinity\n-INF\n"), ["inf", "inf", "-inf"]);
        assert_eq!(pd("a\nnan\nNAN\n1\n"), ["nan", "NAN", "1"]);
    }
}

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
/// Rows are joined as they are read: memory is the file, its text and the
/// longest row.
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
            let mut meta = Metadata::new();
            meta.insert("filename".into(), Value::String(file_name(path)));
            meta.insert("extension".into(), Value::String(suffix(path)));
            let mut docs = RowDocs::new(concat, "\n", merged(meta, &extra_info));
            python_csv_rows(&text, |row| docs.push(row));
            Ok(docs.finish())
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
///
/// The text is read twice: first for each column's type (a few flags per
/// column), then to spell each row, so memory is the file, its text and
/// the longest row.
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
            let mut docs = RowDocs::new(this.concat_rows, &this.row_joiner, extra_info);
            pandas_rows(path, &text, &this.col_joiner, |row| docs.push(row))?;
            Ok(docs.finish())
        })
        .await
    }
}

// ---------------------------------------------------------------------------
// Rows as they are read: the readers hold the text, one row's fields in a
// reused buffer and what they extract, never a `String` per field or row.

/// Gathers the rows a reader makes into its documents: one document of the
/// rows joined, or a document per row.
struct RowDocs<'a> {
    concat: bool,
    joiner: &'a str,
    meta: Metadata,
    text: String,
    rows: usize,
    docs: Vec<Document>,
}

impl<'a> RowDocs<'a> {
    fn new(concat: bool, joiner: &'a str, meta: Metadata) -> Self {
        Self {
            concat,
            joiner,
            meta,
            text: String::new(),
            rows: 0,
            docs: Vec::new(),
        }
    }

    fn push(&mut self, row: &str) {
        if !self.concat {
            self.docs
                .push(Document::document(row).with_metadata_map(self.meta.clone()));
            return;
        }
        if self.rows > 0 {
            self.text.push_str(self.joiner);
        }
        self.text.push_str(row);
        self.rows += 1;
    }

    fn finish(mut self) -> Vec<Document> {
        if self.concat {
            self.docs
                .push(Document::document(self.text).with_metadata_map(self.meta));
        }
        self.docs
    }
}

// ---------------------------------------------------------------------------
// Python's csv module (excel dialect, strict=False) over text-mode input.

/// What the record readers give, in order: each field of a record, then
/// its end.
#[derive(Debug, PartialEq)]
pub(crate) enum Csv<'a> {
    Field(&'a str),
    End,
}

#[derive(Clone, Copy, PartialEq)]
enum PyState {
    StartRecord,
    StartField,
    InField,
    InQuoted,
    QuoteInQuoted,
}

/// Each row of `csv.reader(open(file))`, its fields joined with `", "` as
/// `CSVReader` joins them.
pub(crate) fn python_csv_rows(text: &str, mut on_row: impl FnMut(&str)) {
    let mut row = String::new();
    let mut fields = 0;
    python_csv_records(text, |event| match event {
        Csv::Field(field) => {
            if fields > 0 {
                row.push_str(", ");
            }
            row.push_str(field);
            fields += 1;
        }
        Csv::End => {
            on_row(&row);
            row.clear();
            fields = 0;
        }
    });
}

/// The records `csv.reader(open(file))` yields. Lines end as Python's text
/// mode ends them (`\n`, `\r\n`, `\r`, each read as `\n`); each line is run
/// through CPython's reader states followed by an end-of-line step, which
/// is where records end (a newline inside quotes keeps the record open).
pub(crate) fn python_csv_records(text: &str, mut on: impl FnMut(Csv<'_>)) {
    // A quoted field can span lines: it is gathered here.
    let mut field = String::new();
    let mut state = PyState::StartRecord;
    for (line, newline) in text_lines(text) {
        // Most lines hold no quote: their fields are the text between commas.
        if state == PyState::StartRecord && !line.contains('"') {
            if !line.is_empty() {
                line.split(',').for_each(|f| on(Csv::Field(f)));
            }
            on(Csv::End);
            continue;
        }
        state = python_csv_line(line, state, &mut field, &mut on);
        // The end-of-line step.
        match state {
            PyState::InQuoted => {
                if newline {
                    field.push('\n');
                }
            }
            PyState::StartRecord => on(Csv::End),
            PyState::StartField | PyState::InField | PyState::QuoteInQuoted => {
                on(Csv::Field(&field));
                field.clear();
                on(Csv::End);
                state = PyState::StartRecord;
            }
        }
    }
    // End of input inside a quoted field: Python (not strict) keeps what it has.
    if state == PyState::InQuoted {
        on(Csv::Field(&field));
        on(Csv::End);
    }
}

/// The lines of `text` without their ends, and whether each had one: the
/// lines Python's universal newlines make.
fn text_lines(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let bytes = rest.as_bytes();
        let Some(k) = bytes.iter().position(|&c| c == b'\n' || c == b'\r') else {
            return Some((std::mem::take(&mut rest), false));
        };
        let next = if bytes[k] == b'\r' && bytes.get(k + 1) == Some(&b'\n') {
            k + 2
        } else {
            k + 1
        };
        let line = &rest[..k];
        rest = &rest[next..];
        Some((line, true))
    })
}

/// CPython's reader states over one line (without its end), from `state`;
/// the state it ends in. Every byte it looks for is ASCII, so slicing the
/// line at them never splits a character.
fn python_csv_line(
    line: &str,
    mut state: PyState,
    field: &mut String,
    on: &mut impl FnMut(Csv<'_>),
) -> PyState {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match state {
            PyState::StartRecord => state = PyState::StartField,
            PyState::StartField => match b[i] {
                b'"' => {
                    state = PyState::InQuoted;
                    i += 1;
                }
                b',' => {
                    on(Csv::Field(""));
                    i += 1;
                }
                // Any other character starts the field's text.
                _ => state = PyState::InField,
            },
            PyState::InField => {
                let k = b[i..]
                    .iter()
                    .position(|&c| c == b',')
                    .unwrap_or(b.len() - i);
                field.push_str(&line[i..i + k]);
                i += k;
                if i < b.len() {
                    on(Csv::Field(field));
                    field.clear();
                    state = PyState::StartField;
                    i += 1;
                }
            }
            PyState::InQuoted => match b[i..].iter().position(|&c| c == b'"') {
                Some(k) => {
                    field.push_str(&line[i..i + k]);
                    i += k + 1;
                    state = PyState::QuoteInQuoted;
                }
                None => {
                    field.push_str(&line[i..]);
                    i = b.len();
                }
            },
            PyState::QuoteInQuoted => match b[i] {
                b'"' => {
                    field.push('"');
                    state = PyState::InQuoted;
                    i += 1;
                }
                b',' => {
                    on(Csv::Field(field));
                    field.clear();
                    state = PyState::StartField;
                    i += 1;
                }
                // Text after a closing quote joins the field (not strict).
                _ => state = PyState::InField,
            },
        }
    }
    state
}

// ---------------------------------------------------------------------------
// pandas' C tokenizer and type inference, for the defaults LlamaIndex uses.

/// pandas' tokenizer over `text`, a record at a time: `\n`, `\r` and
/// `\r\n` end records outside quotes, and are kept verbatim inside them;
/// lines that are empty or only spaces and tabs are skipped. Cloning it
/// looks ahead.
#[derive(Clone)]
struct PandasRecords<'a> {
    text: &'a str,
    pos: usize,
    /// Records read so far, for errors.
    records: usize,
    /// A quoted field's text, unescaped (empty between fields).
    field: String,
}

impl<'a> PandasRecords<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.strip_prefix('\u{feff}').unwrap_or(text),
            pos: 0,
            records: 0,
            field: String::new(),
        }
    }

    /// Gives the next record's fields to `on_field`; `false` at the end of
    /// the text. Every byte the tokenizer looks for is ASCII, so slicing
    /// the text at them never splits a character.
    fn next(&mut self, path: &Path, mut on_field: impl FnMut(&str)) -> Result<bool> {
        if !self.skip_blank_lines() {
            return Ok(false);
        }
        let text = self.text;
        let bytes = text.as_bytes();
        let mut i = self.pos;
        loop {
            let quoted = bytes.get(i) == Some(&b'"');
            if quoted {
                i = self.quoted(path, i + 1)?;
            }
            // Unquoted text, or what follows a closing quote, up to the next
            // delimiter or line end.
            let k = bytes[i..]
                .iter()
                .position(|&b| b == b',' || b == b'\n' || b == b'\r')
                .unwrap_or(bytes.len() - i);
            if quoted {
                self.field.push_str(&text[i..i + k]);
                on_field(&self.field);
                self.field.clear();
            } else {
                on_field(&text[i..i + k]);
            }
            i += k;
            match bytes.get(i) {
                Some(b',') => i += 1,
                Some(_) => {
                    i = self.skip_eol(i);
                    break;
                }
                None => break,
            }
        }
        self.pos = i;
        self.records += 1;
        Ok(true)
    }

    /// Moves past blank and whitespace-only lines; `false` at the end.
    fn skip_blank_lines(&mut self) -> bool {
        let bytes = self.text.as_bytes();
        loop {
            let mut j = self.pos;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            match bytes.get(j) {
                None => return false,
                Some(b'\n' | b'\r') => self.pos = self.skip_eol(j),
                // The record starts at its spaces, which are field text.
                Some(_) => return true,
            }
        }
    }

    /// Past the line terminator at `i` (`\r\n` counts as one).
    fn skip_eol(&self, i: usize) -> usize {
        let bytes = self.text.as_bytes();
        if bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        }
    }

    /// Reads a quoted field's text from `i` (after its opening quote) into
    /// `self.field`, `""` as `"`; returns where its closing quote ends.
    fn quoted(&mut self, path: &Path, mut i: usize) -> Result<usize> {
        let text = self.text;
        let bytes = text.as_bytes();
        loop {
            let Some(k) = bytes[i..].iter().position(|&b| b == b'"') else {
                return Err(Error::corrupt(
                    path,
                    format!(
                        "end of file inside a quoted field of row {}",
                        self.records + 1
                    ),
                ));
            };
            self.field.push_str(&text[i..i + k]);
            i += k + 1;
            if bytes.get(i) != Some(&b'"') {
                return Ok(i);
            }
            self.field.push('"');
            i += 1;
        }
    }
}

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
enum Cell<'a> {
    Missing,
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(&'a str),
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

/// What a first pass over the data sees of one column's values, enough
/// for pandas' type inference without holding them.
#[derive(Clone, Copy, Default)]
struct ColumnSeen {
    present: bool,
    missing: bool,
    non_int: bool,
    /// An integer outside `i64`, `u64`, or both (or `i128`: both).
    int_not_i64: bool,
    int_not_u64: bool,
    int_too_large: bool,
    non_float: bool,
    non_bool: bool,
}

impl ColumnSeen {
    fn see(&mut self, raw: Option<&str>) {
        let Some(v) = raw else {
            self.missing = true;
            return;
        };
        self.present = true;
        match int_like(v) {
            None => self.non_int = true,
            Some(n) => {
                let in_i64 = n.is_some_and(fits_i64);
                let in_u64 = n.is_some_and(fits_u64);
                self.int_not_i64 |= !in_i64;
                self.int_not_u64 |= !in_u64;
                self.int_too_large |= !in_i64 && !in_u64;
            }
        }
        // A column known not to be numeric needs no more float parsing.
        if !self.non_float && parse_float(v).is_none() {
            self.non_float = true;
        }
        self.non_bool |= parse_bool(v).is_none();
    }

    /// pandas' inferred type of the column.
    fn kind(&self) -> Kind {
        if !self.present {
            return Kind::Float;
        }
        let kind = if !self.non_int {
            if !self.int_not_i64 {
                if self.missing {
                    Kind::IntWithGaps
                } else {
                    Kind::Int
                }
            } else if !self.missing && !self.int_not_u64 {
                Kind::UInt
            } else {
                Kind::Object
            }
        } else if self.int_too_large {
            // An integer too large for 64 bits keeps the whole column as text.
            Kind::Object
        } else if !self.non_float {
            Kind::Float
        } else if !self.missing && !self.non_bool {
            Kind::Bool
        } else {
            Kind::Object
        };
        // A column of booleans with gaps is object-typed but holds bools.
        if kind == Kind::Object && !self.non_bool {
            Kind::Bool
        } else {
            kind
        }
    }
}

/// A field's value, `None` when pandas reads it as missing.
fn present(v: &str) -> Option<&str> {
    (!NA_VALUES.contains(&v)).then_some(v)
}

fn cell(kind: Kind, raw: Option<&str>) -> Cell<'_> {
    let int = |v: &str| int_like(v).flatten();
    match (kind, raw) {
        (Kind::IntWithGaps, Some(v)) => int(v).map_or(Cell::Missing, |i| Cell::Float(i as f64)),
        (Kind::Int | Kind::UInt, Some(v)) => int(v).map_or(Cell::Missing, Cell::Int),
        (Kind::Float, Some(v)) => parse_float(v).map_or(Cell::Missing, Cell::Float),
        (Kind::Bool, Some(v)) => parse_bool(v).map_or(Cell::Missing, Cell::Bool),
        (Kind::Object, Some(v)) => Cell::Text(v),
        (_, None) => Cell::Missing,
    }
}

/// What the first pass learns of the data: the columns' types, and whether
/// the first column is the index.
struct Columns {
    kinds: Vec<Kind>,
    /// The type each row takes when pandas makes a Series of it.
    row_kind: Kind,
    /// Fields left out at the start of each row (1 for an index column).
    skip: usize,
}

/// The first pass: reads every record, checks each row's width and infers
/// each column's type. A tokenizing error is reported before a row too
/// wide, as pandas reads the whole file first.
fn pandas_columns(path: &Path, text: &str) -> Result<Columns> {
    let mut records = PandasRecords::new(text);
    let mut ncols = 0;
    if !records.next(path, |_| ncols += 1)? {
        return Err(Error::corrupt(
            path,
            "no columns to parse from the file (it is empty)",
        ));
    }
    // pandas takes the first column as the index when the first data row
    // has exactly one field more than the header. A tokenizing error here
    // is met again below.
    let mut first = 0;
    let has_data = records.clone().next(path, |_| first += 1).unwrap_or(false);
    let skip = usize::from(has_data && first == ncols + 1);
    let width = ncols + skip;
    // Only with data, so that a header of many columns costs nothing.
    let mut seen = vec![ColumnSeen::default(); if has_data { ncols } else { 0 }];
    let mut too_wide = None;
    let mut row = 0;
    loop {
        let mut n: usize = 0;
        let more = records.next(path, |v| {
            if let Some(column) = n.checked_sub(skip).and_then(|c| seen.get_mut(c)) {
                column.see(present(v));
            }
            n += 1;
        })?;
        if !more {
            break;
        }
        // A short row's last columns are missing.
        for column in seen.iter_mut().skip(n.saturating_sub(skip)) {
            column.see(None);
        }
        if n > width && too_wide.is_none() {
            too_wide = Some(Error::corrupt(
                path,
                format!("line {} has {n} fields, the header has {width}", row + 2),
            ));
        }
        row += 1;
    }
    if let Some(e) = too_wide {
        return Err(e);
    }
    let kinds: Vec<Kind> = seen.iter().map(ColumnSeen::kind).collect();
    Ok(Columns {
        row_kind: row_kind(&kinds),
        kinds,
        skip,
    })
}

/// numpy's promotion of a row's values: int64 with uint64 gives float64.
fn row_kind(kinds: &[Kind]) -> Kind {
    if kinds.iter().all(|k| *k == Kind::Int) || kinds.iter().all(|k| *k == Kind::UInt) {
        Kind::Int
    } else if kinds
        .iter()
        .all(|k| matches!(k, Kind::Int | Kind::UInt | Kind::IntWithGaps | Kind::Float))
    {
        Kind::Float
    } else {
        Kind::Object
    }
}

/// Each row's text as `PandasCSVReader` makes it, given to `on_row` in
/// turn: a first pass infers the columns' types, a second spells each row
/// into one reused buffer.
pub(crate) fn pandas_rows(
    path: &Path,
    text: &str,
    col_joiner: &str,
    mut on_row: impl FnMut(&str),
) -> Result<()> {
    let columns = pandas_columns(path, text)?;
    let mut records = PandasRecords::new(text);
    records.next(path, |_| {})?;
    let mut line = String::new();
    loop {
        line.clear();
        let mut n: usize = 0;
        let more = records.next(path, |v| {
            if let Some(c) = n.checked_sub(columns.skip) {
                if let Some(&kind) = columns.kinds.get(c) {
                    if c > 0 {
                        line.push_str(col_joiner);
                    }
                    spell(&mut line, cell(kind, present(v)), columns.row_kind);
                }
            }
            n += 1;
        })?;
        if !more {
            return Ok(());
        }
        for c in n.saturating_sub(columns.skip)..columns.kinds.len() {
            if c > 0 {
                line.push_str(col_joiner);
            }
            spell(&mut line, Cell::Missing, columns.row_kind);
        }
        on_row(&line);
    }
}

/// Writes a value as `str()` prints it within a row of type `row_kind`.
fn spell(out: &mut String, cell: Cell<'_>, row_kind: Kind) {
    match cell {
        Cell::Missing => out.push_str("nan"),
        Cell::Int(i) if row_kind == Kind::Float => out.push_str(&float_repr(i as f64)),
        Cell::Int(i) => out.push_str(&i.to_string()),
        Cell::Float(f) => out.push_str(&float_repr(f)),
        Cell::Bool(true) => out.push_str("True"),
        Cell::Bool(false) => out.push_str("False"),
        Cell::Text(t) => out.push_str(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(text: &str) -> Vec<String> {
        let (mut rows, mut fields) = (Vec::new(), Vec::new());
        python_csv_records(text, |event| match event {
            Csv::Field(f) => fields.push(f.to_string()),
            Csv::End => rows.push(std::mem::take(&mut fields).join("|")),
        });
        assert!(fields.is_empty(), "a record without its end");
        rows
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
        let mut rows = Vec::new();
        match pandas_rows(Path::new("t.csv"), text, ", ", |r| rows.push(r.to_string())) {
            Ok(()) => rows,
            Err(e) => vec![format!("ERR {e}")],
        }
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

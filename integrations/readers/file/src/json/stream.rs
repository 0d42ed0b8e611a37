//! JSONReader's text written as the JSON is walked, with no tree of it: a
//! walker over the text reports each value to a sink that writes one mode.

use super::{JSONReader, py_str_leaf, write_string, write_value};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

/// The deepest nesting serde_json accepts (its recursion limit is 128).
const MAX_DEPTH: usize = 127;

/// The text of one JSON document in `reader`'s mode, or serde_json's error.
///
/// serde_json parses each scalar and key; the walker handles the brackets
/// between them, so that it knows where each value starts. A first walk
/// finds what the text needs ahead of time: objects with duplicate keys
/// (Python keeps the first position and the last value, so the second walk
/// jumps to the last value) and, with `collapse_length`, the containers
/// short enough to be written whole. Input serde_json rejects gets
/// serde_json's own error, from a walk of it that builds nothing.
pub(super) fn render(reader: &JSONReader, text: &str) -> Result<String, serde_json::Error> {
    match try_render(reader, text) {
        Ok(out) => Ok(out),
        Err(Invalid) => {
            check(text)?;
            // The walker refused what serde_json accepts: the tree renderer
            // keeps the text right.
            tracing::warn!("JSONReader: the streaming renderer refused valid JSON");
            let value: Value = serde_json::from_str(text)?;
            Ok(reader.format_value(&value))
        }
    }
}

fn try_render(reader: &JSONReader, text: &str) -> Result<String, Invalid> {
    let ascii = reader.ensure_ascii;
    match reader.levels_back {
        Some(levels_back) => {
            let (dups, fits) = match reader.collapse_length {
                Some(limit) => {
                    let mut scan = Scan::new(text, Some(limit), ascii);
                    Walker::new(text, None).document(&mut scan)?;
                    (Some(scan.dups.finish()), Some(scan.fits))
                }
                None => (None, None),
            };
            let sink = Levels::new(levels_back, ascii, fits.as_ref());
            render_with(text, sink, dups)
        }
        None if reader.keep_structure_lines => render_with(text, OneLine::new(ascii), None),
        None => render_with(text, Lines::new(ascii), None),
    }
}

/// Renders with `sink`, scanning for duplicate keys as it goes unless
/// `known` has them already; on a duplicate, renders again from the start.
fn render_with<S: Sink + Output + Clone>(
    text: &str,
    sink: S,
    known: Option<Dups>,
) -> Result<String, Invalid> {
    if let Some(dups) = known {
        let mut sink = sink;
        Walker::new(text, Some(&dups)).document(&mut sink)?;
        return Ok(sink.into_text());
    }
    let mut both = Tee {
        scan: Scan::new(text, None, false),
        sink: sink.clone(),
    };
    Walker::new(text, None).document(&mut both)?;
    let Tee {
        scan,
        sink: rendered,
    } = both;
    if !scan.duplicate {
        return Ok(rendered.into_text());
    }
    drop(rendered);
    let mut sink = sink;
    let dups = scan.dups.finish();
    Walker::new(text, Some(&dups)).document(&mut sink)?;
    Ok(sink.into_text())
}

/// serde_json's verdict on `text`, from a walk that keeps nothing: the same
/// errors (and positions) as parsing it into a `Value`.
fn check(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<Ignore>(text).map(|_| ())
}

/// Any JSON value, checked as `Value` would be (numbers included) and dropped.
struct Ignore;

impl<'de> Deserialize<'de> for Ignore {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IgnoreVisitor)
    }
}

struct IgnoreVisitor;

impl<'de> Visitor<'de> for IgnoreVisitor {
    type Value = Ignore;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ignore, E> {
        Ok(Ignore)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Ignore, E> {
        Ok(Ignore)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Ignore, E> {
        Ok(Ignore)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Ignore, E> {
        Ok(Ignore)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Ignore, E> {
        Ok(Ignore)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Ignore, E> {
        Ok(Ignore)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ignore, A::Error> {
        while seq.next_element::<Ignore>()?.is_some() {}
        Ok(Ignore)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ignore, A::Error> {
        while map.next_key::<Ignore>()?.is_some() {
            map.next_value::<Ignore>()?;
        }
        Ok(Ignore)
    }
}

/// The walker met text it does not accept; serde_json says why.
#[derive(Debug)]
struct Invalid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Array,
    Object,
}

impl Kind {
    fn brackets(self) -> (char, char) {
        match self {
            Kind::Array => ('[', ']'),
            Kind::Object => ('{', '}'),
        }
    }
}

/// What a walk reports, in the order the output needs it. `at` is the
/// offset of a key's or a container's first byte; a member's key comes
/// just before its value.
trait Sink {
    fn key(&mut self, key: &str, at: usize);
    fn scalar(&mut self, value: &Value);
    fn open(&mut self, kind: Kind, at: usize, empty: bool);
    fn close(&mut self, kind: Kind, end: usize, empty: bool);
}

/// A sink whose product is text.
trait Output {
    fn into_text(self) -> String;
}

/// A scan and a render in one walk; the render stops at the first
/// duplicate key, as it will be done again knowing them all.
struct Tee<'a, S> {
    scan: Scan<'a>,
    sink: S,
}

impl<S: Sink> Sink for Tee<'_, S> {
    fn key(&mut self, key: &str, at: usize) {
        self.scan.key(key, at);
        if !self.scan.duplicate {
            self.sink.key(key, at);
        }
    }
    fn scalar(&mut self, value: &Value) {
        self.scan.scalar(value);
        if !self.scan.duplicate {
            self.sink.scalar(value);
        }
    }
    fn open(&mut self, kind: Kind, at: usize, empty: bool) {
        self.scan.open(kind, at, empty);
        if !self.scan.duplicate {
            self.sink.open(kind, at, empty);
        }
    }
    fn close(&mut self, kind: Kind, end: usize, empty: bool) {
        self.scan.close(kind, end, empty);
        if !self.scan.duplicate {
            self.sink.close(kind, end, empty);
        }
    }
}

/// An object with duplicate keys: its offset, its closing brace's, and
/// where its members are in [`Dups::keys`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DupObject {
    at: usize,
    end: usize,
    first: usize,
    count: usize,
}

/// The objects with duplicate keys, held flat (a few words each, as there
/// may be one every few bytes), with their members: the offset of each
/// key's last occurrence, in the order of the first.
#[derive(Debug, Default, PartialEq, Eq)]
struct Dups {
    objects: Vec<DupObject>,
    keys: Vec<usize>,
}

impl Dups {
    fn add(&mut self, at: usize, end: usize, keys: &[usize]) {
        let first = self.keys.len();
        self.keys.extend_from_slice(keys);
        let count = keys.len();
        self.objects.push(DupObject {
            at,
            end,
            first,
            count,
        });
    }

    /// Readies [`get`](Self::get): objects are added as they close, inner
    /// ones first.
    fn finish(mut self) -> Self {
        self.objects.sort_unstable_by_key(|object| object.at);
        self
    }

    /// The members of the object at `at`, and its end, if it has duplicates.
    fn get(&self, at: usize) -> Option<(&[usize], usize)> {
        let i = self.objects.binary_search_by_key(&at, |o| o.at).ok()?;
        let object = self.objects.get(i)?;
        let keys = self.keys.get(object.first..object.first + object.count)?;
        Some((keys, object.end))
    }
}

/// Walks one JSON text, the objects in `dups` member by member as Python's
/// dict would hold them.
struct Walker<'a> {
    text: &'a str,
    dups: Option<&'a Dups>,
}

impl<'a> Walker<'a> {
    fn new(text: &'a str, dups: Option<&'a Dups>) -> Self {
        Self { text, dups }
    }

    fn document<S: Sink>(&self, sink: &mut S) -> Result<(), Invalid> {
        let end = self.value(0, 0, sink)?;
        if self.ws(end) == self.text.len() {
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    fn byte(&self, pos: usize) -> Option<u8> {
        self.text.as_bytes().get(pos).copied()
    }

    /// The offset past JSON whitespace from `pos`.
    fn ws(&self, mut pos: usize) -> usize {
        while matches!(self.byte(pos), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            pos += 1;
        }
        pos
    }

    /// Walks the value at or after `pos`, `depth` containers deep; returns
    /// the offset past it.
    fn value<S: Sink>(&self, pos: usize, depth: usize, sink: &mut S) -> Result<usize, Invalid> {
        let pos = self.ws(pos);
        match self.byte(pos) {
            Some(b'[') => self.array(pos, depth + 1, sink),
            Some(b'{') => self.object(pos, depth + 1, sink),
            Some(b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                let (value, end) = self.parse::<Value>(pos)?;
                sink.scalar(&value);
                Ok(end)
            }
            _ => Err(Invalid),
        }
    }

    /// One scalar or key parsed by serde_json, and the offset past it.
    fn parse<T: Deserialize<'a>>(&self, pos: usize) -> Result<(T, usize), Invalid> {
        let rest = self.text.get(pos..).ok_or(Invalid)?;
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<T>();
        match stream.next() {
            Some(Ok(value)) => Ok((value, pos + stream.byte_offset())),
            _ => Err(Invalid),
        }
    }

    fn array<S: Sink>(&self, at: usize, depth: usize, sink: &mut S) -> Result<usize, Invalid> {
        if depth > MAX_DEPTH {
            return Err(Invalid);
        }
        let mut pos = self.ws(at + 1);
        if self.byte(pos) == Some(b']') {
            sink.open(Kind::Array, at, true);
            sink.close(Kind::Array, pos, true);
            return Ok(pos + 1);
        }
        sink.open(Kind::Array, at, false);
        loop {
            pos = self.ws(self.value(pos, depth, sink)?);
            match self.byte(pos) {
                Some(b',') => pos += 1,
                Some(b']') => break,
                _ => return Err(Invalid),
            }
        }
        sink.close(Kind::Array, pos, false);
        Ok(pos + 1)
    }

    fn object<S: Sink>(&self, at: usize, depth: usize, sink: &mut S) -> Result<usize, Invalid> {
        if depth > MAX_DEPTH {
            return Err(Invalid);
        }
        if let Some((keys, end)) = self.dups.and_then(|dups| dups.get(at)) {
            sink.open(Kind::Object, at, false);
            for &key in keys {
                self.member(key, depth, sink)?;
            }
            sink.close(Kind::Object, end, false);
            return Ok(end + 1);
        }
        let mut pos = self.ws(at + 1);
        if self.byte(pos) == Some(b'}') {
            sink.open(Kind::Object, at, true);
            sink.close(Kind::Object, pos, true);
            return Ok(pos + 1);
        }
        sink.open(Kind::Object, at, false);
        loop {
            pos = self.ws(self.member(pos, depth, sink)?);
            match self.byte(pos) {
                Some(b',') => pos += 1,
                Some(b'}') => break,
                _ => return Err(Invalid),
            }
        }
        sink.close(Kind::Object, pos, false);
        Ok(pos + 1)
    }

    /// Walks `"key": value` at or after `pos`.
    fn member<S: Sink>(&self, pos: usize, depth: usize, sink: &mut S) -> Result<usize, Invalid> {
        let pos = self.ws(pos);
        if self.byte(pos) != Some(b'"') {
            return Err(Invalid);
        }
        let (key, end) = self.parse::<String>(pos)?;
        sink.key(&key, pos);
        let colon = self.ws(end);
        if self.byte(colon) != Some(b':') {
            return Err(Invalid);
        }
        self.value(colon + 1, depth, sink)
    }
}

/// Finds the objects with duplicate keys and, given a collapse length, the
/// containers whose `json.dumps` fits it (counted as Python's dict would
/// hold an object: each key once, with its last value).
struct Scan<'a> {
    text: &'a str,
    limit: Option<usize>,
    ascii: bool,
    frames: Vec<Frame>,
    /// The key of the value being walked, and its offset.
    key: Option<(String, usize)>,
    dups: Dups,
    /// Whether a duplicate key has been seen.
    duplicate: bool,
    /// A bit per byte of the text, set at the containers that fit.
    fits: Bits,
    hasher: RandomState,
    /// The bits of a key's hash kept (all of them: fewer collide more).
    hash_bits: u64,
}

struct Frame {
    at: usize,
    key: Option<(String, usize)>,
    /// The `json.dumps` lengths of the items so far (without and with
    /// `ensure_ascii`), and their count.
    len: [u64; 2],
    items: u64,
    /// An object's keys by their hash, each with its index in `keys` and
    /// `lens` (a hash, not the key, to hold less per key: the key is read
    /// again from the text to confirm a match); `collided` holds the rare
    /// keys whose hash a different key has.
    index: HashMap<u64, usize>,
    collided: HashMap<String, usize>,
    /// The offset of each key's last occurrence.
    keys: Vec<usize>,
    lens: Vec<[u64; 2]>,
    duplicate: bool,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str, limit: Option<usize>, ascii: bool) -> Self {
        let words = if limit.is_some() {
            text.len() / 64 + 1
        } else {
            0
        };
        Self {
            text,
            limit,
            ascii,
            frames: Vec::new(),
            key: None,
            dups: Dups::default(),
            duplicate: false,
            fits: Bits(vec![0; words]),
            hasher: RandomState::new(),
            hash_bits: u64::MAX,
        }
    }

    /// Adds a finished value of `len` characters to its container.
    fn done(&mut self, len: [u64; 2], key: Option<(String, usize)>) {
        let measure = self.limit.is_some();
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        let Some((key, at)) = key else {
            frame.len = add(frame.len, len);
            frame.items += 1;
            return;
        };
        let len = if measure {
            let key_len = [escaped_len(&key, false), escaped_len(&key, true)];
            add(add(key_len, len), [2, 2])
        } else {
            [0, 0]
        };
        let hash = self.hasher.hash_one(&key) & self.hash_bits;
        let walker = Walker::new(self.text, None);
        let same = |i: usize| {
            let earlier = frame
                .keys
                .get(i)
                .and_then(|&at| walker.parse::<String>(at).ok());
            earlier.is_some_and(|(earlier, _)| earlier == key)
        };
        let (found, collided) = match frame.index.get(&hash) {
            None => (None, false),
            Some(&i) if same(i) => (Some(i), false),
            Some(_) => (frame.collided.get(&key).copied(), true),
        };
        match found {
            Some(i) => {
                frame.duplicate = true;
                self.duplicate = true;
                if let Some(old) = frame.keys.get_mut(i) {
                    *old = at;
                }
                if let Some(old) = frame.lens.get_mut(i) {
                    *old = len;
                }
            }
            None => {
                let i = frame.keys.len();
                if collided {
                    frame.collided.insert(key, i);
                } else {
                    frame.index.insert(hash, i);
                }
                frame.keys.push(at);
                if measure {
                    frame.lens.push(len);
                }
            }
        }
    }
}

impl Sink for Scan<'_> {
    fn key(&mut self, key: &str, at: usize) {
        self.key = Some((key.to_owned(), at));
    }

    fn scalar(&mut self, value: &Value) {
        let key = self.key.take();
        let len = if self.limit.is_some() {
            scalar_len(value)
        } else {
            [0, 0]
        };
        self.done(len, key);
    }

    fn open(&mut self, _kind: Kind, at: usize, _empty: bool) {
        self.frames.push(Frame {
            at,
            key: self.key.take(),
            len: [0, 0],
            items: 0,
            index: HashMap::new(),
            collided: HashMap::new(),
            keys: Vec::new(),
            lens: Vec::new(),
            duplicate: false,
        });
    }

    fn close(&mut self, kind: Kind, end: usize, _empty: bool) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        let (sum, items) = match kind {
            Kind::Array => (frame.len, frame.items),
            Kind::Object => (
                frame.lens.iter().fold([0, 0], |sum, len| add(sum, *len)),
                frame.keys.len() as u64,
            ),
        };
        let separators = 2 * items.saturating_sub(1);
        let len = add(sum, [2 + separators, 2 + separators]);
        if let Some(limit) = self.limit {
            // Only the whole document is dumped with `ensure_ascii`.
            let own = if self.frames.is_empty() && self.ascii {
                len[1]
            } else {
                len[0]
            };
            if own <= limit as u64 {
                self.fits.set(frame.at);
            }
        }
        if frame.duplicate {
            self.dups.add(frame.at, end, &frame.keys);
        }
        self.done(len, frame.key);
    }
}

fn add(a: [u64; 2], b: [u64; 2]) -> [u64; 2] {
    [a[0].saturating_add(b[0]), a[1].saturating_add(b[1])]
}

/// The `json.dumps` length of a scalar, without and with `ensure_ascii`.
fn scalar_len(value: &Value) -> [u64; 2] {
    match value {
        Value::String(s) => [escaped_len(s, false), escaped_len(s, true)],
        other => {
            let mut text = String::new();
            write_value(&mut text, other, None, 0, false);
            [text.len() as u64; 2]
        }
    }
}

/// The characters [`write_string`] writes for `s`.
fn escaped_len(s: &str, ascii: bool) -> u64 {
    let mut len = 2;
    for c in s.chars() {
        len += match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c if ascii && !c.is_ascii() => 6 * c.len_utf16() as u64,
            _ => 1,
        };
    }
    len
}

/// A set of byte offsets.
#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn set(&mut self, at: usize) {
        if let Some(word) = self.0.get_mut(at / 64) {
            *word |= 1 << (at % 64);
        }
    }

    fn get(&self, at: usize) -> bool {
        self.0
            .get(at / 64)
            .is_some_and(|word| word & (1 << (at % 64)) != 0)
    }
}

/// `json.dumps(value)`'s writer, into a text its caller owns.
#[derive(Clone, Default)]
struct Compact {
    ascii: bool,
    /// Per open container: whether it has an item yet.
    items: Vec<bool>,
    after_key: bool,
}

impl Compact {
    fn new(ascii: bool) -> Self {
        Self {
            ascii,
            ..Self::default()
        }
    }

    /// The separator before an item, unless a key has just been written.
    fn item(&mut self, out: &mut String) {
        if std::mem::take(&mut self.after_key) {
            return;
        }
        if let Some(has_items) = self.items.last_mut() {
            if *has_items {
                out.push_str(", ");
            }
            *has_items = true;
        }
    }

    fn key(&mut self, out: &mut String, key: &str) {
        self.item(out);
        write_string(out, key, self.ascii);
        out.push_str(": ");
        self.after_key = true;
    }

    fn scalar(&mut self, out: &mut String, value: &Value) {
        self.item(out);
        write_value(out, value, None, 0, self.ascii);
    }

    fn open(&mut self, out: &mut String, kind: Kind) {
        self.item(out);
        out.push(kind.brackets().0);
        self.items.push(false);
    }

    fn close(&mut self, out: &mut String, kind: Kind) {
        self.items.pop();
        out.push(kind.brackets().1);
    }
}

/// `json.dumps(data)`: the whole document on one line.
#[derive(Clone)]
struct OneLine {
    out: String,
    writer: Compact,
}

impl OneLine {
    fn new(ascii: bool) -> Self {
        Self {
            out: String::new(),
            writer: Compact::new(ascii),
        }
    }
}

impl Sink for OneLine {
    fn key(&mut self, key: &str, _at: usize) {
        self.writer.key(&mut self.out, key);
    }
    fn scalar(&mut self, value: &Value) {
        self.writer.scalar(&mut self.out, value);
    }
    fn open(&mut self, kind: Kind, _at: usize, _empty: bool) {
        self.writer.open(&mut self.out, kind);
    }
    fn close(&mut self, kind: Kind, _end: usize, _empty: bool) {
        self.writer.close(&mut self.out, kind);
    }
}

impl Output for OneLine {
    fn into_text(self) -> String {
        self.out
    }
}

/// `json.dumps(data, indent=0)` without its lines made only of `{}[],`:
/// those are the lines of brackets, and of empty containers without a key,
/// so only keys and scalars start a line. A line's comma waits for the next
/// item of its container.
#[derive(Clone)]
struct Lines {
    out: String,
    ascii: bool,
    items: Vec<bool>,
    after_key: bool,
    /// Whether the last line written ends an item (and takes its comma).
    open_line: bool,
}

impl Lines {
    fn new(ascii: bool) -> Self {
        Self {
            out: String::new(),
            ascii,
            items: Vec::new(),
            after_key: false,
            open_line: false,
        }
    }

    /// Starts an item: the previous item's line gets its comma.
    fn item(&mut self) {
        if let Some(has_items) = self.items.last_mut() {
            if *has_items && self.open_line {
                self.out.push(',');
            }
            *has_items = true;
        }
        self.open_line = false;
    }

    fn new_line(&mut self) {
        // Every kept line holds a key or a scalar, so none is empty.
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }
}

impl Sink for Lines {
    fn key(&mut self, key: &str, _at: usize) {
        self.item();
        self.new_line();
        write_string(&mut self.out, key, self.ascii);
        self.out.push_str(": ");
        self.after_key = true;
    }

    fn scalar(&mut self, value: &Value) {
        if !std::mem::take(&mut self.after_key) {
            self.item();
            self.new_line();
        }
        write_value(&mut self.out, value, None, 0, self.ascii);
        self.open_line = true;
    }

    fn open(&mut self, kind: Kind, _at: usize, empty: bool) {
        let (open, close) = kind.brackets();
        if std::mem::take(&mut self.after_key) {
            self.out.push(open);
            if empty {
                self.out.push(close);
            }
            self.open_line = empty;
        } else {
            self.item();
        }
        if !empty {
            self.items.push(false);
        }
    }

    fn close(&mut self, _kind: Kind, _end: usize, empty: bool) {
        if !empty {
            self.items.pop();
            self.open_line = false;
        }
    }
}

impl Output for Lines {
    fn into_text(self) -> String {
        self.out
    }
}

/// `_depth_first_yield`: a line per leaf, `key key ... value` with the last
/// `levels_back` keys of its path; a container in `fits` is written whole
/// with [`Compact`] on its path's line.
#[derive(Clone)]
struct Levels<'a> {
    out: String,
    lines: usize,
    levels_back: usize,
    ascii: bool,
    fits: Option<&'a Bits>,
    path: Vec<String>,
    /// Per open container: whether its key is on `path`.
    keyed: Vec<bool>,
    key: Option<String>,
    collapsed: Option<Collapsed>,
}

/// A container being written whole: the writer, how deep in it the walk
/// is, and whether its key is on the path.
#[derive(Clone)]
struct Collapsed {
    writer: Compact,
    depth: usize,
    keyed: bool,
}

impl<'a> Levels<'a> {
    fn new(levels_back: usize, ascii: bool, fits: Option<&'a Bits>) -> Self {
        Self {
            out: String::new(),
            lines: 0,
            levels_back,
            ascii,
            fits,
            path: Vec::new(),
            keyed: Vec::new(),
            key: None,
            collapsed: None,
        }
    }

    /// Pushes the pending key, if any, on the path.
    fn enter(&mut self) -> bool {
        match self.key.take() {
            Some(key) => {
                self.path.push(key);
                true
            }
            None => false,
        }
    }

    fn leave(&mut self, keyed: bool) {
        if keyed {
            self.path.pop();
        }
    }

    /// Starts a line with the path's last `levels_back` keys (`0`: all).
    fn start_line(&mut self) {
        if self.lines > 0 {
            self.out.push('\n');
        }
        self.lines += 1;
        let start = match self.levels_back {
            0 => 0,
            n => self.path.len().saturating_sub(n),
        };
        for key in &self.path[start..] {
            self.out.push_str(key);
            self.out.push(' ');
        }
    }
}

impl Sink for Levels<'_> {
    fn key(&mut self, key: &str, _at: usize) {
        match &mut self.collapsed {
            Some(c) => c.writer.key(&mut self.out, key),
            None => self.key = Some(key.to_owned()),
        }
    }

    fn scalar(&mut self, value: &Value) {
        if let Some(c) = &mut self.collapsed {
            c.writer.scalar(&mut self.out, value);
            return;
        }
        let keyed = self.enter();
        self.start_line();
        self.out.push_str(&py_str_leaf(value));
        self.leave(keyed);
    }

    fn open(&mut self, kind: Kind, at: usize, _empty: bool) {
        if let Some(c) = &mut self.collapsed {
            c.writer.open(&mut self.out, kind);
            c.depth += 1;
            return;
        }
        let root = self.keyed.is_empty();
        let keyed = self.enter();
        if self.fits.is_some_and(|fits| fits.get(at)) {
            self.start_line();
            // LlamaIndex passes `ensure_ascii` to the top level only.
            let mut writer = Compact::new(self.ascii && root);
            writer.open(&mut self.out, kind);
            self.collapsed = Some(Collapsed {
                writer,
                depth: 1,
                keyed,
            });
            return;
        }
        self.keyed.push(keyed);
    }

    fn close(&mut self, kind: Kind, _end: usize, _empty: bool) {
        if let Some(c) = &mut self.collapsed {
            c.writer.close(&mut self.out, kind);
            c.depth -= 1;
            if c.depth == 0 {
                let keyed = c.keyed;
                self.collapsed = None;
                self.leave(keyed);
            }
            return;
        }
        let keyed = self.keyed.pop().unwrap_or(false);
        self.leave(keyed);
    }
}

impl Output for Levels<'_> {
    fn into_text(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so failures replay.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
        fn ws(&mut self, out: &mut String) {
            out.push_str(self.pick(&["", "", "", " ", "\n", " \t\r\n "]));
        }
        fn json(&mut self, out: &mut String, depth: usize) {
            self.ws(out);
            let choice = match depth {
                0 => 4 + self.below(3),
                1..4 => self.below(7),
                _ => self.below(4),
            };
            match choice {
                0 => out.push_str(self.pick(&[
                    "0",
                    "-1",
                    "3",
                    "18446744073709551615",
                    "-9223372036854775808",
                    "123456789012345678901234567890",
                    "1.5",
                    "-0.0",
                    "1e20",
                    "1E-7",
                    "0.1",
                    "2.5e+300",
                    "1e16",
                    "12345.678",
                ])),
                1 => out.push_str(self.pick(&["true", "false", "null"])),
                2 | 3 => out.push_str(self.pick(&[
                    "\"\"",
                    "\"a\"",
                    "\"é ü\"",
                    "\"x\\\"y\"",
                    "\"\\n\\t\\u0000\\u001f\"",
                    "\"\\ud83d\\ude00 😀\"",
                    "\"[],{}\"",
                    "\"\\\\\"",
                    "\"\\/\"",
                    "\"  \"",
                ])),
                4 | 5 => self.container(out, depth, true),
                _ => self.container(out, depth, false),
            }
            self.ws(out);
        }
        fn container(&mut self, out: &mut String, depth: usize, object: bool) {
            let n = [0, 1, 2, 3, 5][self.below(5)];
            out.push(if object { '{' } else { '[' });
            for i in 0..n {
                if i > 0 {
                    out.push(',');
                }
                if object {
                    self.ws(out);
                    // `b` and `\u0062` are one key, as are `é` and `\u00e9`.
                    out.push_str(self.pick(&[
                        "\"\"",
                        "\"a\"",
                        "\"b\"",
                        "\"\\u0062\"",
                        "\"é\"",
                        "\"\\u00e9\"",
                        "\"k \\\"q\\\"\"",
                        "\"a\"",
                    ]));
                    self.ws(out);
                    out.push(':');
                }
                self.json(out, depth + 1);
            }
            self.ws(out);
            out.push(if object { '}' } else { ']' });
        }
    }

    fn readers() -> Vec<JSONReader> {
        let mut readers = Vec::new();
        for ascii in [false, true] {
            let base = JSONReader::new().ensure_ascii(ascii);
            readers.push(base.clone());
            readers.push(base.clone().clean_json(false));
            for levels in [0, 1, 2] {
                readers.push(base.clone().levels_back(levels));
                for limit in [0, 1, 2, 4, 8, 15, 30, 60, 1000] {
                    readers.push(base.clone().levels_back(levels).collapse_length(limit));
                }
            }
        }
        readers
    }

    /// What today's tree renderer gives, or serde_json's error message.
    fn by_tree(reader: &JSONReader, text: &str) -> std::result::Result<String, String> {
        serde_json::from_str::<Value>(text)
            .map(|v| reader.format_value(&v))
            .map_err(|e| e.to_string())
    }

    fn streamed(reader: &JSONReader, text: &str) -> std::result::Result<String, String> {
        render(reader, text).map_err(|e| e.to_string())
    }

    #[test]
    fn streaming_matches_the_tree_renderer_on_generated_json() {
        let readers = readers();
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut bytes, mut duplicates) = (0, 0);
        for case in 0..1500 {
            let mut text = String::new();
            g.json(&mut text, 0);
            bytes += text.len();
            let mut scan = Scan::new(&text, None, false);
            assert!(Walker::new(&text, None).document(&mut scan).is_ok());
            duplicates += usize::from(scan.duplicate);
            for reader in &readers {
                let want = by_tree(reader, &text);
                assert!(want.is_ok(), "case {case}: {text:?}");
                // The walker itself, not its fallback, must agree.
                let got = try_render(reader, &text).map_err(|_| "refused".to_string());
                assert_eq!(got, want, "case {case} {reader:?}: {text:?}");
            }
        }
        // The generator reaches what it is for.
        assert!(
            bytes > 100_000 && duplicates > 200,
            "{bytes} bytes, {duplicates} with duplicates"
        );
    }

    #[test]
    fn broken_json_gets_serde_jsons_error() {
        let reader = JSONReader::new();
        let mut g = Gen(0x2545_f491_4f6c_dd1d);
        let junk = [
            "", "]", "}", ",", ":", "\"", "x", "1", "\\", "[", "{", "\u{1}", "nul",
        ];
        for case in 0..3000 {
            let mut text = String::new();
            g.json(&mut text, 0);
            let at = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .nth(g.below(text.chars().count() + 1))
                .unwrap_or(0);
            let cut = (at..=text.len())
                .find(|&i| i > at && text.is_char_boundary(i))
                .filter(|_| g.below(2) == 0)
                .unwrap_or(at);
            text.replace_range(at..cut, g.pick(&junk));
            assert_eq!(
                streamed(&reader, &text),
                by_tree(&reader, &text),
                "case {case}: {text:?}"
            );
        }
    }

    #[test]
    fn edge_cases_match_the_tree_renderer() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let keys = |n: usize| format!("{}0{}", "{\"a\":".repeat(n), "}".repeat(n));
        let texts = [
            deep(MAX_DEPTH),
            deep(MAX_DEPTH + 1),
            keys(MAX_DEPTH),
            keys(MAX_DEPTH + 1),
            "".into(),
            " ".into(),
            "[] x".into(),
            "[1,]".into(),
            "{\"a\":1,}".into(),
            "NaN".into(),
            "[Infinity]".into(),
            "1e400".into(),
            "\u{feff}[]".into(),
            "[01]".into(),
            "\"\\ud800\"".into(),
            "{\"a\":{\"b\":1,\"b\":[2,{\"c\":3,\"c\":4}]},\"a\":{\"x\":[],\"x\":{}}}".into(),
            "[{\"a\":1,\"b\":2,\"a\":3},{\"a\":[1,2],\"a\":5}]".into(),
        ];
        for reader in readers() {
            for text in &texts {
                if serde_json::from_str::<Value>(text).is_ok() {
                    assert!(try_render(&reader, text).is_ok(), "{text:?}");
                }
                assert_eq!(
                    streamed(&reader, text),
                    by_tree(&reader, text),
                    "{reader:?}: {text:?}"
                );
            }
        }
    }

    #[test]
    fn colliding_hashes_find_the_same_duplicates() {
        let mut g = Gen(0x5851_f42d_4c95_7f2d);
        for _ in 0..500 {
            let mut text = String::new();
            g.json(&mut text, 0);
            let scans: Vec<Scan> = [u64::MAX, 1, 0]
                .into_iter()
                .map(|bits| {
                    let mut scan = Scan::new(&text, Some(20), false);
                    scan.hash_bits = bits;
                    assert!(Walker::new(&text, None).document(&mut scan).is_ok());
                    scan
                })
                .collect();
            for scan in &scans[1..] {
                assert_eq!(scan.dups, scans[0].dups, "{text:?}");
                assert_eq!(scan.fits.0, scans[0].fits.0, "{text:?}");
            }
        }
    }

    #[test]
    fn escaped_len_counts_what_write_string_writes() {
        for s in [
            "",
            "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}",
            "é😀\u{7f}\u{2028}",
        ] {
            for ascii in [false, true] {
                let mut out = String::new();
                write_string(&mut out, s, ascii);
                assert_eq!(escaped_len(s, ascii), out.chars().count() as u64);
            }
        }
    }
}

//! How many bytes a PDF stream inflates to through the filters lopdf decodes
//! (Flate, LZW, ASCII85), measured as it streams, never held, stopping at a cap.

use pdf_extract::{Dictionary, Object, Stream};
use std::cell::Cell;
use std::io::{self, Write};

/// Bytes fed to the first decoder at a time: the cap is checked between them.
const CHUNK: usize = 64 * 1024;

/// Bytes produced by every decoding stage of `stream` (intermediate outputs
/// count too: lopdf holds each stage's output whole), plus the two rows a PNG
/// predictor allocates. Stops soon after `limit`; `sink` receives the last
/// stage's output until then.
pub(crate) fn inflated_len(stream: &Stream, limit: u64, sink: &mut dyn Write) -> u64 {
    let produced = Cell::new(predictor_rows(&stream.dict));
    let filters = known_filters(stream);
    if filters.is_empty() {
        // Neither lopdf nor pdf-extract decodes it: the stored bytes are all.
        let _ = sink.write_all(&stream.content);
        return stream.content.len() as u64;
    }
    if produced.get() > limit {
        return produced.get();
    }
    let early_change = early_change(&stream.dict);
    let mut head: Box<dyn Write + '_> = Box::new(Lenient::new(sink));
    for filter in filters.iter().rev() {
        let counted = Counted {
            inner: head,
            produced: &produced,
            limit,
        };
        head = match *filter {
            Filter::Flate => Box::new(Skip::new(
                2,
                Lenient::new(flate2::write::DeflateDecoder::new(counted)),
            )),
            Filter::Lzw => Box::new(Lzw::new(counted, early_change)),
            Filter::Ascii85 => Box::new(Ascii85::new(counted)),
        };
    }
    for chunk in stream.content.chunks(CHUNK) {
        if produced.get() > limit || head.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = head.flush();
    drop(head);
    produced.get()
}

#[derive(Clone, Copy)]
enum Filter {
    Flate,
    Lzw,
    Ascii85,
}

/// The filters lopdf decodes, in order, up to the first it does not: it
/// gives up there, after decoding the ones before it.
fn known_filters(stream: &Stream) -> Vec<Filter> {
    let Ok(names) = stream.filters() else {
        return Vec::new();
    };
    names
        .iter()
        .map_while(|name| match *name {
            b"FlateDecode" => Some(Filter::Flate),
            b"LZWDecode" => Some(Filter::Lzw),
            b"ASCII85Decode" => Some(Filter::Ascii85),
            _ => None,
        })
        .collect()
}

fn params(dict: &Dictionary) -> Option<&Dictionary> {
    dict.get(b"DecodeParms").and_then(Object::as_dict).ok()
}

fn param(dict: &Dictionary, key: &[u8]) -> Option<i64> {
    params(dict)?.get(key).and_then(Object::as_i64).ok()
}

fn early_change(dict: &Dictionary) -> bool {
    param(dict, b"EarlyChange").is_none_or(|v| v != 0)
}

/// lopdf's PNG predictor allocates two rows of `Columns` pixels up front,
/// whatever the data: a tiny stream can ask for gigabytes.
fn predictor_rows(dict: &Dictionary) -> u64 {
    let predictor = param(dict, b"Predictor").unwrap_or(1);
    if !(10..=15).contains(&predictor) {
        return 0;
    }
    let at_least = |key: &[u8], min: i64| param(dict, key).unwrap_or(min).max(min) as u64;
    let row = (at_least(b"Colors", 1).saturating_mul(at_least(b"BitsPerComponent", 8)) / 8)
        .saturating_mul(at_least(b"Columns", 1));
    row.saturating_mul(2)
}

/// Counts what a stage produces into the shared tally; fails past the limit.
struct Counted<'a> {
    inner: Box<dyn Write + 'a>,
    produced: &'a Cell<u64>,
    limit: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let total = self.produced.get().saturating_add(buf.len() as u64);
        self.produced.set(total);
        if total > self.limit {
            return Err(io::Error::other("over the limit"));
        }
        self.inner.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A stage that stops quietly at its first error, keeping what it produced,
/// as lopdf keeps a decoder's output up to a corrupt byte.
struct Lenient<W> {
    inner: W,
    done: bool,
}

impl<W: Write> Lenient<W> {
    fn new(inner: W) -> Self {
        Self { inner, done: false }
    }
}

impl<W: Write> Write for Lenient<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.done && self.inner.write_all(buf).is_err() {
            self.done = true;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        if !self.done {
            let _ = self.inner.flush();
        }
        Ok(())
    }
}

/// Drops the first bytes: lopdf inflates a zlib stream's deflate data raw
/// when the zlib header or checksum is bad, and raw inflation of the bytes
/// after the two-byte header yields at least what the zlib decoder does.
struct Skip<W> {
    left: usize,
    inner: W,
}

impl<W: Write> Skip<W> {
    fn new(left: usize, inner: W) -> Self {
        Self { left, inner }
    }
}

impl<W: Write> Write for Skip<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let skipped = self.left.min(buf.len());
        self.left -= skipped;
        self.inner.write_all(&buf[skipped..])?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// LZW as lopdf decodes it (MSB first, 8-bit symbols, `EarlyChange`).
struct Lzw<W> {
    decoder: weezl::decode::Decoder,
    inner: W,
    out: Vec<u8>,
    done: bool,
}

impl<W: Write> Lzw<W> {
    fn new(inner: W, early_change: bool) -> Self {
        use weezl::{BitOrder, decode::Decoder};
        let decoder = if early_change {
            Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
        } else {
            Decoder::new(BitOrder::Msb, 8)
        };
        Self {
            decoder,
            inner,
            out: vec![0; CHUNK],
            done: false,
        }
    }

    fn feed(&mut self, mut input: &[u8]) -> io::Result<()> {
        while !self.done {
            let result = self.decoder.decode_bytes(input, &mut self.out);
            input = &input[result.consumed_in..];
            self.inner.write_all(&self.out[..result.consumed_out])?;
            match result.status {
                Ok(weezl::LzwStatus::Ok) if result.consumed_in + result.consumed_out > 0 => {}
                Ok(weezl::LzwStatus::Ok | weezl::LzwStatus::NoProgress) => break,
                Ok(weezl::LzwStatus::Done) | Err(_) => self.done = true,
            }
        }
        Ok(())
    }
}

impl<W: Write> Write for Lzw<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.feed(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.feed(&[])?;
        self.inner.flush()
    }
}

/// ASCII85 as lopdf decodes it: `z` is four zeros, a byte outside `!`..`u`
/// ends the data.
struct Ascii85<W> {
    inner: W,
    group: u32,
    count: usize,
    done: bool,
}

impl<W: Write> Ascii85<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            group: 0,
            count: 0,
            done: false,
        }
    }
}

impl<W: Write> Write for Ascii85<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &byte in buf {
            if self.done {
                break;
            }
            if byte == b'z' && self.count == 0 {
                self.inner.write_all(&[0; 4])?;
            } else if byte.is_ascii_whitespace() {
            } else if (b'!'..=b'u').contains(&byte) {
                self.group = self
                    .group
                    .wrapping_mul(85)
                    .wrapping_add(u32::from(byte - b'!'));
                self.count += 1;
                if self.count == 5 {
                    self.inner.write_all(&self.group.to_be_bytes())?;
                    self.group = 0;
                    self.count = 0;
                }
            } else {
                self.done = true;
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        if self.count > 0 {
            // A partial group gives at most three bytes.
            self.inner.write_all(&[0; 3][..self.count - 1])?;
            self.count = 0;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(filters: &[&str], content: Vec<u8>) -> Stream {
        let mut dict = Dictionary::new();
        let names = filters
            .iter()
            .map(|f| Object::Name(f.as_bytes().to_vec()))
            .collect();
        dict.set("Filter", Object::Array(names));
        Stream::new(dict, content)
    }

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(data).unwrap_or_default();
        enc.finish().unwrap_or_default()
    }

    #[test]
    fn sizes_match_lopdfs_output() {
        let plain = b"BT (hello) Tj ET ".repeat(1000);
        let once = deflate(&plain);
        let s = stream(&["FlateDecode"], once.clone());
        let mut out = Vec::new();
        assert_eq!(inflated_len(&s, u64::MAX, &mut out), plain.len() as u64);
        assert_eq!(out, s.decompressed_content().unwrap_or_default());
        // Two stages: both outputs count.
        let twice = stream(&["FlateDecode", "FlateDecode"], deflate(&once));
        let n = inflated_len(&twice, u64::MAX, &mut io::sink());
        assert_eq!(n, (plain.len() + once.len()) as u64);
        let a85 = stream(&["ASCII85Decode"], b"9jqo^z~>".to_vec());
        let mut out = Vec::new();
        inflated_len(&a85, u64::MAX, &mut out);
        assert_eq!(out, a85.decompressed_content().unwrap_or_default());
    }

    #[test]
    fn stops_past_the_limit() {
        let bomb = stream(&["FlateDecode"], deflate(&vec![0; 50 << 20]));
        let n = inflated_len(&bomb, 1 << 20, &mut io::sink());
        assert!(n > 1 << 20 && n < 4 << 20, "{n}");
    }

    #[test]
    fn a_predictor_row_counts() {
        let mut s = stream(&["FlateDecode"], deflate(b"x"));
        let mut parms = Dictionary::new();
        parms.set("Predictor", 12);
        parms.set("Columns", 1_000_000_000);
        s.dict.set("DecodeParms", parms);
        assert!(inflated_len(&s, 1 << 20, &mut io::sink()) >= 2_000_000_000);
    }
}

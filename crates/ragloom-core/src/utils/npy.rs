//! One-dimensional NumPy `.npy` arrays (`<f4`, `<f8`, `<i4`, `<i8`), read and
//! written: the format bm25s (LlamaIndex's BM25 retriever) persists its index in.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

/// A little-endian element type of a 1-D array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dtype {
    F32,
    F64,
    I32,
    I64,
}

impl Dtype {
    fn descr(self) -> &'static str {
        match self {
            Dtype::F32 => "<f4",
            Dtype::F64 => "<f8",
            Dtype::I32 => "<i4",
            Dtype::I64 => "<i8",
        }
    }

    fn size(self) -> usize {
        match self {
            Dtype::F32 | Dtype::I32 => 4,
            Dtype::F64 | Dtype::I64 => 8,
        }
    }

    fn parse(descr: &str) -> Option<Self> {
        [Dtype::F32, Dtype::F64, Dtype::I32, Dtype::I64]
            .into_iter()
            .find(|d| d.descr() == descr)
    }
}

/// A 1-D array as read from a file: its type and raw little-endian bytes.
#[derive(Debug)]
pub(crate) struct Array {
    dtype: Dtype,
    bytes: Vec<u8>,
}

impl Array {
    /// The values as `f32` (a float64 array is narrowed).
    pub(crate) fn to_f32(&self) -> Option<Vec<f32>> {
        match self.dtype {
            Dtype::F32 => Some(
                self.bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            Dtype::F64 => Some(
                self.bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
                    .collect(),
            ),
            Dtype::I32 | Dtype::I64 => None,
        }
    }

    /// The values as `i64` (either integer width).
    pub(crate) fn to_i64(&self) -> Option<Vec<i64>> {
        match self.dtype {
            Dtype::I32 => Some(
                self.bytes
                    .chunks_exact(4)
                    .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect(),
            ),
            Dtype::I64 => Some(
                self.bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect(),
            ),
            Dtype::F32 | Dtype::F64 => None,
        }
    }
}

/// Writes `values` (already little-endian bytes of `dtype`) as a version 1.0
/// `.npy` file with NumPy's header layout (padded to 64 bytes, ending in `\n`).
pub(crate) fn write(
    out: &mut dyn Write,
    dtype: Dtype,
    len: usize,
    bytes: &[u8],
) -> std::io::Result<()> {
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({len},), }}",
        dtype.descr()
    );
    // magic (6) + version (2) + header length (2) + dict + padding + '\n'
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    let header_len = dict.len() + 1 + (64 - unpadded % 64) % 64;
    out.write_all(MAGIC)?;
    out.write_all(&[1, 0])?;
    let header_len = u16::try_from(header_len).map_err(std::io::Error::other)?;
    out.write_all(&header_len.to_le_bytes())?;
    out.write_all(dict.as_bytes())?;
    out.write_all(&vec![b' '; usize::from(header_len) - dict.len() - 1])?;
    out.write_all(b"\n")?;
    out.write_all(bytes)
}

/// Reads a 1-D little-endian array; anything else (another shape, Fortran
/// order, a big-endian or object dtype, a short file) is an
/// [`Error::CorruptFile`] naming `path`.
pub(crate) fn read(path: &Path) -> Result<Array> {
    let data = std::fs::read(path).map_err(|e| Error::io("reading", path, e))?;
    let bad = |what: &str| Error::corrupt(path, format!("not a 1-D .npy array: {what}"));
    let rest = data
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("no NUMPY magic"))?;
    let (header_len, rest) = match rest {
        [1, _, a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        [2 | 3, _, a, b, c, d, rest @ ..] => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, rest),
        _ => return Err(bad("unknown version")),
    };
    if rest.len() < header_len {
        return Err(bad("header cut short"));
    }
    let (header, body) = rest.split_at(header_len);
    let header = std::str::from_utf8(header).map_err(|_| bad("header is not text"))?;
    let field = |name: &str| -> Option<&str> {
        let at = header.find(&format!("'{name}':"))? + name.len() + 3;
        let value = header[at..].trim_start();
        let end = if value.starts_with('(') {
            value.find(')')? + 1
        } else {
            value.find([',', '}'])?
        };
        Some(value[..end].trim())
    };
    let descr = field("descr").ok_or_else(|| bad("no descr"))?;
    let dtype = Dtype::parse(descr.trim_matches('\''))
        .ok_or_else(|| bad(&format!("unsupported dtype {descr}")))?;
    if field("fortran_order") != Some("False") {
        return Err(bad("Fortran order"));
    }
    let shape = field("shape").ok_or_else(|| bad("no shape"))?;
    let len: usize = shape
        .trim_matches(['(', ')'])
        .trim_end_matches(',')
        .trim()
        .parse()
        .map_err(|_| bad(&format!("shape {shape} is not one-dimensional")))?;
    let size = len
        .checked_mul(dtype.size())
        .ok_or_else(|| bad("shape too large"))?;
    if body.len() != size {
        return Err(bad(&format!(
            "{} bytes of data for {len} values of {}",
            body.len(),
            dtype.descr()
        )));
    }
    Ok(Array {
        dtype,
        bytes: body.to_vec(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_numpys_and_arrays_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let values = [0.5f32, -1.25, 3.0];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = Vec::new();
        write(&mut out, Dtype::F32, 3, &bytes).unwrap();
        // NumPy's own header for this array (recorded with numpy 2.x).
        let header =
            b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
        assert!(out.starts_with(header));
        assert_eq!(out.len(), 128 + 12);
        assert_eq!(out[127], b'\n');
        std::fs::write(&path, &out).unwrap();
        let a = read(&path).unwrap();
        assert_eq!(a.to_f32().unwrap(), values);
        assert!(a.to_i64().is_none());
    }

    #[test]
    fn other_shapes_and_short_files_are_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.npy");
        let mut out = Vec::new();
        write(&mut out, Dtype::I64, 2, &[0u8; 16]).unwrap();
        std::fs::write(&path, &out[..out.len() - 3]).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(
            err.contains("b.npy") && err.contains("bytes of data"),
            "{err}"
        );
        let dict = b"{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }\n";
        let mut two_d = b"\x93NUMPY\x01\x00".to_vec();
        two_d.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        two_d.extend_from_slice(dict);
        two_d.extend_from_slice(&[0u8; 32]);
        std::fs::write(&path, two_d).unwrap();
        assert!(
            read(&path)
                .unwrap_err()
                .to_string()
                .contains("one-dimensional")
        );
        std::fs::write(&path, b"PK\x03\x04").unwrap();
        assert!(read(&path).is_err());
    }
}

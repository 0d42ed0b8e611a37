//! A walk over a GGUF file's header before it is parsed: every count and
//! length is checked against the bytes the file has, so a crafted header
//! cannot make the parser allocate gigabytes or read past the end.

use std::io::{self, BufReader, Read, Seek, SeekFrom};

/// Arrays inside arrays deeper than this are refused (GGUF files nest one level).
const MAX_ARRAY_DEPTH: usize = 2;
/// `GGML_MAX_DIMS`.
const MAX_TENSOR_DIMS: u32 = 4;
/// Byte size of a GGUF value type's items; `None` for strings and arrays.
fn fixed_size(value_type: u32) -> Option<Option<u64>> {
    Some(match value_type {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        8 | 9 => None,
        _ => return None,
    })
}

/// Reads a header, checking each length against what is left of the file.
struct Walk<R> {
    r: BufReader<R>,
    pos: u64,
    len: u64,
}

impl<R: Read + Seek> Walk<R> {
    fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    fn need(&self, n: u64, what: &str) -> Result<(), String> {
        if n > self.left() {
            return Err(format!(
                "{what} needs {n} bytes at offset {} but the file has {} left",
                self.pos,
                self.left()
            ));
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        self.need(N as u64, what)?;
        let mut b = [0u8; N];
        self.r
            .read_exact(&mut b)
            .map_err(|e| format!("{what}: {e}"))?;
        self.pos += N as u64;
        Ok(b)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), String> {
        self.need(n, what)?;
        let n_i64 = i64::try_from(n).map_err(|_| format!("{what}: {n} bytes"))?;
        self.r
            .seek_relative(n_i64)
            .map_err(|e| format!("{what}: {e}"))?;
        self.pos += n;
        Ok(())
    }

    fn string(&mut self, what: &str) -> Result<(), String> {
        let n = self.u64(what)?;
        self.skip(n, what)
    }

    fn value(&mut self, value_type: u32, depth: usize, key: &str) -> Result<(), String> {
        match fixed_size(value_type) {
            Some(Some(size)) => self.skip(size, key),
            Some(None) if value_type == 8 => self.string(key),
            Some(None) => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(format!("`{key}`: arrays nested too deep"));
                }
                let item_type = self.u32(key)?;
                let count = self.u64(key)?;
                match fixed_size(item_type) {
                    Some(Some(size)) => {
                        let total = count
                            .checked_mul(size)
                            .ok_or_else(|| format!("`{key}`: {count} items overflow"))?;
                        self.skip(total, key)
                    }
                    Some(None) => {
                        // Each string or array takes at least 8 bytes (its length).
                        self.need(count.saturating_mul(8), key)?;
                        for _ in 0..count {
                            self.value(item_type, depth + 1, key)?;
                        }
                        Ok(())
                    }
                    None => Err(format!("`{key}`: unknown item type {item_type}")),
                }
            }
            None => Err(format!("`{key}`: unknown value type {value_type}")),
        }
    }
}

/// Checks the header of the GGUF file read by `r` (`len` bytes long):
/// magic, version 2 or 3, then every metadata entry and tensor description,
/// without allocating from any count or length it declares.
pub(crate) fn check_header<R: Read + Seek>(r: R, len: u64) -> Result<(), String> {
    let mut w = Walk {
        r: BufReader::new(r),
        pos: 0,
        len,
    };
    if &w.bytes::<4>("the magic number")? != b"GGUF" {
        return Err("not a GGUF file (no GGUF magic number)".into());
    }
    let version = w.u32("the version")?;
    if !(2..=3).contains(&version) {
        return Err(format!("GGUF version {version} is not supported (2 or 3)"));
    }
    let tensors = w.u64("the tensor count")?;
    let entries = w.u64("the metadata count")?;
    // The least each takes: a key or name length, a type, and more.
    w.need(entries.saturating_mul(8 + 4 + 1), "the metadata entries")?;
    w.need(
        tensors.saturating_mul(8 + 4 + 4 + 8),
        "the tensor descriptions",
    )?;
    for i in 0..entries {
        let key_len = w.u64("a metadata key")?;
        w.need(key_len, "a metadata key")?;
        let mut key = vec![0u8; usize::try_from(key_len.min(256)).unwrap_or(256)];
        w.r.read_exact(&mut key).map_err(|e| e.to_string())?;
        w.pos += key.len() as u64;
        w.skip(key_len - key.len() as u64, "a metadata key")?;
        // The parser drops NULs at the end of a string, as files in the wild need.
        let key = String::from_utf8_lossy(&key)
            .trim_end_matches(char::from(0))
            .to_owned();
        let value_type = w.u32(&key)?;
        if key == "general.alignment" && value_type <= 5 {
            // The parser divides by it to find the tensor data.
            let alignment = match value_type {
                0 | 1 => u64::from(w.bytes::<1>(&key)?[0]),
                2 | 3 => u64::from(u16::from_le_bytes(w.bytes::<2>(&key)?)),
                _ => u64::from(w.u32(&key)?),
            };
            if alignment == 0 {
                return Err("general.alignment is 0".into());
            }
            continue;
        }
        w.value(value_type, 0, &key)
            .map_err(|e| format!("metadata entry {i}: {e}"))?;
    }
    for i in 0..tensors {
        w.string("a tensor name")
            .map_err(|e| format!("tensor {i}: {e}"))?;
        let dims = w.u32("tensor dimensions")?;
        if dims > MAX_TENSOR_DIMS {
            return Err(format!(
                "tensor {i}: {dims} dimensions (at most {MAX_TENSOR_DIMS})"
            ));
        }
        w.skip(u64::from(dims) * 8, "tensor dimensions")?;
        w.u32("a tensor type")?;
        let offset = w.u64("a tensor offset")?;
        if offset > len {
            return Err(format!(
                "tensor {i}: data offset {offset} is past the end of the file ({len} bytes)"
            ));
        }
    }
    Ok(())
}

/// [`check_header`] on a file.
pub(crate) fn check_file(file: &mut std::fs::File) -> io::Result<Result<(), String>> {
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(0))?;
    let out = check_header(&mut *file, len);
    file.seek(SeekFrom::Start(0))?;
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn header(tensors: u64, entries: u64) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(tensors.to_le_bytes());
        b.extend(entries.to_le_bytes());
        b
    }

    fn string(b: &mut Vec<u8>, s: &str) {
        b.extend((s.len() as u64).to_le_bytes());
        b.extend(s.as_bytes());
    }

    fn check(b: &[u8]) -> Result<(), String> {
        check_header(Cursor::new(b), b.len() as u64)
    }

    #[test]
    fn a_small_valid_header_passes() {
        let mut b = header(0, 2);
        string(&mut b, "general.architecture");
        b.extend(8u32.to_le_bytes());
        string(&mut b, "llama");
        string(&mut b, "tokenizer.ggml.scores");
        b.extend(9u32.to_le_bytes());
        b.extend(6u32.to_le_bytes());
        b.extend(3u64.to_le_bytes());
        b.extend([0u8; 12]);
        check(&b).unwrap();
    }

    #[test]
    fn crafted_counts_and_lengths_are_refused_without_allocating() {
        for (what, b) in [
            ("entries", header(0, u64::MAX)),
            ("tensors", header(u64::MAX, 0)),
            ("magic", b"GGML\x03\0\0\0".to_vec()),
            ("version", {
                let mut b = header(0, 0);
                b[4] = 9;
                b
            }),
            ("truncated", b"GGUF\x03\0".to_vec()),
        ] {
            assert!(check(&b).is_err(), "{what}");
        }
        // A key longer than the file.
        let mut b = header(0, 1);
        b.extend(u64::MAX.to_le_bytes());
        assert!(check(&b).unwrap_err().contains("left"));
        // A string value longer than the file.
        let mut b = header(0, 1);
        string(&mut b, "k");
        b.extend(8u32.to_le_bytes());
        b.extend((1u64 << 40).to_le_bytes());
        assert!(check(&b).is_err());
        // An array of a billion u32 in a tiny file, and one whose size overflows.
        for count in [1u64 << 30, u64::MAX] {
            let mut b = header(0, 1);
            string(&mut b, "tokenizer.ggml.token_type");
            b.extend(9u32.to_le_bytes());
            b.extend(4u32.to_le_bytes());
            b.extend(count.to_le_bytes());
            assert!(check(&b).is_err(), "{count}");
        }
        // An array of strings claiming more strings than bytes.
        let mut b = header(0, 1);
        string(&mut b, "tokenizer.ggml.tokens");
        b.extend(9u32.to_le_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend((1u64 << 50).to_le_bytes());
        assert!(check(&b).is_err());
        // An unknown type, and a tensor with too many dimensions.
        let mut b = header(0, 1);
        string(&mut b, "k");
        b.extend(77u32.to_le_bytes());
        assert!(check(&b).unwrap_err().contains("unknown"));
        let mut b = header(1, 0);
        string(&mut b, "t");
        b.extend(1000u32.to_le_bytes());
        b.extend([0u8; 64]);
        assert!(check(&b).unwrap_err().contains("dimensions"));
    }

    #[test]
    fn a_zero_alignment_is_refused() {
        // The key padded with NULs is the same key to the parser.
        for (key, value_type, bytes) in [
            ("general.alignment", 4u32, 0u32.to_le_bytes().to_vec()),
            ("general.alignment", 0, vec![0u8]),
            ("general.alignment\0\0\0", 3, vec![0u8, 0]),
        ] {
            let mut b = header(0, 1);
            string(&mut b, key);
            b.extend(value_type.to_le_bytes());
            b.extend(&bytes);
            let err = check(&b).unwrap_err();
            assert!(err.contains("alignment is 0"), "{err}");
        }
        let mut b = header(0, 1);
        string(&mut b, "general.alignment");
        b.extend(4u32.to_le_bytes());
        b.extend(32u32.to_le_bytes());
        assert_eq!(check(&b), Ok(()));
    }
}

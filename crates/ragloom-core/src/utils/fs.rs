//! Crash-safe persistence: write to a temporary file beside the target, then
//! rename over it, so a failed write never destroys what was stored.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file + rename), creating
/// the parent directory if needed.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(
        ".{file_name}.tmp-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut buf = std::io::BufWriter::with_capacity(1 << 20, file);
        write(&mut buf)?;
        let file = buf.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io("writing", path, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io("renaming into place", path, e)
    })
}

/// Reads and parses a JSON file; a missing file is an [`Error::Io`] and bad
/// JSON an [`Error::CorruptFile`], both naming the path. Lone surrogate
/// escapes are read as U+FFFD (see [`replace_lone_surrogates`]).
pub fn read_json_file<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| Error::io("reading", path, e))?;
    serde_json::from_slice(&replace_lone_surrogates(&bytes)).map_err(|e| Error::corrupt(path, e))
}

/// JSON text with every `\uXXXX` escape of a lone UTF-16 surrogate replaced
/// by `\ufffd`; borrowed unchanged when there is none.
///
/// Python writes a file name that is not UTF-8 in `os.fsdecode`'s form,
/// with the undecodable bytes as lone surrogates (`caf\udce9.txt`), and its
/// `json.dump` escapes them as such. A Rust string cannot hold a lone
/// surrogate and `serde_json` rejects the whole file over one, so the
/// persisted stores read them as U+FFFD instead: the rest of the file loads,
/// and the name shows as `caf\u{fffd}.txt`. Paired surrogates (characters
/// outside the Basic Multilingual Plane) are left as they are.
pub fn replace_lone_surrogates(json: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    /// The code unit of the `\uXXXX` escape starting at `at`, if one does.
    fn escape_at(json: &[u8], at: usize) -> Option<u16> {
        let esc = json.get(at..at + 6)?;
        if esc[0] != b'\\' || esc[1] != b'u' {
            return None;
        }
        let hex = std::str::from_utf8(&esc[2..]).ok()?;
        u16::from_str_radix(hex, 16).ok()
    }
    let is_high = |u: u16| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u16| (0xDC00..0xE000).contains(&u);
    // Most files hold no lone surrogate: nothing is copied until one shows.
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < json.len() {
        if json[i] != b'\\' {
            if let Some(out) = out.as_mut() {
                out.push(json[i]);
            }
            i += 1;
            continue;
        }
        // A backslash only ever starts an escape (JSON allows no other), so
        // walking escape by escape keeps `\\udce9` (an escaped backslash
        // followed by text) apart from a real `\udce9`.
        let (len, lone) = match escape_at(json, i) {
            Some(u) if is_high(u) => match escape_at(json, i + 6) {
                Some(next) if is_low(next) => (12, false),
                _ => (6, true),
            },
            Some(u) if is_low(u) => (6, true),
            Some(_) => (6, false),
            None => (2, false),
        };
        let end = (i + len).min(json.len());
        if lone {
            out.get_or_insert_with(|| json[..i].to_vec())
                .extend_from_slice(br"\ufffd");
        } else if let Some(out) = out.as_mut() {
            out.extend_from_slice(&json[i..end]);
        }
        i = end;
    }
    match out {
        Some(out) => std::borrow::Cow::Owned(out),
        None => std::borrow::Cow::Borrowed(json),
    }
}

#[cfg(test)]
mod tests {
    use super::replace_lone_surrogates;

    fn fixed(json: &str) -> String {
        String::from_utf8_lossy(&replace_lone_surrogates(json.as_bytes())).into_owned()
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        // What Python's json.dump writes for os.fsdecode(b"caf\xe9.txt").
        let python = r#"{"p": "caf\udce9.txt"}"#;
        assert_eq!(fixed(python), r#"{"p": "caf\ufffd.txt"}"#);
        let v: serde_json::Value = serde_json::from_str(&fixed(python)).unwrap_or_default();
        assert_eq!(v["p"], "caf\u{fffd}.txt");
        // A lone high surrogate, at the end or before another escape.
        assert_eq!(fixed(r#""\ud800""#), r#""\ufffd""#);
        assert_eq!(fixed(r#""\ud800\n""#), r#""\ufffd\n""#);
        assert_eq!(fixed(r#""\ud800\u0041""#), r#""\ufffd\u0041""#);
    }

    #[test]
    fn everything_else_is_kept() {
        for json in [
            r#"{"a": "plain"}"#,
            // A pair: one character outside the BMP.
            r#""\ud83d\ude00""#,
            // An escaped backslash followed by the letters udce9.
            r#""\\udce9""#,
            r#""\u00e9\"\\""#,
            // Cut short: left to the parser to report.
            r#""\udc"#,
        ] {
            assert!(matches!(
                replace_lone_surrogates(json.as_bytes()),
                std::borrow::Cow::Borrowed(_)
            ));
        }
    }
}

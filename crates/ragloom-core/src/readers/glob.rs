//! `exclude` patterns matched the way LlamaIndex matches them (through fsspec's
//! glob): `*` stays inside one path segment, `**` spans segments, dotfiles are not special.

use crate::error::{Error, Result};
use regex::Regex;

/// One `exclude` pattern, anchored at the input directory as LlamaIndex
/// anchors it (`input_dir/pattern`, or `input_dir/**/pattern` when recursive).
#[derive(Debug, Clone)]
pub(crate) struct ExcludeGlob {
    regex: Regex,
    /// fsspec matches a directory as `dir/` when the whole glob ends in `/**`.
    dirs_with_slash: bool,
}

impl ExcludeGlob {
    /// Compiles `pattern` below `root`, an absolute, `/`-separated directory.
    pub(crate) fn new(root: &str, pattern: &str, recursive: bool) -> Result<Self> {
        let pattern_parts = pathlib_parts(pattern);
        // pathlib's `/` drops everything before an absolute right-hand side.
        let full = if pattern.starts_with('/') {
            format!("/{}", pattern_parts.join("/"))
        } else {
            let mut full = escape_glob(root);
            let mut tail: Vec<&str> = Vec::new();
            if recursive {
                tail.push("**");
            }
            tail.extend(pattern_parts.iter().copied());
            for part in tail {
                if !full.ends_with('/') {
                    full.push('/');
                }
                full.push_str(part);
            }
            full
        };
        let body = translate(&full)
            .map_err(|why| Error::invalid(format!("exclude pattern {pattern:?}"), why))?;
        let regex = Regex::new(&format!(r"^(?s:{body})\z")).map_err(|e| {
            Error::invalid(
                format!("exclude pattern {pattern:?} is not a valid glob"),
                e,
            )
        })?;
        Ok(Self {
            regex,
            dirs_with_slash: full.ends_with("/**"),
        })
    }

    /// Whether the absolute, `/`-separated `path` is excluded.
    pub(crate) fn matches(&self, path: &str, is_dir: bool) -> bool {
        if is_dir && self.dirs_with_slash {
            self.regex.is_match(&format!("{path}/"))
        } else {
            self.regex.is_match(path)
        }
    }
}

/// Splits like `pathlib.PurePosixPath`: empty and `.` segments vanish.
fn pathlib_parts(pattern: &str) -> Vec<&str> {
    pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect()
}

/// Makes a literal path safe to splice into a glob: each magic character
/// becomes a one-character class.
fn escape_glob(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len());
    for c in literal.chars() {
        match c {
            '*' | '?' | '[' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

/// A whole `/`-separated glob to a regex body (fsspec's `glob_translate` with
/// `recursive=True, include_hidden=True`).
fn translate(pattern: &str) -> std::result::Result<String, &'static str> {
    let parts: Vec<&str> = pattern.split('/').collect();
    let last = parts.len().saturating_sub(1);
    let mut out = String::new();
    for (idx, part) in parts.iter().enumerate() {
        match *part {
            // A lone `*` segment needs at least one character, unlike `*` inside a name.
            "*" => out.push_str(if idx < last { "[^/]+/" } else { "[^/]+" }),
            "**" => out.push_str(if idx < last { "(?:.+/)?" } else { ".*" }),
            p if p.contains("**") => {
                return Err("'**' can only be an entire path component");
            }
            p => {
                translate_segment(p, &mut out);
                if idx < last {
                    out.push('/');
                }
            }
        }
    }
    Ok(out)
}

/// One path segment, fnmatch style: `*` and `?` never cross a `/`.
fn translate_segment(segment: &str, out: &mut String) {
    let chars: Vec<char> = segment.chars().collect();
    let n = chars.len();
    let mut i = 0;
    let mut after_star = false;
    while i < n {
        let c = chars[i];
        i += 1;
        if c == '*' {
            // Runs of `*` mean the same as one.
            if !after_star {
                out.push_str("[^/]*");
            }
            after_star = true;
            continue;
        }
        after_star = false;
        match c {
            '?' => out.push_str("[^/]"),
            '[' => {
                let mut j = i;
                if j < n && chars[j] == '!' {
                    j += 1;
                }
                if j < n && chars[j] == ']' {
                    j += 1;
                }
                while j < n && chars[j] != ']' {
                    j += 1;
                }
                if j >= n {
                    // No closing bracket: the `[` is a literal.
                    out.push_str(r"\[");
                } else {
                    out.push_str(&bracket_class(&chars[i..j]));
                    i = j + 1;
                }
            }
            _ => push_literal(c, out),
        }
    }
}

fn push_literal(c: char, out: &mut String) {
    let mut buf = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut buf)));
}

/// The inside of `[...]` to a regex class. Follows CPython's fnmatch: a `-`
/// between two characters is a range unless it is first or directly follows
/// another range; a descending range (`z-a`) matches nothing; `!` negates.
fn bracket_class(stuff: &[char]) -> String {
    let mut chunks: Vec<Vec<char>> = Vec::new();
    if stuff.contains(&'-') {
        let mut start = 0;
        let mut k = if stuff.first() == Some(&'!') { 2 } else { 1 };
        while let Some(off) = stuff
            .get(k..)
            .and_then(|s| s.iter().position(|&c| c == '-'))
        {
            let hyphen = k + off;
            chunks.push(stuff[start..hyphen].to_vec());
            start = hyphen + 1;
            k = hyphen + 3;
        }
        let rest = stuff.get(start..).unwrap_or_default();
        if rest.is_empty() {
            if let Some(last) = chunks.last_mut() {
                last.push('-');
            }
        } else {
            chunks.push(rest.to_vec());
        }
        // Drop ranges whose ends are out of order, joining their neighbours.
        let mut k = chunks.len();
        while k > 1 {
            k -= 1;
            let descending = match (chunks[k - 1].last(), chunks[k].first()) {
                (Some(a), Some(b)) => a > b,
                _ => false,
            };
            if descending {
                let next = chunks.remove(k);
                let prev = &mut chunks[k - 1];
                prev.pop();
                prev.extend(next.into_iter().skip(1));
            }
        }
    } else {
        chunks.push(stuff.to_vec());
    }

    // Items of the class: each chunk's characters are literal, except that
    // the last of one chunk and the first of the next bound a range.
    let negated = chunks.first().and_then(|c| c.first()) == Some(&'!');
    let mut items: Vec<(char, char)> = Vec::new();
    let mut pending_range_start: Option<char> = None;
    for (ci, chunk) in chunks.iter().enumerate() {
        let skip = usize::from(ci == 0 && negated);
        let body = chunk.get(skip..).unwrap_or_default();
        for (pos, &c) in body.iter().enumerate() {
            if pos == 0 {
                if let Some(lo) = pending_range_start.take() {
                    items.push((lo, c));
                    continue;
                }
            }
            if pos + 1 == body.len() && ci + 1 < chunks.len() {
                pending_range_start = Some(c);
            } else {
                items.push((c, c));
            }
        }
    }
    if let Some(lo) = pending_range_start {
        items.push((lo, lo));
    }

    match (items.is_empty(), negated) {
        (true, false) => r"[^\s\S]".to_string(),
        (true, true) => "(?s:.)".to_string(),
        _ => {
            let mut class = String::from(if negated { "[^" } else { "[" });
            for (lo, hi) in items {
                if lo == hi {
                    class.push_str(&format!(r"\x{{{:X}}}", lo as u32));
                } else {
                    class.push_str(&format!(r"\x{{{:X}}}-\x{{{:X}}}", lo as u32, hi as u32));
                }
            }
            class.push(']');
            class
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(pattern: &str, recursive: bool) -> ExcludeGlob {
        match ExcludeGlob::new("/r", pattern, recursive) {
            Ok(g) => g,
            Err(e) => panic!("{pattern}: {e}"),
        }
    }

    #[test]
    fn star_stays_in_one_segment_and_double_star_spans() {
        let g = glob("*.md", false);
        assert!(g.matches("/r/a.md", false));
        assert!(g.matches("/r/.md", false));
        assert!(!g.matches("/r/sub/a.md", false));
        let g = glob("*.md", true);
        assert!(g.matches("/r/sub/deep/a.md", false));
        let g = glob("sub/**", false);
        assert!(g.matches("/r/sub", true));
        assert!(g.matches("/r/sub/x/y", false));
        assert!(!g.matches("/r/subx", true));
        // A lone `*` segment needs one character.
        let g = glob("*", false);
        assert!(!g.matches("/r/", true));
        assert!(g.matches("/r/a", false));
    }

    #[test]
    fn brackets_follow_fnmatch() {
        let g = glob("[a-c].txt", false);
        assert!(g.matches("/r/b.txt", false));
        assert!(!g.matches("/r/d.txt", false));
        let g = glob("[!a]*", false);
        assert!(!g.matches("/r/abc", false));
        assert!(g.matches("/r/xbc", false));
        let g = glob("[z-a]", false);
        assert!(!g.matches("/r/z", false) && !g.matches("/r/-", false));
        let g = glob("[!z-a]", false);
        assert!(g.matches("/r/q", false));
        let g = glob("[a-]", false);
        assert!(g.matches("/r/-", false) && g.matches("/r/a", false));
        let g = glob("[]x]", false);
        assert!(g.matches("/r/]", false) && g.matches("/r/x", false));
        let g = glob("[ab", false);
        assert!(g.matches("/r/[ab", false));
        let g = glob("[a-c-e]", false);
        assert!(g.matches("/r/b", false) && g.matches("/r/-", false) && g.matches("/r/e", false));
        assert!(!g.matches("/r/d", false));
        let g = glob("[&&|~]", false);
        assert!(g.matches("/r/&", false) && g.matches("/r/~", false));
    }

    #[test]
    fn root_with_magic_characters_is_literal_and_bad_patterns_are_errors() {
        let g = ExcludeGlob::new("/data[1]/*x", "a.txt", false).ok();
        assert!(g.is_some_and(|g| g.matches("/data[1]/*x/a.txt", false)));
        let err = ExcludeGlob::new("/r", "a**b", true).err();
        assert!(err.is_some_and(|e| e.to_string().contains("a**b")));
    }
}

//! Python `str.format` with named fields only: `{name}` is replaced, `{{` and
//! `}}` are literal braces; templates are LlamaIndex's, so they follow its rules.

use crate::error::{Error, Result};

/// Formats `template`, looking each `{name}` up with `lookup`. A field that
/// `lookup` does not know is an error naming it, as Python raises `KeyError`.
pub fn format_named<'a>(
    template: &str,
    lookup: &dyn Fn(&str) -> Option<&'a str>,
) -> Result<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(pos) = rest.find(['{', '}']) {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        if let Some(after) = tail.strip_prefix("{{") {
            out.push('{');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            out.push('}');
            rest = after;
        } else if let Some(stripped) = tail.strip_prefix('{') {
            let end = stripped.find('}').ok_or_else(|| {
                Error::InvalidInput(format!("unclosed `{{` in template: {template:?}"))
            })?;
            let name = &stripped[..end];
            let value = lookup(name).ok_or_else(|| {
                Error::InvalidInput(format!("template variable `{name}` has no value"))
            })?;
            out.push_str(value);
            rest = &stripped[end + 1..];
        } else {
            return Err(Error::InvalidInput(format!(
                "single `}}` in template: {template:?}"
            )));
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The distinct `{name}` fields of `template`, in order of first appearance.
pub fn template_vars(template: &str) -> Vec<String> {
    let mut vars: Vec<String> = Vec::new();
    let mut rest = template;
    while let Some(pos) = rest.find(['{', '}']) {
        let tail = &rest[pos..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            rest = &tail[2..];
        } else if let Some(stripped) = tail.strip_prefix('{') {
            match stripped.find('}') {
                Some(end) => {
                    let name = &stripped[..end];
                    if !vars.iter().any(|v| v == name) {
                        vars.push(name.to_string());
                    }
                    rest = &stripped[end + 1..];
                }
                None => break,
            }
        } else {
            rest = &tail[1..];
        }
    }
    vars
}

/// Lowercase hex of `bytes`, as Python's `hexdigest()` writes a digest.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_escapes() {
        let lookup = |n: &str| match n {
            "a" => Some("1"),
            "b" => Some("{x}"),
            _ => None,
        };
        assert_eq!(
            format_named("{a}+{b} {{lit}}", &lookup).ok().as_deref(),
            Some("1+{x} {lit}")
        );
        assert!(
            format_named("{missing}", &lookup).is_err_and(|e| e.to_string().contains("missing"))
        );
        assert_eq!(
            template_vars("{context_str} and {query_str} {{no}} {context_str}"),
            ["context_str", "query_str"]
        );
    }
}

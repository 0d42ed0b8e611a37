//! What a durable index is synced from: a folder, a file or a glob, resolved
//! to the files to read and to the stable key its index is stored under.

use crate::error::{Error, Result};
use globset::GlobBuilder;
use std::path::{Component, Path, PathBuf};

/// A resolved source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// What identifies the index: the canonical folder or file, or
    /// `<canonical base>/<pattern>` for a glob.
    pub key: String,
    /// The folder the paths are shown relative to.
    pub base: PathBuf,
    /// How the files are found.
    pub kind: SourceKind,
}

/// How a source's files are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// Every file under a folder, recursively (hidden files excluded).
    Folder,
    /// One file.
    File(PathBuf),
    /// The files under `base` matching a glob (relative to `base`).
    Glob(String),
}

fn has_glob_chars(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

impl Source {
    /// Resolves `arg` (a folder, a file, or a glob such as `docs/**/*.md`).
    /// A path that does not exist is [`Error::NotFound`].
    pub fn resolve(arg: &str) -> Result<Self> {
        let path = Path::new(arg);
        if !has_glob_chars(arg) || path.exists() {
            let canonical = path
                .canonicalize()
                .map_err(|e| Error::NotFound(format!("cannot read {arg}: {e}")))?;
            return Ok(if canonical.is_dir() {
                Self {
                    key: canonical.display().to_string(),
                    base: canonical,
                    kind: SourceKind::Folder,
                }
            } else {
                Self {
                    key: canonical.display().to_string(),
                    base: canonical
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| PathBuf::from("/")),
                    kind: SourceKind::File(canonical),
                }
            });
        }
        // The base is the longest leading run of components without glob characters.
        let mut base = PathBuf::new();
        let mut rest = Vec::new();
        for c in path.components() {
            let s = c.as_os_str().to_string_lossy();
            if rest.is_empty() && !has_glob_chars(&s) {
                base.push(c);
            } else {
                if matches!(c, Component::ParentDir) {
                    return Err(Error::InvalidInput(format!(
                        "the glob {arg} has `..` after its first wildcard; put the `..` parts before the wildcard, e.g. ../docs/**/*.md"
                    )));
                }
                rest.push(s.into_owned());
            }
        }
        if base.as_os_str().is_empty() {
            base.push(".");
        }
        let base = base.canonicalize().map_err(|e| {
            Error::NotFound(format!(
                "cannot read {}: {e} (the part of the glob before the first wildcard must be a folder)",
                base.display()
            ))
        })?;
        let pattern = rest.join("/");
        Ok(Self {
            key: format!("{}/{pattern}", base.display()),
            base,
            kind: SourceKind::Glob(pattern),
        })
    }

    /// The files a glob source matches (sorted), or `None` for a folder or a file.
    pub fn glob_files(&self) -> Result<Option<Vec<PathBuf>>> {
        let SourceKind::Glob(pattern) = &self.kind else {
            return Ok(None);
        };
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| Error::invalid(format!("bad glob {pattern}"), e))?
            .compile_matcher();
        let mut files = Vec::new();
        for entry in walkdir::WalkDir::new(&self.base)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        {
            let entry = entry.map_err(|e| {
                Error::NotFound(format!("cannot list {}: {e}", self.base.display()))
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            if let Ok(rel) = entry.path().strip_prefix(&self.base)
                && glob.is_match(rel)
            {
                files.push(entry.path().to_path_buf());
            }
        }
        files.sort();
        Ok(Some(files))
    }

    /// `path` relative to the source's base, for display.
    pub fn display_path(&self, path: &str) -> String {
        Path::new(path)
            .strip_prefix(&self.base)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| path.to_string())
    }

    /// A name for the index's folder: the source's folder or file name, kept
    /// to letters, digits, `-` and `_` (others become `_`), at most 40
    /// characters; `root` when nothing is left.
    pub fn readable_name(&self) -> String {
        let name: String = Path::new(&self.key)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        if name.is_empty() {
            "root".to_string()
        } else {
            name
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn folders_files_and_globs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/one.md"), "x").unwrap();
        std::fs::write(root.join("a/b/two.md"), "x").unwrap();
        std::fs::write(root.join("a/b/three.txt"), "x").unwrap();

        let s = Source::resolve(root.join("a").to_str().unwrap()).unwrap();
        assert!(matches!(s.kind, SourceKind::Folder));
        assert_eq!(s.key, root.join("a").display().to_string());
        assert_eq!(s.readable_name(), "a");

        let s = Source::resolve(root.join("a/one.md").to_str().unwrap()).unwrap();
        assert!(matches!(s.kind, SourceKind::File(_)));
        assert_eq!(s.readable_name(), "one_md");

        let g = format!("{}/a/**/*.md", root.display());
        let s = Source::resolve(&g).unwrap();
        assert_eq!(s.base, root.join("a"));
        let files = s.glob_files().unwrap().unwrap();
        assert_eq!(files, vec![root.join("a/b/two.md"), root.join("a/one.md")]);
        assert_eq!(
            s.display_path(root.join("a/b/two.md").to_str().unwrap()),
            "b/two.md"
        );

        let err = Source::resolve(root.join("missing").to_str().unwrap()).unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        let err = Source::resolve(&format!("{}/a/*/../x", root.display())).unwrap_err();
        assert!(err.is_invalid_input(), "{err}");
    }
}

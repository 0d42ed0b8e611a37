//! Durable indexes (core's [`ragloom_core::durable`]) with where they live
//! named as a user writes it: `embedded`, `postgres://...` or `qdrant://...`.
//!
//! ```no_run
//! # async fn run() -> ragloom::Result<()> {
//! use ragloom::durable::{DurableIndex, Source, StoreUrl, SyncOptions, file_readers};
//!
//! let location = StoreUrl::parse("embedded")?.connect()?;
//! let index = DurableIndex::new(location, "./storage", Source::resolve("./docs")?);
//! let options = SyncOptions { reader_setup: file_readers(), ..SyncOptions::default() };
//! let report = index.sync(&options).await?;
//! println!("{} documents written, {} files unchanged", report.ingested, report.files_unchanged);
//! # Ok(()) }
//! ```

pub use ragloom_core::durable::*;

use crate::providers::EmbedSpec;
use ragloom_core::{Error, Result};
use std::sync::Arc;

/// Where durable indexes are kept, as written in a flag, a variable or a
/// config file.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum StoreUrl {
    /// SQLite files under the local persist folder (the default).
    #[default]
    Embedded,
    /// A PostgreSQL server with pgvector; tables in `schema`.
    Postgres {
        /// The connection URL.
        url: String,
        /// The schema (default `public`).
        schema: String,
    },
    /// A Qdrant server; `url` is its gRPC address (`http://host:6334`),
    /// `prefix` starts every collection name (empty, or ending in `_`).
    Qdrant {
        /// The gRPC address.
        url: String,
        /// What collection names start with.
        prefix: String,
    },
}

fn invalid(message: String) -> Error {
    Error::InvalidInput(message)
}

impl StoreUrl {
    /// `embedded` (or `sqlite`), a `postgres://` URL (a `schema=` query
    /// parameter names the schema, default `public`), or
    /// `qdrant://HOST[:PORT][?prefix=NAME]` (the gRPC port, 6334 by default;
    /// `qdrants://` for TLS).
    pub fn parse(value: &str) -> Result<Self> {
        let v = value.trim();
        if v.is_empty() || v == "embedded" || v == "sqlite" {
            return Ok(Self::Embedded);
        }
        if let Some(rest) = v.strip_prefix("qdrant://") {
            return Self::parse_qdrant(rest, "http");
        }
        if let Some(rest) = v.strip_prefix("qdrants://") {
            return Self::parse_qdrant(rest, "https");
        }
        if !(v.starts_with("postgres://") || v.starts_with("postgresql://")) {
            return Err(invalid(
                "unknown store: give `embedded`, a postgres:// or a qdrant:// URL, e.g. postgres://user@host:5432/db or qdrant://localhost:6334".into(),
            ));
        }
        let (base, query) = v.split_once('?').unwrap_or((v, ""));
        let mut schema = "public".to_string();
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("schema", s)) => schema = s.to_lowercase(),
                _ => rest.push(pair),
            }
        }
        let ok = schema
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && schema
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ok {
            return Err(invalid(format!(
                "the schema `{schema}` is not a plain identifier: use letters, digits and `_`, e.g. ?schema=ragloom"
            )));
        }
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        #[cfg(feature = "postgres")]
        crate::postgres::connect_options(&url)?;
        Ok(Self::Postgres { url, schema })
    }

    fn parse_qdrant(rest: &str, scheme: &str) -> Result<Self> {
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut prefix = String::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("prefix", p))
                    if !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
                {
                    prefix = format!("{p}_");
                }
                _ => {
                    return Err(invalid(format!(
                        "`{pair}` is not an option of a qdrant:// store: the one option is ?prefix=NAME (letters, digits and `_`)"
                    )));
                }
            }
        }
        let rest = rest.trim_end_matches('/');
        let bad = || {
            invalid(format!(
                "`qdrant://{rest}` is not a Qdrant address: give qdrant://HOST:PORT with Qdrant's gRPC port, e.g. qdrant://localhost:6334"
            ))
        };
        if rest.is_empty() || rest.contains(['/', '?', '@', ' ']) {
            return Err(bad());
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && !h.ends_with(':') => {
                (h, p.parse::<u16>().map_err(|_| bad())?)
            }
            Some(_) => return Err(bad()),
            None => (rest, 6334),
        };
        Ok(Self::Qdrant {
            url: format!("{scheme}://{host}:{port}"),
            prefix,
        })
    }

    /// The location these indexes live in. A store whose feature is not
    /// compiled in is an error naming the feature.
    pub fn connect(&self) -> Result<Arc<dyn IndexLocation>> {
        match self {
            #[cfg(feature = "sqlite")]
            Self::Embedded => Ok(Arc::new(crate::sqlite::SqliteLocation::new())),
            #[cfg(feature = "postgres")]
            Self::Postgres { url, schema } => Ok(Arc::new(crate::postgres::PostgresLocation::new(
                url.clone(),
                schema.clone(),
            ))),
            #[cfg(feature = "qdrant")]
            Self::Qdrant { url, prefix } => {
                let api_key = std::env::var("QDRANT_API_KEY")
                    .ok()
                    .filter(|k| !k.trim().is_empty());
                let location = crate::qdrant::QdrantLocation::new(url.clone(), prefix.clone())
                    .api_key(api_key);
                // The vectors already made stay on this machine, in the
                // source's folder, as the embedded store keeps them.
                #[cfg(feature = "sqlite")]
                let location = location.embedding_cache(Arc::new(|dir: &IndexDir| {
                    let cache: Arc<dyn ragloom_core::embeddings::EmbeddingCacheStore> =
                        Arc::new(crate::sqlite::SqliteStore::open(dir.embeddings_path())?);
                    Ok(cache)
                }));
                Ok(Arc::new(location))
            }
            #[allow(unreachable_patterns)]
            other => Err(Error::FeatureMissing {
                what: format!("the store {}", other.label()),
                feature: match other {
                    Self::Embedded => "sqlite",
                    Self::Postgres { .. } => "postgres",
                    Self::Qdrant { .. } => "qdrant",
                },
            }),
        }
    }

    /// For messages: the server, user and database, never a password.
    pub fn label(&self) -> String {
        match self {
            Self::Embedded => "embedded".into(),
            Self::Qdrant { url, prefix } => {
                let base =
                    url.replacen("https://", "qdrants://", 1)
                        .replacen("http://", "qdrant://", 1);
                if prefix.is_empty() {
                    base
                } else {
                    format!("{base}?prefix={}", prefix.trim_end_matches('_'))
                }
            }
            #[cfg(feature = "postgres")]
            Self::Postgres { url, schema } => {
                crate::postgres::PostgresLocation::new(url.clone(), schema.clone()).label()
            }
            #[cfg(not(feature = "postgres"))]
            Self::Postgres { schema, .. } => format!("postgres://... (schema {schema})"),
        }
    }
}

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password.
        f.write_str(&self.label())
    }
}

impl EmbedSpec {
    /// The model this spec builds, for a durable index: known by the spec
    /// itself (a change of provider, model or folder builds anew), with its
    /// own tokenizer for fitted chunks. `None` for [`EmbedSpec::None`].
    pub fn embed_model(&self) -> Result<Option<EmbedModel>> {
        let Some(model) = self.build()? else {
            return Ok(None);
        };
        let spec = self.clone();
        Ok(Some(EmbedModel {
            model,
            identity: serde_json::to_value(self)?,
            label: self.label(),
            chunk_tokenizer: Some(Arc::new(move || spec.chunk_tokenizer())),
        }))
    }

    /// The spec an index's [`BuildSettings::embed`] names, if it is one.
    pub fn from_identity(identity: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(identity.clone()).ok()
    }
}

/// Reads every format `SimpleDirectoryReader` knows and, with the
/// `file-readers` feature, PDF, DOCX, EPUB, HTML, CSV and JSON too.
pub fn file_readers() -> ReaderSetup {
    #[cfg(feature = "file-readers")]
    {
        use crate::file_readers::SimpleDirectoryReaderExt;
        Arc::new(|r| r.with_default_file_extractors())
    }
    #[cfg(not(feature = "file-readers"))]
    {
        Arc::new(|r| r)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn store_urls() {
        assert_eq!(StoreUrl::parse("embedded").unwrap(), StoreUrl::Embedded);
        assert_eq!(
            StoreUrl::parse("qdrant://localhost?prefix=team").unwrap(),
            StoreUrl::Qdrant {
                url: "http://localhost:6334".into(),
                prefix: "team_".into()
            }
        );
        assert_eq!(
            StoreUrl::parse("qdrant://h:1?prefix=a").unwrap().label(),
            "qdrant://h:1?prefix=a"
        );
        for bad in [
            "mysql://x",
            "qdrant://",
            "qdrant://h:x",
            "qdrant://h?foo=1",
            "postgres://u@h/db?schema=A-b",
        ] {
            assert!(StoreUrl::parse(bad).is_err(), "{bad}");
        }
    }

    /// The identity of a model is its spec as JSON: the same bytes the
    /// builds of earlier releases were fingerprinted with.
    #[test]
    fn embed_identity_is_the_spec() {
        let spec = EmbedSpec::Ollama {
            model: "nomic-embed-text".into(),
            host: None,
        };
        let v = serde_json::to_value(&spec).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            serde_json::to_string(&spec).unwrap()
        );
        assert_eq!(EmbedSpec::from_identity(&v), Some(spec));
        assert_eq!(
            serde_json::to_value(EmbedSpec::None).unwrap(),
            ragloom_core::durable::BuildSettings {
                embed: serde_json::json!({"provider": "none"}),
                chunk_size: 1,
                chunk_overlap: 0,
                chunk_tokenizer: None
            }
            .embed
        );
    }
}

//! What shapes a build's nodes and vectors (the splitter's sizes, the
//! embedding model), its fingerprint, and how a sync chooses them.

use super::IndexError;
use super::manifest::Manifest;
use crate::embeddings::Embedding;
use crate::error::Result;
use crate::tokenizer::Tokenizer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::Arc;

/// LlamaIndex's `SentenceSplitter` defaults.
pub const DEFAULT_CHUNK_SIZE: usize = 1024;
/// See [`DEFAULT_CHUNK_SIZE`].
pub const DEFAULT_CHUNK_OVERLAP: usize = 200;

/// [`BuildSettings::chunk_tokenizer`] when chunks are counted with the embedding model's tokenizer.
pub const CHUNK_TOKENIZER_MODEL: &str = "embedding-model";

/// What shapes the nodes and the vectors; a change means a new build.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct BuildSettings {
    /// The embedding model the vectors are made with, as its
    /// [`EmbedModel::identity`] (`{"provider":"none"}` without one).
    pub embed: Value,
    /// The sentence splitter's chunk size, in tokens.
    pub chunk_size: usize,
    /// The sentence splitter's chunk overlap, in tokens.
    pub chunk_overlap: usize,
    /// Which tokens: [`CHUNK_TOKENIZER_MODEL`] for the embedding model's own;
    /// absent for cl100k (so builds made before this field keep their name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_tokenizer: Option<String>,
}

impl BuildSettings {
    /// What the chunk sizes count: `cl100k tokens` or `embedding-model tokens`.
    pub fn chunk_unit(&self) -> String {
        format!(
            "{} tokens",
            self.chunk_tokenizer.as_deref().unwrap_or("cl100k")
        )
    }

    /// A short stable name of these settings, used in the build's name.
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let digest = Sha256::digest(&json);
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    }
}

/// The identity of "no embedding model" in [`BuildSettings::embed`].
pub fn no_model() -> Value {
    serde_json::json!({"provider": "none"})
}

/// Reads an embedding model's own tokenizer and the tokens it reads whole.
pub type ChunkTokenizerSource =
    Arc<dyn Fn() -> Result<Option<(Arc<dyn Tokenizer>, usize)>> + Send + Sync>;

/// An embedding model for a durable index: the model, what identifies it
/// across runs, and (optionally) how to count chunks with its tokenizer.
#[derive(Clone)]
pub struct EmbedModel {
    /// The model.
    pub model: Arc<dyn Embedding>,
    /// What identifies it (provider, name, ...): its vectors are kept while
    /// this is unchanged; a change builds a new index beside the live one.
    pub identity: Value,
    /// For messages, e.g. `huggingface bge-small`.
    pub label: String,
    /// Its tokenizer, read only when chunks are fitted to it.
    pub chunk_tokenizer: Option<ChunkTokenizerSource>,
}

impl fmt::Debug for EmbedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbedModel")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl EmbedModel {
    /// `model`, known by `identity` (e.g. `{"provider":"openai","model":"..."}`).
    pub fn new(model: Arc<dyn Embedding>, identity: Value) -> Self {
        let label = match &identity {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        Self {
            model,
            identity,
            label,
            chunk_tokenizer: None,
        }
    }
}

/// How a sync cuts documents into chunks: unset fields keep the index's
/// (or the defaults).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Chunking {
    /// The chunk size in tokens.
    pub chunk_size: Option<usize>,
    /// The chunk overlap in tokens.
    pub chunk_overlap: Option<usize>,
    /// Count chunks with the embedding model's tokenizer, sized to what it
    /// reads whole; `None` keeps the index's choice.
    pub chunk_fit: Option<ChunkFit>,
}

/// Whether chunks are fitted to the embedding model's tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkFit {
    /// Fitted to the model's tokenizer and input length.
    Fit,
    /// Counted in cl100k tokens.
    Cl100k,
}

/// The settings a sync builds with (the options, else the live index's,
/// else the defaults) and, with fitted chunks, the tokenizer to split with.
pub(crate) fn resolve(
    chunking: &Chunking,
    embed: Option<&EmbedModel>,
    live: Option<&Manifest>,
) -> Result<(BuildSettings, Option<Arc<dyn Tokenizer>>)> {
    let identity = embed.map_or_else(no_model, |e| e.identity.clone());
    // Fitting is asked for, or kept from the index (an explicit chunk size
    // alone means cl100k tokens); kept only while the model can be fitted.
    // The model's tokenizer is read only then.
    let wanted = match chunking.chunk_fit {
        Some(fit) => fit == ChunkFit::Fit,
        None => {
            chunking.chunk_size.is_none()
                && live.is_some_and(|m| m.settings.chunk_tokenizer.is_some())
        }
    };
    let chunk_tokenizer = match (wanted, embed.and_then(|e| e.chunk_tokenizer.as_ref())) {
        (true, Some(read)) => read()?,
        _ => None,
    };
    let fit = wanted && (chunking.chunk_fit == Some(ChunkFit::Fit) || chunk_tokenizer.is_some());
    let budget = match (&chunk_tokenizer, fit) {
        (_, false) => None,
        (Some((_, budget)), true) => Some(*budget),
        (None, true) => {
            let label = embed.map_or_else(|| "none".to_string(), |e| e.label.clone());
            return Err(IndexError::Settings {
                message: format!(
                    "--chunk-fit needs an embedding model whose maximum input length is known; {label} does not say it"
                ),
                hint: "use a local model (--embed huggingface --embed-model FOLDER), or give --chunk-size".into(),
            }
            .into());
        }
    };
    // The index's sizes still apply when they are counted the same way.
    let same = live.filter(|m| {
        m.settings.chunk_tokenizer.is_some() == fit && (!fit || m.settings.embed == identity)
    });
    let chunk_size = match (chunking.chunk_size, budget) {
        (Some(n), Some(b)) if n > b => {
            return Err(IndexError::Settings {
                message: format!(
                    "--chunk-size {n} is more than the {b} tokens the embedding model reads"
                ),
                hint: format!("give at most {b}, or leave --chunk-size out"),
            }
            .into());
        }
        (Some(n), _) => n,
        (None, Some(b)) => same.map_or(b, |m| m.settings.chunk_size.min(b)),
        (None, None) => same.map_or(DEFAULT_CHUNK_SIZE, |m| m.settings.chunk_size),
    };
    let chunk_overlap = chunking
        .chunk_overlap
        .or(same
            .map(|m| m.settings.chunk_overlap)
            .filter(|o| *o < chunk_size))
        .unwrap_or(match budget {
            // Fitted chunks are short: a fifth of one is shared.
            Some(_) => (chunk_size / 5).min(DEFAULT_CHUNK_OVERLAP),
            None => DEFAULT_CHUNK_OVERLAP.min(chunk_size.saturating_sub(1)),
        });
    if chunk_size == 0 || chunk_overlap >= chunk_size {
        return Err(IndexError::Settings {
            message: format!(
                "--chunk-overlap ({chunk_overlap}) must be smaller than --chunk-size ({chunk_size})"
            ),
            hint: "e.g. --chunk-size 512 --chunk-overlap 50".into(),
        }
        .into());
    }
    let settings = BuildSettings {
        embed: identity,
        chunk_size,
        chunk_overlap,
        chunk_tokenizer: fit.then(|| CHUNK_TOKENIZER_MODEL.to_owned()),
    };
    Ok((settings, chunk_tokenizer.map(|(t, _)| t)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The fingerprint names builds on disk and in servers: it must not
    /// move, or every index would be rebuilt after an upgrade.
    #[test]
    fn fingerprints_of_existing_builds_do_not_move() {
        let s = BuildSettings {
            embed: no_model(),
            chunk_size: 1024,
            chunk_overlap: 20,
            chunk_tokenizer: None,
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"embed":{"provider":"none"},"chunk_size":1024,"chunk_overlap":20}"#
        );
        assert_eq!(s.fingerprint().len(), 12);
        let again: BuildSettings =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(again.fingerprint(), s.fingerprint());
    }

    #[test]
    fn options_then_the_live_index_then_the_defaults() {
        let (s, _) = resolve(&Chunking::default(), None, None).unwrap();
        assert_eq!((s.chunk_size, s.chunk_overlap), (1024, 200));
        let live = Manifest {
            format: 2,
            source: "x".into(),
            settings: BuildSettings {
                chunk_size: 300,
                chunk_overlap: 30,
                ..s.clone()
            },
            created: String::new(),
            updated: String::new(),
            listed_at_ns: 0,
            last_ingest: Default::default(),
            fusion: None,
        };
        let (s, _) = resolve(&Chunking::default(), None, Some(&live)).unwrap();
        assert_eq!((s.chunk_size, s.chunk_overlap), (300, 30));
        let opts = Chunking {
            chunk_size: Some(10),
            chunk_overlap: Some(10),
            chunk_fit: None,
        };
        let err = resolve(&opts, None, Some(&live)).unwrap_err().to_string();
        assert!(err.contains("must be smaller"), "{err}");
        let fit = Chunking {
            chunk_fit: Some(ChunkFit::Fit),
            ..Chunking::default()
        };
        let err = resolve(&fit, None, None).unwrap_err().to_string();
        assert!(err.contains("maximum input length"), "{err}");
    }
}

//! Which LLM and embedding model to use, as data: chosen from flags, the
//! environment or a config file, then built into trait objects.
//!
//! [`ProviderSpec::from_env`] reads the variables below; [`LlmSpec::build`] and
//! [`EmbedSpec::build`] construct the provider when its feature is compiled
//! in, and say which feature is missing otherwise.
//!
//! | variable | effect |
//! |---|---|
//! | `RAGLOOM_LLM` | `none`, `openai`, `openai-like`, `ollama` or `candle` |
//! | `RAGLOOM_LLM_MODEL` | the model name (OpenAI, OpenAI-compatible, Ollama) |
//! | `RAGLOOM_LLM_API_BASE` | the server of an OpenAI-compatible LLM |
//! | `RAGLOOM_LLM_GGUF` | a GGUF file: selects the in-process candle LLM |
//! | `RAGLOOM_LLM_CONTEXT_WINDOW` | the LLM's context window in tokens (OpenAI, OpenAI-compatible, Ollama), when its default is wrong for the model or server |
//! | `OPENAI_API_KEY` | selects OpenAI when nothing above chose an LLM |
//! | `OLLAMA_HOST` | selects Ollama when nothing above chose an LLM (needs `RAGLOOM_LLM_MODEL`) |
//! | `RAGLOOM_EMBED` | `none`, `openai`, `openai-like`, `ollama` or `huggingface` |
//! | `RAGLOOM_EMBED_MODEL` | the embedding model name |
//! | `RAGLOOM_EMBED_API_BASE` | the server of an OpenAI-compatible embedding model |
//! | `RAGLOOM_EMBED_MODEL_DIR` | a sentence-transformers folder: selects local Hugging Face embeddings |

use ragloom_core::settings::Settings;
use ragloom_core::{Embedding, Error, Llm, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// The LLM to use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "kebab-case")]
pub enum LlmSpec {
    /// No LLM: answers are the most relevant passages.
    #[default]
    None,
    /// OpenAI's API; the key comes from `OPENAI_API_KEY`.
    #[serde(rename = "openai")]
    OpenAI {
        /// The model (default: LlamaIndex's, `gpt-3.5-turbo`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// The model's context window in tokens, when the default is wrong
        /// for it (prompts are packed to fit it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context_window: Option<usize>,
    },
    /// Any OpenAI-compatible server (llama.cpp, vLLM, LM Studio, ...).
    #[serde(rename = "openai-like")]
    OpenAILike {
        /// The server, e.g. `http://127.0.0.1:8080/v1`.
        api_base: String,
        /// The model name the server knows.
        model: String,
        /// The model's context window in tokens, when the default is wrong
        /// for it (prompts are packed to fit it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context_window: Option<usize>,
    },
    /// An Ollama server (`OLLAMA_HOST`, default `http://127.0.0.1:11434`).
    Ollama {
        /// The model, e.g. `llama3.2`.
        model: String,
        /// The server address, when not `OLLAMA_HOST`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// The model's context window in tokens, when the default is wrong
        /// for it (prompts are packed to fit it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context_window: Option<usize>,
    },
    /// A GGUF model run in-process with candle.
    Candle {
        /// The `.gguf` file.
        gguf: PathBuf,
    },
}

/// The embedding model to use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "kebab-case")]
pub enum EmbedSpec {
    /// No embedding model: retrieval is BM25 over the text.
    #[default]
    None,
    /// OpenAI's embeddings; the key comes from `OPENAI_API_KEY`.
    #[serde(rename = "openai")]
    OpenAI {
        /// The model (default `text-embedding-ada-002`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Embeddings from an OpenAI-compatible server.
    #[serde(rename = "openai-like")]
    OpenAILike {
        /// The server, e.g. `http://127.0.0.1:8080/v1`.
        api_base: String,
        /// The model name the server knows.
        model: String,
    },
    /// Embeddings from an Ollama server.
    Ollama {
        /// The model, e.g. `nomic-embed-text`.
        model: String,
        /// The server address, when not `OLLAMA_HOST`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// A local sentence-transformers model folder, run in-process with candle.
    #[serde(rename = "huggingface")]
    HuggingFace {
        /// The model folder (`config.json`, `tokenizer.json`, `model.safetensors`, ...).
        model_dir: PathBuf,
    },
}

/// An LLM and an embedding model, as data.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSpec {
    /// The LLM.
    #[serde(default)]
    pub llm: LlmSpec,
    /// The embedding model.
    #[serde(default)]
    pub embed: EmbedSpec,
}

impl ProviderSpec {
    /// The providers the process environment configures (see the module docs).
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
    }

    /// The providers `var` configures; `var` returns a variable's value.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        Ok(Self {
            llm: LlmSpec::from_lookup(&var)?.unwrap_or_default(),
            embed: EmbedSpec::from_lookup(&var)?.unwrap_or_default(),
        })
    }
}

impl ProviderSpec {
    /// [`Settings`] holding the LLM and embedding model this spec builds
    /// (unset where the spec says `None`), other fields at their defaults.
    pub fn build_settings(&self) -> Result<Settings> {
        let mut settings = Settings::new();
        if let Some(llm) = self.llm.build()? {
            settings = settings.with_llm(llm);
        }
        if let Some(embed) = self.embed.build()? {
            settings = settings.with_embed_model(embed);
        }
        Ok(settings)
    }
}

/// `Settings::from_env()`: LlamaIndex's global `Settings`, filled from the
/// environment (see the [module docs](self) for the variables).
pub trait SettingsFromEnv: Sized {
    /// Settings whose LLM and embedding model are the ones the environment
    /// configures; a provider whose feature is not compiled in is an error naming it.
    fn from_env() -> Result<Self>;
}

impl SettingsFromEnv for Settings {
    fn from_env() -> Result<Self> {
        ProviderSpec::from_env()?.build_settings()
    }
}

fn config_error(message: String) -> Error {
    Error::InvalidInput(message)
}

impl LlmSpec {
    /// The LLM `var` configures, `None` when it configures none.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>> {
        let spec = Self::chosen(&var)?;
        let Some(window) = var("RAGLOOM_LLM_CONTEXT_WINDOW") else {
            return Ok(spec);
        };
        let window = Self::parse_context_window(&window)?;
        spec.map(|s| s.with_context_window(window)).transpose()
    }

    /// A context window as written in a flag or variable: a positive number of tokens.
    pub fn parse_context_window(text: &str) -> Result<usize> {
        text.trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                config_error(format!(
                    "the context window must be a positive number of tokens, not `{text}`"
                ))
            })
    }

    /// The LLM `var` names, before any context window is applied.
    fn chosen(var: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>> {
        let model = var("RAGLOOM_LLM_MODEL");
        if let Some(kind) = var("RAGLOOM_LLM") {
            return Self::parse(
                &kind,
                model,
                var("RAGLOOM_LLM_API_BASE"),
                var("RAGLOOM_LLM_GGUF"),
            )
            .map(Some);
        }
        if let Some(gguf) = var("RAGLOOM_LLM_GGUF") {
            return Ok(Some(Self::Candle { gguf: gguf.into() }));
        }
        if let Some(api_base) = var("RAGLOOM_LLM_API_BASE") {
            let model = model.ok_or_else(|| {
                config_error("RAGLOOM_LLM_API_BASE is set but RAGLOOM_LLM_MODEL is not: name the model the server serves".into())
            })?;
            return Ok(Some(Self::OpenAILike {
                api_base,
                model,
                context_window: None,
            }));
        }
        if var("OPENAI_API_KEY").is_some() {
            return Ok(Some(Self::OpenAI {
                model,
                context_window: None,
            }));
        }
        if var("OLLAMA_HOST").is_some() {
            if let Some(model) = model {
                return Ok(Some(Self::Ollama {
                    model,
                    host: None,
                    context_window: None,
                }));
            }
        }
        Ok(None)
    }

    /// The same LLM with a context window of `tokens` (the `--context-window`
    /// flag, `RAGLOOM_LLM_CONTEXT_WINDOW`): what prompts are packed to fit.
    /// No LLM ignores it; the candle LLM reads its window from the GGUF file,
    /// so setting one there is an error.
    pub fn with_context_window(mut self, tokens: usize) -> Result<Self> {
        match &mut self {
            Self::None => {}
            Self::OpenAI { context_window, .. }
            | Self::OpenAILike { context_window, .. }
            | Self::Ollama { context_window, .. } => *context_window = Some(tokens),
            Self::Candle { .. } => {
                return Err(config_error(
                    "the candle LLM takes its context window from the GGUF file: drop --context-window / RAGLOOM_LLM_CONTEXT_WINDOW".into(),
                ));
            }
        }
        Ok(self)
    }

    /// The spec a provider name (`none`, `openai`, `openai-like`, `ollama`,
    /// `candle`) and its settings describe; a missing required setting is an
    /// error naming it.
    pub fn parse(
        kind: &str,
        model: Option<String>,
        api_base: Option<String>,
        gguf: Option<String>,
    ) -> Result<Self> {
        match kind.trim().to_ascii_lowercase().as_str() {
            "none" | "" => Ok(Self::None),
            "openai" => Ok(Self::OpenAI {
                model,
                context_window: None,
            }),
            "openai-like" | "openai_like" => Ok(Self::OpenAILike {
                context_window: None,
                api_base: api_base.ok_or_else(|| {
                    config_error("an openai-like LLM needs its server: set --api-base or RAGLOOM_LLM_API_BASE".into())
                })?,
                model: model.ok_or_else(|| {
                    config_error("an openai-like LLM needs a model name: set --model or RAGLOOM_LLM_MODEL".into())
                })?,
            }),
            "ollama" => Ok(Self::Ollama {
                context_window: None,
                model: model.ok_or_else(|| {
                    config_error("an Ollama LLM needs a model name: set --model or RAGLOOM_LLM_MODEL (e.g. llama3.2)".into())
                })?,
                host: api_base,
            }),
            "candle" => Ok(Self::Candle {
                gguf: gguf.or(model).map(PathBuf::from).ok_or_else(|| {
                    config_error("a candle LLM needs a GGUF file: set --model <file.gguf> or RAGLOOM_LLM_GGUF".into())
                })?,
            }),
            other => Err(config_error(format!(
                "unknown LLM provider `{other}`: use none, openai, openai-like, ollama or candle"
            ))),
        }
    }

    /// A short, stable description (`openai:gpt-4o-mini`), without secrets.
    pub fn label(&self) -> String {
        match self {
            Self::None => "none".into(),
            Self::OpenAI { model, .. } => {
                format!("openai:{}", model.as_deref().unwrap_or("default"))
            }
            Self::OpenAILike {
                api_base, model, ..
            } => format!("openai-like:{model}@{api_base}"),
            Self::Ollama { model, .. } => format!("ollama:{model}"),
            Self::Candle { gguf } => format!("candle:{}", gguf.display()),
        }
    }

    /// Builds the LLM; `Ok(None)` for [`LlmSpec::None`].
    pub fn build(&self) -> Result<Option<Arc<dyn Llm>>> {
        match self {
            Self::None => Ok(None),
            #[cfg(feature = "openai")]
            Self::OpenAI {
                model,
                context_window,
            } => {
                let mut b = ragloom_llms_openai::OpenAI::builder();
                if let Some(m) = model {
                    b = b.model(m.clone());
                }
                if let Some(n) = context_window {
                    b = b.context_window(*n);
                }
                Ok(Some(Arc::new(b.build()?)))
            }
            #[cfg(feature = "openai")]
            Self::OpenAILike {
                api_base,
                model,
                context_window,
            } => {
                let mut b = ragloom_llms_openai::OpenAILike::builder(model.clone())
                    .api_base(api_base.clone());
                if let Some(n) = context_window {
                    b = b.context_window(*n);
                }
                Ok(Some(Arc::new(b.build()?)))
            }
            #[cfg(feature = "ollama")]
            Self::Ollama {
                model,
                host,
                context_window,
            } => {
                let mut b = ragloom_llms_ollama::OllamaBuilder::new(model.clone());
                if let Some(h) = host {
                    b = b.base_url(h.clone());
                }
                if let Some(n) = context_window {
                    b = b.context_window(*n);
                }
                Ok(Some(Arc::new(b.build()?)))
            }
            #[cfg(feature = "candle")]
            Self::Candle { gguf } => {
                // A build with llama.cpp compiled in runs GGUF files with it.
                let engine = if cfg!(feature = "llama-cpp") {
                    ragloom_llms_candle::Engine::LlamaCpp
                } else {
                    ragloom_llms_candle::Engine::Candle
                };
                Ok(Some(Arc::new(
                    ragloom_llms_candle::CandleLlm::builder(gguf)
                        .engine(engine)
                        .build()?,
                )))
            }
            #[allow(unreachable_patterns)]
            other => Err(missing_feature(&other.label(), other.feature())),
        }
    }

    fn feature(&self) -> &'static str {
        match self {
            Self::None => "",
            Self::OpenAI { .. } | Self::OpenAILike { .. } => "openai",
            Self::Ollama { .. } => "ollama",
            Self::Candle { .. } => "candle",
        }
    }
}

impl EmbedSpec {
    /// The embedding model `var` configures, `None` when it configures none.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>> {
        let model = var("RAGLOOM_EMBED_MODEL");
        if let Some(kind) = var("RAGLOOM_EMBED") {
            return Self::parse(
                &kind,
                model,
                var("RAGLOOM_EMBED_API_BASE"),
                var("RAGLOOM_EMBED_MODEL_DIR"),
            )
            .map(Some);
        }
        if let Some(dir) = var("RAGLOOM_EMBED_MODEL_DIR") {
            return Ok(Some(Self::HuggingFace {
                model_dir: dir.into(),
            }));
        }
        if let Some(api_base) = var("RAGLOOM_EMBED_API_BASE") {
            let model = model.ok_or_else(|| {
                config_error("RAGLOOM_EMBED_API_BASE is set but RAGLOOM_EMBED_MODEL is not: name the embedding model the server serves".into())
            })?;
            return Ok(Some(Self::OpenAILike { api_base, model }));
        }
        if var("OPENAI_API_KEY").is_some() {
            return Ok(Some(Self::OpenAI { model }));
        }
        if var("OLLAMA_HOST").is_some() {
            if let Some(model) = model {
                return Ok(Some(Self::Ollama { model, host: None }));
            }
        }
        Ok(None)
    }

    /// The spec a provider name (`none`, `openai`, `openai-like`, `ollama`,
    /// `huggingface`) and its settings describe.
    pub fn parse(
        kind: &str,
        model: Option<String>,
        api_base: Option<String>,
        model_dir: Option<String>,
    ) -> Result<Self> {
        match kind.trim().to_ascii_lowercase().as_str() {
            "none" | "" => Ok(Self::None),
            "openai" => Ok(Self::OpenAI { model }),
            "openai-like" | "openai_like" => Ok(Self::OpenAILike {
                api_base: api_base.ok_or_else(|| {
                    config_error("openai-like embeddings need their server: set --embed-api-base or RAGLOOM_EMBED_API_BASE".into())
                })?,
                model: model.ok_or_else(|| {
                    config_error("openai-like embeddings need a model name: set --embed-model or RAGLOOM_EMBED_MODEL".into())
                })?,
            }),
            "ollama" => Ok(Self::Ollama {
                model: model.ok_or_else(|| {
                    config_error("Ollama embeddings need a model name: set --embed-model or RAGLOOM_EMBED_MODEL (e.g. nomic-embed-text)".into())
                })?,
                host: api_base,
            }),
            "huggingface" | "hf" | "local" => Ok(Self::HuggingFace {
                model_dir: model_dir.or(model).map(PathBuf::from).ok_or_else(|| {
                    config_error("local embeddings need a model folder: set --embed-model <folder> or RAGLOOM_EMBED_MODEL_DIR".into())
                })?,
            }),
            other => Err(config_error(format!(
                "unknown embedding provider `{other}`: use none, openai, openai-like, ollama or huggingface"
            ))),
        }
    }

    /// A short, stable description (`huggingface:/models/minilm`): an index
    /// records it, so a change of model is noticed.
    pub fn label(&self) -> String {
        match self {
            Self::None => "none".into(),
            Self::OpenAI { model } => format!("openai:{}", model.as_deref().unwrap_or("default")),
            Self::OpenAILike { api_base, model } => format!("openai-like:{model}@{api_base}"),
            Self::Ollama { model, .. } => format!("ollama:{model}"),
            Self::HuggingFace { model_dir } => format!("huggingface:{}", model_dir.display()),
        }
    }

    /// Builds the embedding model; `Ok(None)` for [`EmbedSpec::None`].
    pub fn build(&self) -> Result<Option<Arc<dyn Embedding>>> {
        match self {
            Self::None => Ok(None),
            #[cfg(feature = "openai")]
            Self::OpenAI { model } => {
                let mut b = ragloom_embeddings_openai::OpenAIEmbedding::builder();
                if let Some(m) = model {
                    b = b.model(m.clone());
                }
                Ok(Some(Arc::new(b.build()?)))
            }
            #[cfg(feature = "openai")]
            Self::OpenAILike { api_base, model } => Ok(Some(Arc::new(
                ragloom_embeddings_openai::OpenAIEmbedding::builder()
                    .model(model.clone())
                    .api_base(api_base.clone())
                    .build()?,
            ))),
            #[cfg(feature = "ollama")]
            Self::Ollama { model, host } => {
                let mut b = ragloom_embeddings_ollama::OllamaEmbeddingBuilder::new(model.clone());
                if let Some(h) = host {
                    b = b.base_url(h.clone());
                }
                Ok(Some(Arc::new(b.build()?)))
            }
            #[cfg(feature = "huggingface")]
            Self::HuggingFace { model_dir } => Ok(Some(Arc::new(
                ragloom_embeddings_huggingface::HuggingFaceEmbedding::from_folder(model_dir)?,
            ))),
            #[allow(unreachable_patterns)]
            other => Err(missing_feature(&other.label(), other.feature())),
        }
    }

    /// The model's own tokenizer and the most tokens of text one input
    /// holds, when the model says how long an input may be (local
    /// sentence-transformers folders); `Ok(None)` for other providers.
    pub fn chunk_tokenizer(&self) -> Result<Option<(Arc<dyn crate::Tokenizer>, usize)>> {
        match self {
            #[cfg(feature = "huggingface")]
            Self::HuggingFace { model_dir } => {
                let t = ragloom_embeddings_huggingface::ModelTokenizer::from_folder(model_dir)?;
                let budget = t.chunk_budget();
                Ok(Some((Arc::new(t), budget)))
            }
            _ => Ok(None),
        }
    }

    fn feature(&self) -> &'static str {
        match self {
            Self::None => "",
            Self::OpenAI { .. } | Self::OpenAILike { .. } => "openai",
            Self::Ollama { .. } => "ollama",
            Self::HuggingFace { .. } => "huggingface",
        }
    }
}

fn missing_feature(label: &str, feature: &'static str) -> Error {
    Error::FeatureMissing {
        what: label.to_owned(),
        feature,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn nothing_configured_is_offline() {
        let spec = ProviderSpec::from_lookup(lookup(&[])).unwrap();
        assert_eq!(spec, ProviderSpec::default());
        assert_eq!(spec.llm.label(), "none");
    }

    #[test]
    fn explicit_choice_beats_inferred_ones() {
        let spec = ProviderSpec::from_lookup(lookup(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("RAGLOOM_LLM", "ollama"),
            ("RAGLOOM_LLM_MODEL", "llama3.2"),
            ("RAGLOOM_EMBED_MODEL_DIR", "/m"),
        ]))
        .unwrap();
        assert_eq!(
            spec.llm,
            LlmSpec::Ollama {
                model: "llama3.2".into(),
                host: None,
                context_window: None,
            }
        );
        assert_eq!(
            spec.embed,
            EmbedSpec::HuggingFace {
                model_dir: "/m".into()
            }
        );
    }

    #[test]
    fn api_key_selects_openai_for_both() {
        let spec = ProviderSpec::from_lookup(lookup(&[("OPENAI_API_KEY", "sk-x")])).unwrap();
        assert_eq!(
            spec.llm,
            LlmSpec::OpenAI {
                model: None,
                context_window: None
            }
        );
        assert_eq!(spec.embed, EmbedSpec::OpenAI { model: None });
    }

    #[test]
    fn gguf_selects_candle() {
        let spec = ProviderSpec::from_lookup(lookup(&[("RAGLOOM_LLM_GGUF", "/m.gguf")])).unwrap();
        assert_eq!(
            spec.llm,
            LlmSpec::Candle {
                gguf: "/m.gguf".into()
            }
        );
        assert_eq!(spec.embed, EmbedSpec::None);
    }

    #[test]
    fn offline_settings_have_no_models() {
        let s = ProviderSpec::default().build_settings().unwrap();
        assert!(s.llm.is_none());
        assert!(s.embed_model.is_none());
    }

    #[cfg(not(feature = "huggingface"))]
    #[test]
    fn a_provider_without_its_feature_is_named() {
        let err = EmbedSpec::HuggingFace {
            model_dir: "/m".into(),
        }
        .build()
        .unwrap_err()
        .to_string();
        assert!(err.contains("`huggingface` feature"), "{err}");
    }

    #[cfg(feature = "huggingface")]
    #[test]
    fn a_missing_model_folder_is_an_error() {
        let err = EmbedSpec::HuggingFace {
            model_dir: "/nonexistent/model".into(),
        }
        .build()
        .unwrap_err()
        .to_string();
        assert!(err.contains("/nonexistent/model"), "{err}");
    }

    #[test]
    fn missing_settings_are_named() {
        let err = ProviderSpec::from_lookup(lookup(&[("RAGLOOM_LLM", "openai-like")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--api-base"), "{err}");
        let err = LlmSpec::parse("gpt", None, None, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown LLM provider `gpt`"), "{err}");
    }

    #[test]
    fn specs_round_trip_through_toml_like_json() {
        let spec = ProviderSpec {
            llm: LlmSpec::OpenAILike {
                api_base: "http://127.0.0.1:8080/v1".into(),
                model: "smollm2".into(),
                context_window: Some(2048),
            },
            embed: EmbedSpec::HuggingFace {
                model_dir: "/models/minilm".into(),
            },
        };
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(json["llm"]["provider"], "openai-like");
        assert_eq!(json["llm"]["context_window"], 2048);
        assert_eq!(json["embed"]["provider"], "huggingface");
        let back: ProviderSpec = serde_json::from_value(json).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn a_context_window_reaches_the_spec_and_bad_ones_are_named() {
        let spec = ProviderSpec::from_lookup(lookup(&[
            ("RAGLOOM_LLM_API_BASE", "http://127.0.0.1:8080/v1"),
            ("RAGLOOM_LLM_MODEL", "smollm2"),
            ("RAGLOOM_LLM_CONTEXT_WINDOW", "8192"),
        ]))
        .unwrap();
        assert!(
            matches!(
                spec.llm,
                LlmSpec::OpenAILike {
                    context_window: Some(8192),
                    ..
                }
            ),
            "{:?}",
            spec.llm
        );
        // Without an LLM the window has nothing to apply to.
        let spec =
            ProviderSpec::from_lookup(lookup(&[("RAGLOOM_LLM_CONTEXT_WINDOW", "8192")])).unwrap();
        assert_eq!(spec.llm, LlmSpec::None);
        for bad in ["0", "-5", "8k"] {
            let err = ProviderSpec::from_lookup(lookup(&[
                ("RAGLOOM_LLM", "ollama"),
                ("RAGLOOM_LLM_MODEL", "llama3.2"),
                ("RAGLOOM_LLM_CONTEXT_WINDOW", bad),
            ]))
            .unwrap_err()
            .to_string();
            assert!(err.contains(&format!("not `{bad}`")), "{err}");
        }
        let err = ProviderSpec::from_lookup(lookup(&[
            ("RAGLOOM_LLM_GGUF", "/m.gguf"),
            ("RAGLOOM_LLM_CONTEXT_WINDOW", "4096"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(err.contains("GGUF"), "{err}");
    }

    #[cfg(feature = "openai")]
    #[test]
    fn the_built_llm_reports_the_context_window() {
        let llm = LlmSpec::OpenAILike {
            api_base: "http://127.0.0.1:9/v1".into(),
            model: "smollm2".into(),
            context_window: Some(2048),
        }
        .build()
        .unwrap()
        .unwrap();
        assert_eq!(llm.metadata().context_window, 2048);
    }
}

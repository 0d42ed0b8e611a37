//! Choosing providers: flags first, then the environment, then the config
//! file; the result is a [`ProviderSpec`] the index records.

use crate::args::GlobalArgs;
use crate::error::CliError;
use ragloom::durable::FusionChoice;
use ragloom::{EmbedSpec, LlmSpec, ProviderSpec};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The config file: optional `[llm]` and `[embed]` tables shaped like
/// [`ProviderSpec`]'s (`provider = "openai-like"`, `api_base = ...`, `model = ...`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    #[serde(default)]
    pub llm: Option<LlmSpec>,
    #[serde(default)]
    pub embed: Option<EmbedSpec>,
    /// Where indexes live (see `--store`).
    #[serde(default)]
    pub store: Option<String>,
    /// How hybrid retrieval fuses (see `--fusion`).
    #[serde(default)]
    pub retrieval: Option<RetrievalConfig>,
}

/// The config file's `[retrieval]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetrievalConfig {
    /// A fusion mode's LlamaIndex name.
    pub fusion: Option<String>,
    /// The vector results' weight, 0 to 1.
    pub dense_weight: Option<f64>,
}

/// The hybrid fusion from `flags`, then `env` (`RAGLOOM_FUSION`,
/// `RAGLOOM_DENSE_WEIGHT`), then the file's `[retrieval]` table, each part
/// where given: laid over the index's recorded fusion.
pub(crate) fn fusion(
    flags: &GlobalArgs,
    env: impl Fn(&str) -> Option<String>,
    file: Option<&RetrievalConfig>,
) -> Result<FusionChoice, CliError> {
    let file_weight = file.and_then(|f| f.dense_weight).map(|w| w.to_string());
    let file_mode = file.and_then(|f| f.fusion.as_deref());
    let from_file = FusionChoice::parse(file_mode, file_weight.as_deref(), Default::default());
    let mode = flags.fusion.clone().or_else(|| env("RAGLOOM_FUSION"));
    let weight = flags
        .dense_weight
        .clone()
        .or_else(|| env("RAGLOOM_DENSE_WEIGHT"));
    from_file
        .and_then(|base| FusionChoice::parse(mode.as_deref(), weight.as_deref(), base))
        .map_err(|e| {
            CliError::config(
                e.input_problem().unwrap_or_else(|| e.to_string()),
                "--fusion takes reciprocal_rerank, relative_score, dist_based_score or simple",
            )
        })
}

/// The default config file: `<config dir>/ragloom/config.toml`.
pub(crate) fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("ragloom").join("config.toml"))
}

/// Reads a config file. A file named with `--config` must exist; the default
/// one may be absent.
pub(crate) fn read_config(path: &Path, required: bool) -> Result<ConfigFile, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ConfigFile::default());
        }
        Err(e) => {
            return Err(CliError::config(
                format!("cannot read config file {}: {e}", path.display()),
                "check the path given with --config or RAGLOOM_CONFIG",
            ));
        }
    };
    toml::from_str(&text).map_err(|e| {
        CliError::config(
            format!("config file {} is not valid: {e}", path.display()),
            "it takes `store = \"...\"` and [llm], [embed] and [retrieval] tables, e.g. [llm] provider = \"ollama\" model = \"llama3.2\"",
        )
    })
}

/// Resolves the providers from `flags`, then `env`, then `file`.
pub(crate) fn resolve(
    flags: &GlobalArgs,
    env: impl Fn(&str) -> Option<String>,
    file: ConfigFile,
) -> Result<ProviderSpec, CliError> {
    // Flags act as the most specific layer of the environment, so `--model`
    // refines an LLM chosen by `RAGLOOM_LLM` as naturally as one chosen by `--llm`.
    let lookup = |key: &str| -> Option<String> {
        let flag = match key {
            "RAGLOOM_LLM" => flags.llm.clone(),
            "RAGLOOM_LLM_MODEL" => flags.model.clone(),
            "RAGLOOM_LLM_API_BASE" => flags.api_base.clone(),
            "RAGLOOM_LLM_CONTEXT_WINDOW" => flags.context_window.clone(),
            "RAGLOOM_EMBED" => flags.embed.clone(),
            "RAGLOOM_EMBED_MODEL" => flags.embed_model.clone(),
            "RAGLOOM_EMBED_API_BASE" => flags.embed_api_base.clone(),
            _ => None,
        };
        flag.or_else(|| env(key))
    };
    let llm = LlmSpec::from_lookup(lookup)
        .map_err(|e| {
            CliError::config(e.to_string(), "see `ragloom --help` for the provider flags")
        })?
        .or(file.llm)
        .unwrap_or_default();
    // A window from a flag or the environment also applies to an LLM the file chose.
    let llm = match lookup("RAGLOOM_LLM_CONTEXT_WINDOW") {
        Some(window) => LlmSpec::parse_context_window(&window)
            .and_then(|w| llm.with_context_window(w))
            .map_err(|e| {
                CliError::config(
                    e.to_string(),
                    "--context-window takes a number of tokens, e.g. 8192",
                )
            })?,
        None => llm,
    };
    let embed = EmbedSpec::from_lookup(lookup)
        .map_err(|e| {
            CliError::config(e.to_string(), "see `ragloom --help` for the provider flags")
        })?
        .or(file.embed)
        .unwrap_or_default();
    Ok(ProviderSpec { llm, embed })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_config_file_docs_cli_md_shows_reads() {
        let doc = include_str!("../../../docs/cli.md");
        let start = doc.find("# ~/.config/ragloom/config.toml").unwrap();
        let block = &doc[start..start + doc[start..].find("```").unwrap()];
        let file: ConfigFile = toml::from_str(block).unwrap();
        let f = fusion(&GlobalArgs::default(), none, file.retrieval.as_ref()).unwrap();
        assert_eq!(f.dense_weight, Some(0.7));
        assert!(file.llm.is_some() && file.embed.is_some());
    }

    #[test]
    fn fusion_comes_from_flags_then_env_then_file() {
        use ragloom::retrievers::FusionMode::{DistBasedScore, RelativeScore, Simple};
        let file: ConfigFile =
            toml::from_str("[retrieval]\nfusion = \"dist_based_score\"\ndense_weight = 0.3\n")
                .unwrap();
        let (table, no_flags) = (file.retrieval.as_ref(), GlobalArgs::default());
        let got = |flags: &GlobalArgs, env: &dyn Fn(&str) -> Option<String>| {
            let f = fusion(flags, env, table).unwrap();
            (f.mode.unwrap(), f.dense_weight.unwrap())
        };
        assert_eq!(got(&no_flags, &none), (DistBasedScore, 0.3));
        // Nothing set anywhere: the index's recorded fusion applies.
        assert!(fusion(&no_flags, none, None).unwrap().is_empty());
        let env = |k: &str| (k == "RAGLOOM_FUSION").then(|| "relative_score".to_string());
        assert_eq!(got(&no_flags, &env), (RelativeScore, 0.3));
        let flags = GlobalArgs {
            fusion: Some("simple".into()),
            dense_weight: Some("0.9".into()),
            ..Default::default()
        };
        assert_eq!(got(&flags, &env), (Simple, 0.9));
        let flags = GlobalArgs {
            dense_weight: Some("1.5".into()),
            ..Default::default()
        };
        assert!(
            fusion(&flags, none, None)
                .unwrap_err()
                .to_string()
                .contains("1.5")
        );
    }

    #[test]
    fn flags_beat_env_and_env_beats_file() {
        let file: ConfigFile = toml::from_str(
            "[llm]\nprovider = \"ollama\"\nmodel = \"llama3.2\"\n[embed]\nprovider = \"huggingface\"\nmodel_dir = \"/m\"\n",
        )
        .unwrap();
        let flags = GlobalArgs {
            llm: Some("none".into()),
            ..Default::default()
        };
        let spec = resolve(&flags, none, file).unwrap();
        assert_eq!(spec.llm, LlmSpec::None);
        assert_eq!(
            spec.embed,
            EmbedSpec::HuggingFace {
                model_dir: "/m".into()
            }
        );

        let env = |k: &str| (k == "RAGLOOM_EMBED").then(|| "none".to_string());
        let file: ConfigFile =
            toml::from_str("[embed]\nprovider = \"huggingface\"\nmodel_dir = \"/m\"\n").unwrap();
        let spec = resolve(&GlobalArgs::default(), env, file).unwrap();
        assert_eq!(spec.embed, EmbedSpec::None);
    }

    #[test]
    fn a_context_window_flag_applies_to_the_file_s_llm() {
        let file: ConfigFile = toml::from_str(
            "[llm]\nprovider = \"openai-like\"\napi_base = \"http://127.0.0.1:8080/v1\"\nmodel = \"smollm2\"\n",
        )
        .unwrap();
        let flags = GlobalArgs {
            context_window: Some("2048".into()),
            ..Default::default()
        };
        let spec = resolve(&flags, none, file).unwrap();
        assert!(
            matches!(
                spec.llm,
                LlmSpec::OpenAILike {
                    context_window: Some(2048),
                    ..
                }
            ),
            "{:?}",
            spec.llm
        );
        let file: ConfigFile = toml::from_str(
            "[llm]\nprovider = \"ollama\"\nmodel = \"llama3.2\"\ncontext_window = 8192\n",
        )
        .unwrap();
        let spec = resolve(&GlobalArgs::default(), none, file).unwrap();
        assert!(
            matches!(
                spec.llm,
                LlmSpec::Ollama {
                    context_window: Some(8192),
                    ..
                }
            ),
            "{:?}",
            spec.llm
        );
        let flags = GlobalArgs {
            context_window: Some("lots".into()),
            ..Default::default()
        };
        let err = resolve(&flags, none, ConfigFile::default()).unwrap_err();
        assert!(err.message.contains("`lots`"), "{}", err.message);
    }

    #[test]
    fn bad_config_files_are_clear() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "[llm]\nprovider = \"gpt\"\n").unwrap();
        let err = read_config(&p, true).unwrap_err();
        assert!(err.message.contains("not valid"), "{}", err.message);
        assert!(read_config(&dir.path().join("absent.toml"), false).is_ok());
        assert!(read_config(&dir.path().join("absent.toml"), true).is_err());
    }
}

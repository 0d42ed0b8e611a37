//! Reading a sentence-transformers model folder: `modules.json`, the pooling
//! and `sentence_bert_config.json` settings, `config.json` and the tokenizer.

use crate::pooling::Pooling;
use ragloom_core::{Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a sentence-transformers folder says about how to embed, read before
/// the weights: the module pipeline, pooling, normalisation and sequence length.
#[derive(Clone, Debug, PartialEq)]
pub struct SentenceTransformerConfig {
    /// The folder.
    pub folder: PathBuf,
    /// The `Pooling` module's settings (mean pooling when the folder has no `modules.json`).
    pub pooling: Pooling,
    /// Whether `modules.json` lists a `Normalize` module.
    pub normalize_module: bool,
    /// `sentence_bert_config.json`'s `max_seq_length`, or the smaller of
    /// `config.json`'s `max_position_embeddings` and the tokenizer's `model_max_length`.
    pub max_seq_length: usize,
    /// `config.json`'s `max_position_embeddings`: the longest input the model takes.
    pub max_position_embeddings: usize,
    /// `sentence_bert_config.json`'s `do_lower_case`: lowercase texts before tokenizing.
    pub do_lower_case: bool,
    /// `config.json` as read.
    pub model_config: Value,
}

/// Reads and parses a JSON file, naming it in every error.
pub(crate) fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("reading", path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::CorruptFile {
        path: path.to_path_buf(),
        message: format!("not valid JSON: {e}"),
    })
}

/// Like [`read_json`], but `None` when the file does not exist.
fn read_optional_json(path: &Path) -> Result<Option<Value>> {
    if path.exists() {
        read_json(path).map(Some)
    } else {
        Ok(None)
    }
}

fn positive_int(value: Option<&Value>) -> Option<usize> {
    value
        .and_then(Value::as_u64)
        .and_then(|v| usize::try_from(v).ok())
        .filter(|v| *v > 0)
}

impl SentenceTransformerConfig {
    /// Reads the configuration files of the model folder `folder`.
    ///
    /// `config.json` is required; `modules.json`, the pooling config,
    /// `sentence_bert_config.json` and `tokenizer_config.json` are read when present.
    pub fn read(folder: &Path) -> Result<Self> {
        if !folder.is_dir() {
            return Err(Error::NotFound(format!(
                "model folder {} does not exist or is not a directory",
                folder.display()
            )));
        }
        let config_path = folder.join("config.json");
        let model_config = read_json(&config_path)?;
        let max_position_embeddings = positive_int(model_config.get("max_position_embeddings"))
            .ok_or_else(|| Error::CorruptFile {
                path: config_path.clone(),
                message: "`max_position_embeddings` is missing or not a positive integer"
                    .to_owned(),
            })?;

        let modules_path = folder.join("modules.json");
        let (pooling, normalize_module) = match read_optional_json(&modules_path)? {
            None => (Pooling::default(), false),
            Some(modules) => Self::read_modules(folder, &modules_path, &modules)?,
        };

        let sbert_path = folder.join("sentence_bert_config.json");
        let sbert = read_optional_json(&sbert_path)?;
        let do_lower_case = sbert
            .as_ref()
            .and_then(|s| s.get("do_lower_case"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let max_seq_length = match sbert.as_ref().and_then(|s| s.get("max_seq_length")) {
            Some(v) if !v.is_null() => positive_int(Some(v)).ok_or_else(|| Error::CorruptFile {
                path: sbert_path.clone(),
                message: format!("`max_seq_length` must be a positive integer, got {v}"),
            })?,
            _ => {
                // sentence-transformers' fallback: the model's and the tokenizer's limits.
                let tokenizer_max = read_optional_json(&folder.join("tokenizer_config.json"))?
                    .and_then(|t| positive_int(t.get("model_max_length")));
                tokenizer_max.map_or(max_position_embeddings, |t| t.min(max_position_embeddings))
            }
        };

        Ok(Self {
            folder: folder.to_path_buf(),
            pooling,
            normalize_module,
            max_seq_length,
            max_position_embeddings,
            do_lower_case,
            model_config,
        })
    }

    /// The pipeline in `modules.json`: one transformer, then pooling, then
    /// optionally normalisation; anything else (e.g. `Dense`) is unsupported.
    fn read_modules(folder: &Path, path: &Path, modules: &Value) -> Result<(Pooling, bool)> {
        let list = modules.as_array().ok_or_else(|| Error::CorruptFile {
            path: path.to_path_buf(),
            message: "expected a JSON list of modules".to_owned(),
        })?;
        let mut pooling = None;
        let mut normalize = false;
        let mut transformer = false;
        for module in list {
            let kind =
                module
                    .get("type")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::CorruptFile {
                        path: path.to_path_buf(),
                        message: format!("a module without a `type`: {module}"),
                    })?;
            let short = kind.rsplit('.').next().unwrap_or(kind);
            match short {
                "Transformer" => transformer = true,
                "Pooling" => {
                    let dir = module.get("path").and_then(Value::as_str).unwrap_or("");
                    let cfg_path = folder.join(dir).join("config.json");
                    pooling = Some(Pooling::from_config(&read_json(&cfg_path)?, &cfg_path)?);
                }
                "Normalize" => normalize = true,
                _ => {
                    return Err(Error::Unsupported(format!(
                        "module `{kind}` in {}: only Transformer, Pooling and Normalize modules are supported",
                        path.display()
                    )));
                }
            }
        }
        if !transformer {
            return Err(Error::CorruptFile {
                path: path.to_path_buf(),
                message: "no sentence_transformers.models.Transformer module".to_owned(),
            });
        }
        Ok((pooling.unwrap_or_default(), normalize))
    }

    /// `config.json`'s `model_type` (e.g. `bert`), if it has one.
    pub fn model_type(&self) -> Option<&str> {
        self.model_config.get("model_type").and_then(Value::as_str)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::pooling::PoolingMode;

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_pipeline_pooling_and_lengths() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            "config.json",
            r#"{"model_type":"bert","max_position_embeddings":512}"#,
        );
        write(
            d,
            "modules.json",
            r#"[{"path":"","type":"sentence_transformers.models.Transformer"},
                {"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]"#,
        );
        write(
            d,
            "1_Pooling/config.json",
            r#"{"pooling_mode_cls_token":true}"#,
        );
        write(d, "tokenizer_config.json", r#"{"model_max_length":128}"#);
        let cfg = SentenceTransformerConfig::read(d).unwrap();
        assert_eq!(cfg.pooling.modes, vec![PoolingMode::Cls]);
        assert!(!cfg.normalize_module);
        assert_eq!(cfg.max_seq_length, 128);
        assert_eq!(cfg.model_type(), Some("bert"));

        write(
            d,
            "sentence_bert_config.json",
            r#"{"max_seq_length":200,"do_lower_case":true}"#,
        );
        let cfg = SentenceTransformerConfig::read(d).unwrap();
        assert_eq!(cfg.max_seq_length, 200);
        assert!(cfg.do_lower_case);
    }

    #[test]
    fn bare_folder_gets_mean_pooling() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "config.json",
            r#"{"max_position_embeddings":64}"#,
        );
        let cfg = SentenceTransformerConfig::read(dir.path()).unwrap();
        assert_eq!(cfg.pooling, Pooling::default());
        assert_eq!(cfg.max_seq_length, 64);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let missing = SentenceTransformerConfig::read(d).unwrap_err().to_string();
        assert!(missing.contains("config.json"), "{missing}");

        write(d, "config.json", "{not json");
        let corrupt = SentenceTransformerConfig::read(d).unwrap_err().to_string();
        assert!(
            corrupt.contains("config.json") && corrupt.contains("JSON"),
            "{corrupt}"
        );

        write(d, "config.json", r#"{"max_position_embeddings":64}"#);
        write(
            d,
            "modules.json",
            r#"[{"path":"","type":"sentence_transformers.models.Transformer"},
                {"path":"2_Dense","type":"sentence_transformers.models.Dense"}]"#,
        );
        let dense = SentenceTransformerConfig::read(d).unwrap_err().to_string();
        assert!(
            dense.contains("Dense") && dense.contains("modules.json"),
            "{dense}"
        );

        write(
            d,
            "modules.json",
            r#"[{"path":"","type":"sentence_transformers.models.Transformer"},
                {"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]"#,
        );
        let no_pool = SentenceTransformerConfig::read(d).unwrap_err().to_string();
        assert!(no_pool.contains("1_Pooling"), "{no_pool}");

        let not_dir = SentenceTransformerConfig::read(&d.join("nope")).unwrap_err();
        assert!(not_dir.to_string().contains("nope"));
    }
}

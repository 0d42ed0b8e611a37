//! Optional download of a model folder from the Hugging Face hub by name
//! (feature `hub`), into hf-hub's cache, then loaded like any local folder.

use crate::embedding::HuggingFaceEmbeddingBuilder;
use crate::folder::read_json;
use ragloom_core::{Error, Result};
use serde_json::Value;
use std::path::PathBuf;

/// Files a sentence-transformers repository may have besides the required ones.
const OPTIONAL_FILES: [&str; 4] = [
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
];
const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

impl HuggingFaceEmbeddingBuilder {
    /// Downloads (or finds in hf-hub's cache, `HF_HOME`) the files of the hub
    /// model `model_name` (e.g. `sentence-transformers/all-MiniLM-L6-v2`) and
    /// returns settings for that folder with `model_name` set. Blocking.
    pub fn from_hub(model_name: &str) -> Result<Self> {
        let hub_error = |file: &str, e: hf_hub::api::sync::ApiError| {
            Error::provider(
                crate::PROVIDER,
                format!("downloading {file} of `{model_name}` from the Hugging Face hub"),
                e,
            )
        };
        let api = hf_hub::api::sync::ApiBuilder::from_env()
            .with_progress(false)
            .build()
            .map_err(|e| hub_error("(connecting)", e))?;
        let repo = api.model(model_name.to_owned());
        let mut folder: Option<PathBuf> = None;
        for file in REQUIRED_FILES {
            let path = repo.get(file).map_err(|e| hub_error(file, e))?;
            if folder.is_none() {
                folder = path.parent().map(PathBuf::from);
            }
        }
        for file in OPTIONAL_FILES {
            // A repository without the file is fine: defaults apply.
            let _ = repo.get(file);
        }
        let folder = folder.ok_or_else(|| {
            Error::NotFound(format!("no local folder for hub model `{model_name}`"))
        })?;
        let modules_path = folder.join("modules.json");
        if modules_path.is_file() {
            let modules = read_json(&modules_path)?;
            for module in modules.as_array().into_iter().flatten() {
                let is_pooling = module
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.ends_with("Pooling"));
                if let (true, Some(dir)) = (is_pooling, module.get("path").and_then(Value::as_str))
                {
                    let file = format!("{dir}/config.json");
                    repo.get(&file).map_err(|e| hub_error(&file, e))?;
                }
            }
        }
        Ok(HuggingFaceEmbeddingBuilder::new(folder).model_name(model_name))
    }
}

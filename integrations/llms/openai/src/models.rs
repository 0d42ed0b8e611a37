//! What ragloom knows about OpenAI's models, from LlamaIndex's `openai/utils.py`
//! (llama-index-llms-openai 0.8.3): context windows, chat or completion API, tool calling, JSON schema output.

use ragloom_core::{Error, Result};

/// Reasoning models (o1, o3, o4, gpt-5 ...): they take `max_completion_tokens`,
/// a fixed temperature of 1 and `developer` instead of `system` messages.
pub const O1_MODELS: &[(&str, usize)] = &[
    ("o1", 200000),
    ("o1-2024-12-17", 200000),
    ("o1-pro", 200000),
    ("o1-pro-2025-03-19", 200000),
    ("o1-preview", 128000),
    ("o1-preview-2024-09-12", 128000),
    ("o1-mini", 128000),
    ("o1-mini-2024-09-12", 128000),
    ("o3-mini", 200000),
    ("o3-mini-2025-01-31", 200000),
    ("o3", 200000),
    ("o3-2025-04-16", 200000),
    ("o3-pro", 200000),
    ("o3-pro-2025-06-10", 200000),
    ("o4-mini", 200000),
    ("o4-mini-2025-04-16", 200000),
    ("gpt-5", 400000),
    ("gpt-5-2025-08-07", 400000),
    ("gpt-5-chat", 128000),
    ("gpt-5-chat-latest", 128000),
    ("gpt-5-mini", 400000),
    ("gpt-5-mini-2025-08-07", 400000),
    ("gpt-5-nano", 400000),
    ("gpt-5-nano-2025-08-07", 400000),
    ("gpt-5-pro", 400000),
    ("gpt-5-pro-2025-10-06", 400000),
    ("gpt-5.1", 400000),
    ("gpt-5.1-2025-11-13", 400000),
    ("gpt-5.1-chat-latest", 128000),
    ("gpt-5.2", 400000),
    ("gpt-5.2-2025-12-11", 400000),
    ("gpt-5.2-chat-latest", 128000),
    ("gpt-5.3", 400000),
    ("gpt-5.3-chat-latest", 128000),
    ("gpt-5.4", 1050000),
    ("gpt-5.4-2026-03-05", 1050000),
    ("gpt-5.4-mini", 400000),
    ("gpt-5.4-nano", 400000),
    ("gpt-5.4-chat-latest", 128000),
    ("gpt-5.5", 1050000),
    ("gpt-5.5-2026-04-23", 1050000),
    ("gpt-5.6-sol", 1050000),
    ("gpt-5.6-luna", 1050000),
    ("gpt-5.6-terra", 1050000),
    ("gpt-6-astra", 1050000),
    ("gpt-6-sol", 1050000),
    ("gpt-6-luna", 1050000),
    ("gpt-6.1-sol", 1050000),
];

/// Reasoning models served only by the Responses API, not chat completions.
pub const RESPONSES_API_ONLY_MODELS: &[(&str, usize)] = &[
    ("gpt-5.2-pro", 400000),
    ("gpt-5.2-pro-2025-12-11", 400000),
    ("gpt-5.4-pro", 1050000),
];

/// Early reasoning models without tool calling.
pub const O1_MODELS_WITHOUT_FUNCTION_CALLING: &[&str] = &[
    "o1-preview",
    "o1-preview-2024-09-12",
    "o1-mini",
    "o1-mini-2024-09-12",
];

/// GPT-4 family chat models.
pub const GPT4_MODELS: &[(&str, usize)] = &[
    ("gpt-4", 8192),
    ("gpt-4-32k", 32768),
    ("gpt-4-1106-preview", 128000),
    ("gpt-4-0125-preview", 128000),
    ("gpt-4-turbo-preview", 128000),
    ("gpt-4-vision-preview", 128000),
    ("gpt-4-1106-vision-preview", 128000),
    ("gpt-4-turbo-2024-04-09", 128000),
    ("gpt-4-turbo", 128000),
    ("gpt-4o", 128000),
    ("gpt-4o-audio-preview", 128000),
    ("gpt-4o-audio-preview-2024-12-17", 128000),
    ("gpt-4o-audio-preview-2024-10-01", 128000),
    ("gpt-4o-mini-audio-preview", 128000),
    ("gpt-4o-mini-audio-preview-2024-12-17", 128000),
    ("gpt-4o-2024-05-13", 128000),
    ("gpt-4o-2024-08-06", 128000),
    ("gpt-4o-2024-11-20", 128000),
    ("gpt-4.5-preview", 128000),
    ("gpt-4.5-preview-2025-02-27", 128000),
    ("chatgpt-4o-latest", 128000),
    ("gpt-4o-mini", 128000),
    ("gpt-4o-mini-2024-07-18", 128000),
    ("gpt-4-0613", 8192),
    ("gpt-4-32k-0613", 32768),
    ("gpt-4-0314", 8192),
    ("gpt-4-32k-0314", 32768),
    ("gpt-4.1", 1047576),
    ("gpt-4.1-mini", 1047576),
    ("gpt-4.1-nano", 1047576),
    ("gpt-4.1-2025-04-14", 1047576),
    ("gpt-4.1-mini-2025-04-14", 1047576),
    ("gpt-4.1-nano-2025-04-14", 1047576),
    ("gpt-5-chat-latest", 128000),
];

/// Azure's names for the GPT-3.5 and 4o chat models.
pub const AZURE_TURBO_MODELS: &[(&str, usize)] = &[
    ("gpt-4o", 128000),
    ("gpt-4o-mini", 128000),
    ("gpt-35-turbo-16k", 16384),
    ("gpt-35-turbo", 4096),
    ("gpt-35-turbo-0125", 16384),
    ("gpt-35-turbo-1106", 16384),
    ("gpt-35-turbo-0613", 4096),
    ("gpt-35-turbo-16k-0613", 16384),
];

/// GPT-3.5 Turbo chat models.
pub const TURBO_MODELS: &[(&str, usize)] = &[
    ("gpt-3.5-turbo", 16384),
    ("gpt-3.5-turbo-16k", 16384),
    ("gpt-3.5-turbo-0125", 16384),
    ("gpt-3.5-turbo-1106", 16384),
    ("gpt-3.5-turbo-0613", 4096),
    ("gpt-3.5-turbo-16k-0613", 16384),
    ("gpt-3.5-turbo-0301", 4096),
];

/// GPT-3.5 completion models (the `/completions` API).
pub const GPT3_5_MODELS: &[(&str, usize)] = &[
    ("text-davinci-003", 4097),
    ("text-davinci-002", 4097),
    ("gpt-3.5-turbo-instruct", 4096),
];

/// GPT-3 completion models.
pub const GPT3_MODELS: &[(&str, usize)] = &[
    ("text-ada-001", 2049),
    ("text-babbage-001", 2040),
    ("text-curie-001", 2049),
    ("ada", 2049),
    ("babbage", 2049),
    ("curie", 2049),
    ("davinci", 2049),
];

/// Models OpenAI has switched off.
pub const DISCONTINUED_MODELS: &[(&str, usize)] = &[
    ("code-davinci-002", 8001),
    ("code-davinci-001", 8001),
    ("code-cushman-002", 2048),
    ("code-cushman-001", 2048),
];

/// Prefixes of the models that take `response_format` with a JSON schema.
pub const JSON_SCHEMA_MODELS: &[&str] = &[
    "o4-mini", "o1", "o1-pro", "o3", "o3-mini", "gpt-4o", "gpt-4.1", "gpt-5", "gpt-5.2", "gpt-5.4",
    "gpt-5.5", "gpt-6", "gpt-6.1",
];

/// LlamaIndex's `DEFAULT_OPENAI_MODEL`.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-3.5-turbo";

/// LlamaIndex's `DEFAULT_TEMPERATURE`.
pub const DEFAULT_TEMPERATURE: f64 = 0.1;

fn lookup(table: &[(&str, usize)], model: &str) -> Option<usize> {
    table
        .iter()
        .find(|(name, _)| *name == model)
        .map(|(_, n)| *n)
}

fn in_tables(tables: &[&[(&str, usize)]], model: &str) -> Option<usize> {
    // Python builds these dicts by merging in this order, later ones
    // overriding; the shared names carry equal windows, so first match is fine.
    tables.iter().find_map(|t| lookup(t, model))
}

const ALL_TABLES: &[&[(&str, usize)]] = &[
    O1_MODELS,
    GPT4_MODELS,
    TURBO_MODELS,
    GPT3_5_MODELS,
    GPT3_MODELS,
    AZURE_TURBO_MODELS,
];

const CHAT_TABLES: &[&[(&str, usize)]] =
    &[O1_MODELS, GPT4_MODELS, TURBO_MODELS, AZURE_TURBO_MODELS];

/// The base model of a fine-tuned one: `ft:gpt-4o:org:suffix:id` → `gpt-4o`,
/// legacy `curie:ft-org-2023` → `curie`; other names unchanged.
pub fn base_model_name(model: &str) -> &str {
    if let Some(rest) = model.strip_prefix("ft:") {
        rest.split(':').next().unwrap_or(rest)
    } else if model.contains(":ft-") {
        model.split(':').next().unwrap_or(model)
    } else {
        model
    }
}

/// Whether the model is listed at all.
pub fn is_known_model(model: &str) -> bool {
    in_tables(ALL_TABLES, base_model_name(model)).is_some()
}

/// The model's context window (LlamaIndex's `openai_modelname_to_contextsize`):
/// fine-tuned names resolve to their base; discontinued and unknown models are
/// [`Error::InvalidInput`] naming the model.
pub fn openai_modelname_to_contextsize(model: &str) -> Result<usize> {
    let name = base_model_name(model);
    if lookup(DISCONTINUED_MODELS, name).is_some() {
        return Err(Error::InvalidInput(format!(
            "OpenAI no longer serves model `{name}`; pick a current one"
        )));
    }
    if lookup(RESPONSES_API_ONLY_MODELS, name).is_some() {
        return Err(Error::InvalidInput(format!(
            "model `{name}` is served only by OpenAI's Responses API, not by chat completions"
        )));
    }
    in_tables(ALL_TABLES, name).ok_or_else(|| {
        Error::InvalidInput(format!(
            "Unknown model {name:?}: it is not in the table of OpenAI models; give its \
             context_window explicitly, or use OpenAILike for other OpenAI-compatible models"
        ))
    })
}

/// Whether the model is served by the chat completions API.
pub fn is_chat_model(model: &str) -> bool {
    in_tables(CHAT_TABLES, base_model_name(model)).is_some()
}

/// Whether the model calls tools natively. As in LlamaIndex, models not in the
/// tables are assumed to (new OpenAI models do); listed ones must be chat
/// models, not 0314/0301 snapshots and not the early o1 betas.
pub fn is_function_calling_model(model: &str) -> bool {
    if in_tables(ALL_TABLES, model).is_none() {
        return true;
    }
    let model = base_model_name(model);
    let is_old = model.contains("0314") || model.contains("0301");
    is_chat_model(model) && !is_old && !O1_MODELS_WITHOUT_FUNCTION_CALLING.contains(&model)
}

/// Whether the model is a reasoning model (LlamaIndex's `O1_MODELS`).
pub fn is_o1_model(model: &str) -> bool {
    lookup(O1_MODELS, model).is_some()
}

/// Whether the model takes `response_format` with a JSON schema.
pub fn is_json_schema_supported(model: &str) -> bool {
    !model.starts_with("o1-mini") && JSON_SCHEMA_MODELS.iter().any(|m| model.starts_with(m))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn context_windows_match_llamaindex() {
        assert_eq!(
            openai_modelname_to_contextsize("gpt-4o-mini").unwrap(),
            128000
        );
        assert_eq!(
            openai_modelname_to_contextsize("gpt-3.5-turbo").unwrap(),
            16384
        );
        assert_eq!(openai_modelname_to_contextsize("gpt-4").unwrap(), 8192);
        assert_eq!(openai_modelname_to_contextsize("gpt-4.1").unwrap(), 1047576);
        assert_eq!(openai_modelname_to_contextsize("o3-mini").unwrap(), 200000);
        assert_eq!(
            openai_modelname_to_contextsize("gpt-3.5-turbo-instruct").unwrap(),
            4096
        );
        assert_eq!(
            openai_modelname_to_contextsize("ft:gpt-4o-mini:acme:x:abc").unwrap(),
            128000
        );
        assert_eq!(
            openai_modelname_to_contextsize("curie:ft-acme-2023").unwrap(),
            2049
        );
        let e = openai_modelname_to_contextsize("code-davinci-002")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no longer serves"), "{e}");
        let e = openai_modelname_to_contextsize("my-model")
            .unwrap_err()
            .to_string();
        assert!(e.contains("Unknown model \"my-model\""), "{e}");
        let e = openai_modelname_to_contextsize("gpt-5.4-pro")
            .unwrap_err()
            .to_string();
        assert!(e.contains("Responses API"), "{e}");
    }

    #[test]
    fn capabilities_match_llamaindex() {
        assert!(is_chat_model("gpt-4o") && is_chat_model("o1") && is_chat_model("gpt-35-turbo"));
        assert!(!is_chat_model("gpt-3.5-turbo-instruct") && !is_chat_model("davinci"));
        assert!(is_function_calling_model("gpt-4o-mini"));
        assert!(is_function_calling_model("some-future-model"));
        assert!(!is_function_calling_model("gpt-4-0314"));
        assert!(!is_function_calling_model("o1-mini"));
        assert!(!is_function_calling_model("gpt-3.5-turbo-instruct"));
        assert!(is_json_schema_supported("gpt-4o-2024-08-06"));
        assert!(!is_json_schema_supported("o1-mini"));
        assert!(!is_json_schema_supported("gpt-3.5-turbo"));
        assert!(is_o1_model("o3-mini") && !is_o1_model("gpt-4o"));
    }
}

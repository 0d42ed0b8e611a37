//! What every tool shares: its metadata (name, description, JSON schema of its
//! arguments), its output, the object-safe `Tool` trait, and schema clean-up for models.

use crate::error::{Error, Result};
use crate::utils::json_dumps;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// OpenAI rejects tool descriptions longer than this (characters); LlamaIndex checks it too.
pub const MAX_TOOL_DESCRIPTION_LEN: usize = 1024;

/// Describes a tool to a model: LlamaIndex's `ToolMetadata`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolMetadata {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it; models choose tools by this text.
    pub description: String,
    /// JSON schema of the arguments object (`{"type": "object", "properties", "required"}`).
    pub fn_schema: Value,
    /// Whether an agent should hand the tool's output to the user as the final answer.
    #[serde(default)]
    pub return_direct: bool,
}

/// `with_name` and `with_description` (and, given `return_direct`,
/// `with_return_direct`) for a tool holding a `metadata: ToolMetadata`.
/// Exported for the workspace's crates above core, not for users.
#[doc(hidden)]
#[macro_export]
macro_rules! tool_metadata_setters {
    ($($return_direct:ident)?) => {
        /// Sets the name.
        pub fn with_name(mut self, name: impl Into<String>) -> Self {
            self.metadata.name = name.into();
            self
        }

        /// Sets the description, which is what selectors and agents choose by.
        pub fn with_description(mut self, description: impl Into<String>) -> Self {
            self.metadata.description = description.into();
            self
        }
        $($crate::tool_metadata_setters!(@ $return_direct);)?
    };
    (@ return_direct) => {
        /// Sets `return_direct`: the tool's output is the agent's answer.
        pub fn with_return_direct(mut self, return_direct: bool) -> Self {
            self.metadata.return_direct = return_direct;
            self
        }
    };
}

impl ToolMetadata {
    /// Metadata with LlamaIndex's default argument schema, one string `input`
    /// (its `DefaultToolFnSchema`), as query-engine and retriever tools take.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            fn_schema: default_tool_fn_schema(),
            return_direct: false,
        }
    }

    /// Replaces the argument schema.
    pub fn with_fn_schema(mut self, fn_schema: Value) -> Self {
        self.fn_schema = fn_schema;
        self
    }

    /// Sets `return_direct`.
    pub fn with_return_direct(mut self, return_direct: bool) -> Self {
        self.return_direct = return_direct;
        self
    }

    /// The schema keys a model needs (`type`, `properties`, `required`,
    /// `definitions`, `$defs`), as LlamaIndex's `get_parameters_dict`. A
    /// schema that is not an object gets the default `input` schema.
    pub fn get_parameters_dict(&self) -> Value {
        match &self.fn_schema {
            Value::Object(map) => {
                let mut out = Map::new();
                for key in ["type", "properties", "required", "definitions", "$defs"] {
                    if let Some(v) = map.get(key) {
                        out.insert(key.to_owned(), v.clone());
                    }
                }
                Value::Object(out)
            }
            _ => default_tool_fn_schema(),
        }
    }

    /// The parameters dict as Python's `json.dumps` writes it (LlamaIndex's `fn_schema_str`).
    pub fn fn_schema_str(&self) -> String {
        json_dumps(&self.get_parameters_dict())
    }

    /// The name with characters OpenAI refuses (`[^a-zA-Z0-9_-]`) replaced by `_`.
    pub fn sanitized_name(&self) -> String {
        self.name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    /// The OpenAI tool form, `{"type": "function", "function": {name,
    /// description, parameters}}`. A description over
    /// [`MAX_TOOL_DESCRIPTION_LEN`] characters is an error naming the tool, as in LlamaIndex.
    pub fn to_openai_tool(&self) -> Result<Value> {
        let len = self.description.chars().count();
        if len > MAX_TOOL_DESCRIPTION_LEN {
            return Err(Error::InvalidInput(format!(
                "tool `{}`: description is {len} characters, more than the {MAX_TOOL_DESCRIPTION_LEN} \
                 allowed; shorten it or move it to the prompt",
                self.name
            )));
        }
        Ok(self.to_openai_tool_unchecked())
    }

    /// [`Self::to_openai_tool`] without the length check (`skip_length_check=True`).
    pub fn to_openai_tool_unchecked(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.sanitized_name(),
                "description": self.description,
                "parameters": self.get_parameters_dict(),
            }
        })
    }
}

/// LlamaIndex's `DefaultToolFnSchema` (one required string `input`), normalised.
pub fn default_tool_fn_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"input": {"type": "string"}},
        "required": ["input"],
    })
}

/// What a tool call produced: LlamaIndex's `ToolOutput`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The text handed back to the model.
    pub content: String,
    /// The tool that produced it.
    pub tool_name: String,
    /// The arguments it was called with.
    pub raw_input: Value,
    /// Its output before rendering to text (for errors, the message).
    pub raw_output: Value,
    /// Whether the call failed; the content then tells the model why.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful output.
    pub fn new(
        tool_name: impl Into<String>,
        content: impl Into<String>,
        raw_input: Value,
        raw_output: Value,
    ) -> Self {
        Self {
            content: content.into(),
            tool_name: tool_name.into(),
            raw_input,
            raw_output,
            is_error: false,
        }
    }

    /// A failed call: the content is `Encountered error: {message}`, as
    /// LlamaIndex's `call_tool` writes it, and the raw output is the message.
    pub fn error(
        tool_name: impl Into<String>,
        raw_input: Value,
        message: impl fmt::Display,
    ) -> Self {
        let message = message.to_string();
        Self {
            content: format!("Encountered error: {message}"),
            tool_name: tool_name.into(),
            raw_input,
            raw_output: Value::String(message),
            is_error: true,
        }
    }

    /// The output with its content cut to `max_output_len` characters (see [`truncate_tool_output`]).
    pub fn truncated(mut self, max_output_len: usize) -> Self {
        self.content = truncate_tool_output(&self.content, max_output_len);
        self
    }
}

impl fmt::Display for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.content)
    }
}

/// A tool a model can call. Shared as `Arc<dyn Tool>`.
///
/// A call whose arguments are wrong, or whose work fails, should return
/// `Ok` with an error [`ToolOutput`] (`is_error: true`) that tells the model
/// what went wrong, so an agent can retry; `Err` is for failures the model
/// cannot fix.
#[async_trait]
pub trait Tool: Send + Sync + fmt::Debug {
    /// Name, description and argument schema.
    fn metadata(&self) -> &ToolMetadata;

    /// Runs the tool with the arguments the model gave (normally a JSON object).
    async fn call(&self, input: Value) -> Result<ToolOutput>;

    /// The tool's name.
    fn name(&self) -> &str {
        &self.metadata().name
    }
}

/// Cuts `content` to at most `max_output_len` characters (never inside a
/// character), ending with a note of how much was dropped, so a huge tool
/// output cannot crowd a model's context window.
pub fn truncate_tool_output(content: &str, max_output_len: usize) -> String {
    let total = content.chars().count();
    if total <= max_output_len {
        return content.to_owned();
    }
    let note = |dropped: usize| format!("\n...[truncated {dropped} characters]");
    // The note counts towards the limit; when the limit is smaller than the
    // note itself, plain cutting is all that fits.
    let first_guess = max_output_len.saturating_sub(note(total).chars().count());
    if first_guess == 0 {
        return content.chars().take(max_output_len).collect();
    }
    // The dropped count has no more digits than the total; recounting with
    // it lets the kept text use the room a shorter note leaves.
    let keep = max_output_len.saturating_sub(note(total - first_guess).chars().count());
    let mut out: String = content.chars().take(keep).collect();
    out.push_str(&note(total - keep));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn truncation_counts_characters_and_says_how_much() {
        let text = "é".repeat(200);
        let cut = truncate_tool_output(&text, 100);
        assert_eq!(cut.chars().count(), 100);
        assert!(cut.ends_with("characters]"), "{cut}");
        assert_eq!(truncate_tool_output("short", 100), "short");
        assert_eq!(truncate_tool_output("abcdef", 3), "abc");
    }
}

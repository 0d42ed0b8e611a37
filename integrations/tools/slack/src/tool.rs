//! `SlackToolSpec`: read channels, send a message, list channels, with
//! LlamaIndex's function names, arguments and answers.

use crate::reader::SlackReader;
use async_trait::async_trait;
use ragloom_core::error::Result;
use ragloom_core::schema::py_repr;
use ragloom_core::tools::{
    SpecFunctions, Tool, ToolArgs, ToolMetadata, ToolSpec, documents_output, recorded_metadata,
    spec_function_tools, unknown_function,
};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// LlamaIndex's descriptions and argument schemas of the tools, as
/// `to_tool_list` gives them (recorded from llama-index-tools-slack 0.6.0).
const TOOLS_JSON: &str = include_str!("tools.json");

/// Slack as agent tools (LlamaIndex `SlackToolSpec`): `load_data`,
/// `send_message`, `fetch_channels`.
#[derive(Clone, Debug)]
pub struct SlackToolSpec {
    reader: SlackReader,
}

impl SlackToolSpec {
    /// Tools over the reader's workspace.
    pub fn new(reader: SlackReader) -> Self {
        Self { reader }
    }

    /// The reader the tools read with.
    pub fn reader(&self) -> &SlackReader {
        &self.reader
    }

    /// The channels' messages (LlamaIndex `load_data`).
    pub async fn load_data(
        &self,
        channel_ids: &[String],
        reverse_chronological: bool,
    ) -> Result<Vec<ragloom_core::schema::Document>> {
        self.reader
            .load_data(channel_ids, reverse_chronological)
            .await
    }

    /// Posts `message` to the channel (`chat.postMessage`).
    pub async fn send_message(&self, channel_id: &str, message: &str) -> Result<Value> {
        let sent = self
            .reader
            .client()
            .call_json(
                "chat.postMessage",
                &json!({"channel": channel_id, "text": message}),
            )
            .await?;
        match sent {
            Ok(reply) => {
                tracing::info!(channel = channel_id, ts = ?reply.get("ts"), "message sent");
                Ok(reply)
            }
            Err(e) => Err(self.reader.client().api_error("chat.postMessage", &e)),
        }
    }

    /// The workspace's channels as Slack describes them
    /// (`conversations.list`, every page).
    pub async fn fetch_channels(&self) -> Result<Vec<Value>> {
        self.reader.list_channels(None).await
    }
}

const FUNCTIONS: [&str; 3] = ["load_data", "send_message", "fetch_channels"];

#[async_trait]
impl SpecFunctions for SlackToolSpec {
    async fn call_function(&self, name: &str, args: &ToolArgs<'_>) -> Result<(String, Value)> {
        match name {
            "load_data" => {
                let ids = args.opt_strings("channel_ids")?.ok_or_else(|| {
                    ragloom_core::error::Error::InvalidInput(
                        "missing required field `channel_ids` (a list of channel ids)".into(),
                    )
                })?;
                let reverse = args.opt_bool("reverse_chronological")?.unwrap_or(true);
                documents_output(&self.load_data(&ids, reverse).await?)
            }
            "send_message" => {
                let channel = args.required_str("channel_id")?;
                let message = args.required_str("message")?;
                let reply = self.send_message(&channel, &message).await?;
                // LlamaIndex's send_message returns None.
                Ok(("None".to_owned(), reply))
            }
            "fetch_channels" => {
                let channels = Value::Array(self.fetch_channels().await?);
                Ok((py_repr(&channels), channels))
            }
            other => Err(unknown_function(other)),
        }
    }
}

fn metadata(name: &str) -> ToolMetadata {
    static TOOLS: OnceLock<Value> = OnceLock::new();
    recorded_metadata(
        TOOLS.get_or_init(|| serde_json::from_str(TOOLS_JSON).unwrap_or(Value::Null)),
        name,
    )
}

impl ToolSpec for SlackToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        FUNCTIONS.iter().map(|n| (*n).to_owned()).collect()
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        spec_function_tools(self, &FUNCTIONS, metadata)
    }
}

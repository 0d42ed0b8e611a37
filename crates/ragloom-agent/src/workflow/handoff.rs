//! The handoff tool: an agent passes the request to another agent by
//! calling it; the next step is that agent's.

use super::base::tool_context;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput};
use serde_json::{Map, Value, json};

/// LlamaIndex's `handoff` function tool: `to_agent` and `reason`, its output
/// the run's answer for this step (`return_direct`), after which the named
/// agent carries on. Made per agent, listing only the agents it may reach.
#[derive(Debug)]
pub(crate) struct HandoffTool {
    metadata: ToolMetadata,
}

impl HandoffTool {
    pub(crate) fn new(description: String) -> Self {
        let schema = json!({
            "properties": {
                "to_agent": {"title": "To Agent", "type": "string"},
                "reason": {"title": "Reason", "type": "string"}
            },
            "required": ["to_agent", "reason"],
            "type": "object"
        });
        Self {
            metadata: ToolMetadata::new("handoff", description)
                .with_fn_schema(schema)
                .with_return_direct(true),
        }
    }
}

fn text_arg(input: &Value, key: &str) -> Result<String> {
    input
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::InvalidInput(format!("handoff() missing required argument: '{key}'")))
}

#[async_trait]
impl Tool for HandoffTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let ctx = tool_context().ok_or_else(|| {
            Error::Workflow("the handoff tool runs only inside an agent workflow".into())
        })?;
        let to_agent = text_arg(&input, "to_agent")?;
        let reason = text_arg(&input, "reason")?;
        let store = ctx.store();
        let agents: Vec<String> = store.get_or("agents", Vec::new())?;
        let current: String = store.get_or("current_agent_name", String::new())?;
        let allowed: Map<String, Value> = store.get_or("can_handoff_to", Map::new())?;
        // LlamaIndex's answers, word for word (the second names the agents the other way round).
        let content = if !agents.contains(&to_agent) {
            let valid: Vec<&str> = agents
                .iter()
                .filter(|a| **a != current)
                .map(String::as_str)
                .collect();
            format!(
                "Agent {to_agent} not found. Please select a valid agent to hand off to. Valid agents: {}",
                valid.join(", ")
            )
        } else if match allowed.get(&current) {
            // No list means any agent; a missing entry means none (LlamaIndex's `get(name, [])`).
            Some(Value::Null) => false,
            Some(Value::Array(targets)) => !targets.iter().any(|t| t.as_str() == Some(&to_agent)),
            _ => true,
        } {
            format!(
                "Agent {to_agent} cannot hand off to {current}. Please select a valid agent to hand off to."
            )
        } else {
            store.set("next_agent", &to_agent)?;
            let template: String = store.get_or(
                "handoff_output_prompt",
                super::prompts::DEFAULT_HANDOFF_OUTPUT_PROMPT.to_string(),
            )?;
            template
                .replace("{to_agent}", &to_agent)
                .replace("{reason}", &reason)
        };
        Ok(ToolOutput::new(
            "handoff",
            content.clone(),
            input,
            Value::String(content),
        ))
    }
}

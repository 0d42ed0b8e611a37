//! `ReActAgent` on workflows: any model, tools chosen in text (Thought /
//! Action / Action Input), with the ReAct prompt and parser of LlamaIndex 0.14.

use super::base::{AgentSpec, WorkflowAgent, memory_put, stream_reply};
use super::builder::agent_spec_setters;
use super::events::{AgentInput, AgentOutput, ToolCallResult};
use super::multi::{AgentHandler, AgentWorkflow, RunOptions};
use crate::react::{
    ObservationReasoningStep, ReActChatFormatter, ReActOutputParser, ReasoningStep,
    ResponseReasoningStep,
};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, ChatResponse, Llm, MessageRole, ToolSelection};
use ragloom_core::tools::Tool;
use ragloom_workflow::Context;
use serde_json::Value;
use std::sync::Arc;

/// Sent back when the model's reply was empty (LlamaIndex's wording).
pub const EMPTY_RESPONSE_MESSAGE: &str = "FAILURE: Your previous response was empty.\n\
You must output a thought and an action/answer.\n\n\
Please follow this structure exactly:\n\
Thought: <what you are thinking>\n\
Action: <tool_name>\n\
Action Input: <json_params>\n\n\
OR:\n\n\
Thought: <what you are thinking>\n\
Answer: <your final response to the user>";

/// How a reply that did not parse is explained to the model; `{error}` is the parser's message.
pub const PARSE_ERROR_MESSAGE: &str = "Error while parsing the output: {error}\n\n\
The output should be in one of the following formats:\n\
1. To call a tool:\n\
```\n\
Thought: <thought>\n\
Action: <action>\n\
Action Input: <action_input>\n\
```\n\
2. To answer the question:\n\
```\n\
Thought: <thought>\n\
Answer: <answer>\n\
```\n";

/// An agent that reasons in text and names a tool to call (LlamaIndex
/// 0.14's `ReActAgent`, a workflow agent). Works with any chat model.
/// The step-wise ReAct agent of earlier releases is
/// [`legacy::ReActAgent`](crate::legacy::ReActAgent).
#[derive(Clone, Debug)]
pub struct ReActAgent {
    spec: AgentSpec,
    reasoning_key: String,
    formatter: ReActChatFormatter,
    output_parser: ReActOutputParser,
}

/// Builds a [`ReActAgent`]; see [`ReActAgent::builder`].
#[derive(Debug)]
pub struct ReActAgentBuilder {
    spec: AgentSpec,
    formatter: Option<ReActChatFormatter>,
}

impl ReActAgent {
    /// An agent answering with `llm`, with LlamaIndex's defaults.
    pub fn builder(llm: Arc<dyn Llm>) -> ReActAgentBuilder {
        ReActAgentBuilder {
            spec: AgentSpec::new(llm),
            formatter: None,
        }
    }

    /// Runs the agent on `user_msg`; await the handler for its output, or
    /// read its events first.
    pub fn run(&self, user_msg: impl Into<ChatMessage>) -> AgentHandler {
        AgentWorkflow::from_agent(Arc::new(self.clone())).run(user_msg)
    }

    /// Runs the agent with a history, a memory, or an iteration limit.
    pub async fn run_with(&self, options: RunOptions) -> Result<AgentHandler> {
        AgentWorkflow::from_agent(Arc::new(self.clone()))
            .run_with(options)
            .await
    }

    /// The formatter that builds the model's messages.
    pub fn formatter(&self) -> &ReActChatFormatter {
        &self.formatter
    }

    fn reasoning(&self, ctx: &Context) -> Result<Vec<ReasoningStep>> {
        ctx.store().get_or(&self.reasoning_key, Vec::new())
    }

    async fn streamed(&self, ctx: &Context, input: &[ChatMessage]) -> Result<ChatResponse> {
        let stream = self.spec.llm.stream_chat(input).await?;
        let last = stream_reply(ctx, &self.spec.name, stream, None).await?;
        Ok(last.unwrap_or_default())
    }

    fn retry(&self, response: ChatResponse, feedback: String) -> AgentOutput {
        AgentOutput {
            retry_messages: vec![response.message.clone(), ChatMessage::user(feedback)],
            response: response.message,
            raw: response.raw,
            current_agent_name: self.spec.name.clone(),
            ..AgentOutput::default()
        }
    }
}

impl ReActAgentBuilder {
    agent_spec_setters!();

    /// The formatter (its header and the role observations are sent with);
    /// the system prompt is merged into its context as LlamaIndex does.
    pub fn formatter(mut self, formatter: ReActChatFormatter) -> Self {
        self.formatter = Some(formatter);
        self
    }

    /// The agent.
    pub fn build(self) -> Result<ReActAgent> {
        self.spec.validate()?;
        let mut formatter = self
            .formatter
            .unwrap_or_else(|| ReActChatFormatter::from_defaults(None, None, MessageRole::User));
        // LlamaIndex's validator: the system prompt becomes (part of) the
        // formatter's context, and a context needs the header that shows it.
        if let Some(system) = &self.spec.system_prompt {
            if !formatter.context.is_empty() && !formatter.context.contains(system.as_str()) {
                formatter.context = format!("{system}\n\n{}", formatter.context.trim());
            } else if formatter.context.is_empty() {
                formatter.context = system.clone();
            }
        }
        if !formatter.context.is_empty() && !formatter.system_header.contains("{context}") {
            formatter.system_header =
                crate::react::formatter::context_react_chat_system_header().to_string();
        }
        Ok(ReActAgent {
            spec: self.spec,
            reasoning_key: "current_reasoning".to_string(),
            formatter,
            output_parser: ReActOutputParser::new(),
        })
    }
}

#[async_trait]
impl WorkflowAgent for ReActAgent {
    fn spec(&self) -> &AgentSpec {
        &self.spec
    }

    async fn take_step(
        &self,
        ctx: &Context,
        llm_input: Vec<ChatMessage>,
        tools: &[Arc<dyn Tool>],
    ) -> Result<AgentOutput> {
        // The system prompt is already in the ReAct header's context.
        let history = match llm_input.first() {
            Some(first) if first.role == MessageRole::System => &llm_input[1..],
            _ => &llm_input[..],
        };
        let mut reasoning = self.reasoning(ctx)?;
        let input = self.formatter.format(tools, history, &reasoning)?;
        ctx.write_event_to_stream(AgentInput {
            input: input.clone(),
            current_agent_name: self.spec.name.clone(),
        });
        let response = match self.spec.streaming {
            true => self.streamed(ctx, &input).await?,
            false => self.spec.llm.chat(&input).await?,
        };
        if response.message.content.is_empty() {
            return Ok(self.retry(response, EMPTY_RESPONSE_MESSAGE.into()));
        }
        let step = match self.output_parser.parse(&response.message.content, false) {
            Ok(step) => step,
            Err(Error::OutputParse(why)) | Err(Error::InvalidInput(why)) => {
                let feedback = PARSE_ERROR_MESSAGE.replace("{error}", &why);
                return Ok(self.retry(response, feedback));
            }
            Err(e) => return Err(e),
        };
        reasoning.push(step.clone());
        ctx.store().set(&self.reasoning_key, &reasoning)?;
        let tool_calls = match step {
            ReasoningStep::Action(action) => vec![ToolSelection::new(
                uuid::Uuid::new_v4().to_string(),
                action.action,
                Value::Object(action.action_input),
            )],
            _ => Vec::new(),
        };
        Ok(AgentOutput {
            response: response.message,
            tool_calls,
            raw: response.raw,
            current_agent_name: self.spec.name.clone(),
            ..AgentOutput::default()
        })
    }

    async fn handle_tool_call_results(
        &self,
        ctx: &Context,
        results: &[ToolCallResult],
    ) -> Result<()> {
        let mut reasoning = self.reasoning(ctx)?;
        for result in results {
            let observation = result.tool_output.content.clone();
            reasoning.push(ReasoningStep::Observation(ObservationReasoningStep {
                observation: observation.clone(),
                return_direct: result.return_direct,
            }));
            if result.return_direct && result.tool_name != "handoff" {
                reasoning.push(ReasoningStep::Response(ResponseReasoningStep {
                    thought: observation.clone(),
                    response: observation,
                    is_streaming: false,
                }));
                break;
            }
        }
        ctx.store().set(&self.reasoning_key, reasoning)
    }

    async fn finalize(&self, ctx: &Context, mut output: AgentOutput) -> Result<AgentOutput> {
        let reasoning = self.reasoning(ctx)?;
        if let Some(ReasoningStep::Response(_)) = reasoning.last() {
            let text = reasoning
                .iter()
                .map(ReasoningStep::get_content)
                .collect::<Vec<_>>()
                .join("\n");
            if !text.is_empty() {
                memory_put(ctx, vec![ChatMessage::assistant(text)])?;
            }
            let content = &output.response.content;
            if let Some(at) = content.find("Answer:") {
                output.response.content = content[at + "Answer:".len()..].trim().to_string();
            }
            ctx.store()
                .set(&self.reasoning_key, Vec::<ReasoningStep>::new())?;
        }
        Ok(output)
    }
}

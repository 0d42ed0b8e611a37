//! `FunctionAgent`: an agent for models with native tool calling; each
//! step's messages wait in a scratchpad until the agent's turn ends.

use super::base::{AgentSpec, WorkflowAgent, memory_put, stream_reply};
use super::builder::agent_spec_setters;
use super::events::{AgentInput, AgentOutput, ToolCallResult};
use super::multi::{AgentHandler, AgentWorkflow, RunOptions};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{
    ChatMessage, ChatResponse, FunctionCallingLlm, Llm, MessageRole, ToolChoice, ToolSelection,
};
use ragloom_core::tools::{Tool, ToolMetadata};
use ragloom_workflow::Context;
use std::sync::Arc;

/// An agent that calls tools through the model's native tool calling
/// (LlamaIndex's `FunctionAgent`). A model without it is refused when the
/// run starts, with an error naming the model.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ragloom_agent::FunctionAgent;
/// use ragloom_core::llms::{ChatMessage, MockLlm, ToolCall};
/// use ragloom_core::tools::{FunctionTool, Tool};
/// use std::sync::Arc;
///
/// /// Multiplies two integers.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args { a: i64, b: i64 }
/// let multiply: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn("multiply", None, |x: Args| x.a * x.b));
///
/// let llm = Arc::new(MockLlm::scripted([
///     ChatMessage::assistant_with_tool_calls("", vec![ToolCall::new("c1", "multiply", serde_json::json!({"a": 6, "b": 7}))]),
///     ChatMessage::assistant("6 times 7 is 42."),
/// ]).function_calling(true));
/// let agent = FunctionAgent::builder(llm).tool(multiply).build()?;
/// let output = agent.run("What is 6 * 7?").await?;
/// assert_eq!(output.response.content, "6 times 7 is 42.");
/// assert_eq!(output.tool_calls[0].name, "multiply");
/// # Ok::<(), ragloom_core::Error>(()) }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct FunctionAgent {
    spec: AgentSpec,
    scratchpad_key: String,
    initial_tool_choice: Option<String>,
    allow_parallel_tool_calls: bool,
}

/// Builds a [`FunctionAgent`]; see [`FunctionAgent::builder`].
#[derive(Debug)]
pub struct FunctionAgentBuilder {
    spec: AgentSpec,
    initial_tool_choice: Option<String>,
    allow_parallel_tool_calls: bool,
}

impl FunctionAgent {
    /// An agent answering with `llm`, with LlamaIndex's defaults.
    pub fn builder(llm: Arc<dyn Llm>) -> FunctionAgentBuilder {
        FunctionAgentBuilder {
            spec: AgentSpec::new(llm),
            initial_tool_choice: None,
            allow_parallel_tool_calls: true,
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

    async fn streamed(
        &self,
        ctx: &Context,
        input: &[ChatMessage],
        tools: &[ToolMetadata],
        choice: &ToolChoice,
    ) -> Result<ChatResponse> {
        let llm = self.spec.llm.as_ref();
        let stream = llm.stream_chat_with_tools(input, tools, choice).await?;
        let last = stream_reply(ctx, &self.spec.name, stream, Some(llm)).await?;
        Ok(last.unwrap_or_default())
    }

    fn scratchpad(&self, ctx: &Context) -> Result<Vec<ChatMessage>> {
        ctx.store().get_or(&self.scratchpad_key, Vec::new())
    }
}

impl FunctionAgentBuilder {
    agent_spec_setters!();

    /// The tool the model must call on its first step (LlamaIndex's
    /// `initial_tool_choice`); `"auto"`, `"none"` and `"required"` mean what
    /// they mean to OpenAI.
    pub fn initial_tool_choice(mut self, tool: impl Into<String>) -> Self {
        self.initial_tool_choice = Some(tool.into());
        self
    }

    /// Whether the model may call several tools in one step (default: yes);
    /// when not, only its first call is made.
    pub fn allow_parallel_tool_calls(mut self, allow: bool) -> Self {
        self.allow_parallel_tool_calls = allow;
        self
    }

    /// The agent; a tool named `handoff` or a state prompt without
    /// `{state}` and `{msg}` is an error.
    pub fn build(self) -> Result<FunctionAgent> {
        self.spec.validate()?;
        Ok(FunctionAgent {
            spec: self.spec,
            scratchpad_key: "scratchpad".to_string(),
            initial_tool_choice: self.initial_tool_choice,
            allow_parallel_tool_calls: self.allow_parallel_tool_calls,
        })
    }
}

fn tool_choice(name: &str) -> ToolChoice {
    match name {
        "auto" => ToolChoice::Auto,
        "none" => ToolChoice::None,
        "required" => ToolChoice::Required,
        other => ToolChoice::Named(other.to_string()),
    }
}

#[async_trait]
impl WorkflowAgent for FunctionAgent {
    fn spec(&self) -> &AgentSpec {
        &self.spec
    }

    async fn take_step(
        &self,
        ctx: &Context,
        llm_input: Vec<ChatMessage>,
        tools: &[Arc<dyn Tool>],
    ) -> Result<AgentOutput> {
        let metadata = self.spec.llm.metadata();
        if !metadata.is_function_calling_model {
            return Err(Error::Unsupported(format!(
                "LLM must be a FunctionCallingLLM: model `{}` has no native tool calling, so \
                 FunctionAgent `{}` cannot use it; use a ReActAgent (a MockLlm that plays a \
                 tool-calling model needs `.function_calling(true)`)",
                metadata.model_name, self.spec.name
            )));
        }
        let mut scratchpad = self.scratchpad(ctx)?;
        let mut input = llm_input;
        input.extend(scratchpad.iter().cloned());
        ctx.write_event_to_stream(AgentInput {
            input: input.clone(),
            current_agent_name: self.spec.name.clone(),
        });
        let tool_metadata: Vec<ToolMetadata> = tools.iter().map(|t| t.metadata().clone()).collect();
        // Only the first step is forced, as in LlamaIndex: later ones end with a tool result.
        let choice = match (&self.initial_tool_choice, input.last()) {
            (Some(name), Some(last)) if last.role == MessageRole::User => tool_choice(name),
            _ => ToolChoice::Auto,
        };
        let response = match self.spec.streaming {
            true => self.streamed(ctx, &input, &tool_metadata, &choice).await?,
            false => {
                self.spec
                    .llm
                    .chat_with_tools(&input, &tool_metadata, &choice)
                    .await?
            }
        };
        let mut tool_calls: Vec<ToolSelection> = self
            .spec
            .llm
            .get_tool_calls_from_response(&response, false)?;
        let mut response = response;
        if !self.allow_parallel_tool_calls {
            // The message keeps only the call that runs, as LlamaIndex's
            // `force_single_tool_call`: a call left unanswered in the history
            // is refused by OpenAI-style APIs.
            tool_calls.truncate(1);
            response.message.tool_calls.truncate(1);
        }
        scratchpad.push(response.message.clone());
        ctx.store().set(&self.scratchpad_key, &scratchpad)?;
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
        let mut scratchpad = self.scratchpad(ctx)?;
        for result in results {
            scratchpad.push(ChatMessage::tool_result(
                result.tool_id.clone(),
                result.tool_name.clone(),
                result.tool_output.content.clone(),
            ));
            if result.return_direct && result.tool_name != "handoff" {
                scratchpad.push(
                    ChatMessage::assistant(result.tool_output.content.clone())
                        .with_additional_kwarg("tool_call_id", result.tool_id.clone()),
                );
                break;
            }
        }
        ctx.store().set(&self.scratchpad_key, scratchpad)
    }

    async fn finalize(&self, ctx: &Context, output: AgentOutput) -> Result<AgentOutput> {
        memory_put(ctx, self.scratchpad(ctx)?)?;
        ctx.store()
            .set(&self.scratchpad_key, Vec::<ChatMessage>::new())?;
        Ok(output)
    }
}

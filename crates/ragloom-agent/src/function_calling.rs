//! `FunctionCallingAgentWorker`: agent steps through a model's native tool
//! calls (any [`Llm`] whose `chat_with_tools` works), the calls of one reply run concurrently.

use super::agent_builder::{AgentBuilder, worker_builder};
use super::runner::AgentRunner;
use super::task::unknown_tool_choice;
use super::task::{AgentWorker, StepOptions, StepOutput, Task, TaskStep, TaskStepOutput};
use super::tool_retriever::{ToolRetriever, ToolSource};
use async_trait::async_trait;
use futures::future::join_all;
use ragloom_core::chat_engine::AgentChatResponse;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, FunctionCallingLlm, Llm, ToolCall, ToolChoice, call_tool};
use ragloom_core::schema::py_repr;
use ragloom_core::setters;
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;

/// LlamaIndex's `DEFAULT_MAX_FUNCTION_CALLS`.
pub const DEFAULT_MAX_FUNCTION_CALLS: usize = 5;

/// What the model reads when it calls a tool that does not exist (LlamaIndex `build_missing_tool_message`).
pub fn build_missing_tool_message(missing_tool_name: &str) -> String {
    format!("Tool with name {missing_tool_name} not found, please double check.")
}

/// Runs function-calling steps (LlamaIndex `FunctionCallingAgentWorker`).
#[derive(Clone, Debug)]
pub struct FunctionCallingAgentWorker {
    llm: Arc<dyn Llm>,
    tools: ToolSource,
    prefix_messages: Vec<ChatMessage>,
    verbose: bool,
    max_function_calls: usize,
    allow_parallel_tool_calls: bool,
    max_tool_output_len: Option<usize>,
}

/// Builds a [`FunctionCallingAgentWorker`] (or, through
/// [`FunctionCallingAgent::builder`], a whole agent).
#[derive(Debug)]
pub struct FunctionCallingAgentWorkerBuilder {
    llm: Arc<dyn Llm>,
    tools: Vec<Arc<dyn Tool>>,
    tool_retriever: Option<Arc<ToolRetriever>>,
    system_prompt: Option<String>,
    prefix_messages: Vec<ChatMessage>,
    verbose: bool,
    max_function_calls: usize,
    allow_parallel_tool_calls: bool,
    max_tool_output_len: Option<usize>,
}

impl FunctionCallingAgentWorkerBuilder {
    setters!(
        /// The tools (not with [`tool_retriever`](Self::tool_retriever)).
        tools => tools: Vec<Arc<dyn Tool>>,
        /// Picks the tools per task from its input instead of a fixed list.
        tool_retriever => tool_retriever: Arc<ToolRetriever>,
        /// Messages sent before the conversation.
        prefix_messages => prefix_messages: Vec<ChatMessage>,
        /// Prints each model reply and tool call.
        verbose => verbose: bool,
        /// Tool calls a task may make before the model must answer (default 5).
        max_function_calls => max_function_calls: usize,
        /// Whether one reply may call several tools (default true); they run concurrently.
        allow_parallel_tool_calls => allow_parallel_tool_calls: bool,
        /// Characters of a tool output the model sees (default
        /// [`DEFAULT_MAX_TOOL_OUTPUT_LEN`](super::DEFAULT_MAX_TOOL_OUTPUT_LEN); `None` for no limit).
        max_tool_output_len => max_tool_output_len: Option<usize>,
    );

    /// A system message sent first (not with `prefix_messages`).
    pub fn system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(system_prompt.into());
        self
    }

    /// The worker. A model without native tool calling, a system prompt
    /// with prefix messages, or tools with a tool retriever are errors.
    pub fn build(self) -> Result<FunctionCallingAgentWorker> {
        let metadata = self.llm.metadata();
        if !metadata.is_function_calling_model {
            return Err(Error::Unsupported(format!(
                "Model name {} does not support function calling API; use a ReAct agent \
                 (a MockLlm that plays a tool-calling model needs `.function_calling(true)`)",
                metadata.model_name
            )));
        }
        let prefix_messages = match self.system_prompt {
            Some(_) if !self.prefix_messages.is_empty() => {
                return Err(Error::InvalidInput(
                    "Cannot specify both system_prompt and prefix_messages".to_owned(),
                ));
            }
            Some(prompt) => vec![ChatMessage::system(prompt)],
            None => self.prefix_messages,
        };
        Ok(FunctionCallingAgentWorker {
            llm: self.llm,
            tools: ToolSource::new(self.tools, self.tool_retriever)?,
            prefix_messages,
            verbose: self.verbose,
            max_function_calls: self.max_function_calls,
            allow_parallel_tool_calls: self.allow_parallel_tool_calls,
            max_tool_output_len: self.max_tool_output_len,
        })
    }
}

impl FunctionCallingAgentWorker {
    /// A builder answering with `llm`.
    pub fn builder(llm: Arc<dyn Llm>) -> FunctionCallingAgentWorkerBuilder {
        FunctionCallingAgentWorkerBuilder {
            llm,
            tools: Vec::new(),
            tool_retriever: None,
            system_prompt: None,
            prefix_messages: Vec::new(),
            verbose: false,
            max_function_calls: DEFAULT_MAX_FUNCTION_CALLS,
            allow_parallel_tool_calls: true,
            max_tool_output_len: Some(super::DEFAULT_MAX_TOOL_OUTPUT_LEN),
        }
    }

    /// A worker over `tools` with the defaults (LlamaIndex `from_tools`).
    pub fn from_tools(tools: Vec<Arc<dyn Tool>>, llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(llm).tools(tools).build()
    }

    /// The messages for the next model call: prefix, memory, the task's new messages.
    async fn get_all_messages(&self, task: &Task) -> Result<Vec<ChatMessage>> {
        let mut messages = self.prefix_messages.clone();
        messages.extend(task.memory.get(0).await?);
        messages.extend(task.new_memory.iter().cloned());
        Ok(messages)
    }

    async fn call_function(&self, tools: &[Arc<dyn Tool>], call: &ToolCall) -> (ToolOutput, bool) {
        if self.verbose {
            println!("=== Calling Function ===");
            println!(
                "Calling function: {} with args: {}",
                call.name, call.arguments
            );
        }
        let Some(tool) = tools.iter().find(|t| t.metadata().name == call.name) else {
            let message = build_missing_tool_message(&call.name);
            let output = ToolOutput {
                content: message.clone(),
                tool_name: call.name.clone(),
                raw_input: json!({"args": py_repr(&call.arguments)}),
                raw_output: Value::String(message),
                is_error: true,
            };
            return (output, false);
        };
        let output = call_tool(tool.as_ref(), call.arguments.clone()).await;
        let output = match self.max_tool_output_len {
            Some(max) => output.truncated(max),
            None => output,
        };
        if self.verbose {
            println!("=== Function Output ===");
            println!("{}", output.content);
        }
        (output, tool.metadata().return_direct)
    }
}

#[async_trait]
impl AgentWorker for FunctionCallingAgentWorker {
    fn initialize_step(&self, task: &mut Task) -> Result<TaskStep> {
        task.sources.clear();
        task.new_memory.clear();
        task.n_function_calls = 0;
        Ok(TaskStep::new(
            task.task_id.clone(),
            Some(task.input.clone()),
        ))
    }

    async fn run_step(
        &self,
        step: &mut TaskStep,
        task: &mut Task,
        options: &StepOptions,
    ) -> Result<TaskStepOutput> {
        if let Some(input) = &step.input {
            if self.verbose {
                println!("Added user message to memory: {input}");
            }
            task.new_memory.push(ChatMessage::user(input.clone()));
        }
        let tools = self.tools.get_tools(&task.input, &ToolChoice::Auto).await?;
        let tool_metadata: Vec<ToolMetadata> = tools.iter().map(|t| t.metadata().clone()).collect();
        if let ToolChoice::Named(name) = &options.tool_choice {
            if !tool_metadata.iter().any(|m| &m.name == name) {
                let names: Vec<String> = tool_metadata.iter().map(|m| m.name.clone()).collect();
                return Err(unknown_tool_choice(name, &names));
            }
        }
        let messages = self.get_all_messages(task).await?;
        let response = self
            .llm
            .chat_with_tools(&messages, &tool_metadata, &options.tool_choice)
            .await?;
        let tool_calls = self.llm.get_tool_calls_from_response(&response, false)?;
        if self.verbose && !response.message.content.is_empty() {
            println!("=== LLM Response ===");
            println!("{}", response.message.content);
        }
        if !self.allow_parallel_tool_calls && tool_calls.len() > 1 {
            return Err(Error::InvalidInput(format!(
                "model `{}` called {} tools at once, but allow_parallel_tool_calls is false",
                self.llm.metadata().model_name,
                tool_calls.len()
            )));
        }
        task.new_memory.push(response.message.clone());
        let mut response_str = response.message.content_str().to_owned();
        let mut step_sources = Vec::new();
        let is_done = if tool_calls.is_empty() || task.n_function_calls >= self.max_function_calls {
            true
        } else {
            // Every call of the reply runs at once; results are recorded in call order.
            let results = join_all(tool_calls.iter().map(|c| self.call_function(&tools, c))).await;
            let mut done = false;
            for (i, (call, (output, return_direct))) in tool_calls.iter().zip(results).enumerate() {
                task.new_memory.push(ChatMessage::tool_result(
                    call.id.clone(),
                    call.name.clone(),
                    output.content.clone(),
                ));
                task.n_function_calls += 1;
                // As in LlamaIndex, only the first call can end the task with its output.
                if i == 0 && return_direct && !output.is_error {
                    done = true;
                    response_str = output.content.clone();
                }
                task.sources.push(output.clone());
                step_sources.push(output);
            }
            done
        };
        let next_steps = if is_done {
            Vec::new()
        } else {
            vec![step.next_step()]
        };
        let response = AgentChatResponse {
            response: response_str,
            sources: step_sources,
            ..Default::default()
        };
        Ok(TaskStepOutput::new(
            StepOutput::Response(response),
            step.clone(),
            next_steps,
        ))
    }
}

/// Builds function-calling agents (LlamaIndex `FunctionCallingAgent`): an
/// [`AgentRunner`] over a [`FunctionCallingAgentWorker`].
#[derive(Clone, Copy, Debug)]
pub struct FunctionCallingAgent;

impl FunctionCallingAgent {
    /// An agent over `tools` with the defaults.
    pub fn from_tools(tools: Vec<Arc<dyn Tool>>, llm: Arc<dyn Llm>) -> Result<AgentRunner> {
        Self::builder(llm).tools(tools).build()
    }

    /// A builder for the worker and runner options.
    pub fn builder(llm: Arc<dyn Llm>) -> FunctionCallingAgentBuilder {
        AgentBuilder::new(FunctionCallingAgentWorker::builder(llm.clone()), llm)
    }
}

worker_builder!(FunctionCallingAgentWorkerBuilder => FunctionCallingAgentWorker);

/// Options of a function-calling agent: the worker's and the runner's.
pub type FunctionCallingAgentBuilder = AgentBuilder<FunctionCallingAgentWorkerBuilder>;

impl FunctionCallingAgentBuilder {
    /// A system message sent first.
    pub fn system_prompt(self, system_prompt: impl Into<String>) -> Self {
        self.worker(|w| w.system_prompt(system_prompt))
    }
}

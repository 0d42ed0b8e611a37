//! `ReActAgentWorker`: one ReAct step — format the conversation and the
//! reasoning so far, ask the model, parse its reply, run the tool it chose.

use super::formatter::ReActChatFormatter;
use super::output_parser::ReActOutputParser;
use super::types::{ObservationReasoningStep, ReasoningStep};
use crate::task::SharedStream;
use crate::task::{AgentWorker, StepOptions, StepOutput, Task, TaskStep, TaskStepOutput};
use crate::tool_retriever::{ToolRetriever, ToolSource};
use async_trait::async_trait;
use futures::StreamExt;
use ragloom_core::chat_engine::{AgentChatResponse, StreamingAgentChatResponse};
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, ChatResponseStream, Llm};
use ragloom_core::memory::BaseMemory;
use ragloom_core::schema::py_strip;
use ragloom_core::setters;
use ragloom_core::tools::{Tool, ToolOutput};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tracing::Instrument;

/// What the model is told when its reply follows no known format (LlamaIndex's
/// `tell_llm_about_failure_in_extract_reasoning_step`).
pub const PARSE_FAILURE_MESSAGE: &str =
    "Error: Could not parse output. Please follow the thought-action-input format. Try again.";

/// LlamaIndex's default cap: none. ragloom cuts tool outputs to this many
/// characters before they go back to the model, so one huge output cannot
/// fill the context window; set `None` to keep them whole.
pub const DEFAULT_MAX_TOOL_OUTPUT_LEN: usize = 16_000;

/// Runs ReAct steps (LlamaIndex `ReActAgentWorker`).
#[derive(Clone, Debug)]
pub struct ReActAgentWorker {
    llm: Arc<dyn Llm>,
    tools: ToolSource,
    formatter: ReActChatFormatter,
    output_parser: ReActOutputParser,
    verbose: bool,
    max_tool_output_len: Option<usize>,
}

/// Builds a [`ReActAgentWorker`].
#[derive(Debug)]
pub struct ReActAgentWorkerBuilder {
    llm: Arc<dyn Llm>,
    tools: Vec<Arc<dyn Tool>>,
    tool_retriever: Option<Arc<ToolRetriever>>,
    formatter: ReActChatFormatter,
    verbose: bool,
    max_tool_output_len: Option<usize>,
}

impl ReActAgentWorkerBuilder {
    setters!(
        /// The tools (not with [`tool_retriever`](Self::tool_retriever)).
        tools => tools: Vec<Arc<dyn Tool>>,
        /// Picks the tools per task from its input instead of a fixed list.
        tool_retriever => tool_retriever: Arc<ToolRetriever>,
        /// Replaces the chat formatter (system header, context, observation role).
        react_chat_formatter => formatter: ReActChatFormatter,
        /// Prints each reasoning step.
        verbose => verbose: bool,
        /// Characters of a tool output the model sees (default
        /// [`DEFAULT_MAX_TOOL_OUTPUT_LEN`]; `None` for no limit).
        max_tool_output_len => max_tool_output_len: Option<usize>,
    );

    /// Context for the system header (LlamaIndex's `context`).
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.formatter = ReActChatFormatter::from_defaults(
            None,
            Some(context.into()),
            self.formatter.observation_role,
        );
        self
    }

    /// The worker; tools and a tool retriever together are an error.
    pub fn build(self) -> Result<ReActAgentWorker> {
        Ok(ReActAgentWorker {
            llm: self.llm,
            tools: ToolSource::new(self.tools, self.tool_retriever)?,
            formatter: self.formatter,
            output_parser: ReActOutputParser,
            verbose: self.verbose,
            max_tool_output_len: self.max_tool_output_len,
        })
    }
}

impl ReActAgentWorker {
    /// A builder answering with `llm`.
    pub fn builder(llm: Arc<dyn Llm>) -> ReActAgentWorkerBuilder {
        ReActAgentWorkerBuilder {
            llm,
            tools: Vec::new(),
            tool_retriever: None,
            formatter: ReActChatFormatter::default(),
            verbose: false,
            max_tool_output_len: Some(DEFAULT_MAX_TOOL_OUTPUT_LEN),
        }
    }

    /// A worker over `tools` with the defaults (LlamaIndex `from_tools`).
    pub fn from_tools(tools: Vec<Arc<dyn Tool>>, llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(llm).tools(tools).build()
    }

    /// The chat formatter.
    pub fn react_chat_formatter(&self) -> &ReActChatFormatter {
        &self.formatter
    }

    /// The messages for the next model call (the system header, the memory,
    /// the task's new messages, the reasoning so far), after taking in the
    /// step's input, and the tools they offer.
    async fn prepare(
        &self,
        step: &mut TaskStep,
        task: &mut Task,
        options: &StepOptions,
    ) -> Result<(Vec<ChatMessage>, Vec<Arc<dyn Tool>>)> {
        if let Some(input) = step.input.clone() {
            self.add_user_step_to_reasoning(step, task, input);
        }
        let tools = self
            .tools
            .get_tools(&task.input, &options.tool_choice)
            .await?;
        let mut history = task.memory.get(0).await?;
        history.extend(task.new_memory.iter().cloned());
        let messages = self
            .formatter
            .format(&tools, &history, &task.current_reasoning)?;
        Ok((messages, tools))
    }

    /// The task's first input is the user's message; later inputs are fed to
    /// the model as observations (LlamaIndex `add_user_step_to_reasoning`).
    fn add_user_step_to_reasoning(&self, step: &mut TaskStep, task: &mut Task, input: String) {
        if step.step_state.get("is_first") == Some(&Value::Bool(true)) {
            task.new_memory.push(ChatMessage::user(input));
            step.step_state
                .insert("is_first".to_owned(), Value::Bool(false));
        } else {
            if self.verbose {
                println!("Added user message to memory: {input}");
            }
            task.current_reasoning
                .push(ReasoningStep::Observation(ObservationReasoningStep {
                    observation: input,
                    return_direct: false,
                }));
        }
    }

    /// Parses the reply and runs its action; returns the new reasoning steps
    /// and whether the task is done (LlamaIndex `_process_actions`).
    async fn process_actions(
        &self,
        task: &mut Task,
        tools: &[Arc<dyn Tool>],
        reply: &str,
        is_streaming: bool,
    ) -> Result<(Vec<ReasoningStep>, bool)> {
        let mut reasoning = Vec::new();
        let mut return_direct = false;
        let output = match self.output_parser.parse(reply, is_streaming) {
            Err(e) => {
                // The unreadable reply is dropped; the model only sees the request to follow the format.
                tracing::debug!(error = %e, "ReAct reply not parsed; asking the model again");
                if self.verbose {
                    println!("{e}");
                }
                ToolOutput::new(
                    "unknown",
                    PARSE_FAILURE_MESSAGE,
                    json!({}),
                    Value::String(PARSE_FAILURE_MESSAGE.to_owned()),
                )
            }
            Ok(step) => {
                if self.verbose {
                    println!("{}", step.get_content());
                }
                let done = step.is_done();
                let action = match &step {
                    ReasoningStep::Action(a) => Some(a.clone()),
                    _ => None,
                };
                reasoning.push(step);
                let Some(action) = action.filter(|_| !done) else {
                    return Ok((reasoning, true));
                };
                match tools.iter().find(|t| t.metadata().name == action.action) {
                    Some(tool) => {
                        let output = self.call_tool(tool.as_ref(), action.action_input).await;
                        return_direct = tool.metadata().return_direct && !output.is_error;
                        output
                    }
                    None => {
                        let content = format!("Error: No such tool named `{}`.", action.action);
                        ToolOutput {
                            content: content.clone(),
                            tool_name: action.action.clone(),
                            raw_input: json!({"kwargs": action.action_input}),
                            raw_output: Value::String(content),
                            is_error: true,
                        }
                    }
                }
            }
        };
        let output = match self.max_tool_output_len {
            Some(max) => output.truncated(max),
            None => output,
        };
        let observation = ReasoningStep::Observation(ObservationReasoningStep {
            observation: output.content.clone(),
            return_direct,
        });
        if self.verbose {
            println!("{}", observation.get_content());
        }
        task.sources.push(output);
        reasoning.push(observation);
        Ok((reasoning, return_direct))
    }

    /// Calls a tool; a failure becomes an error output the model reads.
    async fn call_tool(&self, tool: &dyn Tool, input: Map<String, Value>) -> ToolOutput {
        let name = tool.metadata().name.clone();
        let span = tracing::info_span!("tool", tool = %name);
        match tool
            .call(Value::Object(input.clone()))
            .instrument(span)
            .await
        {
            Ok(output) => output,
            Err(e) => {
                let message = e.to_string();
                ToolOutput {
                    content: format!("Error: {message}"),
                    tool_name: name,
                    raw_input: json!({"kwargs": input}),
                    raw_output: Value::String(message),
                    is_error: true,
                }
            }
        }
    }

    /// The answer so far (LlamaIndex `_get_response`): the answer, a
    /// `return_direct` observation, or the last step's text.
    fn get_response(task: &Task) -> Result<AgentChatResponse> {
        let last = task.current_reasoning.last().ok_or_else(|| {
            Error::Other(format!(
                "agent task {}: no reasoning steps were taken",
                task.task_id
            ))
        })?;
        let response = match last {
            ReasoningStep::Response(r) => r.response.clone(),
            ReasoningStep::Observation(o) if o.return_direct => o.observation.clone(),
            other => other.get_content(),
        };
        Ok(AgentChatResponse {
            response,
            sources: task.sources.clone(),
            ..Default::default()
        })
    }

    async fn finish_step(
        &self,
        step: &TaskStep,
        task: &mut Task,
        tools: &[Arc<dyn Tool>],
        reply: &str,
        is_streaming: bool,
    ) -> Result<TaskStepOutput> {
        let (reasoning, is_done) = self
            .process_actions(task, tools, reply, is_streaming)
            .await?;
        task.current_reasoning.extend(reasoning);
        let mut response = Self::get_response(task)?;
        let next_steps = if is_done {
            task.new_memory
                .push(ChatMessage::assistant(response.response.clone()));
            response.is_dummy_stream = is_streaming;
            Vec::new()
        } else {
            vec![step.next_step()]
        };
        Ok(TaskStepOutput::new(
            StepOutput::Response(response),
            step.clone(),
            next_steps,
        ))
    }
}

/// Whether a reply streamed so far is the final answer (LlamaIndex
/// `_infer_stream_chunk_is_final`): text that does not start with
/// `Thought`, or that has reached `Answer:`. Too short to tell is not final.
fn stream_text_is_final(text: &str) -> bool {
    let latest = py_strip(text);
    if latest.is_empty() || latest.chars().count() < "Thought".len() {
        return false;
    }
    !latest.starts_with("Thought") || latest.contains("Answer:")
}

/// The answer part of a reply decided final: after `Answer:` if there is one.
fn answer_part(text: &str) -> &str {
    match text.find("Answer:") {
        Some(i) => text[i + "Answer:".len()..].trim_start(),
        None => text,
    }
}

struct AnswerStream {
    rest: ChatResponseStream,
    first: Option<String>,
    answer: String,
    memory: Arc<dyn BaseMemory>,
    to_store: Vec<ChatMessage>,
    done: bool,
}

/// The final answer as deltas; at its end the task's messages and the answer
/// go to memory (LlamaIndex's `write_response_to_history` then `finalize_task`).
fn answer_stream(state: AnswerStream) -> futures::stream::BoxStream<'static, Result<String>> {
    futures::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        if let Some(first) = s.first.take().filter(|f| !f.is_empty()) {
            s.answer.push_str(&first);
            return Some((Ok(first), s));
        }
        match s.rest.next().await {
            Some(Ok(item)) => {
                let delta = item.delta.unwrap_or_default();
                s.answer.push_str(&delta);
                Some((Ok(delta), s))
            }
            Some(Err(e)) => {
                s.done = true;
                Some((Err(e), s))
            }
            None => {
                s.done = true;
                let mut messages = std::mem::take(&mut s.to_store);
                messages.push(ChatMessage::assistant(py_strip(&s.answer)));
                match s.memory.put_messages(messages).await {
                    Ok(()) => None,
                    Err(e) => Some((Err(e), s)),
                }
            }
        }
    })
    .boxed()
}

#[async_trait]
impl AgentWorker for ReActAgentWorker {
    fn initialize_step(&self, task: &mut Task) -> Result<TaskStep> {
        task.sources.clear();
        task.current_reasoning.clear();
        task.new_memory.clear();
        let mut step = TaskStep::new(task.task_id.clone(), Some(task.input.clone()));
        step.step_state
            .insert("is_first".to_owned(), Value::Bool(true));
        Ok(step)
    }

    async fn run_step(
        &self,
        step: &mut TaskStep,
        task: &mut Task,
        options: &StepOptions,
    ) -> Result<TaskStepOutput> {
        let (messages, tools) = self.prepare(step, task, options).await?;
        let response = self.llm.chat(&messages).await?;
        self.finish_step(step, task, &tools, &response.message.content, false)
            .await
    }

    async fn stream_step(
        &self,
        step: &mut TaskStep,
        task: &mut Task,
        options: &StepOptions,
    ) -> Result<TaskStepOutput> {
        let (messages, tools) = self.prepare(step, task, options).await?;
        let mut stream = self.llm.stream_chat(&messages).await?;
        let mut text = String::new();
        let mut is_final = false;
        while let Some(item) = stream.next().await {
            let item = item?;
            text = item.message.content;
            if stream_text_is_final(&text) {
                is_final = true;
                break;
            }
        }
        if !is_final {
            return self.finish_step(step, task, &tools, &text, true).await;
        }
        let state = AnswerStream {
            rest: stream,
            first: Some(answer_part(&text).to_owned()),
            answer: String::new(),
            memory: task.memory.clone(),
            to_store: std::mem::take(&mut task.new_memory),
            done: false,
        };
        let response =
            StreamingAgentChatResponse::new(answer_stream(state), task.sources.clone(), Vec::new());
        Ok(TaskStepOutput::new(
            StepOutput::Stream(SharedStream::new(response)),
            step.clone(),
            Vec::new(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_answer_is_recognised_as_llamaindex_does() {
        assert!(!stream_text_is_final("Thou"));
        assert!(!stream_text_is_final("Thought: I need"));
        assert!(stream_text_is_final("Thought: ok\nAnswer: 4"));
        assert!(stream_text_is_final("The answer"));
        assert!(!stream_text_is_final("  The "));
        assert_eq!(answer_part("Thought: ok\nAnswer:  4"), "4");
        assert_eq!(answer_part("The answer"), "The answer");
    }
}

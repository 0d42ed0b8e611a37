//! The six steps of an agent run, as LlamaIndex's `AgentWorkflow` has them:
//! init, setup, the model's step, parsing it, tool calls, and their results.

use super::base::{
    DEFAULT_MAX_ITERATIONS, EarlyStoppingMethod, MEMORY_KEY, StructuredOutputFn, WorkflowAgent,
    memory_get, memory_put, stream_reply, with_tool_context,
};
use super::events::{
    AgentInput, AgentOutput, AgentSetup, AgentStream, AgentStreamStructuredOutput, ToolCall,
    ToolCallResult,
};
use super::handoff::HandoffTool;
use super::prompts::DEFAULT_EARLY_STOPPING_PROMPT;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, ChatResponse, MessageRole, ToolSelection};
use ragloom_core::schema::py_repr;
use ragloom_core::tools::{Tool, ToolOutput};
use ragloom_workflow::step_output;
use ragloom_workflow::{Checkpointer, Context, StartEvent, StopEvent, Workflow};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

step_output! {
    /// What parsing an agent's output leads to.
    enum Parsed { Stop(StopEvent), Input(AgentInput), Call(ToolCall) }
}

step_output! {
    /// What the tool results lead to.
    enum Aggregated { Input(AgentInput), Stop(StopEvent) }
}

/// What a run of agents shares: the agents and the workflow's settings.
pub(crate) struct Engine {
    pub(crate) agents: Vec<Arc<dyn WorkflowAgent>>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) root_agent: String,
    pub(crate) initial_state: Map<String, Value>,
    pub(crate) handoff_prompt: String,
    pub(crate) handoff_output_prompt: String,
    pub(crate) state_prompt: String,
    pub(crate) output_schema: Option<Value>,
    pub(crate) structured_output_fn: Option<StructuredOutputFn>,
    pub(crate) early_stopping_method: EarlyStoppingMethod,
}

/// Registers each `method(Event)` of the engine as the step `method` taking
/// `Event` (`.await` for the async ones), each run on a clone of the engine.
macro_rules! engine_steps {
    ($builder:expr, $engine:expr, { $($method:ident($ev:ty) $(.$aw:tt)?),+ $(,)? }) => {
        $builder$(.step(stringify!($method), {
            let engine = $engine.clone();
            move |ev: $ev, ctx: Context| {
                let e = engine.clone();
                async move { e.$method(ev, ctx)$(.$aw)? }
            }
        }))+
    };
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentWorkflow")
            .field("agents", &self.agents)
            .field("root_agent", &self.root_agent)
            .finish_non_exhaustive()
    }
}

impl Engine {
    pub(crate) fn workflow(
        self: &Arc<Self>,
        timeout: Option<Duration>,
        checkpointer: Option<Arc<dyn Checkpointer>>,
    ) -> Result<Workflow> {
        let builder = Workflow::builder("AgentWorkflow").timeout(timeout);
        let mut builder = engine_steps!(builder, self, {
            init_run(StartEvent).await,
            setup_agent(AgentInput),
            run_agent_step(AgentSetup).await,
            parse_agent_output(AgentOutput).await,
            call_tool(ToolCall).await,
            aggregate_tool_results(ToolCallResult).await,
        })
        .event::<AgentStream>()
        .event::<AgentStreamStructuredOutput>();
        if let Some(c) = checkpointer {
            builder = builder.checkpointer(c);
        }
        builder.build()
    }

    fn agent(&self, name: &str) -> Result<&Arc<dyn WorkflowAgent>> {
        self.by_name
            .get(name)
            .map(|&i| &self.agents[i])
            .ok_or_else(|| Error::NotFound(format!("no agent named `{name}` in this workflow")))
    }

    fn root(&self) -> &Arc<dyn WorkflowAgent> {
        &self.agents[self.by_name[&self.root_agent]]
    }

    fn current_agent_name(&self, ctx: &Context) -> Result<String> {
        ctx.store()
            .get_or("current_agent_name", self.root_agent.clone())
    }

    pub(crate) async fn memory(&self, ctx: &Context) -> Result<Vec<ChatMessage>> {
        memory_get(ctx, self.root().spec().llm.as_ref()).await
    }

    /// Sets each key LlamaIndex's `_init_context` sets, keeping what a
    /// resumed or continued run already has.
    fn init_context(&self, ctx: &Context, ev: &StartEvent) -> Result<()> {
        let store = ctx.store();
        let unset = |key: &str| -> Result<bool> {
            Ok(store.get::<Value>(key)?.is_none_or(|v| is_falsy(&v)))
        };
        if unset(MEMORY_KEY)? {
            let seeded = ev.0.get(MEMORY_KEY).cloned().unwrap_or_else(|| json!([]));
            store.set(MEMORY_KEY, seeded)?;
        }
        if unset("agents")? {
            let names: Vec<&str> = self.agents.iter().map(|a| a.spec().name.as_str()).collect();
            store.set("agents", names)?;
        }
        if unset("can_handoff_to")? {
            let map: Map<String, Value> = self
                .agents
                .iter()
                .map(|a| (a.spec().name.clone(), json!(a.spec().can_handoff_to)))
                .collect();
            store.set("can_handoff_to", map)?;
        }
        if unset("state")? {
            store.set("state", &self.initial_state)?;
        }
        if unset("current_agent_name")? {
            store.set("current_agent_name", &self.root_agent)?;
        }
        if unset("handoff_output_prompt")? {
            store.set("handoff_output_prompt", &self.handoff_output_prompt)?;
        }
        if unset("max_iterations")? {
            let n = match ev.0.get("max_iterations") {
                Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => json!(n),
                _ => json!(DEFAULT_MAX_ITERATIONS),
            };
            store.set("max_iterations", n)?;
        }
        if unset("early_stopping_method")? {
            let method = match ev.0.get("early_stopping_method") {
                Some(v @ Value::String(_)) => v.clone(),
                _ => json!(self.early_stopping_method),
            };
            store.set("early_stopping_method", method)?;
        }
        store.set("num_iterations", 0)?;
        store.set("formatted_input_with_state", false)
    }

    async fn init_run(&self, ev: StartEvent, ctx: Context) -> Result<AgentInput> {
        self.init_context(&ctx, &ev)?;
        let user_msg: Option<ChatMessage> = match ev.0.get("user_msg") {
            Some(Value::String(s)) => Some(ChatMessage::user(s.clone())),
            Some(Value::Null) | None => None,
            Some(_) => Some(ev.get("user_msg")?),
        };
        let chat_history: Vec<ChatMessage> = match ev.0.get("chat_history") {
            Some(Value::Null) | None => Vec::new(),
            Some(_) => ev.get("chat_history")?,
        };
        if !chat_history.is_empty() {
            ctx.store().set(MEMORY_KEY, &chat_history)?;
        }
        let user_msg_str = if let Some(msg) = user_msg {
            let text = msg.content.clone();
            memory_put(&ctx, vec![msg])?;
            text
        } else if !chat_history.is_empty()
            && !chat_history.iter().all(|m| m.role == MessageRole::System)
        {
            chat_history
                .iter()
                .rev()
                .find(|m| m.role == MessageRole::User)
                .map(|m| m.content.clone())
                .ok_or_else(|| Error::InvalidInput("the chat history has no user message".into()))?
        } else {
            return Err(Error::InvalidInput(
                "Must provide either user_msg or chat_history".into(),
            ));
        };
        ctx.store().set("user_msg_str", user_msg_str)?;
        Ok(AgentInput {
            input: self.memory(&ctx).await?,
            current_agent_name: self.current_agent_name(&ctx)?,
        })
    }

    fn setup_agent(&self, ev: AgentInput, ctx: Context) -> Result<AgentSetup> {
        let agent = self.agent(&ev.current_agent_name)?;
        let mut input = ev.input;
        if let Some(system) = &agent.spec().system_prompt {
            input.insert(0, ChatMessage::system(system.clone()));
        }
        let state: Map<String, Value> = ctx.store().get_or("state", Map::new())?;
        let formatted: bool = ctx.store().get_or("formatted_input_with_state", false)?;
        if !state.is_empty() && !formatted {
            if let Some(last) = input.last_mut() {
                let plain = last.clone();
                last.content = ragloom_core::prompts::PromptTemplate::new(
                    self.state_prompt.clone(),
                )
                .format(&[
                    ("state", &py_repr(&Value::Object(state))),
                    ("msg", &last.content),
                ])?;
                // LlamaIndex rewrites the message object the memory holds, so
                // the model sees the state with that message from then on.
                let mut memory: Vec<ChatMessage> = ctx.store().get_or(MEMORY_KEY, Vec::new())?;
                if let Some(kept) = memory.iter_mut().rev().find(|m| **m == plain) {
                    kept.content = last.content.clone();
                    ctx.store().set(MEMORY_KEY, memory)?;
                }
            }
            ctx.store().set("formatted_input_with_state", true)?;
        }
        Ok(AgentSetup {
            input,
            current_agent_name: ev.current_agent_name,
        })
    }

    /// The agent's tools, those its retriever finds for `query`, and the
    /// handoff tool when it has someone to hand off to.
    async fn tools(&self, agent: &dyn WorkflowAgent, query: &str) -> Result<Vec<Arc<dyn Tool>>> {
        let spec = agent.spec();
        let mut tools = spec.tools.clone();
        if let Some(retriever) = &spec.tool_retriever {
            tools.extend(retriever.retrieve(query).await?);
        }
        let may_hand_off = spec.can_handoff_to.as_ref().is_none_or(|to| !to.is_empty());
        if self.agents.len() > 1 && may_hand_off {
            let targets: Map<String, Value> = self
                .agents
                .iter()
                .map(|a| a.spec())
                .filter(|a| a.name != spec.name)
                .filter(|a| {
                    spec.can_handoff_to
                        .as_ref()
                        .is_none_or(|to| to.contains(&a.name))
                })
                .map(|a| (a.name.clone(), Value::String(a.description.clone())))
                .collect();
            if !targets.is_empty() {
                let description = self
                    .handoff_prompt
                    .replace("{agent_info}", &py_repr(&Value::Object(targets)));
                tools.push(Arc::new(HandoffTool::new(description)));
            }
        }
        Ok(tools)
    }

    async fn run_agent_step(&self, ev: AgentSetup, ctx: Context) -> Result<AgentOutput> {
        let agent = self.agent(&ev.current_agent_name)?;
        let query: String = ctx.store().get_or("user_msg_str", String::new())?;
        let tools = self.tools(agent.as_ref(), &query).await?;
        let output = agent.take_step(&ctx, ev.input, &tools).await?;
        ctx.write_event_to_stream(output.clone());
        Ok(output)
    }

    async fn parse_agent_output(&self, ev: AgentOutput, ctx: Context) -> Result<Option<Parsed>> {
        let store = ctx.store();
        let max: usize = store.get_or("max_iterations", DEFAULT_MAX_ITERATIONS)?;
        let n: usize = store.get_or::<usize>("num_iterations", 0)? + 1;
        store.set("num_iterations", n)?;
        if n >= max {
            let method: EarlyStoppingMethod =
                store.get_or("early_stopping_method", EarlyStoppingMethod::Force)?;
            return match method {
                EarlyStoppingMethod::Generate => {
                    Ok(Some(Parsed::Stop(self.early_stop(&ev, &ctx, max).await?)))
                }
                EarlyStoppingMethod::Force => Err(Error::Workflow(format!(
                    "Max iterations of {max} reached! Either something went wrong, or you can \
                     increase the max iterations with `.run(.., max_iterations=...)` or use \
                     `early_stopping_method='generate'` to generate a final response instead."
                ))),
            };
        }
        if !ev.retry_messages.is_empty() {
            let mut input = self.memory(&ctx).await?;
            input.push(ChatMessage::user(
                store.get_or::<String>("user_msg_str", String::new())?,
            ));
            input.extend(ev.retry_messages);
            return Ok(Some(Parsed::Input(AgentInput {
                input,
                current_agent_name: self.current_agent_name(&ctx)?,
            })));
        }
        if ev.tool_calls.is_empty() {
            let agent = self.agent(&ev.current_agent_name)?.clone();
            let mut output = agent.finalize(&ctx, ev).await?;
            self.take_tool_calls(&ctx, &mut output)?;
            self.structured(&ctx, agent.as_ref(), &mut output).await?;
            return Ok(Some(Parsed::Stop(StopEvent::new(output))));
        }
        store.set("num_tool_calls", ev.tool_calls.len())?;
        for call in ev.tool_calls {
            ctx.send_event(
                ToolCall {
                    tool_name: call.name,
                    tool_kwargs: ragloom_core::llms::arguments_object(&call.arguments),
                    tool_id: call.id,
                },
                None,
            )?;
        }
        Ok(None)
    }

    /// Adds the calls made during the run to the final output, and forgets them.
    fn take_tool_calls(&self, ctx: &Context, output: &mut AgentOutput) -> Result<()> {
        let made: Vec<ToolCallResult> = ctx.store().get_or("current_tool_calls", Vec::new())?;
        output.tool_calls.extend(
            made.into_iter()
                .map(|r| ToolSelection::new(r.tool_id, r.tool_name, Value::Object(r.tool_kwargs))),
        );
        ctx.store()
            .set("current_tool_calls", Vec::<ToolCallResult>::new())
    }

    /// The structured answer: the workflow's settings first, else the agent's.
    /// A failure is logged and leaves it empty, as LlamaIndex warns.
    async fn structured(
        &self,
        ctx: &Context,
        agent: &dyn WorkflowAgent,
        output: &mut AgentOutput,
    ) -> Result<()> {
        let spec = agent.spec();
        let (schema, f) = match (&self.output_schema, &self.structured_output_fn) {
            (None, None) => (&spec.output_schema, &spec.structured_output_fn),
            (schema, f) => (schema, f),
        };
        let messages = self.memory(ctx).await?;
        if let Some(f) = f.as_ref().filter(|_| schema.is_none()) {
            match f(&messages) {
                Ok(value) => output.structured_response = Some(value),
                Err(e) => tracing::warn!(
                    "There was a problem with the generation of the structured output: {e}"
                ),
            }
        }
        if let Some(schema) = schema {
            let mut input = messages;
            if let Some(system) = &spec.system_prompt {
                input.insert(0, ChatMessage::system(system.clone()));
            }
            match spec
                .llm
                .structured_chat(&messages_to_xml_format(&input), schema)
                .await
            {
                Ok(Value::Object(value)) => output.structured_response = Some(value),
                Ok(other) => tracing::warn!(
                    "There was a problem with the generation of the structured output: \
                     not an object: {other}"
                ),
                Err(e) => tracing::warn!(
                    "There was a problem with the generation of the structured output: {e}"
                ),
            }
        }
        if let Some(value) = &output.structured_response {
            ctx.write_event_to_stream(AgentStreamStructuredOutput {
                output: value.clone(),
            });
        }
        Ok(())
    }

    /// One last call without tools when the limit is reached and the method is `Generate`.
    async fn early_stop(&self, ev: &AgentOutput, ctx: &Context, max: usize) -> Result<StopEvent> {
        let agent = self.agent(&ev.current_agent_name)?;
        let spec = agent.spec();
        let mut input = self.memory(ctx).await?;
        if let Some(system) = &spec.system_prompt {
            input.insert(0, ChatMessage::system(system.clone()));
        }
        input.push(ChatMessage::system(
            DEFAULT_EARLY_STOPPING_PROMPT.replace("{max_iterations}", &max.to_string()),
        ));
        let response = self.llm_response(ctx, agent.as_ref(), &input).await?;
        memory_put(ctx, vec![response.message.clone()])?;
        let mut output = AgentOutput {
            response: response.message,
            raw: response.raw,
            current_agent_name: spec.name.clone(),
            ..AgentOutput::default()
        };
        self.take_tool_calls(ctx, &mut output)?;
        ctx.write_event_to_stream(output.clone());
        Ok(StopEvent::new(output))
    }

    async fn llm_response(
        &self,
        ctx: &Context,
        agent: &dyn WorkflowAgent,
        input: &[ChatMessage],
    ) -> Result<ChatResponse> {
        let spec = agent.spec();
        if !spec.streaming {
            return spec.llm.chat(input).await;
        }
        let stream = spec.llm.stream_chat(input).await?;
        let last = stream_reply(ctx, &spec.name, stream, None).await?;
        last.ok_or_else(|| Error::Workflow("Got empty streaming response".into()))
    }

    async fn call_tool(&self, ev: ToolCall, ctx: Context) -> Result<ToolCallResult> {
        ctx.write_event_to_stream(ev.clone());
        let agent_name = self.current_agent_name(&ctx)?;
        let agent = self.agent(&agent_name)?;
        let tools = self.tools(agent.as_ref(), &ev.tool_name).await?;
        let tool = tools.iter().find(|t| t.metadata().name == ev.tool_name);
        let kwargs = Value::Object(ev.tool_kwargs.clone());
        let (output, return_direct) = match tool {
            None => (
                ToolOutput {
                    content: format!(
                        "Tool {} not found. Please select a tool that is available.",
                        ev.tool_name
                    ),
                    tool_name: ev.tool_name.clone(),
                    raw_input: kwargs,
                    raw_output: Value::Null,
                    is_error: true,
                },
                false,
            ),
            Some(tool) => {
                let call = with_tool_context(ctx.clone(), tool.call(kwargs.clone())).await;
                // A tool that waits for a person parks the step, even when it
                // turned the parking into an error output (as FunctionTool does).
                if let Some(waiter) = ctx.parked_waiter() {
                    return Err(Error::WaitingForEvent(waiter));
                }
                let output = match call {
                    Ok(output) => output,
                    // A tool waiting for a person parks the step, as in LlamaIndex.
                    Err(e @ Error::WaitingForEvent(_)) => return Err(e),
                    Err(e) => ToolOutput {
                        content: e.to_string(),
                        tool_name: tool.metadata().name.clone(),
                        raw_input: kwargs,
                        raw_output: Value::String(e.to_string()),
                        is_error: true,
                    },
                };
                (output, tool.metadata().return_direct)
            }
        };
        let result = ToolCallResult {
            tool_name: ev.tool_name,
            tool_kwargs: ev.tool_kwargs,
            tool_id: ev.tool_id,
            tool_output: output,
            return_direct,
        };
        ctx.write_event_to_stream(result.clone());
        Ok(result)
    }

    async fn aggregate_tool_results(
        &self,
        ev: ToolCallResult,
        ctx: Context,
    ) -> Result<Option<Aggregated>> {
        let store = ctx.store();
        let expected: usize = store.get_or("num_tool_calls", 0)?;
        if expected == 0 {
            return Err(Error::Workflow(
                "No tool calls found, cannot aggregate results.".into(),
            ));
        }
        let Some(results) = ctx.collect(ev, expected) else {
            return Ok(None);
        };
        let agent = self.agent(&self.current_agent_name(&ctx)?)?.clone();
        let mut made: Vec<ToolCallResult> = store.get_or("current_tool_calls", Vec::new())?;
        made.extend(results.iter().cloned());
        store.set("current_tool_calls", &made)?;
        agent.handle_tool_call_results(&ctx, &results).await?;
        if let Some(next) = store.get::<String>("next_agent")? {
            store.set("current_agent_name", next)?;
            store.set("next_agent", Value::Null)?;
        }
        let direct = results
            .iter()
            .find(|r| r.return_direct && !r.tool_output.is_error);
        if let Some(direct) = direct {
            let output = AgentOutput {
                response: ChatMessage::assistant(direct.tool_output.content.clone()),
                tool_calls: made
                    .iter()
                    .map(|t| {
                        ToolSelection::new(
                            t.tool_id.clone(),
                            t.tool_name.clone(),
                            Value::Object(t.tool_kwargs.clone()),
                        )
                    })
                    .collect(),
                raw: Some(direct.tool_output.raw_output.clone()),
                current_agent_name: agent.spec().name.clone(),
                ..AgentOutput::default()
            };
            // Finalised even on a handoff, so the agent's messages reach the memory.
            let output = agent.finalize(&ctx, output).await?;
            if direct.tool_name != "handoff" {
                store.set("current_tool_calls", Vec::<ToolCallResult>::new())?;
                return Ok(Some(Aggregated::Stop(StopEvent::new(output))));
            }
        }
        Ok(Some(Aggregated::Input(AgentInput {
            input: self.memory(&ctx).await?,
            current_agent_name: self.current_agent_name(&ctx)?,
        })))
    }
}

/// Python's truthiness of a stored value (LlamaIndex's `if not await ctx.store.get(...)`).
fn is_falsy(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The conversation as one user message in tags, for the structured answer
/// (LlamaIndex's `messages_to_xml_format`); the last system message stays in front.
fn messages_to_xml_format(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut blocks = vec!["<current_conversation>\n".to_string()];
    let mut system = None;
    for m in messages {
        let role = m.role.as_str();
        if m.role == MessageRole::System {
            system = Some(m.clone());
        }
        blocks.push(format!("\t<{role}>\n"));
        if !m.content.is_empty() {
            blocks.push(format!("\t\t<message>{}</message>\n", m.content));
        }
        blocks.push(format!("\t</{role}>\n"));
    }
    blocks.push("</current_conversation>\n\n".to_string());
    blocks.push(
        "Given the conversation, format the output according to the provided schema.".to_string(),
    );
    let mut out: Vec<ChatMessage> = system.into_iter().collect();
    out.push(ChatMessage::user(blocks.join("\n")));
    out
}

//! `AgentWorkflow`: one or several agents run as one workflow, its builder
//! with LlamaIndex's checks, what a run starts from, and its handler.

use super::base::{
    DEFAULT_AGENT_DESCRIPTION, DEFAULT_AGENT_NAME, EarlyStoppingMethod, MEMORY_KEY,
    StructuredOutputFn, WorkflowAgent, check_placeholders, save_memory,
};
use super::events::AgentOutput;
use super::prompts::{DEFAULT_HANDOFF_OUTPUT_PROMPT, DEFAULT_HANDOFF_PROMPT, DEFAULT_STATE_PROMPT};
use super::steps::Engine;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, Llm};
use ragloom_core::memory::BaseMemory;
use ragloom_core::setters;
use ragloom_core::tools::Tool;
use ragloom_workflow::{
    AnyEvent, Checkpoint, Checkpointer, Context, StartEvent, Workflow, WorkflowHandler,
};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

/// Several agents that hand a request to each other, or one agent, run as a
/// [`Workflow`] (LlamaIndex's `AgentWorkflow`). Everything a run works on
/// (memory, state, scratchpads, the current agent) lives in the run's
/// store, so a checkpointed run resumes where it was.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ragloom_agent::{AgentWorkflow, FunctionAgent};
/// use ragloom_core::llms::{ChatMessage, MockLlm, ToolCall};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// let llm = Arc::new(MockLlm::scripted([
///     // The triage agent hands off ...
///     ChatMessage::assistant_with_tool_calls("", vec![ToolCall::new(
///         "c1", "handoff", json!({"to_agent": "writer", "reason": "it is a writing task"}),
///     )]),
///     // ... and the writer answers.
///     ChatMessage::assistant("A haiku about Rust."),
/// ]).function_calling(true));
/// let triage = FunctionAgent::builder(llm.clone())
///     .name("triage").description("Sends requests to the right agent.").build()?;
/// let writer = FunctionAgent::builder(llm)
///     .name("writer").description("Writes poems.").build()?;
/// let workflow = AgentWorkflow::builder()
///     .agent(triage).agent(writer).root_agent("triage").build()?;
/// let output = workflow.run("Write a haiku about Rust").await?;
/// assert_eq!(output.current_agent_name, "writer");
/// assert_eq!(output.response.content, "A haiku about Rust.");
/// # Ok::<(), ragloom_core::Error>(()) }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct AgentWorkflow {
    engine: Arc<Engine>,
    workflow: Workflow,
}

/// Builds an [`AgentWorkflow`]; see [`AgentWorkflow::builder`].
#[derive(Default)]
pub struct AgentWorkflowBuilder {
    agents: Vec<Arc<dyn WorkflowAgent>>,
    root_agent: Option<String>,
    initial_state: Map<String, Value>,
    handoff_prompt: Option<String>,
    handoff_output_prompt: Option<String>,
    state_prompt: Option<String>,
    output_schema: Option<Value>,
    structured_output_fn: Option<StructuredOutputFn>,
    early_stopping_method: EarlyStoppingMethod,
    timeout: Option<Duration>,
    checkpointer: Option<Arc<dyn Checkpointer>>,
}

impl std::fmt::Debug for AgentWorkflowBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentWorkflowBuilder")
            .field("agents", &self.agents)
            .field("root_agent", &self.root_agent)
            .finish_non_exhaustive()
    }
}

impl AgentWorkflowBuilder {
    /// Adds an agent.
    pub fn agent(mut self, agent: impl WorkflowAgent + 'static) -> Self {
        self.agents.push(Arc::new(agent));
        self
    }

    /// Adds an agent already shared.
    pub fn agent_arc(mut self, agent: Arc<dyn WorkflowAgent>) -> Self {
        self.agents.push(agent);
        self
    }

    /// The agent that takes the request first (required with several agents).
    pub fn root_agent(mut self, name: impl Into<String>) -> Self {
        self.root_agent = Some(name.into());
        self
    }

    setters!(
        /// The run's state when it starts, shown to the model with the state
        /// prompt and readable by tools through [`tool_context`](super::tool_context).
        initial_state => initial_state: Map<String, Value>,
        /// What a run does at its iteration limit (default: fail).
        early_stopping_method => early_stopping_method: EarlyStoppingMethod,
        /// A time limit for each run (default: none, as LlamaIndex's agents).
        timeout => timeout: Option<Duration>,
        /// Checkpoints each run after every step, so it can be resumed.
        checkpointer => checkpointer: Arc<dyn Checkpointer>,
    );

    /// The handoff tool's description; must contain `{agent_info}`.
    pub fn handoff_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.handoff_prompt = Some(prompt.into());
        self
    }

    /// What the handoff tool answers; must contain `{to_agent}` and `{reason}`.
    pub fn handoff_output_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.handoff_output_prompt = Some(prompt.into());
        self
    }

    /// How the state is shown; must contain `{state}` and `{msg}`.
    pub fn state_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.state_prompt = Some(prompt.into());
        self
    }

    /// The final answer is also given as a `T`, whichever agent gives it.
    pub fn output_cls<T: schemars::JsonSchema>(self) -> Self {
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
        self.output_schema(schema)
    }

    /// The final answer is also given matching this JSON schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Makes the structured answer from the run's messages; ignored when an
    /// output schema is set.
    pub fn structured_output_fn(
        mut self,
        f: impl Fn(&[ChatMessage]) -> Result<Map<String, Value>> + Send + Sync + 'static,
    ) -> Self {
        self.structured_output_fn = Some(Arc::new(f));
        self
    }

    /// The workflow, with LlamaIndex's checks and messages.
    pub fn build(self) -> Result<AgentWorkflow> {
        let invalid = |m: &str| Err(Error::InvalidInput(m.to_string()));
        if self.agents.is_empty() {
            return invalid("At least one agent must be provided");
        }
        let several = self.agents.len() > 1;
        if several
            && self
                .agents
                .iter()
                .any(|a| a.spec().name == DEFAULT_AGENT_NAME)
        {
            return invalid("All agents must have a name in a multi-agent workflow");
        }
        if several
            && self
                .agents
                .iter()
                .any(|a| a.spec().description == DEFAULT_AGENT_DESCRIPTION)
        {
            return invalid("All agents must have a description in a multi-agent workflow");
        }
        if self
            .agents
            .iter()
            .any(|a| !a.spec().initial_state.is_empty())
        {
            return invalid("Initial state is not supported per-agent in AgentWorkflow");
        }
        let mut by_name = HashMap::new();
        for (i, agent) in self.agents.iter().enumerate() {
            agent.spec().validate()?;
            if by_name.insert(agent.spec().name.clone(), i).is_some() {
                return Err(Error::InvalidInput(format!(
                    "two agents are named `{}`",
                    agent.spec().name
                )));
            }
        }
        let root_agent = match (several, self.root_agent) {
            (false, _) => self.agents[0].spec().name.clone(),
            (true, None) => return invalid("Exactly one root agent must be provided"),
            (true, Some(root)) => root,
        };
        if !by_name.contains_key(&root_agent) {
            return Err(Error::InvalidInput(format!(
                "Root agent {root_agent} not found in provided agents"
            )));
        }
        let handoff_prompt = self
            .handoff_prompt
            .unwrap_or_else(|| DEFAULT_HANDOFF_PROMPT.into());
        check_placeholders(
            &handoff_prompt,
            &["{agent_info}"],
            "Handoff prompt must contain {agent_info}",
        )?;
        let handoff_output_prompt = self
            .handoff_output_prompt
            .unwrap_or_else(|| DEFAULT_HANDOFF_OUTPUT_PROMPT.into());
        check_placeholders(
            &handoff_output_prompt,
            &["{to_agent}", "{reason}"],
            "Handoff output prompt must contain {to_agent} and {reason}",
        )?;
        let state_prompt = self
            .state_prompt
            .unwrap_or_else(|| DEFAULT_STATE_PROMPT.into());
        check_placeholders(
            &state_prompt,
            &["{state}", "{msg}"],
            "State prompt must contain {state} and {msg}",
        )?;
        // As LlamaIndex: with an output schema, the structured-output function is ignored.
        let structured_output_fn = match self.output_schema {
            Some(_) => None,
            None => self.structured_output_fn,
        };
        let engine = Arc::new(Engine {
            agents: self.agents,
            by_name,
            root_agent,
            initial_state: self.initial_state,
            handoff_prompt,
            handoff_output_prompt,
            state_prompt,
            output_schema: self.output_schema,
            structured_output_fn,
            early_stopping_method: self.early_stopping_method,
        });
        let workflow = engine.workflow(self.timeout, self.checkpointer)?;
        Ok(AgentWorkflow { engine, workflow })
    }
}

/// What a run starts from (the arguments of LlamaIndex's `agent.run(...)`).
#[derive(Clone, Default)]
pub struct RunOptions {
    user_msg: Option<ChatMessage>,
    chat_history: Vec<ChatMessage>,
    memory: Option<Arc<dyn BaseMemory>>,
    max_iterations: Option<usize>,
    early_stopping_method: Option<EarlyStoppingMethod>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("user_msg", &self.user_msg)
            .field("chat_history", &self.chat_history.len())
            .field("memory", &self.memory.is_some())
            .field("max_iterations", &self.max_iterations)
            .finish()
    }
}

impl RunOptions {
    /// A run answering `user_msg`.
    pub fn new(user_msg: impl Into<ChatMessage>) -> Self {
        Self {
            user_msg: Some(user_msg.into()),
            ..Self::default()
        }
    }

    /// The conversation so far; it replaces the memory's, and with no user
    /// message its last user message is the request.
    pub fn chat_history(mut self, history: Vec<ChatMessage>) -> Self {
        self.chat_history = history;
        self
    }

    /// A memory the run reads the conversation from and writes it back to
    /// when it ends well (a failed run leaves it as it was).
    pub fn memory(mut self, memory: Arc<dyn BaseMemory>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Model calls before the run stops (default 20).
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.max_iterations = Some(n);
        self
    }

    /// What the run does at the limit, instead of the workflow's setting.
    pub fn early_stopping_method(mut self, method: EarlyStoppingMethod) -> Self {
        self.early_stopping_method = Some(method);
        self
    }
}

/// A running agent: stream its events, then `.await` it for the
/// [`AgentOutput`] (LlamaIndex's handler of `agent.run(...)`).
#[derive(Debug)]
pub struct AgentHandler {
    handler: WorkflowHandler,
    memory: Option<Arc<dyn BaseMemory>>,
}

impl AgentHandler {
    /// The run's events: [`AgentInput`](super::AgentInput), [`AgentStream`](super::AgentStream),
    /// [`AgentOutput`], [`ToolCall`](super::ToolCall), [`ToolCallResult`](super::ToolCallResult),
    /// then the `StopEvent`. Can be taken once.
    pub fn stream_events(&mut self) -> BoxStream<'static, AnyEvent> {
        self.handler.stream_events()
    }

    /// The run's context: its store holds the memory, the state and the current agent.
    pub fn ctx(&self) -> &Context {
        self.handler.ctx()
    }

    /// Sends an event into the run (e.g. a `HumanResponseEvent` a tool waits for).
    pub fn send_event(&self, ev: impl Into<AnyEvent>) -> Result<()> {
        self.handler.send_event(ev)
    }

    /// The run's state now, as a checkpoint would hold it.
    pub fn checkpoint(&self) -> Result<Checkpoint> {
        self.handler.checkpoint()
    }

    /// Stops the run.
    pub fn cancel_run(&self) {
        self.handler.cancel_run()
    }

    /// Whether the run has ended.
    pub fn is_done(&self) -> bool {
        self.handler.is_done()
    }
}

impl IntoFuture for AgentHandler {
    type Output = Result<AgentOutput>;
    type IntoFuture = BoxFuture<'static, Result<AgentOutput>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let ctx = self.handler.ctx().clone();
            let result = self.handler.await?;
            if let Some(memory) = &self.memory {
                save_memory(&ctx, memory.as_ref()).await?;
            }
            serde_json::from_value(result).map_err(|e| {
                Error::Workflow(format!("the agent's result is not an AgentOutput: {e}"))
            })
        })
    }
}

impl AgentWorkflow {
    /// A builder.
    pub fn builder() -> AgentWorkflowBuilder {
        AgentWorkflowBuilder::default()
    }

    /// One agent as a workflow, as `agent.run` runs it: the agent's own
    /// initial state becomes the run's (which the builder refuses, as LlamaIndex's
    /// `AgentWorkflow` does).
    pub fn from_agent(agent: Arc<dyn WorkflowAgent>) -> Self {
        let spec = agent.spec();
        let engine = Arc::new(Engine {
            by_name: HashMap::from([(spec.name.clone(), 0)]),
            root_agent: spec.name.clone(),
            initial_state: spec.initial_state.clone(),
            handoff_prompt: DEFAULT_HANDOFF_PROMPT.into(),
            handoff_output_prompt: DEFAULT_HANDOFF_OUTPUT_PROMPT.into(),
            state_prompt: spec.state_prompt.clone(),
            output_schema: None,
            structured_output_fn: None,
            early_stopping_method: spec.early_stopping_method,
            agents: vec![agent],
        });
        let workflow = engine.workflow(None, None);
        // The steps are fixed and were checked by the tests; building cannot fail.
        #[allow(clippy::expect_used)]
        let workflow = workflow.expect("the agent workflow's steps are valid");
        Self { engine, workflow }
    }

    /// One agent with `tools`: a [`FunctionAgent`](super::FunctionAgent) when
    /// the model calls tools natively, else a [`ReActAgent`](super::ReActAgent)
    /// (LlamaIndex's `from_tools_or_functions`).
    pub fn from_tools_or_functions(
        tools: Vec<Arc<dyn Tool>>,
        llm: Arc<dyn Llm>,
        system_prompt: Option<String>,
    ) -> Result<Self> {
        const DESCRIPTION: &str = "A single agent that uses the provided tools or functions.";
        let builder = Self::builder();
        let builder = if llm.metadata().is_function_calling_model {
            let mut agent = super::FunctionAgent::builder(llm)
                .description(DESCRIPTION)
                .tools(tools);
            if let Some(p) = system_prompt {
                agent = agent.system_prompt(p);
            }
            builder.agent(agent.build()?)
        } else {
            let mut agent = super::ReActAgent::builder(llm)
                .description(DESCRIPTION)
                .tools(tools);
            if let Some(p) = system_prompt {
                agent = agent.system_prompt(p);
            }
            builder.agent(agent.build()?)
        };
        builder.build()
    }

    /// The agents, in the order they were added.
    pub fn agents(&self) -> &[Arc<dyn WorkflowAgent>] {
        &self.engine.agents
    }

    /// The agent that takes each request first.
    pub fn root_agent(&self) -> &str {
        &self.engine.root_agent
    }

    /// The workflow underneath (to draw it, or resume a checkpoint).
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// Runs on `user_msg`; await the handler for the output.
    pub fn run(&self, user_msg: impl Into<ChatMessage>) -> AgentHandler {
        let start = StartEvent::new().with("user_msg", user_msg.into());
        AgentHandler {
            handler: self.workflow.start(start),
            memory: None,
        }
    }

    /// Runs with a history, a memory, or an iteration limit.
    pub async fn run_with(&self, options: RunOptions) -> Result<AgentHandler> {
        let mut start = StartEvent::new();
        if let Some(msg) = options.user_msg {
            start = start.with("user_msg", msg);
        }
        if !options.chat_history.is_empty() {
            start = start.with("chat_history", options.chat_history);
        }
        if let Some(memory) = &options.memory {
            start = start.with(MEMORY_KEY, memory.get_all().await?);
        }
        if let Some(n) = options.max_iterations {
            start = start.with("max_iterations", n);
        }
        if let Some(m) = options.early_stopping_method {
            start = start.with("early_stopping_method", m);
        }
        Ok(AgentHandler {
            handler: self.workflow.start(start),
            memory: options.memory,
        })
    }

    /// Resumes a checkpointed run.
    pub fn resume(&self, checkpoint: &Checkpoint) -> Result<AgentHandler> {
        Ok(AgentHandler {
            handler: self.workflow.resume(checkpoint)?,
            memory: None,
        })
    }
}

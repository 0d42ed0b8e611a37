//! The prompts of LlamaIndex's workflow agents, word for word: the handoff
//! tool's description, its answer, the state prompt and early stopping.

/// The handoff tool's description; `{agent_info}` is a Python dict of the
/// agents it may hand off to, by name, with their descriptions.
pub const DEFAULT_HANDOFF_PROMPT: &str = "Useful for handing off to another agent.
If you are currently not equipped to handle the user's request, or another agent is better suited to handle the request, please hand off to the appropriate agent.

Currently available agents:
{agent_info}
";

/// Prepended to the user's message when the run has a state.
pub const DEFAULT_STATE_PROMPT: &str = "Current state:
{state}

Current message:
{msg}
";

/// What the handoff tool answers when it hands off.
pub const DEFAULT_HANDOFF_OUTPUT_PROMPT: &str = "Agent {to_agent} is now handling the request due to the following reason: {reason}.\nPlease continue with the current request.";

/// The last system message when `early_stopping_method` is `Generate`.
pub const DEFAULT_EARLY_STOPPING_PROMPT: &str = "You have reached the maximum number of iterations ({max_iterations}).
Based on the information gathered so far, please provide a helpful final response to the user's original query.
Do not attempt to use any more tools. Simply summarize what you have learned and provide the best possible answer.";

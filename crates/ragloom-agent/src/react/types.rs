//! ReAct's reasoning steps: a thought with a tool action, the tool's
//! observation, or the final answer, rendered as LlamaIndex renders them for the model.

use ragloom_core::schema::py_repr;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The model chose a tool (LlamaIndex `ActionReasoningStep`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionReasoningStep {
    /// Why.
    pub thought: String,
    /// The tool's name.
    pub action: String,
    /// The arguments.
    pub action_input: Map<String, Value>,
}

/// What a tool returned (LlamaIndex `ObservationReasoningStep`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObservationReasoningStep {
    /// The tool output's text.
    pub observation: String,
    /// Whether the observation is the final answer (a `return_direct` tool).
    #[serde(default)]
    pub return_direct: bool,
}

/// The model's answer (LlamaIndex `ResponseReasoningStep`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseReasoningStep {
    /// The last thought.
    pub thought: String,
    /// The answer.
    pub response: String,
    /// Whether the answer was still streaming when this step was made.
    #[serde(default)]
    pub is_streaming: bool,
}

/// One step of ReAct reasoning (LlamaIndex `BaseReasoningStep`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ReasoningStep {
    /// A tool call.
    Action(ActionReasoningStep),
    /// A tool's output (or feedback about a bad reply).
    Observation(ObservationReasoningStep),
    /// The answer.
    Response(ResponseReasoningStep),
}

impl ReasoningStep {
    /// The text that goes back to the model, exactly as LlamaIndex writes it
    /// (the action input as a Python dict).
    pub fn get_content(&self) -> String {
        match self {
            ReasoningStep::Action(a) => format!(
                "Thought: {}\nAction: {}\nAction Input: {}",
                a.thought,
                a.action,
                py_repr(&Value::Object(a.action_input.clone()))
            ),
            ReasoningStep::Observation(o) => format!("Observation: {}", o.observation),
            ReasoningStep::Response(r) if r.is_streaming => format!(
                "Thought: {}\nAnswer (Starts With): {} ...",
                r.thought, r.response
            ),
            ReasoningStep::Response(r) => format!("Thought: {}\nAnswer: {}", r.thought, r.response),
        }
    }

    /// Whether this step ends the reasoning: an answer, or a `return_direct` observation.
    pub fn is_done(&self) -> bool {
        match self {
            ReasoningStep::Action(_) => false,
            ReasoningStep::Observation(o) => o.return_direct,
            ReasoningStep::Response(_) => true,
        }
    }
}

impl fmt::Display for ReasoningStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.get_content())
    }
}

impl From<ActionReasoningStep> for ReasoningStep {
    fn from(step: ActionReasoningStep) -> Self {
        ReasoningStep::Action(step)
    }
}

impl From<ObservationReasoningStep> for ReasoningStep {
    fn from(step: ObservationReasoningStep) -> Self {
        ReasoningStep::Observation(step)
    }
}

impl From<ResponseReasoningStep> for ReasoningStep {
    fn from(step: ResponseReasoningStep) -> Self {
        ReasoningStep::Response(step)
    }
}

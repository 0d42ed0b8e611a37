//! Language models: the object-safe [`Llm`] trait with its chat and completion
//! types, tool-calling and structured-output extensions, and the [`MockLlm`] for tests.
//!
//! ```
//! use std::sync::Arc;
//! use ragloom_core::llms::{ChatMessage, FunctionCallingLlm, MockLlm, ToolCall};
//! use ragloom_core::tools::{FunctionTool, Tool};
//!
//! /// Adds two integers.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs { a: i64, b: i64 }
//!
//! let add: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn("add", None, |x: AddArgs| x.a + x.b));
//! assert_eq!(add.metadata().description, "add(a: int, b: int)\nAdds two integers.");
//!
//! // A model that answers with one tool call.
//! let call = ToolCall::new("c1", "add", serde_json::json!({"a": 2, "b": 3}));
//! let llm = MockLlm::scripted([ChatMessage::assistant_with_tool_calls("", vec![call])])
//!     .function_calling(true);
//! let outcome = futures::executor::block_on(
//!     llm.predict_and_call(&[add], Some("What is 2 + 3?".into()), &[], false),
//! )?;
//! assert_eq!(outcome.response, "5");
//! # Ok::<(), ragloom_core::Error>(())
//! ```

pub mod function_calling;
pub mod llm;
pub mod mock;
mod predict;
pub mod structured;
pub mod types;

pub use function_calling::{
    AgentCallOutcome, FunctionCallingLlm, arguments_object, call_tool, call_tool_with_selection,
    parse_partial_json,
};
pub use llm::{
    Llm, ToolChatRequest, chat_response_to_completion_response,
    completion_response_to_chat_response, default_completion_to_prompt, json_schema_instructions,
    messages_to_history_str, messages_to_prompt, messages_with_schema_instructions,
    parse_json_reply, prompt_to_messages, stream_chat_response_to_completion_response,
    stream_chat_response_to_tokens, stream_completion_response_to_chat_response,
    stream_completion_response_to_tokens,
};
pub use mock::{MockLlm, MockRequest, MockRequestKind, WhenExhausted, split_into_word_deltas};
pub use predict::{predict, stream_predict};
pub use structured::{PredictInput, StructuredPredict, output_schema, parse_structured};
pub use types::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    DEFAULT_CONTEXT_WINDOW, DEFAULT_NUM_OUTPUTS, LlmMetadata, MessageRole, TokenUsage, ToolCall,
    ToolChoice, ToolSelection,
};

//! `index.as_chat_engine(mode, llm)`: a chat engine over an index in any of
//! LlamaIndex's chat modes. A trait here because the agent modes need this layer.

use super::legacy::{FunctionCallingAgent, ReActAgent};
use ragloom_core::chat_engine::{
    ChatEngine, ChatMode, CondensePlusContextChatEngine, CondenseQuestionChatEngine,
    ContextChatEngine, SimpleChatEngine,
};
use ragloom_core::error::Result;
use ragloom_core::indices::VectorStoreIndex;
use ragloom_core::llms::Llm;
use ragloom_core::query_engine::{AsQueryEngine, QueryEngineTool};
use ragloom_core::tools::Tool;
use std::sync::Arc;

/// Chat engines over an index (LlamaIndex `index.as_chat_engine(chat_mode=...)`).
/// In the prelude, so `index.as_chat_engine(mode, llm)` reads as in Python.
pub trait AsChatEngine {
    /// A chat engine over this index answering with `llm`:
    /// `ChatMode::CondensePlusContext` (the default) and `Context` retrieve
    /// the top 2 nodes, `CondenseQuestion` asks
    /// [`as_query_engine`](AsQueryEngine::as_query_engine), `Simple` ignores
    /// the index. Each engine's builder has the other options. The agent
    /// modes give an agent whose one tool is a [`QueryEngineTool`] over
    /// `as_query_engine` (LlamaIndex's default tool name and description):
    /// `React` a [`ReActAgent`], `OpenAi` a [`FunctionCallingAgent`] (any
    /// model with native tool calling; others are
    /// [`Error::Unsupported`](ragloom_core::Error::Unsupported)), `Best` the
    /// function-calling agent when the model supports it, else ReAct.
    fn as_chat_engine(&self, chat_mode: ChatMode, llm: Arc<dyn Llm>)
    -> Result<Arc<dyn ChatEngine>>;
}

impl AsChatEngine for VectorStoreIndex {
    fn as_chat_engine(
        &self,
        chat_mode: ChatMode,
        llm: Arc<dyn Llm>,
    ) -> Result<Arc<dyn ChatEngine>> {
        Ok(match chat_mode {
            ChatMode::Simple => Arc::new(SimpleChatEngine::from_defaults(llm)?),
            ChatMode::CondenseQuestion => {
                let query_engine = Arc::new(self.as_query_engine(llm.clone())?);
                Arc::new(CondenseQuestionChatEngine::from_defaults(
                    query_engine,
                    llm,
                )?)
            }
            ChatMode::Context => Arc::new(ContextChatEngine::from_defaults(
                Arc::new(self.as_retriever()),
                llm,
            )?),
            ChatMode::CondensePlusContext => Arc::new(
                CondensePlusContextChatEngine::from_defaults(Arc::new(self.as_retriever()), llm)?,
            ),
            ChatMode::React | ChatMode::OpenAi | ChatMode::Best => {
                let query_engine = Arc::new(self.as_query_engine(llm.clone())?);
                let tool: Arc<dyn Tool> = Arc::new(QueryEngineTool::from_defaults(query_engine));
                let function_calling = match chat_mode {
                    ChatMode::OpenAi => true,
                    ChatMode::Best => llm.metadata().is_function_calling_model,
                    _ => false,
                };
                if function_calling {
                    Arc::new(FunctionCallingAgent::from_tools(vec![tool], llm)?)
                } else {
                    Arc::new(ReActAgent::from_tools(vec![tool], llm)?)
                }
            }
        })
    }
}

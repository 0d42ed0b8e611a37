//! Chat memory and chat turns: `ChatMemoryBuffer::get` trimming a long
//! conversation to its token limit, and the engine's own cost around a turn.
#![allow(clippy::unwrap_used, missing_docs)]

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::chat_engine::{ChatEngine, CondensePlusContextChatEngine};
use ragloom_core::llms::{ChatMessage, MockLlm};
use ragloom_core::memory::{BaseMemory, ChatMemoryBuffer};
use ragloom_core::retrievers::Retriever;
use ragloom_core::{Node, NodeWithScore, QueryBundle, Result};
use std::hint::black_box;
use std::sync::Arc;

/// 200 messages of about 40 tokens: about 8,000 tokens, over twice the
/// 3,644-token limit engines get with a 3,900-token model.
fn conversation() -> Vec<ChatMessage> {
    (0..200)
        .map(|i| {
            let text = format!(
                "Message {i}: the quick brown fox jumps over the lazy dog while the \
                 conversation goes on about retrieval, memory, tokens and limits, turn {i}."
            );
            if i % 2 == 0 {
                ChatMessage::user(text)
            } else {
                ChatMessage::assistant(text)
            }
        })
        .collect()
}

#[derive(Debug)]
struct Fixed(Vec<NodeWithScore>);

#[async_trait]
impl Retriever for Fixed {
    async fn retrieve(&self, _query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        Ok(self.0.clone())
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let history = conversation();
    let memory = ChatMemoryBuffer::builder()
        .token_limit(3644)
        .chat_history(history.clone())
        .build()
        .unwrap();
    assert!(rt.block_on(memory.get(0)).unwrap().len() < history.len());
    c.bench_function("chat_memory_get_200_messages_over_limit", |b| {
        b.iter(|| black_box(rt.block_on(memory.get(0)).unwrap().len()))
    });

    let nodes: Vec<NodeWithScore> = (0..2)
        .map(|i| {
            NodeWithScore::new(
                Node::text_node("A retrieved chunk of text. ".repeat(40)).with_id(format!("n{i}")),
                Some(0.5),
            )
        })
        .collect();
    // Every call answers "text text text text text": what remains is the
    // engine's work (condense prompt, retrieval, prompt packing, memory).
    let llm = Arc::new(MockLlm::with_max_tokens(5).chat_model(true));
    let engine = CondensePlusContextChatEngine::from_defaults(Arc::new(Fixed(nodes)), llm).unwrap();
    let recent = history[history.len() - 10..].to_vec();
    c.bench_function("condense_plus_context_turn_10_message_history", |b| {
        b.iter(|| {
            let r = rt
                .block_on(engine.chat_with_history("And then?", Some(recent.clone())))
                .unwrap();
            black_box(r.response.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

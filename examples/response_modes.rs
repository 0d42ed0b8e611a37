//! Every `ResponseMode` over the same ten chunks of *Alice in Wonderland*,
//! with LlamaIndex's `MockLLM` behaviour, printing how many LLM calls each makes.
//!
//! ```sh
//! cargo run -p ragloom-examples --example response_modes
//! ```
//!
//! The mock answers `"text"` 256 times and says its window is 4,096 tokens,
//! so the packing is real and the counts are what LlamaIndex 0.14.25 makes
//! with the same model (checked in `ragloom-core/tests/synthesizers.rs`).

use ragloom::llms::MockLlm;
use ragloom::node_parser::{TextSplitter, TokenTextSplitter};
use ragloom::prelude::*;
use ragloom::response_synthesizers::ResponseSynthesizerBuilder;
use std::path::Path;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/alice29.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("reading", &path, e))?;
    // Ten chunks of about 500 tokens, as a retriever with top_k = 10 would return.
    let splitter = TokenTextSplitter::new()
        .chunk_size(500)
        .chunk_overlap(0)
        .build()?;
    let nodes: Vec<NodeWithScore> = splitter
        .split_text(&text)?
        .into_iter()
        .skip(1)
        .take(10)
        .enumerate()
        .map(|(i, chunk)| NodeWithScore::new(Node::text_node(chunk).with_id(format!("n{i}")), None))
        .collect();
    let query = QueryBundle::new("What did Alice see when she fell down the rabbit-hole?");

    println!("{:<20} {:>6}  answer", "mode", "calls");
    for mode in ResponseMode::ALL {
        let llm = Arc::new(MockLlm::with_max_tokens(256).context_window(4096));
        let synth = ResponseSynthesizerBuilder::new(llm.clone())
            .response_mode(mode)
            .build()?;
        let response = synth.synthesize(&query, nodes.clone(), Vec::new()).await?;
        let answer = response.response.unwrap_or_default();
        let preview: String = answer.chars().take(40).collect();
        println!(
            "{:<20} {:>6}  {:?}{}",
            mode.as_str(),
            llm.requests().len(),
            preview,
            if answer.chars().count() > 40 {
                "..."
            } else {
                ""
            }
        );
    }

    // Streaming: refine-style modes stream their last call; accumulate cannot.
    let llm = Arc::new(MockLlm::with_max_tokens(8).context_window(4096));
    let synth = ResponseSynthesizerBuilder::new(llm.clone())
        .response_mode(ResponseMode::Compact)
        .build()?;
    let streaming = synth
        .stream_synthesize(&query, nodes.clone(), Vec::new())
        .await?;
    let sources = streaming.source_nodes.len();
    let response = streaming.get_response().await?;
    println!(
        "\ncompact, streamed: {} calls, {sources} sources, answer {:?}",
        llm.requests().len(),
        response.response.unwrap_or_default()
    );
    let accumulate = ResponseSynthesizerBuilder::new(llm)
        .response_mode(ResponseMode::Accumulate)
        .build()?;
    if let Err(e) = accumulate
        .stream_synthesize(&query, nodes, Vec::new())
        .await
    {
        println!("accumulate, streamed: {e}");
    }
    Ok(())
}

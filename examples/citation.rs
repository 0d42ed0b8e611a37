//! Citations: a `CitationQueryEngine` cuts the retrieved passages into
//! numbered sources (`Source 1:`, `Source 2:`, ...) and asks the LLM to cite
//! them as `[n]`, so every claim in the answer points at the text behind it.
//!
//! ```sh
//! cargo run -p ragloom-examples --example citation
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and the LLM is a
//! `MockLlm` playing one scripted answer (written to cite the sources this
//! retrieval finds), so what this shows is the flow — the numbered sources,
//! the prompt, how `[n]` maps back to `source_nodes[n - 1]` — not a model's
//! judgement.

use ragloom::llms::MockLlm;
use ragloom::prelude::*;
use ragloom::query_engine::CitationQueryEngine;
use std::path::Path;
use std::sync::Arc;

/// The first `n` words of `text`, on one line.
fn first_words(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().take(n).collect();
    words.join(" ")
}

/// `text` wrapped at about 88 columns, each line behind `    | `.
fn print_wrapped(text: &str) {
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            if !line.is_empty() && line.chars().count() + word.chars().count() > 88 {
                println!("    | {line}");
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        println!("    | {line}");
    }
}

/// The source numbers cited in `answer` (`[2]`, `[1][3]`), in order of first use.
fn citations(answer: &str) -> Vec<usize> {
    let mut cited = Vec::new();
    for part in answer.split('[').skip(1) {
        let Some((number, _)) = part.split_once(']') else {
            continue;
        };
        if let Ok(n) = number.parse::<usize>()
            && !cited.contains(&n)
        {
            cited.push(n);
        }
    }
    cited
}

#[tokio::main]
async fn main() -> Result<()> {
    println!(
        "(The model is a MockLlm playing scripted replies: this shows the flow, not a model's answers.)\n"
    );
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;

    let llm = Arc::new(MockLlm::scripted([
        "(scripted) Alice found a little bottle labelled `DRINK ME' [3]; she drank it and shut \
         up like a telescope until she was only ten inches high [4]. Then she found a cake \
         marked `EAT ME' [5].",
    ]));
    // Two retrieved chunks of up to 1,024 tokens, cut into citation sources
    // of 512 tokens (LlamaIndex's `citation_chunk_size`, overlap 20).
    let engine = CitationQueryEngine::builder(Arc::new(index.as_retriever().similarity_top_k(2)))
        .llm(llm.clone())
        .citation_chunk_size(512)
        .build()?;

    let question = "How did Alice change her size to reach the garden?";
    println!("Question: {question}\n");
    let response = engine.query(&question.into()).await?;

    println!("Numbered sources (response.source_nodes):");
    for (i, source) in response.source_nodes.iter().enumerate() {
        let file = source
            .node
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let text = source.node.get_text();
        // Each source's text starts with its own label, "Source N:".
        let (label, body) = text.split_once('\n').unwrap_or((text, ""));
        println!(
            "  [{}] {label} {file}, score {:.3}, {} characters: \"{} ...\"",
            i + 1,
            source.get_score(),
            body.chars().count(),
            first_words(body, 8)
        );
    }

    println!("\nLLM calls: {}", llm.requests().len());
    if let Some(request) = llm.requests().first() {
        let prompt = request.prompt_text();
        let instructions = prompt.split("------").next().unwrap_or_default();
        println!("The prompt's instructions (LlamaIndex's CITATION_QA_TEMPLATE):");
        print_wrapped(instructions.trim_end());
        println!(
            "    | ------ (the numbered sources, {} characters) ------",
            prompt
                .split("------")
                .nth(1)
                .unwrap_or_default()
                .chars()
                .count()
        );
        if let Some(tail) = prompt.rsplit("------").next() {
            for line in tail.lines().filter(|l| !l.is_empty()) {
                println!("    | {line}");
            }
        }
    }

    println!("\nAnswer: {response}");
    println!("\nWhat each citation points at:");
    let answer = response.to_string();
    for n in citations(&answer) {
        match n.checked_sub(1).and_then(|i| response.source_nodes.get(i)) {
            Some(source) => {
                let text = source.node.get_text();
                let (_, body) = text.split_once('\n').unwrap_or(("", text));
                println!("  [{n}] -> \"{} ...\"", first_words(body, 16));
            }
            None => println!("  [{n}] -> no such source: the model cited past the list"),
        }
    }
    Ok(())
}

//! A ReAct agent with two calculator tools answering "What is (121 * 3) + 42?",
//! driven step by step: create the task, run its steps one at a time
//! (printing each), then finalize the response (LlamaIndex 0.12's `AgentRunner` API).
//!
//! ```sh
//! cargo run -p ragloom-examples --example calculator_agent
//! # with a real model behind any OpenAI-compatible server:
//! OPENAI_API_BASE=http://127.0.0.1:8080/v1 \
//!   cargo run -p ragloom-examples --features openai --example calculator_agent
//! ```
//!
//! Offline (the default) the model is a `MockLlm` playing the replies a good
//! model gives, so what you see is what the agent does around the model: the
//! tools it calls, the observations it feeds back, the final answer. With the
//! `openai` feature and `OPENAI_API_BASE` set (`OPENAI_API_KEY`,
//! `OPENAI_MODEL` as in the `openai_like` example), a real model reasons instead.

use ragloom::agent::legacy::ReActAgent;
use ragloom::chat_engine::ChatEngine;
use ragloom::llms::{Llm, MockLlm};
use ragloom::prelude::*;
use ragloom::tools::{FunctionTool, Tool};
use std::process::ExitCode;
use std::sync::Arc;

/// Two integers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TwoInts {
    /// The first integer.
    a: i64,
    /// The second integer.
    b: i64,
}

fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(FunctionTool::from_fn(
            "multiply",
            Some("Multiply two integers and return the result."),
            |x: TwoInts| x.a.checked_mul(x.b).ok_or("the product overflows"),
        )),
        Arc::new(FunctionTool::from_fn(
            "add",
            Some("Add two integers and return the result."),
            |x: TwoInts| x.a.checked_add(x.b).ok_or("the sum overflows"),
        )),
    ]
}

/// The replies a capable model gives for the question, in order.
fn scripted_llm() -> Arc<dyn Llm> {
    Arc::new(MockLlm::scripted([
        "Thought: The current language of the user is: English. I need to use a tool to help me answer the question.\n\
         Action: multiply\nAction Input: {\"a\": 121, \"b\": 3}",
        "Thought: Now I add 42 to 363.\nAction: add\nAction Input: {\"a\": 363, \"b\": 42}",
        "Thought: I can answer without using any more tools. I'll use the user's language to answer\n\
         Answer: (121 * 3) + 42 = 405",
    ]))
}

#[cfg(feature = "openai")]
fn real_llm() -> Result<Option<Arc<dyn Llm>>> {
    let Some(api_base) = std::env::var("OPENAI_API_BASE")
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(None);
    };
    let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "local-model".to_string());
    // The key, if the server wants one, comes from OPENAI_API_KEY.
    let llm = ragloom::openai::OpenAILike::builder(model)
        .api_base(api_base)
        .is_chat_model(true)
        .max_tokens(256)
        .build()?;
    Ok(Some(Arc::new(llm)))
}

#[cfg(not(feature = "openai"))]
fn real_llm() -> Result<Option<Arc<dyn Llm>>> {
    Ok(None)
}

async fn run() -> Result<()> {
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What is (121 * 3) + 42?".to_string());
    let llm = match real_llm()? {
        Some(llm) => {
            println!("Using the model at $OPENAI_API_BASE.");
            llm
        }
        None => {
            println!("Offline: a scripted MockLlm plays the model.");
            scripted_llm()
        }
    };
    let agent = ReActAgent::builder(llm)
        .tools(tools())
        .max_iterations(10)
        .build()?;

    println!("\nQuestion: {question}\n");
    let task = agent.create_task(&question).await?;
    let mut n = 0;
    let mut shown = 0;
    loop {
        n += 1;
        if n > agent.max_iterations() {
            return Err(Error::Other(format!("no answer after {} steps", n - 1)));
        }
        let output = agent.run_step(&task.task_id, None, None).await?;
        println!("--- step {n} ({}) ---", output.task_step.step_id);
        // What this step added to the reasoning: thought and action, then the observation.
        let state = agent.get_task(&task.task_id).await?;
        for step in &state.current_reasoning[shown..] {
            println!("{step}");
        }
        shown = state.current_reasoning.len();
        if output.is_last {
            break;
        }
    }
    let answer = agent
        .finalize_response(&task.task_id, None)
        .await?
        .into_chat_response()
        .await?;
    println!("\nFinal answer: {}", answer.response);
    println!(
        "Tool outputs used: {:?}",
        answer
            .sources
            .iter()
            .map(|s| &s.content)
            .collect::<Vec<_>>()
    );
    println!(
        "Memory now holds {} messages.",
        agent.chat_history().await?.len()
    );
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

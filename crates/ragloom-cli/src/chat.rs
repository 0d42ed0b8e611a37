//! `ragloom chat` and `rag --chat`: a REPL with history. Each turn streams;
//! Ctrl-C or Ctrl-D ends the chat cleanly, Ctrl-C mid-answer stops that answer.

use crate::answer::{Engine, print_sources};
use crate::error::CliError;
use crate::out;
use crate::ui::Ui;
use futures::StreamExt;
use ragloom::chat_engine::{ChatEngine, CondensePlusContextChatEngine};
use ragloom::query_engine::answer::Answer;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Runs the REPL until end of input or Ctrl-C.
pub(crate) async fn chat(engine: &Engine, ui: &Ui) -> Result<(), CliError> {
    let a = &engine.answerer;
    let chat_engine = match a.llm() {
        Some(llm) => Some(CondensePlusContextChatEngine::from_defaults(
            a.retriever().clone(),
            llm.clone(),
        )?),
        None => None,
    };
    if !ui.json {
        eprintln!(
            "Chatting with {} ({} retrieval{}). Ctrl-D or Ctrl-C to end.",
            engine.source.key,
            a.retrieval(),
            if chat_engine.is_some() {
                ""
            } else {
                "; no LLM configured: each turn shows passages"
            }
        );
    }
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        if !ui.json {
            out::write("> ")?;
        }
        let line = tokio::select! {
            line = lines.next_line() => line.map_err(|e| CliError::new(
                crate::error::exit::FAILURE, format!("cannot read input: {e}"), ""))?,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(line) = line else {
            if !ui.json {
                out::line("")?;
            }
            return Ok(());
        };
        let message = line.trim();
        if message.is_empty() {
            continue;
        }
        match &chat_engine {
            None => {
                let answer = engine.answer(message, ui).await?;
                if ui.json {
                    print_json(&answer)?;
                }
            }
            Some(ce) => {
                let mut r = ce.stream_chat(message).await?;
                let mut text = String::new();
                loop {
                    let delta = tokio::select! {
                        d = r.response_gen.next() => d,
                        _ = tokio::signal::ctrl_c() => {
                            // Dropping the stream leaves this turn out of the history.
                            eprintln!("\n(answer stopped)");
                            break;
                        }
                    };
                    let Some(delta) = delta else { break };
                    let delta = delta?;
                    if !ui.json {
                        out::write(&delta)?;
                    }
                    text.push_str(&delta);
                }
                let sources = a.passages(message, &r.source_nodes);
                if ui.json {
                    print_json(&Answer {
                        question: message.to_string(),
                        answer: Some(text.trim().to_string()),
                        mode: "llm",
                        retrieval: a.retrieval().to_string(),
                        sources,
                    })?;
                } else {
                    out::line("")?;
                    print_sources(&sources)?;
                }
            }
        }
    }
}

/// Prints one JSON object on its own line.
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let s = serde_json::to_string(value).map_err(ragloom::Error::from)?;
    out::line(s)
}

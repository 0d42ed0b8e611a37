//! A workflow that stops to ask a person, is checkpointed while it waits,
//! and is resumed from the checkpoint by a fresh `Workflow` value, as a new
//! process would: the shape of an approval step in a long-running job.
//!
//! ```sh
//! cargo run -p ragloom-examples --example workflow_human_in_the_loop
//! ```
//!
//! It also prints the workflow's possible flows as Mermaid text and writes
//! them as a self-contained HTML page next to the checkpoints.

use futures::StreamExt;
use ragloom::workflow::{
    Checkpointer, Context, Event, FileCheckpointer, HumanResponseEvent, InputRequiredEvent,
    StartEvent, StopEvent, Workflow, draw,
};
use std::process::ExitCode;
use std::sync::Arc;

/// A draft waiting for approval.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Drafted {
    text: String,
}
impl Event for Drafted {}

fn workflow(checkpoints: &std::path::Path) -> ragloom::Result<Workflow> {
    Workflow::builder("approval")
        .step("draft", |ev: StartEvent, ctx: Context| async move {
            let topic: String = ev.get("topic")?;
            ctx.store().set("topic", &topic)?;
            Ok(Drafted {
                text: format!("A short note about {topic}."),
            })
        })
        .step("approve", |ev: Drafted, ctx: Context| async move {
            // Parks the step until a person answers; it runs again then.
            let question = InputRequiredEvent::new(&format!("Publish \"{}\"? (yes/no)", ev.text));
            let answer: HumanResponseEvent = ctx.wait_for_event(Some(question.into()), None)?;
            let verdict = match answer.response.trim() {
                "yes" => "published",
                _ => "discarded",
            };
            Ok(StopEvent::new(format!("{}: {verdict}", ev.text)))
        })
        .checkpointer(Arc::new(FileCheckpointer::new(checkpoints)))
        // A person may take a while.
        .timeout(None)
        .build()
}

async fn run() -> ragloom::Result<()> {
    let dir = std::env::temp_dir().join("ragloom-workflow-example");
    let wf = workflow(&dir)?;
    println!("{}", draw::to_mermaid(&wf));
    let page = dir.join("approval.html");
    std::fs::create_dir_all(&dir).map_err(|e| ragloom::Error::io("creating", &dir, e))?;
    std::fs::write(&page, draw::to_html(&wf))
        .map_err(|e| ragloom::Error::io("writing", &page, e))?;
    println!("drawing: {}\n", page.display());

    // First "process": run until the workflow asks, then stop.
    let mut handler = wf.start(StartEvent::new().with("topic", "checkpoints"));
    let run_id = handler.ctx().run_id();
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if let Some(asked) = ev.downcast::<InputRequiredEvent>() {
            println!("asked: {}", asked.fields["prefix"]);
            break;
        }
    }
    // Once the parked step is in the saved checkpoint, stop this run.
    let saved = FileCheckpointer::new(&dir);
    while saved
        .load(&run_id)
        .await?
        .is_none_or(|c| c.waiters.is_empty())
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    handler.cancel_run();
    let _ = handler.await;
    println!(
        "stopped; checkpoint: {}",
        dir.join(format!("{run_id}.json")).display()
    );

    // Second "process": a new workflow value resumes the run and answers.
    let resumed = workflow(&dir)?.resume_run(&run_id).await?;
    println!(
        "resumed; the store still has topic = {:?}",
        resumed.ctx().store().get::<String>("topic")?
    );
    resumed.send_event(HumanResponseEvent::new("yes"))?;
    println!("result: {}", resumed.await?);
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

//! Workflows: routing, fan-out and fan-in, workers, retries, timeouts,
//! cancellation, streaming, human in the loop, validation, checkpoints
//! (resumed in this process and after the process was killed), drawings.

#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::storage::SimpleKVStore;
use ragloom_workflow::{
    AnyEvent, Checkpointer, ConstantDelayRetryPolicy, Context, Event, EventType, FileCheckpointer,
    HumanResponseEvent, InputRequiredEvent, KvCheckpointer, StartEvent, StepConfig, StopEvent,
    Workflow, draw, step_output,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct Job {
    n: u32,
}
impl Event for Job {}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct Done {
    n: u32,
}
impl Event for Done {}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct Progress {
    msg: String,
}
impl Event for Progress {}

/// start → 5 jobs → each doubled by `work` (at most `workers` at once) → summed.
fn fan(workers: usize, running: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> Workflow {
    fan_builder(workers, running, peak).build().unwrap()
}

fn fan_builder(
    workers: usize,
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
) -> ragloom_workflow::WorkflowBuilder {
    Workflow::builder("fan")
        .step("split", |ev: StartEvent, ctx: Context| async move {
            let count: u32 = ev.get("count")?;
            ctx.store().set("count", count)?;
            for n in 1..=count {
                ctx.send_event(Job { n }, None)?;
            }
            Ok(None::<Job>)
        })
        .step_with(
            "work",
            StepConfig::new().num_workers(workers),
            move |ev: Job, _ctx: Context| {
                let (running, peak) = (running.clone(), peak.clone());
                async move {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok(Done { n: ev.n * 2 })
                }
            },
        )
        .step("sum", |ev: Done, ctx: Context| async move {
            let count: usize = ctx.store().get("count")?.unwrap_or(0);
            Ok(ctx
                .collect(ev, count)
                .map(|all| StopEvent::new(all.iter().map(|d| d.n).sum::<u32>())))
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_and_in_respects_num_workers() {
    for workers in [1, 3] {
        let (running, peak) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
        let wf = fan(workers, running, peak.clone());
        let result = wf.run(StartEvent::new().with("count", 5)).await.unwrap();
        assert_eq!(result, 30);
        assert_eq!(peak.load(Ordering::SeqCst), workers, "workers {workers}");
    }
}

#[tokio::test]
async fn a_failing_step_is_retried_by_its_policy() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let build = |max: u32| {
        let attempts = attempts.clone();
        Workflow::builder("flaky")
            .step_with(
                "flaky",
                StepConfig::new()
                    .retry_policy(ConstantDelayRetryPolicy::new(max, Duration::from_millis(1))),
                move |_: StartEvent, _ctx: Context| {
                    let attempts = attempts.clone();
                    async move {
                        if attempts.fetch_add(1, Ordering::SeqCst) < 2 {
                            return Err(Error::Other("not yet".into()));
                        }
                        Ok(StopEvent::new("ok"))
                    }
                },
            )
            .build()
            .unwrap()
    };
    assert_eq!(build(3).run(StartEvent::new()).await.unwrap(), "ok");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);

    attempts.store(0, Ordering::SeqCst);
    let err = build(2).run(StartEvent::new()).await.unwrap_err();
    assert_eq!(err.to_string(), "workflow: error in step `flaky`: not yet");
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

fn sleeper(timeout: Option<Duration>) -> Workflow {
    Workflow::builder("sleeper")
        .step("sleep", |_: StartEvent, ctx: Context| async move {
            ctx.write_event_to_stream(Progress {
                msg: "sleeping".into(),
            });
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(StopEvent::new("woke"))
        })
        .timeout(timeout)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_run_times_out() {
    let err = sleeper(Some(Duration::from_millis(50)))
        .run(StartEvent::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "workflow: Operation timed out after 0.05 seconds. Currently active steps: sleep"
    );
}

#[tokio::test]
async fn a_run_can_be_cancelled_and_its_stream_ends() {
    let mut handler = sleeper(None).start(StartEvent::new());
    let mut events = handler.stream_events();
    let first = events.next().await.unwrap();
    assert_eq!(first.downcast::<Progress>().unwrap().msg, "sleeping");
    handler.cancel_run();
    let err = handler.await.unwrap_err();
    assert_eq!(err.to_string(), "workflow: the run was cancelled");
    assert!(
        events.next().await.is_none(),
        "the stream ends with the run"
    );
}

#[tokio::test]
async fn the_stream_carries_written_events_then_the_stop_event() {
    let wf = Workflow::builder("talk")
        .step("talk", |_: StartEvent, ctx: Context| async move {
            for i in 0..3 {
                ctx.write_event_to_stream(Progress {
                    msg: format!("step {i}"),
                });
            }
            Ok(StopEvent::new(3))
        })
        .build()
        .unwrap();
    let mut handler = wf.start(StartEvent::new());
    let events: Vec<AnyEvent> = handler.stream_events().collect().await;
    let names: Vec<String> = events.iter().map(AnyEvent::name).collect();
    assert_eq!(names, ["Progress", "Progress", "Progress", "StopEvent"]);
    assert_eq!(events[1].downcast::<Progress>().unwrap().msg, "step 1");
    assert_eq!(handler.await.unwrap(), 3);
}

#[tokio::test]
async fn a_failing_step_fails_the_run_and_a_panicking_one_is_reported() {
    let wf = Workflow::builder("bad")
        .step("bad", |_: StartEvent, _ctx: Context| async move {
            Err::<StopEvent, _>(Error::Other("boom".into()))
        })
        .build()
        .unwrap();
    let err = wf.run(StartEvent::new()).await.unwrap_err();
    assert_eq!(err.to_string(), "workflow: error in step `bad`: boom");

    let wf = Workflow::builder("panics")
        .step("panics", |_: StartEvent, _ctx: Context| async move {
            if true {
                panic!("step bug");
            }
            Ok(StopEvent::new(()))
        })
        .build()
        .unwrap();
    let err = wf.run(StartEvent::new()).await.unwrap_err();
    assert!(err.to_string().contains("a step panicked"), "{err}");
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Orphan;
impl Event for Orphan {}

step_output! {
    enum Branch { Job(Job), Stop(StopEvent) }
}

#[test]
fn validation_names_what_cannot_flow_as_llamaindex_does() {
    // Messages recorded from llama-index-workflows 2.26.1 (with "@step" as "step").
    let msg = |b: ragloom_workflow::WorkflowBuilder| b.build().unwrap_err().to_string();
    let stop = |_: StartEvent, _ctx: Context| async move { Ok(StopEvent::new(())) };

    let no_start = Workflow::builder("W1").step("a", |_: Job, _ctx: Context| async move {
        Ok(StopEvent::new(()))
    });
    assert_eq!(
        msg(no_start),
        "workflow: At least one Event of type StartEvent must be received by any step. \
         (Workflow 'W1' has no step that accepts StartEvent.)"
    );

    let no_stop = Workflow::builder("W2").step("a", |_: StartEvent, _ctx: Context| async move {
        Ok(Job { n: 1 })
    });
    assert_eq!(
        msg(no_stop),
        "workflow: At least one Event of type StopEvent must be returned by any step. \
         (Workflow 'W2' has no step that returns StopEvent.)"
    );

    let takes_stop = Workflow::builder("w")
        .step("a", stop)
        .step("t", |_: StopEvent, _ctx: Context| async move { Ok(()) });
    assert_eq!(
        msg(takes_stop),
        "workflow: Step 't' cannot accept StopEvent. StopEvent signals the end of the workflow. \
         Use a different Event type instead."
    );

    let never_produced = Workflow::builder("w")
        .step("a", stop)
        .step("b", |_: Orphan, _ctx: Context| async move {
            Ok(StopEvent::new(()))
        });
    assert!(
        msg(never_produced)
            .starts_with("workflow: The following events are consumed but never produced: Orphan")
    );
    // ... unless the event is declared as coming from outside.
    Workflow::builder("w")
        .step("a", stop)
        .step("b", |_: Orphan, _ctx: Context| async move {
            Ok(StopEvent::new(()))
        })
        .event::<Orphan>()
        .build()
        .unwrap();

    let never_consumed = Workflow::builder("w").step("a", stop).step(
        "b",
        |_: StartEvent, _ctx: Context| async move { Ok(Orphan) },
    );
    assert_eq!(
        msg(never_consumed),
        "workflow: The following events are produced but never consumed: Orphan"
    );

    // `u` and `t` feed each other, and nothing else feeds them.
    let unreachable = Workflow::builder("w")
        .step("a", stop)
        .step(
            "t",
            |_: Job, _ctx: Context| async move { Ok(Done { n: 0 }) },
        )
        .step("u", |_: Done, _ctx: Context| async move {
            Ok(Branch::from(Job { n: 0 }))
        });
    assert_eq!(
        msg(unreachable),
        "workflow: Graph validation failed:\n  - [reachability] Unreachable steps: t, u\n    \
         Steps must be reachable from StartEvent or HumanResponseEvent."
    );

    let dead_end = Workflow::builder("w")
        .step("a", stop)
        .step("d", |_: StartEvent, _ctx: Context| async move {
            Ok(Job { n: 0 })
        })
        .step("e", |_: Job, _ctx: Context| async move { Ok(()) });
    assert_eq!(
        msg(dead_end),
        "workflow: Graph validation failed:\n  - [dead_end] Dead-end steps: d, e\n    \
         Steps must have a path to StopEvent or InputRequiredEvent."
    );

    let twice = Workflow::builder("w").step("a", stop).step("a", stop);
    assert_eq!(msg(twice), "workflow: two steps are named `a`");

    // A branching step declares both outputs.
    Workflow::builder("w")
        .step("a", |_: StartEvent, _ctx: Context| async move {
            Ok(Branch::from(Job { n: 1 }))
        })
        .step("b", |_: Job, _ctx: Context| async move {
            Ok(StopEvent::new(()))
        })
        .build()
        .unwrap();
}

#[tokio::test]
async fn collect_events_orders_by_the_expected_list_and_drops_what_it_does_not_need() {
    let wf = Workflow::builder("join")
        .step("start", |_: StartEvent, ctx: Context| async move {
            ctx.send_event(Done { n: 2 }, None)?;
            ctx.send_event(Job { n: 1 }, None)?;
            Ok(step_two())
        })
        .step_any::<Option<StopEvent>, _, _>(
            "join",
            vec![EventType::of::<Job>(), EventType::of::<Done>()],
            StepConfig::new().num_workers(1),
            |ev: AnyEvent, ctx: Context| async move {
                let expected = [EventType::of::<Job>(), EventType::of::<Done>()];
                Ok(ctx
                    .collect_events(ev, &expected)
                    .map(|evs| StopEvent::new(evs.iter().map(AnyEvent::name).collect::<Vec<_>>())))
            },
        )
        .build()
        .unwrap();
    assert_eq!(
        wf.run(StartEvent::new()).await.unwrap(),
        serde_json::json!(["Job", "Done"])
    );
}

step_output! {
    enum JobOrDone { Job(Job), Done(Done) }
}

/// What the start step of the join declares it may send.
fn step_two() -> Option<JobOrDone> {
    None
}

#[tokio::test]
async fn an_event_for_a_named_step_goes_to_that_step_only() {
    let wf = Workflow::builder("targets")
        .step("start", |_: StartEvent, ctx: Context| async move {
            ctx.send_event(Job { n: 7 }, Some("second"))?;
            Ok(None::<Job>)
        })
        .step("first", |_: Job, _ctx: Context| async move {
            Ok(StopEvent::new("first"))
        })
        .step("second", |_: Job, _ctx: Context| async move {
            Ok(StopEvent::new("second"))
        })
        .build()
        .unwrap();
    assert_eq!(wf.run(StartEvent::new()).await.unwrap(), "second");
}

/// Asks a person for a name, then greets; counts how often `ask` ran.
fn greeter(ran: Arc<AtomicUsize>) -> Workflow {
    greeter_builder(ran).build().unwrap()
}

fn greeter_builder(ran: Arc<AtomicUsize>) -> ragloom_workflow::WorkflowBuilder {
    Workflow::builder("greeter")
        .step("ask", move |ev: StartEvent, ctx: Context| {
            let ran = ran.clone();
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                let greeting: String = ev.get("greeting")?;
                ctx.store().set("asked", true)?;
                let answer: HumanResponseEvent =
                    ctx.wait_for_event(Some(InputRequiredEvent::new("Your name?").into()), None)?;
                Ok(StopEvent::new(format!("{greeting}, {}!", answer.response)))
            }
        })
        .timeout(None)
}

#[tokio::test]
async fn a_step_waits_for_a_person_and_runs_again_with_the_answer() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut handler = greeter(ran.clone()).start(StartEvent::new().with("greeting", "Hello"));
    let mut events = handler.stream_events();
    let asked = events.next().await.unwrap();
    let asked = asked.downcast::<InputRequiredEvent>().unwrap();
    assert_eq!(asked.fields["prefix"], "Your name?");
    handler
        .send_event(HumanResponseEvent::new("Alice"))
        .unwrap();
    assert_eq!(handler.await.unwrap(), "Hello, Alice!");
    assert_eq!(
        ran.load(Ordering::SeqCst),
        2,
        "the step ran again with the answer"
    );
}

#[tokio::test]
async fn a_waiting_run_is_checkpointed_and_resumed_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoints = Arc::new(FileCheckpointer::new(dir.path()));
    let ran = Arc::new(AtomicUsize::new(0));
    let build = || {
        greeter_builder(ran.clone())
            .checkpointer(checkpoints.clone())
            .build()
            .unwrap()
    };
    let mut handler = build().start(StartEvent::new().with("greeting", "Hi"));
    let run_id = handler.ctx().run_id();
    let mut events = handler.stream_events();
    assert!(events.next().await.unwrap().is::<InputRequiredEvent>());
    // The waiter is in the checkpoint once the step has parked.
    let mut saved = None;
    for _ in 0..100 {
        saved = checkpoints.load(&run_id).await.unwrap();
        if saved.as_ref().is_some_and(|c| !c.waiters.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let saved = saved.unwrap();
    assert_eq!(saved.waiters.len(), 1);
    assert_eq!(saved.waiters[0].waiting_for, "HumanResponseEvent");
    assert_eq!(saved.store["asked"], true);
    handler.cancel_run();
    assert!(handler.await.is_err());

    // A new workflow object, as another process would build it.
    let resumed = build().resume_run(&run_id).await.unwrap();
    resumed.send_event(HumanResponseEvent::new("Bob")).unwrap();
    assert_eq!(resumed.await.unwrap(), "Hi, Bob!");
    let last = checkpoints.load(&run_id).await.unwrap().unwrap();
    assert_eq!(last.result, Some("Hi, Bob!".into()));
    assert!(last.waiters.is_empty());
}

#[tokio::test]
async fn checkpoints_live_in_a_key_value_store_too() {
    let kv = Arc::new(SimpleKVStore::new());
    let cp = Arc::new(KvCheckpointer::new(kv.clone()));
    let (running, peak) = (Arc::default(), Arc::default());
    let wf = fan_builder(2, running, peak)
        .checkpointer(cp.clone())
        .build()
        .unwrap();
    let handler = wf.start(StartEvent::new().with("count", 3));
    let run_id = handler.ctx().run_id();
    assert_eq!(handler.await.unwrap(), 12);
    let last = cp.load(&run_id).await.unwrap().unwrap();
    assert_eq!(last.result, Some(12.into()));
    assert_eq!(last.steps_done, 1 + 3 + 3);
    assert!(last.queued.is_empty() && last.in_progress.is_empty());
}

#[test]
fn drawings_show_every_step_and_event() {
    let wf = fan(1, Arc::default(), Arc::default());
    let mermaid = draw::to_mermaid(&wf);
    assert!(mermaid.starts_with("flowchart TD\n"));
    for line in [
        "event_StartEvent --> step_split",
        "step_work --> event_Done",
        "event_Done --> step_sum",
        "step_sum --> event_StopEvent",
    ] {
        assert!(mermaid.contains(line), "{line} in\n{mermaid}");
    }
    let html = draw::to_html(&wf);
    assert!(html.contains("<svg"));
    assert_eq!(html.matches("<g class=\"step\">").count(), 3);
    assert!(!html.contains("<script"), "no script, no network");
}

// ------------------------------------------------ killed mid-run, resumed

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Half {
    text: String,
}
impl Event for Half {}

/// Two steps; the second is slow and notes each of its runs in `log`.
fn two_steps(dir: &std::path::Path) -> Workflow {
    let log = dir.join("runs.log");
    Workflow::builder("two-steps")
        .step("first", |ev: StartEvent, ctx: Context| async move {
            let text: String = ev.get("text")?;
            ctx.store().set("seen", &text)?;
            Ok(Half {
                text: text.to_uppercase(),
            })
        })
        .step("second", move |ev: Half, _ctx: Context| {
            let log = log.clone();
            async move {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap();
                writeln!(f, "second {}", std::process::id()).unwrap();
                let slow: u64 = std::env::var("WF_SLOW_MS")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(slow)).await;
                Ok(StopEvent::new(format!("{}!", ev.text)))
            }
        })
        .checkpointer(Arc::new(FileCheckpointer::new(dir.join("checkpoints"))))
        .timeout(None)
        .build()
        .unwrap()
}

/// The child process of `a_run_killed_mid_step_resumes_in_another_process`.
#[tokio::test]
#[ignore = "run by the kill test in a child process"]
async fn child_runs_until_killed() {
    let Ok(dir) = std::env::var("WF_CHILD_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let handler = two_steps(&dir).start(StartEvent::new().with("text", "hello"));
    std::fs::write(dir.join("run_id"), handler.ctx().run_id()).unwrap();
    let _ = handler.await;
}

#[tokio::test]
async fn a_run_killed_mid_step_resumes_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_runs_until_killed",
            "--ignored",
            "--nocapture",
        ])
        .env("WF_CHILD_DIR", dir.path())
        .env("WF_SLOW_MS", "600000")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = dir.path().join("runs.log");
    for _ in 0..600 {
        if std::fs::read_to_string(&log).is_ok_and(|l| l.contains("second")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);

    let run_id = std::fs::read_to_string(dir.path().join("run_id")).unwrap();
    let wf = two_steps(dir.path());
    let handler = wf.resume_run(&run_id).await.unwrap();
    assert_eq!(
        handler
            .ctx()
            .store()
            .get::<String>("seen")
            .unwrap()
            .unwrap(),
        "hello"
    );
    assert_eq!(handler.await.unwrap(), "HELLO!");
    let runs = std::fs::read_to_string(&log).unwrap();
    let runs: Vec<&str> = runs.lines().collect();
    assert_eq!(
        runs.len(),
        2,
        "the step in flight at the kill ran again: {runs:?}"
    );
    assert_ne!(runs[0], runs[1], "once in each process");
}

#[tokio::test]
async fn a_checkpoint_of_another_workflow_or_with_unknown_events_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wf = two_steps(dir.path());
    let mut cp = wf
        .start(StartEvent::new().with("text", "x"))
        .checkpoint()
        .unwrap();
    cp.workflow = "other".into();
    let err = wf.resume(&cp).unwrap_err();
    assert_eq!(
        err.to_string(),
        "workflow: the checkpoint is of workflow `other`, not `two-steps`"
    );
    cp.workflow = "two-steps".into();
    cp.queued.insert(
        "second".into(),
        vec![ragloom_workflow::WorkItemCheckpoint {
            work_item: 9,
            event: serde_json::json!({"type": "Mystery", "value": {}}),
        }],
    );
    let err = wf.resume(&cp).unwrap().await.unwrap_err();
    assert!(err.to_string().contains("`Mystery`"), "{err}");
    cp.version = 1;
    let err = wf.resume(&cp).unwrap().await.unwrap_err();
    assert!(
        err.to_string()
            .contains("checkpoint version 1 cannot be read"),
        "{err}"
    );
}

// ------------------------------------------------ review findings

/// Sends `response` once a step of the run is parked waiting for one.
async fn answer_once_waiting(handler: &ragloom_workflow::WorkflowHandler, response: &str) {
    for _ in 0..100 {
        if !handler.checkpoint().unwrap().waiters.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    handler
        .send_event(HumanResponseEvent::new(response))
        .unwrap();
}

#[tokio::test]
async fn a_step_that_accepts_the_answer_keeps_the_run_waiting_for_it() {
    // LlamaIndex's classic pattern: one step asks, another takes the answer.
    let wf = Workflow::builder("classic")
        .step("ask", |_: StartEvent, _ctx: Context| async move {
            Ok(InputRequiredEvent::new("name?"))
        })
        .step(
            "answer",
            |ev: HumanResponseEvent, _ctx: Context| async move {
                Ok(StopEvent::new(format!("hi {}", ev.response)))
            },
        )
        .build()
        .unwrap();
    let mut handler = wf.start(StartEvent::new());
    let mut events = handler.stream_events();
    assert!(events.next().await.unwrap().is::<InputRequiredEvent>());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!handler.is_done(), "the run waits for the answer");
    handler.send_event(HumanResponseEvent::new("Ann")).unwrap();
    let ctx = handler.ctx().clone();
    assert_eq!(handler.await.unwrap(), "hi Ann");
    let err = ctx
        .send_event(HumanResponseEvent::new("late"), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "workflow: the run has ended; HumanResponseEvent was not delivered"
    );
}

#[tokio::test]
async fn an_answer_wakes_the_waiting_step_and_reaches_the_steps_that_accept_it() {
    let audited = Arc::new(AtomicUsize::new(0));
    let seen = audited.clone();
    let wf = Workflow::builder("both")
        .step("ask", |_: StartEvent, ctx: Context| async move {
            let answer: HumanResponseEvent = ctx.wait_for_event(None, None)?;
            // Let the audit step run first.
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(StopEvent::new(answer.response))
        })
        .step("audit", move |_: HumanResponseEvent, _ctx: Context| {
            let seen = seen.clone();
            async move {
                seen.fetch_add(1, Ordering::SeqCst);
                Ok(None::<StopEvent>)
            }
        })
        .build()
        .unwrap();
    let handler = wf.start(StartEvent::new());
    answer_once_waiting(&handler, "yes").await;
    assert_eq!(handler.await.unwrap(), "yes");
    assert_eq!(audited.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_step_that_fails_after_reading_its_answer_finds_it_again_on_retry() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counted = attempts.clone();
    let wf = Workflow::builder("retry-after-answer")
        .step_with(
            "ask",
            StepConfig::new().retry_policy(ConstantDelayRetryPolicy::new(2, Duration::ZERO)),
            move |_: StartEvent, ctx: Context| {
                let counted = counted.clone();
                async move {
                    let answer: HumanResponseEvent = ctx.wait_for_event(None, None)?;
                    if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                        return Err(Error::Other("flaky after the answer".into()));
                    }
                    Ok(StopEvent::new(answer.response))
                }
            },
        )
        .build()
        .unwrap();
    let handler = wf.start(StartEvent::new());
    answer_once_waiting(&handler, "ok").await;
    assert_eq!(handler.await.unwrap(), "ok");
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn store_edit_may_read_the_context_and_an_empty_collect_is_complete() {
    let wf = Workflow::builder("edit")
        .step("edit", |_: StartEvent, ctx: Context| async move {
            ctx.store().set("n", 1)?;
            let inner = ctx.clone();
            let n = ctx.store().edit(|map| {
                let before: i64 = inner.store().get("n").unwrap().unwrap();
                map.insert("n".into(), (before + 1).into());
                before + 1
            });
            assert_eq!(
                ctx.collect_events(Job { n: 0 }, &[]).map(|v| v.len()),
                Some(0)
            );
            Ok(StopEvent::new(n))
        })
        .build()
        .unwrap();
    assert_eq!(wf.run(StartEvent::new()).await.unwrap(), 2);
}

#[test]
fn a_run_cancelled_before_it_first_runs_still_ends_its_stream() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut handler = sleeper(None).start(StartEvent::new());
        let mut events = handler.stream_events();
        handler.cancel_run();
        let next = tokio::time::timeout(Duration::from_secs(5), events.next()).await;
        assert!(matches!(next, Ok(None)), "the stream ended: {next:?}");
        let _keep = handler.ctx().clone();
        assert!(handler.await.is_err());
    });
}

// ------------------------------------------------ a step's work counts once

#[tokio::test]
async fn a_retried_step_sends_its_events_once() {
    let tries = Arc::new(AtomicUsize::new(0));
    let t = tries.clone();
    let wf = Workflow::builder("retry-sends")
        .step_with(
            "split",
            StepConfig::new().retry_policy(ConstantDelayRetryPolicy::new(3, Duration::ZERO)),
            move |_: StartEvent, ctx: Context| {
                let t = t.clone();
                async move {
                    ctx.send_event(Job { n: 1 }, None)?;
                    if t.fetch_add(1, Ordering::SeqCst) == 0 {
                        return Err(Error::Other("flaky".into()));
                    }
                    Ok(None::<Job>)
                }
            },
        )
        .step("count", |ev: Job, ctx: Context| async move {
            // Two jobs would mean the failed attempt's send went out too.
            let got = ctx.collect(ev, 1).unwrap();
            let seen: u32 = ctx.store().get_or("seen", 0)? + 1;
            ctx.store().set("seen", seen)?;
            Ok(StopEvent::new(got.len()))
        })
        .build()
        .unwrap();
    let handler = wf.start(StartEvent::new());
    let ctx = handler.ctx().clone();
    assert_eq!(handler.await.unwrap(), 1);
    assert_eq!(tries.load(Ordering::SeqCst), 2);
    assert_eq!(ctx.store().get::<u32>("seen").unwrap(), Some(1));
}

/// split → two jobs → `add` collects both, then (in the first process)
/// stays busy; a checkpoint written meanwhile is resumed.
fn half_done(slow: bool) -> Workflow {
    Workflow::builder("half-done")
        .step("split", |_: StartEvent, ctx: Context| async move {
            ctx.send_event(Job { n: 1 }, None)?;
            ctx.send_event(Job { n: 2 }, None)?;
            Ok(None::<Job>)
        })
        .step("add", move |ev: Job, ctx: Context| async move {
            let Some(jobs) = ctx.collect(ev, 2) else {
                return Ok(None);
            };
            // Sent while busy: must not be in a checkpoint taken meanwhile.
            ctx.send_event(
                Progress {
                    msg: "summed".into(),
                },
                None,
            )?;
            if slow {
                ctx.store().set("busy", true)?;
                tokio::time::sleep(Duration::from_secs(600)).await;
            }
            Ok(Some(StopEvent::new(jobs.iter().map(|j| j.n).sum::<u32>())))
        })
        .step("log", |_: Progress, ctx: Context| async move {
            let n: u32 = ctx.store().get_or("progress", 0)? + 1;
            ctx.store().set("progress", n)?;
            Ok(None::<StopEvent>)
        })
        .event::<Progress>()
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_checkpoint_taken_mid_step_holds_neither_its_sends_nor_a_spent_set() {
    let handler = half_done(true).start(StartEvent::new());
    let mut cp = None;
    for _ in 0..200 {
        let now = handler.checkpoint().unwrap();
        if now.store.get("busy").is_some() {
            cp = Some(now);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cp = cp.expect("the add step got busy");
    handler.cancel_run();
    // The set `add` took is back in its buffer (both jobs, one of them the
    // event of the run in progress); the Progress it sent is nowhere.
    assert_eq!(cp.collected["add"].len(), 2);
    assert_eq!(cp.in_progress["add"].len(), 1);
    assert!(!serde_json::to_string(&cp).unwrap().contains("Progress"));
    let cp: ragloom_workflow::Checkpoint =
        serde_json::from_str(&serde_json::to_string(&cp).unwrap()).unwrap();
    // Resumed, `add` runs again with the job it had: the set completes once.
    let resumed = half_done(false).resume(&cp).unwrap();
    assert_eq!(resumed.await.unwrap(), 3);
}

#[tokio::test]
async fn two_runs_of_a_step_with_equal_events_wait_apart() {
    let wf = Workflow::builder("twins")
        .step("split", |_: StartEvent, ctx: Context| async move {
            ctx.send_event(Job { n: 7 }, None)?;
            ctx.send_event(Job { n: 7 }, None)?;
            Ok(None::<Job>)
        })
        .step("ask", |ev: Job, ctx: Context| async move {
            let answer: HumanResponseEvent =
                ctx.wait_for_event(Some(InputRequiredEvent::new("ok?").into()), None)?;
            Ok(Done {
                n: ev.n + answer.response.len() as u32,
            })
        })
        .step("sum", |ev: Done, ctx: Context| async move {
            Ok(ctx
                .collect(ev, 2)
                .map(|d| StopEvent::new(d.iter().map(|d| d.n).sum::<u32>())))
        })
        .build()
        .unwrap();
    let mut handler = wf.start(StartEvent::new());
    let mut asked = 0;
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if ev.is::<InputRequiredEvent>() {
            asked += 1;
            if asked == 2 {
                break;
            }
        }
    }
    let cp = handler.checkpoint().unwrap();
    assert_eq!(cp.waiters.len(), 2);
    assert_ne!(cp.waiters[0].id, cp.waiters[1].id);
    handler.send_event(HumanResponseEvent::new("yes")).unwrap();
    assert_eq!(handler.await.unwrap(), 20);
}

#[tokio::test]
async fn a_step_caught_between_parking_and_its_checkpoint_runs_once_after_resume() {
    let ran = Arc::new(AtomicUsize::new(0));
    let handler = greeter(ran.clone()).start(StartEvent::new().with("greeting", "Hi"));
    let mut cp = handler.checkpoint().unwrap();
    for _ in 0..200 {
        cp = handler.checkpoint().unwrap();
        if !cp.waiters.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    handler.cancel_run();
    // As if written after the step registered its waiter but before its run
    // was collected: the event is both in progress and parked.
    let w = cp.waiters[0].clone();
    cp.in_progress.insert(
        w.step.clone(),
        vec![ragloom_workflow::WorkItemCheckpoint {
            work_item: w.work_item,
            event: w.event.clone(),
        }],
    );
    let ran = Arc::new(AtomicUsize::new(0));
    let resumed = greeter(ran.clone()).resume(&cp).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "parked: not run before the answer"
    );
    resumed.send_event(HumanResponseEvent::new("Bo")).unwrap();
    assert_eq!(resumed.await.unwrap(), "Hi, Bo!");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_older_checkpoint_file_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("old.json"),
        r#"{"version": 1, "workflow": "w", "run_id": "old", "queued": {"s": [{"type": "X", "value": {}}]}}"#,
    )
    .unwrap();
    let err = FileCheckpointer::new(dir.path())
        .load("old")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("checkpoint version 1 cannot be read"), "{err}");
}

#[tokio::test]
async fn a_collect_keeps_only_what_its_set_needs_and_a_parked_step_shows_its_question() {
    let wf = Workflow::builder("pairs")
        .step("split", |_: StartEvent, ctx: Context| async move {
            ctx.send_event(Job { n: 1 }, None)?;
            ctx.send_event(Job { n: 2 }, None)?;
            ctx.send_event(Done { n: 10 }, None)?;
            Ok(None::<StopEvent>)
        })
        .step_any(
            "pair",
            vec![EventType::of::<Job>(), EventType::of::<Done>()],
            StepConfig::new().num_workers(1),
            |ev: AnyEvent, ctx: Context| async move {
                let expected = [EventType::of::<Job>(), EventType::of::<Done>()];
                let Some(set) = ctx.collect_events(ev, &expected) else {
                    return Ok(None);
                };
                // The second job was not kept: a new pair needs a new job.
                let job = set[0].downcast::<Job>().unwrap();
                ctx.send_event(InputRequiredEvent::new(&format!("pair {}?", job.n)), None)?;
                let answer: HumanResponseEvent = ctx.wait_for_event(None, None)?;
                Ok(Some(StopEvent::new(format!(
                    "{}:{}",
                    job.n, answer.response
                ))))
            },
        )
        .event::<Job>()
        .event::<Done>()
        .timeout(None)
        .build()
        .unwrap();
    let mut handler = wf.start(StartEvent::new());
    let mut events = handler.stream_events();
    let asked = loop {
        let ev = events.next().await.unwrap();
        if let Some(q) = ev.downcast::<InputRequiredEvent>() {
            break q;
        }
    };
    assert_eq!(asked.fields["prefix"], "pair 1?");
    let cp = handler.checkpoint().unwrap();
    let held = &cp.collected["pair"];
    assert_eq!(
        held.len(),
        2,
        "the pair held for the parked run; job 2 dropped"
    );
    handler.send_event(HumanResponseEvent::new("ok")).unwrap();
    assert_eq!(handler.await.unwrap(), "1:ok");
}

#[tokio::test]
async fn a_run_can_be_cancelled_through_its_context() {
    let handler = sleeper(None).start(StartEvent::new());
    handler.ctx().clone().cancel_run();
    let err = handler.await.unwrap_err().to_string();
    assert!(err.contains("cancelled"), "{err}");
}

//! Workflow checkpoints in the embedded store: a waiting run saved in one
//! open of the database is resumed from another.

#![allow(clippy::unwrap_used)]

use ragloom_storage_sqlite::SqliteStore;
use ragloom_workflow::{
    Checkpointer, Context, HumanResponseEvent, InputRequiredEvent, KvCheckpointer, StartEvent,
    StopEvent, Workflow,
};
use std::sync::Arc;
use std::time::Duration;

fn asker(store: &SqliteStore) -> Workflow {
    Workflow::builder("asker")
        .step("ask", |_: StartEvent, ctx: Context| async move {
            ctx.store().set("asked", 1)?;
            let answer: HumanResponseEvent =
                ctx.wait_for_event(Some(InputRequiredEvent::new("ok?").into()), None)?;
            Ok(StopEvent::new(answer.response))
        })
        .checkpointer(Arc::new(KvCheckpointer::new(store.kv())))
        .timeout(None)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_waiting_run_checkpointed_in_sqlite_resumes_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let run_id = {
        let store = SqliteStore::open(&path).unwrap();
        let handler = asker(&store).start(StartEvent::new());
        let run_id = handler.ctx().run_id();
        let saved = KvCheckpointer::new(store.kv());
        let mut waiting = false;
        for _ in 0..200 {
            if let Some(cp) = saved.load(&run_id).await.unwrap() {
                if !cp.waiters.is_empty() {
                    assert_eq!(cp.store["asked"], 1);
                    waiting = true;
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(waiting, "the parked step reached the store");
        handler.cancel_run();
        assert!(handler.await.is_err());
        run_id
    };
    let store = SqliteStore::open(&path).unwrap();
    let handler = asker(&store).resume_run(&run_id).await.unwrap();
    handler.send_event(HumanResponseEvent::new("yes")).unwrap();
    assert_eq!(handler.await.unwrap(), "yes");
    let last = KvCheckpointer::new(store.kv())
        .load(&run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(last.result, Some("yes".into()));
}

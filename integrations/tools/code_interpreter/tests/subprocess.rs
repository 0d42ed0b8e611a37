//! The code interpreter against real subprocesses (`sh`, and `python3` when installed).
#![allow(clippy::unwrap_used)]

use ragloom_core::tools::ToolSpec;
use ragloom_tools_code_interpreter::CodeInterpreterToolSpec;
use serde_json::json;
use std::time::Duration;

fn sh() -> CodeInterpreterToolSpec {
    CodeInterpreterToolSpec::new().interpreter("sh", ["-c"])
}

#[tokio::test]
async fn runs_code_and_returns_both_streams() {
    let tools = sh().to_tool_list();
    assert_eq!(tools[0].name(), "code_interpreter");
    let out = tools[0]
        .call(json!({"code": "echo hello; echo oops >&2; exit 3"}))
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(out.content, "StdOut:\nhello\n\nStdErr:\noops\n");
}

#[tokio::test]
async fn python_when_available() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        if std::env::var_os("CI").is_some() {
            panic!("python3 is missing; the CI image should have it");
        }
        println!("skipped: python3 is not installed");
        return;
    }
    let spec = CodeInterpreterToolSpec::new();
    let text = spec
        .code_interpreter("print(sum(range(10)))")
        .await
        .unwrap();
    assert_eq!(text, "StdOut:\n45\n\nStdErr:\n");
}

#[tokio::test]
async fn a_run_past_the_timeout_is_killed_and_reported() {
    let tools = sh().timeout(Duration::from_millis(300)).to_tool_list();
    let started = std::time::Instant::now();
    let out = tools[0].call(json!({"code": "sleep 30"})).await.unwrap();
    assert!(out.is_error);
    assert!(out.content.contains("was stopped"), "{}", out.content);
    // Not a speed assertion: only that the 30 s sleep did not run to its end.
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn output_is_capped() {
    let spec = sh().max_output_bytes(100);
    let text = spec
        .code_interpreter("i=0; while [ $i -lt 2000 ]; do echo 0123456789; i=$((i+1)); done")
        .await
        .unwrap();
    assert!(
        text.contains("[output truncated: 21900 more bytes]"),
        "{text}"
    );
    assert!(text.len() < 300);
}

#[tokio::test]
async fn missing_interpreter_and_bad_arguments_are_error_outputs() {
    let tools = CodeInterpreterToolSpec::new()
        .interpreter("/nonexistent/interpreter", ["-c"])
        .to_tool_list();
    let out = tools[0].call(json!({"code": "1"})).await.unwrap();
    assert!(out.is_error);
    assert!(
        out.content.contains("/nonexistent/interpreter"),
        "{}",
        out.content
    );
    let out = sh().to_tool_list()[0]
        .call(json!({"script": "ls"}))
        .await
        .unwrap();
    assert!(out.is_error && out.content.contains("`code`"));
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let spec = sh().timeout(Duration::from_millis(500));
    // A grandchild that would outlive its parent, and write its pid first.
    let dir = tempfile_dir();
    let pidfile = dir.join("pid");
    let code = format!("sleep 60 & echo $! > {}; sleep 60", pidfile.display());
    let err = spec.code_interpreter(&code).await.unwrap_err();
    assert!(err.to_string().contains("was stopped"), "{err}");
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    // Killed: gone, or a zombie waiting for its reaper.
    std::thread::sleep(Duration::from_millis(200));
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        state.is_empty() || state.contains(") Z"),
        "the grandchild {pid} survived: {state}"
    );
}

#[tokio::test]
async fn a_background_child_does_not_hold_the_call_open() {
    let spec = sh().timeout(Duration::from_secs(20));
    let started = std::time::Instant::now();
    let text = spec
        .code_interpreter("(sleep 15; echo late) & echo done")
        .await
        .unwrap();
    assert_eq!(text, "StdOut:\ndone\n\nStdErr:\n");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn the_environment_is_minimal_unless_passed() {
    let spec = sh().env("GREETING", "hi");
    let text = spec.code_interpreter("env").await.unwrap();
    assert!(text.contains("GREETING=hi"), "{text}");
    assert!(text.contains("PATH="), "{text}");
    // Cargo sets CARGO_* in every test process: none may reach the code.
    assert!(!text.contains("CARGO"), "{text}");
}

#[tokio::test]
async fn resource_limits_apply() {
    let text = sh()
        .code_interpreter("ulimit -n; ulimit -t; ulimit -v")
        .await
        .unwrap();
    assert_eq!(text, format!("StdOut:\n64\n30\n{}\n\nStdErr:\n", 1 << 20));
    let spec = sh().limits(ragloom_tools_code_interpreter::Limits {
        cpu_seconds: Some(1),
        ..Default::default()
    });
    // A busy loop is stopped by its CPU limit, well before the 30 s timeout.
    let started = std::time::Instant::now();
    let out = spec.code_interpreter("while :; do :; done").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "{out}");
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ci-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

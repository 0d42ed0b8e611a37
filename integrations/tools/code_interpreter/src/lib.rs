//! `CodeInterpreterToolSpec`: a `code_interpreter` tool that runs code a model
//! wrote in a subprocess (Python by default) and returns its stdout and stderr.
//!
//! # ⚠️ Warning: this runs arbitrary code
//!
//! The code comes from a model, which may be steered by any text it has
//! read (documents, web pages, user input). It runs with the full rights of
//! your process's user: it can read and delete your files and use your
//! network. What is given here limits the damage of a runaway program, not of
//! a hostile one:
//!
//! - it runs in a process group of its own, killed whole (children and
//!   grandchildren) on timeout and when the run ends;
//! - it gets a minimal environment (your `PATH`, `LANG`), not yours: no API key
//!   reaches it unless passed with [`CodeInterpreterToolSpec::env`];
//! - CPU time, memory, open files and file size are capped (`ulimit`, set
//!   by `sh` before the interpreter starts), and so is the output kept.
//!
//! It does **not** isolate the file system, the network, other processes of
//! your user, or the machine: there is **no sandbox**. Only use it inside a
//! disposable container or VM, never on a machine holding anything you care
//! about. That is why the facade's `tools-code-interpreter` feature is not
//! part of `full`.

#![warn(missing_docs)]

use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, ToolSpec};
use serde_json::{Value, json};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

/// Default limit on one run's wall time.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default limit, in bytes, on what is kept of each of stdout and stderr.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 16 * 1024;

/// Resource limits of a run, applied with `ulimit` before the interpreter
/// starts; `None` leaves one as inherited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// CPU seconds (the process is killed by `SIGXCPU` past them). Default 30.
    pub cpu_seconds: Option<u64>,
    /// Address space, in bytes. Default 1 GiB.
    pub memory_bytes: Option<u64>,
    /// Open files. Default 64.
    pub open_files: Option<u64>,
    /// The largest file it may write, in bytes. Default 64 MiB.
    pub file_size_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            cpu_seconds: Some(30),
            memory_bytes: Some(1 << 30),
            open_files: Some(64),
            file_size_bytes: Some(64 << 20),
        }
    }
}

impl Limits {
    /// The `ulimit` commands (POSIX `sh`: `-v` and `-f` in KiB / 512-byte blocks).
    fn ulimit_script(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.cpu_seconds {
            parts.push(format!("ulimit -t {t}"));
        }
        if let Some(m) = self.memory_bytes {
            parts.push(format!("ulimit -v {}", (m / 1024).max(1)));
        }
        if let Some(n) = self.open_files {
            parts.push(format!("ulimit -n {n}"));
        }
        if let Some(f) = self.file_size_bytes {
            parts.push(format!("ulimit -f {}", (f / 512).max(1)));
        }
        parts.push("exec \"$0\" \"$@\"".into());
        parts.join(" && ")
    }
}

/// `PATH` when this process has none (else its own is passed: it names
/// where programs are, not secrets).
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The tool's description (LlamaIndex's docstring, in substance).
pub const CODE_INTERPRETER_DESCRIPTION: &str = "code_interpreter(code: str)\nA function to execute python code, and return the stdout and stderr.\n\nYou should import any libraries that you wish to use. You have access to any libraries the user has installed.\n\nThe code passed to this function is executed in isolation. It should be complete at the time it is passed to this function.\n\nYou should interpret the output and errors returned from this function, and attempt to fix any problems.\nIf you cannot fix the error, show the code to the user and ask for help\n\nIt is not possible to return graphics or other complicated data from this function. If the user cannot see the output, save it to a file and tell the user.";

/// Runs code in a subprocess: `python3 -c <code>` unless configured otherwise.
/// Read the crate documentation's warning before using it.
#[derive(Clone, Debug)]
pub struct CodeInterpreterToolSpec {
    program: String,
    args: Vec<String>,
    timeout: Duration,
    max_output_bytes: usize,
    description: String,
    limits: Limits,
    env: Vec<(String, String)>,
}

impl Default for CodeInterpreterToolSpec {
    fn default() -> Self {
        Self::new()
    }
}

impl CodeInterpreterToolSpec {
    /// Python 3 (`python3 -c`), a 30 s timeout, 16 KiB of each output stream.
    pub fn new() -> Self {
        Self {
            program: "python3".into(),
            args: vec!["-c".into()],
            timeout: DEFAULT_TIMEOUT,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            description: CODE_INTERPRETER_DESCRIPTION.into(),
            limits: Limits::default(),
            env: Vec::new(),
        }
    }

    /// The resource limits of each run (see [`Limits`] for the defaults).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Passes `name=value` to the code (it gets only `PATH`, `LANG` and what
    /// is passed this way). `PATH` given here replaces the default.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Another interpreter: `program args... <code>` (e.g. `("sh", ["-c"])`).
    /// Change the description too, so the model writes the right language.
    pub fn interpreter(
        mut self,
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.program = program.into();
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// The longest one run may take; then it is killed and the model told so.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many bytes of stdout, and of stderr, are kept (the rest is read and dropped).
    pub fn max_output_bytes(mut self, max: usize) -> Self {
        self.max_output_bytes = max;
        self
    }

    /// Replaces the tool description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Runs `code` and returns `StdOut:\n{stdout}\nStdErr:\n{stderr}` as
    /// LlamaIndex does. A run past the timeout is killed and is an error.
    pub async fn code_interpreter(&self, code: &str) -> Result<String> {
        // Found here, so a missing interpreter is an error, not a shell message.
        let program = find_program(&self.program).ok_or_else(|| {
            Error::provider(
                "code_interpreter",
                format!("could not start `{}`", self.program),
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such program"),
            )
        })?;
        // `sh` sets the limits, then `exec`s the interpreter in its place.
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(self.limits.ulimit_script())
            .arg(&program)
            .args(&self.args)
            .arg(code)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into()),
            )
            .env("LANG", "C.UTF-8")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            Error::provider(
                "code_interpreter",
                format!("could not start `{}`", self.program),
                e,
            )
        })?;
        let group = child.id();
        let max = self.max_output_bytes;
        // Read while it runs, so a full pipe never blocks it.
        let out = tokio::spawn(read_capped(child.stdout.take(), max));
        let err = tokio::spawn(read_capped(child.stderr.take(), max));
        let status = tokio::time::timeout(self.timeout, child.wait()).await;
        // Whatever happened, nothing it started outlives the call (and the
        // pipes close, so the reads end).
        kill_group(group);
        let _ = child.start_kill();
        let joined = |r: std::result::Result<String, tokio::task::JoinError>| r.unwrap_or_default();
        match status {
            Ok(status) => {
                status.map_err(|e| {
                    Error::provider("code_interpreter", "waiting for the process failed", e)
                })?;
                let (out, err) = (joined(out.await), joined(err.await));
                Ok(format!("StdOut:\n{out}\nStdErr:\n{err}"))
            }
            Err(_) => Err(Error::InvalidInput(format!(
                "the code ran longer than {} s and was stopped",
                self.timeout.as_secs_f64()
            ))),
        }
    }
}

/// `program` as a path to an executable file: as given when it names a path,
/// else the first match on `PATH`.
fn find_program(program: &str) -> Option<std::path::PathBuf> {
    let is_file = |p: &std::path::Path| p.is_file();
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return is_file(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_file(p))
}

/// Kills the process group led by `leader` (a no-op once it is gone).
fn kill_group(leader: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = leader
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = leader;
}

/// Reads a whole stream, keeping its first `max` bytes and noting how much was dropped.
async fn read_capped<R: AsyncRead + Unpin>(stream: Option<R>, max: usize) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut dropped = 0usize;
    let mut buf = [0u8; 8192];
    // Draining (not closing) keeps a chatty program from dying of SIGPIPE mid-run.
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = max.saturating_sub(kept.len());
                let take = room.min(n);
                kept.extend_from_slice(&buf[..take]);
                dropped += n - take;
            }
        }
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        text.push_str(&format!("\n...[output truncated: {dropped} more bytes]"));
    }
    text
}

#[derive(Debug)]
struct CodeInterpreterTool {
    spec: CodeInterpreterToolSpec,
    metadata: ToolMetadata,
}

#[async_trait]
impl Tool for CodeInterpreterTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let name = self.metadata.name.clone();
        let code = match &input {
            Value::String(s) => s.clone(),
            Value::Object(map) => match map.get("code") {
                Some(Value::String(s)) => s.clone(),
                _ => {
                    return Ok(ToolOutput::error(
                        name,
                        input,
                        "missing required field `code` (the program to run, as a string)",
                    ));
                }
            },
            other => {
                return Ok(ToolOutput::error(
                    name,
                    input.clone(),
                    format!("expected {{\"code\": \"...\"}}, got {other}"),
                ));
            }
        };
        Ok(match self.spec.code_interpreter(&code).await {
            Ok(text) => ToolOutput::new(name, text.clone(), input, Value::String(text)),
            Err(e) => ToolOutput::error(name, input, e),
        })
    }
}

impl ToolSpec for CodeInterpreterToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        vec!["code_interpreter".into()]
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(CodeInterpreterTool {
            spec: self.clone(),
            metadata: ToolMetadata::new("code_interpreter", self.description.clone())
                .with_fn_schema(json!({
                    "type": "object",
                    "properties": {"code": {"type": "string"}},
                    "required": ["code"],
                })),
        })]
    }
}

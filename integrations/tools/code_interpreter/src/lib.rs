//! `CodeInterpreterToolSpec`: a `code_interpreter` tool that runs code a model
//! wrote in a subprocess (Python by default) and returns its stdout and stderr.
//!
//! # ⚠️ Warning: this runs arbitrary code
//!
//! The code comes from a model, which may be steered by any text it has
//! read (documents, web pages, user input). It runs with the full rights of
//! your process's user: it can read and delete your files, use your network
//! and credentials. A timeout and an output limit are all the protection
//! given here; there is **no sandbox**. Only use it inside a disposable
//! container or VM, never on a machine holding anything you care about.
//! That is why the facade's `tools-code-interpreter` feature is not part of `full`.

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
        }
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
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .arg(code)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Error::provider(
                    "code_interpreter",
                    format!("could not start `{}`", self.program),
                    e,
                )
            })?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let max = self.max_output_bytes;
        let run = async {
            let (out, err, status) = tokio::join!(
                read_capped(stdout, max),
                read_capped(stderr, max),
                child.wait()
            );
            (out, err, status)
        };
        let outcome = tokio::time::timeout(self.timeout, run).await;
        match outcome {
            Ok((out, err, status)) => {
                status.map_err(|e| {
                    Error::provider("code_interpreter", "waiting for the process failed", e)
                })?;
                Ok(format!("StdOut:\n{out}\nStdErr:\n{err}"))
            }
            Err(_) => {
                // `kill_on_drop` would also do it; killing now frees the pipes at once.
                let _ = child.start_kill();
                Err(Error::InvalidInput(format!(
                    "the code ran longer than {} s and was stopped",
                    self.timeout.as_secs_f64()
                )))
            }
        }
    }
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

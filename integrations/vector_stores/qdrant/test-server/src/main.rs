//! `ragloom-qdrant-test-server`: the test server as a process, for tests that
//! spawn one; it prints `listening <url>` and lives until its stdin closes.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: ragloom-qdrant-test-server [--port P] [--dir DIR]

A Qdrant gRPC server on 127.0.0.1 backed by Qdrant's engine, for tests.
Prints one line, `listening http://127.0.0.1:PORT`, once it accepts
connections; exits when its standard input reaches end-of-file (so it dies
with the process that spawned it), on SIGTERM, or on ctrl-c.

  --port P    port to listen on (default 0: any free port)
  --dir DIR   keep collections in DIR and serve those already there
              (default: a temporary folder, removed on exit)";

struct Options {
    port: u16,
    dir: Option<PathBuf>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options { port: 0, dir: None };
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(None),
            "--port" => {
                let v = value()?;
                options.port = v.parse().map_err(|_| format!("bad port `{v}`"))?;
            }
            "--dir" => options.dir = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Some(options))
}

/// Resolves when stdin reaches end-of-file (or fails): the parent is gone.
async fn stdin_closed() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    // A plain thread: reading stdin blocks, and it must not hold the runtime.
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    let _ = rx.await;
}

#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn terminated() {
    std::future::pending::<()>().await
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("ragloom-qdrant-test-server: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server =
        match ragloom_qdrant_test_server::start_with(options.port, options.dir.as_deref()).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("ragloom-qdrant-test-server: {e}");
                return ExitCode::FAILURE;
            }
        };
    {
        // The spawning test waits for this line; nothing else goes to stdout.
        let mut out = std::io::stdout().lock();
        if writeln!(out, "listening {}", server.url)
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    tokio::select! {
        () = stdin_closed() => {}
        () = terminated() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    drop(server);
    ExitCode::SUCCESS
}

//! `cargo xtask fuzz`: each libFuzzer target of `fuzz/` on nightly, for a
//! number of runs or a time, with the crash rules of docs/reliability.md.

use crate::Result;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What one target did.
struct Outcome {
    target: String,
    runs: u64,
    seconds: f64,
    crashed: bool,
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result {
    let mut runs: u64 = 1_000_000;
    let mut seconds: u64 = 900;
    let mut chosen = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = number(it.next(), "--runs")?,
            "--time" => seconds = number(it.next(), "--time")?,
            other => chosen.push(other.to_owned()),
        }
    }
    let all = targets(root)?;
    for t in &chosen {
        if !all.contains(t) {
            return Err(format!(
                "no fuzz target `{t}` (targets: {})",
                all.join(", ")
            ));
        }
    }
    let targets = if chosen.is_empty() { all } else { chosen };
    let path = tools_path(root)?;
    let target_dir = cache(root).join("fuzz-target");
    let mut outcomes = Vec::new();
    for target in &targets {
        eprintln!("==> fuzzing {target}: {runs} runs or {seconds} s");
        let started = Instant::now();
        // rustup's `cargo` with `+nightly` (libFuzzer's instrumentation
        // needs nightly), finding cargo-fuzz on the PATH.
        let output = Command::new("cargo")
            .current_dir(root)
            .env("PATH", &path)
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("RUSTC")
            .env("CARGO_TARGET_DIR", &target_dir)
            .args([
                "+nightly",
                "fuzz",
                "run",
                "--sanitizer",
                "none",
                "--release",
            ])
            .arg(target)
            .arg("--")
            .arg(format!("-runs={runs}"))
            .arg(format!("-max_total_time={seconds}"))
            .args(["-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1"])
            .output()
            .map_err(|e| format!("could not start cargo fuzz: {e}"))?;
        let log = String::from_utf8_lossy(&output.stderr);
        let executed = log
            .lines()
            .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        let crashed = !output.status.success();
        if crashed {
            eprintln!("{log}");
        }
        outcomes.push(Outcome {
            target: target.clone(),
            runs: executed,
            seconds: started.elapsed().as_secs_f64(),
            crashed,
        });
    }
    println!("| target | executions | seconds | result |\n|---|---:|---:|---|");
    for o in &outcomes {
        let result = if o.crashed {
            format!("crash: see fuzz/artifacts/{}/", o.target)
        } else {
            "clean".to_owned()
        };
        println!(
            "| {} | {} | {:.0} | {result} |",
            o.target, o.runs, o.seconds
        );
    }
    let crashed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.crashed)
        .map(|o| o.target.as_str())
        .collect();
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "crashes in {}: copy each artifact to fuzz/regressions/<target>/ once fixed",
            crashed.join(", ")
        ))
    }
}

fn number(value: Option<&String>, flag: &str) -> Result<u64> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{flag} needs a number"))
}

/// The targets, by their files in `fuzz/fuzz_targets`.
fn targets(root: &Path) -> Result<Vec<String>> {
    let dir = root.join("fuzz/fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// A cache outside the clone: the parent of `CARGO_TARGET_DIR`, else `target/`.
fn cache(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .and_then(|t| t.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| root.join("target"))
}

/// The PATH with the tools cache first, cargo-fuzz installed there if no
/// `cargo-fuzz` is found.
fn tools_path(root: &Path) -> Result<std::ffi::OsString> {
    let tools = cache(root).join("tools");
    let mut dirs = vec![tools.join("bin")];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(&dirs).map_err(|e| e.to_string())?;
    let found = Command::new("cargo-fuzz")
        .env("PATH", &path)
        .arg("--version")
        .output();
    if !found.is_ok_and(|o| o.status.success()) {
        eprintln!("==> installing cargo-fuzz into {}", tools.display());
        let status = Command::new("cargo")
            .args([
                "install",
                "--locked",
                "cargo-fuzz",
                "--version",
                "0.13.2",
                "--root",
            ])
            .arg(&tools)
            .status()
            .map_err(|e| format!("could not start cargo install: {e}"))?;
        if !status.success() {
            return Err("installing cargo-fuzz failed".into());
        }
    }
    Ok(path)
}

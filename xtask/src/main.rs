//! Workspace automation as code: `cargo xtask ci` runs every check CI runs,
//! `cargo xtask bench` runs the criterion benchmarks, `cargo xtask layers` checks
//! that ragloom-core's modules import only downward, `cargo xtask fuzz` runs the fuzzers.

mod fuzz;
mod layers;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The Python reference used by the interoperability tests.
const LLAMA_INDEX_CORE: &str = "llama-index-core==0.14.25";
/// LlamaIndex's BM25 retriever (bm25s 0.3), for the BM25 folder interop test.
const LLAMA_INDEX_BM25: &str = "llama-index-retrievers-bm25==0.8.0";
/// LlamaIndex's PostgreSQL stores, for the tests that open ragloom's tables from Python.
const LLAMA_INDEX_PG: [&str; 4] = [
    "llama-index-vector-stores-postgres==0.9.0",
    "llama-index-storage-docstore-postgres==0.6.0",
    "llama-index-storage-index-store-postgres==0.7.0",
    "llama-index-storage-kvstore-postgres==0.4.3",
];

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench(&args[1..]),
        Some("layers") => layers::run(&root()),
        Some("fuzz") => fuzz::run(&root(), &args[1..]),
        Some("pyref") => python_reference().map(|p| println!("{}", p.display())),
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\n  ci      fmt check, clippy -D warnings, tests, docs -D warnings, cargo-deny licenses/bans/sources\n          (if installed; required under CI; advisories with RAGLOOM_DENY_ADVISORIES=1)\n  bench   criterion benchmarks (extra args go to criterion), then the command line's\n          store against Python LlamaIndex (--store: that alone; --large: also the 20x corpus),\n          then `ragloom serve` under 200 clients (--serve: that alone),
          then the embedded vector index against Chroma and LanceDB (--vectors: that alone;
          --large: a million vectors),\n          then hit rate and MRR per retrieval mode on the labelled set (--eval: that alone),\n          then local models against sentence-transformers and llama.cpp (--models: that alone)\n  layers  check that ragloom-core's modules import only from their own layer or below
  fuzz    run the libFuzzer targets of fuzz/ on nightly ([TARGET...] [--runs N] [--time SECS];
          default: every target, 1,000,000 runs or 900 s each), then print executions and time\n  pyref   set up the Python LlamaIndex reference venv and print its python"
            );
            Err("unknown command".into())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, String>;

fn root() -> PathBuf {
    // `cargo run` names the manifest at run time; the compile-time path can
    // be another clone's when clones share one target directory.
    let manifest = env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn cargo() -> Command {
    let mut c = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(step: &str, mut cmd: Command) -> Result {
    eprintln!("==> {step}");
    let status = cmd
        .status()
        .map_err(|e| format!("{step}: could not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}

fn ci() -> Result {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]);
    run("cargo clippy -D warnings", clippy)?;

    layers::run(&root())?;
    core_depends_on_no_integration()?;
    each_feature_compiles_alone()?;

    let python = match python_reference() {
        Ok(py) => Some(py),
        Err(e) if env::var_os("CI").is_some() => return Err(format!("Python reference: {e}")),
        Err(e) => {
            eprintln!("warning: no Python reference ({e}); interop tests that need it will skip");
            None
        }
    };
    // Unit, integration and binary tests, then doctests. Examples are not
    // linked here (clippy --all-targets has compiled them): with every
    // feature on, each example binary links every SDK and Qdrant's engine,
    // tens of gigabytes of binaries for nothing the tests would run.
    for (step, targets) in [
        (
            "cargo test --workspace",
            &["--lib", "--bins", "--tests"][..],
        ),
        ("cargo test --workspace --doc", &["--doc"][..]),
    ] {
        let mut test = cargo();
        test.args(["test", "--workspace", "--all-features"])
            .args(targets);
        if let Some(py) = &python {
            test.env("RAGLOOM_PYTHON", py);
        }
        run(step, test)?;
    }

    durable_example_twice()?;

    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps", "--all-features"])
        .env("RUSTDOCFLAGS", "-D warnings");
    run("cargo doc -D warnings", doc)?;

    let have_deny = Command::new("cargo")
        .args(["deny", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if have_deny {
        // Licences, bans and sources need nothing but the lock file. The
        // advisories need their database from the network: only where asked.
        let mut deny = cargo();
        deny.args(["deny", "check", "licenses", "bans", "sources"]);
        run("cargo deny check licenses bans sources", deny)?;
        if env::var_os("RAGLOOM_DENY_ADVISORIES").is_some() {
            let mut advisories = cargo();
            advisories.args(["deny", "check", "advisories"]);
            run("cargo deny check advisories", advisories)?;
        }
    } else if env::var_os("CI").is_some() {
        return Err("cargo-deny is not installed; .ci/run installs it".into());
    } else {
        eprintln!("==> cargo deny: not installed, skipped (cargo install --locked cargo-deny)");
    }
    eprintln!("==> ci: all checks passed");
    Ok(())
}

/// `examples/durable_index.rs` from a fresh folder, twice: the first run
/// syncs every file, the second reads none (what the example promises).
fn durable_example_twice() -> Result {
    let root = env::temp_dir().join("ragloom-durable-example");
    let _ = std::fs::remove_dir_all(&root);
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let step = "cargo run --example durable_index";
        eprintln!("==> {step}");
        let out = cargo()
            .args([
                "run",
                "-q",
                "-p",
                "ragloom-examples",
                "--features",
                "sqlite",
            ])
            .args(["--example", "durable_index"])
            .output()
            .map_err(|e| format!("{step}: could not start: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        eprint!("{text}");
        if !out.status.success() {
            return Err(format!(
                "{step} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        outputs.push(text);
    }
    let first_read = !outputs[0].contains(": 0 documents new or changed");
    let second_read_none = outputs[1].contains(": 0 documents new or changed");
    if first_read && second_read_none {
        Ok(())
    } else {
        Err(format!(
            "the durable-index example should sync once, then read nothing: {outputs:?}"
        ))
    }
}

/// ragloom-core must stay free of provider crates (a third party builds an
/// integration on core alone), each library crate uses only the ones below
/// it, and an embedding crate shares its provider's code through `common`.
fn core_depends_on_no_integration() -> Result {
    // The library's layers as crates, each with the ragloom crates it may
    // use: the compiler keeps a crate above those, this keeps it off the rest.
    for (krate, allowed) in [
        ("ragloom-core", &[][..]),
        ("ragloom-evaluation", &["ragloom-core"][..]),
        ("ragloom-workflow", &["ragloom-core"][..]),
        ("ragloom-agent", &["ragloom-core", "ragloom-workflow"][..]),
        (
            "ragloom-sql",
            &["ragloom-core", "ragloom-common-postgres"][..],
        ),
        // A provider's crates share code through `integrations/common`, not each other.
        (
            "ragloom-embeddings-ollama",
            &["ragloom-core", "ragloom-common-ollama"][..],
        ),
        (
            "ragloom-embeddings-openai",
            &["ragloom-core", "ragloom-common-openai"][..],
        ),
    ] {
        eprintln!("==> {krate} depends on no integration");
        let out = cargo()
            .args([
                "tree", "-p", krate, "--edges", "normal", "--prefix", "none", "--format", "{p}",
            ])
            .output()
            .map_err(|e| format!("cargo tree: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo tree failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let offenders: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|name| name.starts_with("ragloom") && *name != krate && !allowed.contains(name))
            .map(str::to_string)
            .collect();
        if !offenders.is_empty() {
            return Err(format!("{krate} depends on {}", offenders.join(", ")));
        }
    }
    Ok(())
}

/// The facade's features, read from its manifest (`[features]` table).
fn facade_features() -> Result<Vec<String>> {
    let manifest = root().join("crates/ragloom/Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let mut in_features = false;
    let mut features = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if in_features
            && !line.starts_with('#')
            && let Some((name, _)) = line.split_once('=')
        {
            let name = name.trim();
            if !name.is_empty() && name != "default" {
                features.push(name.to_string());
            }
        }
    }
    Ok(features)
}

/// Each facade feature builds on its own, so no feature leans on another by accident.
fn each_feature_compiles_alone() -> Result {
    for feature in facade_features()? {
        let mut check = cargo();
        check.args([
            "check",
            "-p",
            "ragloom",
            "--no-default-features",
            "--features",
            &feature,
        ]);
        run(
            &format!("cargo check -p ragloom --features {feature}"),
            check,
        )?;
    }
    Ok(())
}

fn bench(extra: &[String]) -> Result {
    // `--store` runs only the command line's store bench, `--serve` only the
    // server's load bench; `--large` adds the store's 20x corpus. Everything
    // else goes to criterion.
    let flag = |f: &str| extra.iter().any(|a| a == f);
    let (store_only, serve_only, large) = (flag("--store"), flag("--serve"), flag("--large"));
    let eval_only = flag("--eval");
    if flag("--vectors") {
        return vectors_bench(large);
    }
    let criterion: Vec<&String> = extra
        .iter()
        .filter(|a| {
            !matches!(
                a.as_str(),
                "--store" | "--serve" | "--large" | "--eval" | "--models" | "--vectors"
            )
        })
        .collect();
    if eval_only {
        return eval_bench();
    }
    if flag("--models") {
        return models_bench();
    }
    if !store_only && !serve_only {
        let mut b = cargo();
        // Each crate with criterion benches is listed here.
        b.args([
            "bench",
            "-p",
            "ragloom-core",
            "-p",
            "ragloom-embeddings-huggingface",
            "--",
        ])
        .args(criterion);
        run("cargo bench", b)?;
    }
    if !serve_only {
        store_bench(large)?;
    }
    if !store_only {
        serve_bench()?;
    }
    if !store_only && !serve_only {
        vectors_bench(large)?;
        eval_bench()?;
        models_bench()?;
    }
    Ok(())
}

/// The embedded store's vector index against Chroma and LanceDB on the same
/// vectors (`RAGLOOM_BENCH_CHROMA_PYTHON`, `RAGLOOM_BENCH_LANCEDB_PYTHON`:
/// Pythons with chromadb and lancedb; a missing one is skipped).
fn vectors_bench(large: bool) -> Result {
    release_build(&[
        "-p",
        "ragloom-storage-sqlite",
        "--example",
        "vector_index_bench",
    ])?;
    let mut b = Command::new("python3");
    b.arg(root().join("integrations/storage/sqlite/benches/vector_bench.py"))
        .arg("--bench")
        .arg(
            target_dir()
                .join("release")
                .join("examples")
                .join("vector_index_bench"),
        );
    if large {
        b.arg("--large");
    }
    for (flag, var) in [
        ("--chroma", "RAGLOOM_BENCH_CHROMA_PYTHON"),
        ("--lancedb", "RAGLOOM_BENCH_LANCEDB_PYTHON"),
    ] {
        if let Some(py) = env::var_os(var).filter(|v| !v.is_empty()) {
            b.arg(flag).arg(py);
        }
    }
    run("vector_bench.py", b)
}

/// Local models against their references, in turn on the same CPU: the
/// embeddings against sentence-transformers (a Python with it installed in
/// `RAGLOOM_BENCH_ST_PYTHON`, the model in `RAGLOOM_TEST_MINILM_DIR`), and
/// generation on both engines against llama.cpp's server (the venv
/// `.ci/setup/llm-server.sh` makes, the file in `RAGLOOM_TEST_GGUF`). A
/// missing piece skips its half with a message.
fn models_bench() -> Result {
    let var = |name: &str| env::var_os(name).filter(|v| !v.is_empty());
    let sources = root().join("../shared/corpus/sources");
    match (
        var("RAGLOOM_BENCH_ST_PYTHON"),
        var("RAGLOOM_TEST_MINILM_DIR"),
    ) {
        (Some(python), Some(model)) => {
            build_example("ragloom-embeddings-huggingface", "embed_timing", &[])?;
            let mut b = Command::new("python3");
            b.arg(root().join("integrations/embeddings/huggingface/benches/embed_vs_st.py"))
                .arg("--example")
                .arg(target_dir().join("release/examples/embed_timing"))
                .arg("--python")
                .arg(python)
                .arg("--model")
                .arg(model)
                .arg("--passages-from")
                .arg(sources.join("alice29.txt"));
            run("embed_vs_st.py", b)?;
        }
        _ => eprintln!(
            "models bench: set RAGLOOM_BENCH_ST_PYTHON (a Python with sentence-transformers) and RAGLOOM_TEST_MINILM_DIR to compare embeddings"
        ),
    }
    let server_python = dirs_home().join(".cache/ragloom/llm-venv/bin/python");
    match var("RAGLOOM_TEST_GGUF") {
        Some(gguf) if server_python.exists() => {
            build_example(
                "ragloom-llms-candle",
                "gen_timing",
                &["--features", "llama-cpp"],
            )?;
            let mut b = Command::new("python3");
            b.arg(root().join("integrations/llms/candle/benches/gen_vs_llamacpp.py"))
                .arg("--example")
                .arg(target_dir().join("release/examples/gen_timing"))
                .arg("--python")
                .arg(server_python)
                .arg("--gguf")
                .arg(gguf)
                .arg("--text")
                .arg(sources.join("alice29.txt"))
                .args(["--rounds", "3"]);
            run("gen_vs_llamacpp.py", b)
        }
        _ => {
            eprintln!(
                "models bench: source .ci/setup/gguf.sh and .ci/setup/llm-server.sh to compare generation with llama.cpp"
            );
            Ok(())
        }
    }
}

/// Builds `example` of `package` in release, with extra cargo arguments.
fn build_example(package: &str, example: &str, extra: &[&str]) -> Result {
    let mut build = cargo();
    build
        .args(["build", "--release", "-p", package, "--example", example])
        .args(extra);
    run(&format!("cargo build --example {example}"), build)
}

/// `cargo build --release` with `args`, the whole command line as the step's name.
fn release_build(args: &[&str]) -> Result {
    let mut build = cargo();
    build.args(["build", "--release"]).args(args);
    run(&format!("cargo build --release {}", args.join(" ")), build)
}

/// The home folder (where `.ci/setup` keeps its venvs).
fn dirs_home() -> PathBuf {
    env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from)
}

/// Hit rate and MRR of each retrieval mode on the shipped labelled set, next
/// to their latency: keyword retrieval, and with all-MiniLM-L6-v2 (the
/// folder `.ci/setup/minilm.sh` unpacks, `RAGLOOM_TEST_MINILM_DIR`) vector
/// and hybrid retrieval with cl100k and with fitted chunks.
fn eval_bench() -> Result {
    release_build(&[
        "-p",
        "ragloom-cli",
        "--features",
        "local-models",
        "--bin",
        "ragloom",
    ])?;
    let mut b = Command::new("python3");
    b.arg(root().join("crates/ragloom-cli/benches/eval_bench.py"))
        .arg("--ragloom")
        .arg(target_dir().join("release").join("ragloom"))
        .arg("--sources")
        .arg(root().join("../shared/corpus/sources"))
        .arg("--dataset")
        .arg(root().join("datasets/canterbury_qa/canterbury_qa.jsonl"))
        .arg("--work")
        .arg(bench_work().join("eval"));
    match env::var_os("RAGLOOM_TEST_MINILM_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => {
            b.arg("--minilm").arg(dir);
        }
        None => eprintln!(
            "eval bench: RAGLOOM_TEST_MINILM_DIR is unset (source .ci/setup/minilm.sh): keyword retrieval only"
        ),
    }
    run("eval_bench.py", b)
}

/// The folder the benches keep their corpus and stores in (reused between runs).
fn bench_work() -> PathBuf {
    env::temp_dir().join("ragloom-store-bench")
}

/// The server's memory under hostile clients, then `ragloom serve` under 200
/// clients over the benchmark corpus (the store bench's, generated here when
/// that bench has not run).
fn serve_bench() -> Result {
    // The server under hostile clients (sessions, slow headers, uploads).
    let mut hostile = cargo();
    hostile.args(["bench", "-p", "ragloom-server", "--bench", "hostile"]);
    run("hostile", hostile)?;
    release_build(&["-p", "ragloom-cli", "--features", "local-models"])?;
    let corpus = bench_work().join("corpus-2000f-50mb-s42");
    if !bench_work()
        .join("corpus-2000f-50mb-s42.manifest.json")
        .exists()
    {
        let mut make = Command::new("python3");
        make.arg(root().join("../shared/corpus/make_corpus.py"))
            .arg("--out")
            .arg(&corpus)
            .args(["--files", "2000", "--mb", "50", "--seed", "42"]);
        run("make_corpus.py", make)?;
    }
    let python = python_reference()?;
    serve_reference_packages(&python)?;
    let mut b = cargo();
    b.args(["bench", "-p", "ragloom-cli", "--bench", "serve_load", "--"])
        .arg("--ragloom")
        .arg(target_dir().join("release").join("ragloom"))
        .arg("--corpus")
        .arg(&corpus)
        .arg("--work")
        .arg(bench_work())
        .arg("--python")
        .arg(&python);
    run("serve_load", b)?;
    // `/v1/retrieve` under wrk, a load generator in a process of its own.
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!(
            "serve bench: wrk is not installed (apt-get install wrk): the wrk comparison is skipped"
        );
        return Ok(());
    }
    let mut w = Command::new("python3");
    w.arg(root().join("crates/ragloom-cli/benches/serve_wrk.py"))
        .arg("--ragloom")
        .arg(target_dir().join("release").join("ragloom"))
        .arg("--python")
        .arg(&python)
        .arg("--corpus")
        .arg(&corpus)
        .arg("--work")
        .arg(bench_work());
    run("serve_wrk.py", w)
}

/// What the Python side of the serve bench adds to the reference: the web
/// framework a LlamaIndex service is written with, and the OpenAI-like LLM client.
const SERVE_REFERENCE: &[&str] = &[
    "fastapi==0.165.0",
    "uvicorn==0.54.0",
    "llama-index-llms-openai-like==0.8.1",
];

fn serve_reference_packages(python: &Path) -> Result {
    let have = Command::new(python)
        .args([
            "-c",
            "import fastapi, uvicorn, llama_index.llms.openai_like",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if have {
        return Ok(());
    }
    let mut pip = Command::new(python);
    // The core stays pinned: the new packages must not move it.
    pip.args(["-m", "pip", "install", "-q", LLAMA_INDEX_CORE])
        .args(SERVE_REFERENCE);
    run("pip install the serve bench's Python packages", pip)
}

fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// The command line's store against Python LlamaIndex on the benchmark
/// corpus: whole processes, timed and measured by a script in the repository.
fn store_bench(large: bool) -> Result {
    release_build(&[
        "-p",
        "ragloom-cli",
        "--features",
        "local-models,qdrant",
        "--bin",
        "ragloom",
        "--example",
        "ingest_floors",
        "-p",
        "ragloom-qdrant-test-server",
    ])?;
    let target = target_dir();
    let python = python_reference()?;
    let mut b = Command::new("python3");
    b.arg(root().join("crates/ragloom-cli/benches/store_bench.py"))
        .arg("--ragloom")
        .arg(target.join("release").join("ragloom"))
        .arg("--python")
        .arg(python);
    if large {
        b.arg("--large");
    }
    // The PostgreSQL rows run where a server is given (`.ci/setup/postgres.sh` exports one).
    if let Some(url) = env::var("RAGLOOM_BENCH_PG_URL")
        .ok()
        .or_else(|| env::var("RAGLOOM_TEST_PG_URL").ok())
        .filter(|u| !u.is_empty())
    {
        b.arg("--postgres").arg(url);
    }
    // The Qdrant rows: Qdrant's engine behind the test server's gRPC API.
    b.arg("--qdrant-server")
        .arg(target.join("release").join("ragloom-qdrant-test-server"))
        .arg("--floors-bin")
        .arg(
            target
                .join("release")
                .join("examples")
                .join("ingest_floors"),
        );
    run("store_bench.py", b)
}

/// A virtualenv with Python LlamaIndex, made once under the target directory's
/// parent (a cache outside the clone), or the interpreter named by `RAGLOOM_PYTHON`.
fn python_reference() -> Result<PathBuf> {
    if let Some(py) = env::var_os("RAGLOOM_PYTHON") {
        return Ok(PathBuf::from(py));
    }
    let cache = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .and_then(|t| t.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| root().join("target"));
    let venv = cache.join("pyref-llama-index-core-0.14.25");
    let py = venv.join("bin").join("python");
    let check = Command::new(&py)
        .args([
            "-c",
            "import llama_index.core, llama_index.retrievers.bm25, \
             llama_index.vector_stores.postgres, llama_index.storage.docstore.postgres",
        ])
        .output();
    if check.is_ok_and(|o| o.status.success()) {
        return Ok(py);
    }
    eprintln!(
        "==> setting up the Python reference ({LLAMA_INDEX_CORE}) in {}",
        venv.display()
    );
    if !py.exists() {
        let mut mk = Command::new("python3");
        mk.args(["-m", "venv"]).arg(&venv);
        run("python3 -m venv", mk)?;
    }
    let mut pip = Command::new(venv.join("bin").join("pip"));
    pip.args(["install", "-q", LLAMA_INDEX_CORE, LLAMA_INDEX_BM25])
        .args(LLAMA_INDEX_PG);
    run(
        "pip install llama-index-core llama-index-retrievers-bm25 (and the PostgreSQL stores)",
        pip,
    )?;
    Ok(py)
}

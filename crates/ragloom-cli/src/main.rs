//! The `ragloom` command: RAG over a folder in one command — ingest it
//! incrementally, then answer questions or chat, offline by default.

mod alloc;
mod answer;
mod args;
mod chat;
mod config;
mod error;
mod eval;
mod export;
mod import;
mod ingest;
mod out;
mod serve;
mod status;
mod store;
mod ui;

use args::{Cli, Command, FolderArg};
use clap::Parser;
use error::{CliError, exit};
use ragloom::ProviderSpec;
use ragloom::durable::{DurableIndex, FusionChoice, IndexLocation, Source, StoreUrl, SyncReport};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use ui::Ui;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Before the runtime starts any thread; not for a chat, which stays.
    let exits_after_work = match &cli.command {
        Command::Ingest(_) => true,
        Command::Rag(a) => !a.chat,
        _ => false,
    };
    if exits_after_work {
        alloc::keep_freed_memory();
    }
    if let Command::Serve(a) = &cli.command {
        if let Err(e) = serve_logs(&a.log_format, cli.global.verbose) {
            eprintln!("{e}");
            return ExitCode::from(exit::USAGE as u8);
        }
    } else if cli.global.verbose {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(tracing::Level::INFO)
            .with_target(false)
            .init();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILURE as u8);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.code != exit::CLOSED_PIPE {
                eprintln!("{e}");
            }
            ExitCode::from(u8::try_from(e.code).unwrap_or(1))
        }
    }
}

/// What every command works with: the persist root, providers, the store.
struct Ctx {
    root: PathBuf,
    spec: ProviderSpec,
    fusion: FusionChoice,
    location: Arc<dyn IndexLocation>,
    top_k: usize,
    ui: Ui,
}

impl Ctx {
    fn index_of(&self, source: &Source) -> DurableIndex {
        DurableIndex::new(self.location.clone(), &self.root, source.clone())
    }

    /// The source named by `--files` (default: the last one used) and its index.
    fn index(&self, files: Option<&str>) -> Result<(Source, DurableIndex), CliError> {
        let source = source_of(&self.root, files)?;
        let index = self.index_of(&source);
        Ok((source, index))
    }

    /// What answering and evaluation retrieve with.
    fn retrieval(&self) -> answer::Retrieval<'_> {
        answer::Retrieval {
            spec: &self.spec,
            fusion: self.fusion,
            top_k: self.top_k,
        }
    }

    async fn engine(&self, files: Option<&str>) -> Result<answer::Engine, CliError> {
        let (source, index) = self.index(files)?;
        answer::Engine::open(source, &index, &self.retrieval(), &self.ui).await
    }
}

async fn run(cli: Cli) -> Result<(), CliError> {
    let g = &cli.global;
    let ui = Ui {
        json: g.json,
        verbose: g.verbose,
    };
    let root = store::persist_root(g.persist_dir.as_deref())?;
    let (spec, fusion, store_url) = providers(g)?;
    let location = store_url.connect()?;
    ui.detail(&format!(
        "persist root: {}; store: {}; llm: {}; embedding: {}",
        root.display(),
        location.label(),
        spec.llm.label(),
        spec.embed.label()
    ));
    let cx = Ctx {
        root,
        spec,
        fusion,
        location,
        top_k: g.top_k,
        ui,
    };
    let ui = &cx.ui;
    match &cli.command {
        Command::Rag(a) => rag(&cx, a).await,
        Command::Ingest(a) => {
            let source = store::resolve_source(&a.files)?;
            let index = cx.index_of(&source);
            let summary = run_ingest(&index, &cx.spec, &a.ingest.options(), ui).await?;
            store::remember_last(&cx.root, &source)?;
            report_ingest(&source, &summary, ui)
        }
        Command::Query(a) => {
            let engine = cx.engine(a.folder.files.as_deref()).await?;
            let answer = engine.answer(&a.question, ui).await?;
            if ui.json {
                chat::print_json(&answer)?;
            }
            Ok(())
        }
        Command::Chat(FolderArg { files }) => {
            chat::chat(&cx.engine(files.as_deref()).await?, ui).await
        }
        Command::Status(FolderArg { files }) => {
            let (source, index) = cx.index(files.as_deref())?;
            status::status(&source, &index, &cx.spec, ui).await
        }
        Command::Import(a) => {
            let (source, index) = cx.index(Some(&a.files))?;
            import::run(a, &source, &index, &cx.spec, ui).await?;
            store::remember_last(&cx.root, &source)
        }
        Command::Eval(a) => {
            let (source, index) = cx.index(a.folder.files.as_deref())?;
            eval::run(&source, &index, &cx.retrieval(), a, ui).await
        }
        Command::Serve(a) => serve_http(a, &cx).await,
        Command::Mcp(a) => {
            let server = server_of(&a.files, &cx, Default::default(), false)?;
            server.serve_mcp_stdio().await.map_err(CliError::from)
        }
        Command::Export(a) => {
            let (_, index) = cx.index(a.files.as_deref())?;
            export::run(&index.open().await?, &a.llamaindex, ui).await
        }
    }
}

/// `ragloom rag`: ingest `--files` if given, then answer or chat.
async fn rag(cx: &Ctx, a: &args::RagArgs) -> Result<(), CliError> {
    let ui = &cx.ui;
    if a.question.is_none() && !a.chat && a.files.is_none() {
        return Err(CliError::new(
            exit::USAGE,
            "nothing to do",
            "give --files to ingest, and --question or --chat to ask",
        ));
    }
    let (source, index) = cx.index(a.files.as_deref())?;
    if a.clear {
        index
            .clear(&ingest::lock_options(a.ingest.no_wait, ui))
            .await?;
        ui.note(&format!("cleared the index of {}", source.key));
    }
    if a.files.is_some() {
        let summary = run_ingest(&index, &cx.spec, &a.ingest.options(), ui).await?;
        if a.question.is_none() && !a.chat {
            report_ingest(&source, &summary, ui)?;
        }
    }
    store::remember_last(&cx.root, &source)?;
    let engine = answer::Engine::open(source, &index, &cx.retrieval(), ui).await?;
    if let Some(q) = &a.question {
        let answer = engine.answer(q, ui).await?;
        if ui.json {
            chat::print_json(&answer)?;
        }
    }
    if a.chat {
        chat::chat(&engine, ui).await?;
    }
    Ok(())
}

/// Request logs on stderr for `serve`: text (coloured only on a terminal) or
/// JSON lines. The MCP library's own per-session lines are kept to warnings
/// unless `--verbose`: each session already has its request line.
fn serve_logs(format: &str, verbose: bool) -> Result<(), CliError> {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let level = if verbose {
        LevelFilter::DEBUG
    } else {
        LevelFilter::INFO
    };
    let filter = Targets::new()
        .with_default(level)
        .with_target("rmcp", if verbose { level } else { LevelFilter::WARN });
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false);
    let layer = match format {
        "text" => layer.with_ansi(std::io::stderr().is_terminal()).boxed(),
        "json" => layer.json().flatten_event(true).boxed(),
        other => {
            return Err(CliError::new(
                exit::USAGE,
                format!("--log-format {other} is not one of text, json"),
                "give --log-format text or --log-format json",
            ));
        }
    };
    tracing_subscriber::registry()
        .with(layer)
        .with(filter)
        .init();
    Ok(())
}

/// A server of the sources named by `files` (default: the last one ingested).
fn server_of(
    files: &[String],
    cx: &Ctx,
    config: ragloom_server::ServerConfig,
    follow_links: bool,
) -> Result<ragloom_server::Server, CliError> {
    // A server reads the same files for every question: map them.
    ragloom::sqlite::set_reader_mmap_size(1 << 30);
    let llm = cx.spec.llm.build()?;
    let mut names: Vec<String> = Vec::new();
    let mut indexes: Vec<std::sync::Arc<dyn ragloom_server::ServedIndex>> = Vec::new();
    let named: Vec<(Option<String>, Option<&str>)> = if files.is_empty() {
        vec![(None, None)]
    } else {
        files
            .iter()
            .map(|f| match f.split_once('=') {
                Some((n, p)) if !n.is_empty() && !n.contains('/') && !Path::new(f).exists() => {
                    (Some(n.to_string()), Some(p))
                }
                _ => (None, Some(f.as_str())),
            })
            .collect()
    };
    for (name, files) in named {
        let (source, index) = cx.index(files)?;
        let name = name.unwrap_or_else(|| serve::index_name(&source, &names));
        if names.contains(&name) {
            return Err(CliError::new(
                exit::USAGE,
                format!("two indexes are named {name}"),
                "name them with NAME=FILES",
            ));
        }
        names.push(name.clone());
        indexes.push(std::sync::Arc::new(serve::CliIndex::new(
            name,
            index,
            cx.spec.clone(),
            cx.fusion,
            llm.clone(),
            follow_links,
        )));
    }
    let config = ragloom_server::ServerConfig {
        top_k: cx.top_k,
        ..config
    };
    ragloom_server::Server::new(config, indexes).map_err(CliError::from)
}

async fn serve_http(a: &args::ServeArgs, cx: &Ctx) -> Result<(), CliError> {
    let keys: Vec<String> = a
        .api_keys
        .iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect();
    let loopback = a.host == "localhost"
        || a.host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback && keys.is_empty() && !a.insecure_no_auth {
        return Err(CliError::new(
            exit::USAGE,
            format!(
                "{} is reachable from other machines and no API key is set",
                a.host
            ),
            "give --api-key KEY (or RAGLOOM_API_KEY), or --insecure-no-auth to serve it open",
        ));
    }
    let config = ragloom_server::ServerConfig {
        api_keys: keys.clone(),
        cors_origins: a.cors_origins.clone(),
        max_upload_bytes: a.max_upload_mb.saturating_mul(1024 * 1024),
        request_timeout: std::time::Duration::from_secs(a.request_timeout.max(1)),
        max_concurrent_llm: a.max_concurrent_llm.max(1),
        max_queued_llm: a.max_queued_llm,
        // The bound address is an IP address, which the check always lets in.
        allowed_hosts: a.allowed_hosts.clone(),
        header_read_timeout: std::time::Duration::from_secs(a.header_timeout.max(1)),
        send_timeout: std::time::Duration::from_secs(a.send_timeout.max(1)),
        max_connections: a.max_connections.max(1),
        max_concurrent_requests: a.max_concurrent_requests.max(1),
        max_mcp_sessions: a.max_mcp_sessions.max(1),
        mcp_session_idle: std::time::Duration::from_secs(a.mcp_session_idle.max(1)),
        max_uploads_in_flight: a.max_uploads_in_flight.max(1),
        max_upload_bytes_per_minute: a.max_upload_mb_per_minute.saturating_mul(1024 * 1024),
        ..Default::default()
    };
    let server = server_of(&a.files, cx, config, a.follow_links)?;
    let listener = tokio::net::TcpListener::bind((a.host.as_str(), a.port))
        .await
        .map_err(|e| {
            CliError::new(
                exit::FAILURE,
                format!("cannot listen on {}:{}: {e}", a.host, a.port),
                "pick another --port, or stop what listens there",
            )
        })?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::new(exit::FAILURE, format!("cannot read the address: {e}"), ""))?;
    let shown = if addr.is_ipv6() {
        format!("http://[{}]:{}", addr.ip(), addr.port())
    } else {
        format!("http://{addr}")
    };
    eprintln!(
        "ragloom serving at {shown} (chat page /, OpenAI API /v1, MCP /mcp, OpenAPI /openapi.json){}",
        if keys.is_empty() {
            "; no API key: open to this machine"
        } else {
            ""
        }
    );
    server
        .serve(listener, ragloom_server::shutdown_signal())
        .await
        .map_err(|e| CliError::new(exit::FAILURE, format!("the server stopped: {e}"), ""))
}

/// Providers and the store, from flags, environment and config file.
fn providers(g: &args::GlobalArgs) -> Result<(ProviderSpec, FusionChoice, StoreUrl), CliError> {
    let (path, required): (Option<PathBuf>, bool) = match &g.config {
        Some(p) => (Some(p.clone()), true),
        None => (config::default_config_path(), false),
    };
    let file = match path {
        Some(p) => config::read_config(&p, required)?,
        None => config::ConfigFile::default(),
    };
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let store = g
        .store
        .clone()
        .or_else(|| env("RAGLOOM_STORE"))
        .or(file.store.clone());
    let location = match store {
        Some(s) => StoreUrl::parse(&s).map_err(|e| {
            CliError::config(
                e.to_string()
                    .trim_start_matches("invalid input: ")
                    .to_string(),
                "see docs/cli.md for --store",
            )
        })?,
        None => StoreUrl::Embedded,
    };
    let fusion = config::fusion(g, env, file.retrieval.as_ref())?;
    Ok((config::resolve(g, env, file)?, fusion, location))
}

/// The source named by `--files`, else the one used last.
fn source_of(root: &Path, files: Option<&str>) -> Result<Source, CliError> {
    match files {
        Some(f) => store::resolve_source(f),
        None => match store::last_source(root) {
            Some(key) => store::resolve_source(&key),
            None => Err(CliError::no_input(
                "no folder is ingested yet",
                "run `ragloom ingest <folder>` or give --files",
            )),
        },
    }
}

async fn run_ingest(
    index: &DurableIndex,
    spec: &ProviderSpec,
    opts: &ingest::IngestOptions,
    ui: &Ui,
) -> Result<SyncReport, CliError> {
    ui.note(&format!("Ingesting {} ...", index.source().key));
    let summary = ingest::ingest(index, spec, opts, ui).await?;
    ui.note(&format!(
        "{} files ({} unchanged, {} failed), {} documents read: {} new or changed, {} unchanged; {} deleted; {} nodes in the index ({} ms)",
        summary.files,
        summary.files_unchanged,
        summary.failed_files,
        summary.documents,
        summary.ingested,
        summary.unchanged,
        summary.deleted,
        summary.nodes_total,
        summary.millis
    ));
    Ok(summary)
}

fn report_ingest(source: &Source, summary: &SyncReport, ui: &Ui) -> Result<(), CliError> {
    if ui.json {
        chat::print_json(&serde_json::json!({ "source": source.key, "ingest": summary }))?;
    }
    Ok(())
}

//! The command line's grammar (clap): subcommands, their flags, and the
//! provider flags every subcommand shares.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// RAG over a folder: ingest it, ask it questions, chat with it. Offline by
/// default (BM25 retrieval, the most relevant passages as the answer); an
/// embedding model or an LLM is used when one is configured.
#[derive(Debug, Parser)]
#[command(name = "ragloom", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand takes.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct GlobalArgs {
    /// Where indexes are kept (default: the user's data directory, e.g.
    /// ~/.local/share/ragloom). Also RAGLOOM_PERSIST_DIR.
    #[arg(long, global = true, env = "RAGLOOM_PERSIST_DIR", value_name = "DIR")]
    pub persist_dir: Option<PathBuf>,

    /// A config file (TOML) with `llm` and `embed` tables (default: the
    /// user's config directory, e.g. ~/.config/ragloom/config.toml, if it exists).
    #[arg(long, global = true, env = "RAGLOOM_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Where indexes live: `embedded` (SQLite files under the persist
    /// folder, the default) or a PostgreSQL URL with pgvector, e.g.
    /// postgres://user@host:5432/db (`?schema=NAME` picks the schema). Also
    /// RAGLOOM_STORE, or `store = "..."` in the config file.
    #[arg(long, global = true, value_name = "STORE")]
    pub store: Option<String>,

    /// The LLM: none, openai, openai-like, ollama or candle.
    #[arg(long, global = true, value_name = "PROVIDER")]
    pub llm: Option<String>,

    /// The LLM's model name (for candle: the .gguf file).
    #[arg(long, global = true, value_name = "MODEL")]
    pub model: Option<String>,

    /// The server of an openai-like LLM (or the Ollama host).
    #[arg(long, global = true, value_name = "URL")]
    pub api_base: Option<String>,

    /// The LLM's context window in tokens, when its default (3,900 for
    /// openai-like and Ollama) is wrong for the model or server: prompts
    /// are packed to fit it. Also RAGLOOM_LLM_CONTEXT_WINDOW.
    #[arg(long, global = true, value_name = "TOKENS")]
    pub context_window: Option<String>,

    /// The embedding model: none, openai, openai-like, ollama or huggingface.
    #[arg(long, global = true, value_name = "PROVIDER")]
    pub embed: Option<String>,

    /// The embedding model's name (for huggingface: the model folder).
    #[arg(long, global = true, value_name = "MODEL")]
    pub embed_model: Option<String>,

    /// The server of openai-like embeddings (or the Ollama host).
    #[arg(long, global = true, value_name = "URL")]
    pub embed_api_base: Option<String>,

    /// How many passages to retrieve.
    #[arg(long, global = true, default_value_t = 4, value_name = "N")]
    pub top_k: usize,

    /// How hybrid retrieval fuses keyword and vector results, LlamaIndex's
    /// modes: reciprocal_rerank (the default), relative_score,
    /// dist_based_score or simple.
    #[arg(long, global = true, value_name = "MODE")]
    pub fusion: Option<String>,

    /// The vector results' weight in the score-based fusions, 0 to 1
    /// (default 0.5; the keyword results weigh the rest).
    #[arg(long, global = true, value_name = "W")]
    pub dense_weight: Option<String>,

    /// Machine-readable output: one JSON object per answer.
    #[arg(long, global = true)]
    pub json: bool,

    /// Say what is happening: files read, providers, retrieval scores.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Ingest files (a folder or a glob) and answer a question, or chat.
    Rag(RagArgs),
    /// Ingest a folder into its index (incremental: unchanged files cost nothing).
    Ingest(IngestArgs),
    /// Answer a question from an ingested folder.
    Query(QueryArgs),
    /// Chat with an ingested folder (a REPL; Ctrl-C or Ctrl-D ends it).
    Chat(FolderArg),
    /// What is indexed: files, nodes, models, size, the last ingest.
    Status(FolderArg),
    /// Write an index as LlamaIndex's storage folder (Python's
    /// `load_index_from_storage` loads it).
    Export(ExportArgs),
    /// Make a storage folder Python LlamaIndex persisted the index of a source.
    Import(ImportArgs),
    /// Serve ingested folders over HTTP: an OpenAI-compatible chat API, MCP
    /// (Streamable HTTP at /mcp), a REST API and a web chat page.
    Serve(ServeArgs),
    /// Measure retrieval on a question set: hit rate, MRR and latency of each
    /// retrieval mode side by side; with an LLM, its judgement of the answers.
    Eval(EvalArgs),
    /// Serve ingested folders to an MCP client over stdio (for desktop
    /// assistants and editors); logs go to stderr.
    Mcp(McpArgs),
}

/// `ragloom serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// An ingested folder, file or glob to serve, named after its folder
    /// (`NAME=FILES` names it); repeat for several (default: the last one ingested).
    #[arg(long, short = 'f', value_name = "FILES")]
    pub files: Vec<String>,
    /// The address to listen on. Anything but loopback needs an API key.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub host: String,
    /// The port (0: any free one; the address is printed on stderr).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// An API key clients send as `Authorization: Bearer KEY`; repeat for
    /// several. Also RAGLOOM_API_KEY (comma-separated).
    #[arg(
        long = "api-key",
        env = "RAGLOOM_API_KEY",
        value_delimiter = ',',
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub api_keys: Vec<String>,
    /// Listen on a non-loopback address without an API key.
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// A browser origin allowed by CORS and to send uploads, deletions and
    /// questions (`*` for any); repeat for several. Off by default: only
    /// the server's own chat page.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// A host name clients reach the server by, beyond loopback names and IP
    /// addresses (DNS-rebinding protection; `*` turns the check off); repeat for several.
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Request logs: `text` or `json` (one object per line), on stderr.
    #[arg(long, default_value = "text", value_name = "FORMAT")]
    pub log_format: String,
    /// LLM calls answered at once; more wait in a queue.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_concurrent_llm: usize,
    /// Calls that may wait for the LLM; past that, 429 with Retry-After.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_queued_llm: usize,
    /// Seconds one request may take, generation included.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub request_timeout: u64,
    /// The largest upload, in megabytes.
    #[arg(long, default_value_t = 64, value_name = "MB")]
    pub max_upload_mb: usize,
    /// Upload megabytes taken per minute, all clients together; past that, 429.
    #[arg(long, default_value_t = 1024, value_name = "MB")]
    pub max_upload_mb_per_minute: u64,
    /// Uploads received at once; past that, 429.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_uploads_in_flight: usize,
    /// Seconds a client may take to send a request's headers (and an idle
    /// connection stays open).
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub header_timeout: u64,
    /// Seconds an answer may wait for its client to read it; past that the
    /// connection closes.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub send_timeout: u64,
    /// Connections open at once; more wait to be accepted.
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub max_connections: usize,
    /// Requests answered at once, per API key (or for everyone without keys); past that, 429.
    #[arg(long, default_value_t = 128, value_name = "N")]
    pub max_concurrent_requests: usize,
    /// MCP sessions kept at once; past that the one idle longest ends.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_mcp_sessions: usize,
    /// Seconds an unused MCP session is kept.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub mcp_session_idle: u64,
    /// Upload jobs' ingests read files through symlinks that resolve outside
    /// the served folder (skipped by default; uploads never follow links).
    #[arg(long)]
    pub follow_links: bool,
}

/// `ragloom mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// An ingested folder, file or glob to serve (`NAME=FILES` names it);
    /// repeat for several (default: the last one ingested).
    #[arg(long, short = 'f', value_name = "FILES")]
    pub files: Vec<String>,
}

/// `ragloom eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// A labelled question set: JSONL, one {"question", "file",
    /// "answer_span"} object per line (a retrieved passage of that file
    /// holding the span is a hit), e.g. datasets/canterbury_qa/canterbury_qa.jsonl.
    #[arg(long, value_name = "JSONL", conflicts_with = "generate")]
    pub dataset: Option<PathBuf>,
    /// Instead of a set, have the configured LLM write N questions about
    /// passages spread over the index (a hit is the passage asked about).
    #[arg(long, value_name = "N")]
    pub generate: Option<usize>,
    /// The top_k values to compare, comma-separated.
    #[arg(
        long,
        value_name = "K,K,...",
        value_delimiter = ',',
        default_value = "2,4,8"
    )]
    pub at: Vec<usize>,
    /// A cross-encoder model folder: adds a mode reranking three times top_k
    /// candidates down to top_k.
    #[arg(long, value_name = "FOLDER")]
    pub reranker: Option<PathBuf>,
    /// Answer the first N questions with the LLM (the last mode, at --top-k)
    /// and have it judge the answers: faithfulness, relevancy, and
    /// correctness where the set has reference answers.
    #[arg(long, value_name = "N")]
    pub judge: Option<usize>,
    /// Write a self-contained HTML report (charts, the worst questions) here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Instead, compare hybrid fusion settings at --top-k: each mode, dense
    /// weights 0.2 to 0.8; chosen on the set's literal questions, reported
    /// on its paraphrased ones.
    #[arg(long, conflicts_with_all = ["report", "judge", "reranker", "at"])]
    pub tune_fusion: bool,
    /// With --tune-fusion: record the best in the index, used wherever no
    /// --fusion, RAGLOOM_FUSION or [retrieval] table sets one.
    #[arg(long, requires = "tune_fusion")]
    pub record: bool,
    #[command(flatten)]
    pub folder: FolderArg,
}

/// `ragloom import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The folder LlamaIndex's `storage_context.persist()` wrote.
    pub dir: PathBuf,
    /// The folder, file or glob whose index it becomes (queries name it with --files).
    #[arg(long, short = 'f', value_name = "FILES")]
    pub files: String,
    /// Which index of the folder, when it holds several.
    #[arg(long, value_name = "ID")]
    pub index_id: Option<String>,
}

/// `ragloom export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The folder to write LlamaIndex's files into (new or empty).
    #[arg(long, value_name = "DIR")]
    pub llamaindex: PathBuf,
    /// The folder, file or glob that was ingested (default: the last one ingested).
    #[arg(long, short = 'f', value_name = "FILES")]
    pub files: Option<String>,
}

/// `ragloom rag`.
#[derive(Debug, Args)]
pub(crate) struct RagArgs {
    /// A folder, a file, or a glob such as "docs/**/*.md".
    #[arg(long, short = 'f', value_name = "FILES")]
    pub files: Option<String>,
    /// The question to answer.
    #[arg(long, short = 'q', value_name = "QUESTION")]
    pub question: Option<String>,
    /// Start a chat (REPL) after ingesting.
    #[arg(long, short = 'c')]
    pub chat: bool,
    /// Drop the stored index of these files before anything else.
    #[arg(long)]
    pub clear: bool,
    #[command(flatten)]
    pub ingest: IngestFlags,
}

/// `ragloom ingest`.
#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// The folder, file or glob to ingest.
    pub files: String,
    #[command(flatten)]
    pub ingest: IngestFlags,
}

/// How an ingest runs.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct IngestFlags {
    /// Tokens per chunk (default: the index's, else 1024). A change builds a
    /// new index beside the current one, which it replaces once complete.
    #[arg(long, value_name = "TOKENS")]
    pub chunk_size: Option<usize>,
    /// Tokens shared by neighbouring chunks (default: the index's, else 200;
    /// a fifth of the chunk, at most 200, with --chunk-fit).
    #[arg(long, value_name = "TOKENS")]
    pub chunk_overlap: Option<usize>,
    /// Size chunks to what the embedding model reads whole: its maximum
    /// sequence length, counted with its own tokenizer (local huggingface
    /// models, whose folders say it). --chunk-size is then in those tokens.
    #[arg(long, conflicts_with = "no_chunk_fit")]
    pub chunk_fit: bool,
    /// Count chunks in cl100k tokens even with a local model (undoes --chunk-fit).
    #[arg(long)]
    pub no_chunk_fit: bool,
    /// Let an ingest that finds no file, or no text, empty the index
    /// (otherwise the index is kept and the ingest fails).
    #[arg(long)]
    pub prune: bool,
    /// Fail at once if another ingest of the same folder is running, instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    /// Read files through symbolic links that resolve outside the folder
    /// (by default they are skipped, each named with the reason).
    #[arg(long)]
    pub follow_links: bool,
}

impl IngestFlags {
    /// The options of the ingest.
    pub(crate) fn options(&self) -> crate::ingest::IngestOptions {
        crate::ingest::IngestOptions {
            chunk_size: self.chunk_size,
            chunk_overlap: self.chunk_overlap,
            chunk_fit: match (self.chunk_fit, self.no_chunk_fit) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            prune: self.prune,
            no_wait: self.no_wait,
            follow_links: self.follow_links,
        }
    }
}

/// `ragloom query`.
#[derive(Debug, Args)]
pub(crate) struct QueryArgs {
    /// The question.
    pub question: String,
    #[command(flatten)]
    pub folder: FolderArg,
}

/// Which ingested folder a command works on.
#[derive(Debug, Args, Clone)]
pub(crate) struct FolderArg {
    /// The folder, file or glob that was ingested (default: the last one ingested).
    #[arg(long, short = 'f', value_name = "FILES")]
    pub files: Option<String>,
}

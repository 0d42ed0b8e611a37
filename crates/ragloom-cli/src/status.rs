//! `ragloom status`: the library's [`IndexStatus`] of a source's index and
//! the configured LLM, as text or JSON.

use crate::error::CliError;
use crate::ui::Ui;
use crate::{chat, ingest, out};
use ragloom::ProviderSpec;
use ragloom::durable::{DurableIndex, IndexStatus, Source};

pub(crate) async fn status(
    source: &Source,
    index: &DurableIndex,
    spec: &ProviderSpec,
    ui: &Ui,
) -> Result<(), CliError> {
    let live = index.open_live().await?.ok_or_else(|| {
        CliError::no_input(
            format!("nothing is ingested for {}", source.key),
            format!("run `ragloom ingest {}`", source.key),
        )
    })?;
    let s = live.status(index.dir()).await?;
    if ui.json {
        let mut json = serde_json::to_value(&s).map_err(ragloom::Error::from)?;
        json["llm"] = serde_json::to_value(&spec.llm).map_err(ragloom::Error::from)?;
        return chat::print_json(&json);
    }
    for (label, value) in lines(&s, spec) {
        out::line(format!("{label:<13}{value}"))?;
    }
    Ok(())
}

fn lines(s: &IndexStatus, spec: &ProviderSpec) -> Vec<(&'static str, String)> {
    let store = match s.store.kind {
        "sqlite" => {
            let file = std::path::Path::new(&s.store.path).file_name();
            let file = file.map(|n| n.to_string_lossy().into_owned());
            let vectors = s.store.vector_index.as_ref().map(|v| format!("; {v}"));
            format!(
                "embedded SQLite, {}{}",
                file.unwrap_or_default(),
                vectors.unwrap_or_default()
            )
        }
        "qdrant" => format!(
            "Qdrant {} ({} points)",
            s.store.path,
            s.store.points.unwrap_or(0)
        ),
        _ => format!(
            "PostgreSQL {} ({})",
            s.store.path,
            human_bytes(s.size_bytes)
        ),
    };
    let retrieval = match s.retrieval.as_str() {
        "bm25" => "BM25 retrieval",
        "sparse" => "BM25 sparse-vector retrieval",
        "fulltext" => "full-text retrieval",
        _ => "hybrid retrieval",
    };
    let embedding = if s.is_embedded() {
        let fused = s
            .fusion
            .map(|f| format!(", fused by {f}"))
            .unwrap_or_default();
        format!("{} ({retrieval}{fused})", ingest::model_label(&s.embed))
    } else {
        format!("none ({retrieval})")
    };
    let llm = match spec.llm {
        ragloom::LlmSpec::None => "none (answers are the most relevant passages)".to_owned(),
        ref l => l.label(),
    };
    let l = &s.last_ingest;
    let mut lines = vec![("source:", s.source.clone())];
    if s.store.kind == "sqlite" {
        let size = human_bytes(s.size_bytes);
        lines.push(("index:", format!("{} ({size})", s.index_dir.display())));
    }
    lines.extend([
        ("store:", store),
        ("documents:", format!("{} ({} nodes)", s.documents, s.nodes)),
        ("embedding:", embedding),
        ("llm:", llm),
        ("chunks:", format!("{} {}, {} overlap", s.chunk_size, s.chunk_unit, s.chunk_overlap)),
        ("created:", s.created.clone()),
        ("updated:", s.updated.clone()),
        ("last ingest:", format!(
            "{} files ({} unchanged, {} failed); {} documents new or changed, {} unchanged, {} deleted; {} nodes embedded; {} ms",
            l.files, l.files_unchanged, l.failed_files, l.ingested, l.unchanged, l.deleted, l.nodes_embedded, l.millis
        )),
    ]);
    lines
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

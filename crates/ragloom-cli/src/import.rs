//! `ragloom import DIR`: a storage folder LlamaIndex persisted becomes the
//! live index of a source (the library's `DurableIndex::import_llamaindex`).

use crate::error::CliError;
use crate::ui::Ui;
use crate::{chat, ingest, out};
use ragloom::ProviderSpec;
use ragloom::durable::{DurableIndex, Source};

/// Imports `a.dir` with the configured embedding model as the one its
/// vectors were made with, and says what it holds.
pub(crate) async fn run(
    a: &crate::args::ImportArgs,
    source: &Source,
    index: &DurableIndex,
    spec: &ProviderSpec,
    ui: &Ui,
) -> Result<(), CliError> {
    let embed = serde_json::to_value(&spec.embed).map_err(ragloom::Error::from)?;
    let lock = ingest::lock_options(false, ui);
    let summary = index
        .import_llamaindex(&a.dir, a.index_id.as_deref(), embed, &lock)
        .await?;
    if ui.json {
        return chat::print_json(&serde_json::json!({ "source": source.key, "import": summary }));
    }
    out::line(format!(
        "imported {} documents, {} nodes from {} as the index of {}",
        summary.documents,
        summary.nodes_total,
        a.dir.display(),
        source.key
    ))
}

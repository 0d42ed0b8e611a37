//! `ragloom export --llamaindex DIR`: the live index of a source written as
//! LlamaIndex's storage folder (the library's `LiveIndex::export_llamaindex`).

use crate::error::CliError;
use crate::ui::Ui;
use crate::{chat, out};
use ragloom::durable::LiveIndex;
use std::path::Path;

pub(crate) async fn run(live: &LiveIndex, dir: &Path, ui: &Ui) -> Result<(), CliError> {
    let done = live.export_llamaindex(dir).await?;
    if ui.json {
        return chat::print_json(&serde_json::json!({ "export": done }));
    }
    out::line(format!(
        "exported {} nodes and {} vectors to {} (LlamaIndex's storage folder)",
        done.nodes, done.vectors, done.dir
    ))
}

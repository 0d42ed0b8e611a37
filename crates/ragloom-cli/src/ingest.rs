//! `ragloom ingest`: the flags of a sync, its progress drawn on the terminal,
//! over the library's [`DurableIndex::sync`].

use crate::error::CliError;
use crate::ui::Ui;
use ragloom::durable::{
    BuildSettings, ChunkFit, Chunking, DurableIndex, SyncEvent, SyncOptions, SyncReport,
    file_readers,
};
use ragloom::{EmbedSpec, ProviderSpec};
use std::sync::{Arc, Mutex};

/// How to ingest.
#[derive(Clone, Debug, Default)]
pub(crate) struct IngestOptions {
    /// Splitter settings; `None` keeps the index's (or the defaults).
    pub chunk_size: Option<usize>,
    pub chunk_overlap: Option<usize>,
    /// Count chunks with the embedding model's tokenizer, sized to what it
    /// reads whole; `None` keeps the index's choice.
    pub chunk_fit: Option<bool>,
    /// Allow an ingest that finds no file to empty the index.
    pub prune: bool,
    /// Fail at once if another ingest is writing, instead of waiting.
    pub no_wait: bool,
    /// Read files through symlinks that resolve outside the source's folder.
    pub follow_links: bool,
}

/// The library's options for these flags; `ui` draws the progress.
pub(crate) fn sync_options(
    opts: &IngestOptions,
    spec: &ProviderSpec,
    ui: &Ui,
) -> Result<SyncOptions, CliError> {
    Ok(SyncOptions {
        chunking: Chunking {
            chunk_size: opts.chunk_size,
            chunk_overlap: opts.chunk_overlap,
            chunk_fit: opts
                .chunk_fit
                .map(|f| if f { ChunkFit::Fit } else { ChunkFit::Cl100k }),
        },
        embed: spec.embed.embed_model()?,
        prune: opts.prune,
        no_wait: opts.no_wait,
        follow_links: opts.follow_links,
        show_progress: ui.progress(),
        progress: Some(Arc::new(Progress::new(*ui))),
        reader_setup: file_readers(),
        ..SyncOptions::default()
    })
}

/// Ingests into `index`.
pub(crate) async fn ingest(
    index: &DurableIndex,
    spec: &ProviderSpec,
    opts: &IngestOptions,
    ui: &Ui,
) -> Result<SyncReport, CliError> {
    Ok(index.sync(&sync_options(opts, spec, ui)?).await?)
}

/// Notes, warnings and the files bar of one sync.
struct Progress {
    ui: Ui,
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl Progress {
    fn new(ui: Ui) -> Self {
        Self {
            ui,
            bar: Mutex::new(None),
        }
    }

    fn bar(&self) -> std::sync::MutexGuard<'_, Option<indicatif::ProgressBar>> {
        self.bar.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ragloom::durable::SyncProgress for Progress {
    fn event(&self, event: SyncEvent<'_>) {
        let ui = &self.ui;
        match event {
            SyncEvent::WaitingForWriter => {
                ui.note("waiting for another ingest of this folder to finish ...")
            }
            SyncEvent::KeptBuild { name, error } => {
                ui.warn(&format!("kept the replaced build {name} for now: {error}"))
            }
            SyncEvent::SettingsChanged { old, new } => ui.note(&format!(
                "the settings changed ({}): building a new index beside the current one; it replaces it once complete",
                describe_change(old, new)
            )),
            SyncEvent::Unreadable { path, error } => ui.warn(&format!(
                "skipped {path}: {error} (its earlier nodes are kept)"
            )),
            SyncEvent::Skipped { path, reason } => ui.warn(&format!("skipped {path}: {reason}")),
            SyncEvent::Reading { files } if ui.progress() => {
                let bar = indicatif::ProgressBar::new(files as u64);
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} files")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                bar.set_message("Ingesting");
                *self.bar() = Some(bar);
            }
            SyncEvent::BatchDone { files } => {
                if let Some(bar) = self.bar().as_ref() {
                    bar.inc(files as u64);
                }
            }
            SyncEvent::Written => {
                if let Some(bar) = self.bar().take() {
                    bar.finish_and_clear();
                }
            }
            _ => {}
        }
    }
}

/// A model's name for messages.
pub(crate) fn model_label(identity: &serde_json::Value) -> String {
    EmbedSpec::from_identity(identity).map_or_else(|| identity.to_string(), |s| s.label())
}

fn describe_change(old: &BuildSettings, new: &BuildSettings) -> String {
    let mut parts = Vec::new();
    if old.embed != new.embed {
        parts.push(format!(
            "embedding model {} → {}",
            model_label(&old.embed),
            model_label(&new.embed)
        ));
    }
    if (old.chunk_size, old.chunk_overlap, &old.chunk_tokenizer)
        != (new.chunk_size, new.chunk_overlap, &new.chunk_tokenizer)
    {
        parts.push(format!(
            "chunks {}/{} {} → {}/{} {}",
            old.chunk_size,
            old.chunk_overlap,
            old.chunk_unit(),
            new.chunk_size,
            new.chunk_overlap,
            new.chunk_unit()
        ));
    }
    parts.join(", ")
}

/// Options for what only takes the writer lock (`--clear`): waiting (said
/// on the terminal) unless `no_wait`.
pub(crate) fn lock_options(no_wait: bool, ui: &Ui) -> SyncOptions {
    SyncOptions {
        no_wait,
        progress: Some(Arc::new(Progress::new(*ui))),
        ..SyncOptions::default()
    }
}

//! llama.cpp as the engine of [`crate::CandleLlm`] (feature `llama-cpp`): the
//! same GGUF file, tokenizer, chat template, sampling and stops, llama.cpp's forward passes.

use crate::PROVIDER;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use ragloom_core::{Error, Result};
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;

/// llama.cpp's process-wide state: started once, on first use.
fn backend() -> Result<&'static LlamaBackend> {
    static BACKEND: OnceLock<std::result::Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // Its log lines go to `tracing` instead of stderr.
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Provider {
            provider: PROVIDER.to_owned(),
            message: format!("starting llama.cpp: {e}"),
            source: None,
        })
}

fn llama_error(doing: &str, e: impl std::fmt::Display) -> Error {
    Error::Provider {
        provider: PROVIDER.to_owned(),
        message: format!("llama.cpp, {doing}: {e}"),
        source: None,
    }
}

/// A GGUF model loaded by llama.cpp.
pub(crate) struct LlamaCppModel {
    model: LlamaModel,
}

impl LlamaCppModel {
    /// Loads `path`, which the caller has already checked is a readable GGUF file.
    pub(crate) fn load(path: &Path) -> Result<Self> {
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| llama_error(&format!("loading {}", path.display()), e))?;
        Ok(Self { model })
    }

    /// A fresh context for one generation: a KV cache of `tokens` (the
    /// prompt and the most it may generate, not the model's whole window,
    /// which llama.cpp would allocate and zero on every request), a batch of
    /// `prompt` tokens, `threads` threads.
    pub(crate) fn session(
        &self,
        tokens: usize,
        prompt: usize,
        threads: usize,
    ) -> Result<Session<'_>> {
        let n_ctx = u32::try_from(tokens.max(1)).map_err(|e| llama_error("the context size", e))?;
        let n_batch =
            u32::try_from(prompt.max(1)).map_err(|e| llama_error("the prompt size", e))?;
        let threads = i32::try_from(threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch.min(512))
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let context = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| llama_error("creating a context", e))?;
        Ok(Session {
            context,
            batch: LlamaBatch::new(prompt.max(1), 1),
            vocab: usize::try_from(self.model.n_vocab()).unwrap_or(0),
        })
    }
}

/// One generation's context: feeds tokens, returns the next token's logits.
pub(crate) struct Session<'m> {
    context: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    vocab: usize,
}

impl Session<'_> {
    /// Runs `ids` at positions `position..`; the logits after the last one.
    pub(crate) fn forward(&mut self, ids: &[u32], position: usize) -> Result<Vec<f32>> {
        if ids.is_empty() {
            return Err(llama_error("running the model", "no tokens to run"));
        }
        self.batch.clear();
        for (i, &id) in ids.iter().enumerate() {
            let token = LlamaToken(i32::try_from(id).map_err(|e| llama_error("a token id", e))?);
            let pos = i32::try_from(position + i).map_err(|e| llama_error("a position", e))?;
            self.batch
                .add(token, pos, &[0], i + 1 == ids.len())
                .map_err(|e| llama_error("filling the batch", e))?;
        }
        self.context
            .decode(&mut self.batch)
            .map_err(|e| llama_error("running the model", e))?;
        let last = self.batch.n_tokens() - 1;
        let logits = self.context.get_logits_ith(last);
        if logits.len() != self.vocab {
            return Err(llama_error(
                "reading the logits",
                format!("{} values for a vocabulary of {}", logits.len(), self.vocab),
            ));
        }
        Ok(logits.to_vec())
    }
}

//! [`HuggingFaceEmbedding`] (LlamaIndex's `HuggingFaceEmbedding`): a local
//! sentence-transformers model (BERT family) run in-process with candle on the CPU.

use crate::encoder::{BertEncoder, Scratch, Span};
use crate::folder::SentenceTransformerConfig;
use crate::pooling::{Pooling, l2_normalize};
use async_trait::async_trait;
use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config as BertConfig;
use ragloom_core::embeddings::{DEFAULT_EMBED_BATCH_SIZE, Embedding};
use ragloom_core::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// The provider name in [`Error::Provider`].
pub const PROVIDER: &str = "huggingface";

/// The largest `embed_batch_size` accepted.
pub const MAX_EMBED_BATCH_SIZE: usize = 2048;

/// `config.json` `model_type`s that candle's `BertModel` runs.
const BERT_MODEL_TYPES: [&str; 1] = ["bert"];

/// LlamaIndex's `DEFAULT_QUERY_BGE_INSTRUCTION_EN`.
pub const DEFAULT_QUERY_BGE_INSTRUCTION_EN: &str =
    "Represent this question for searching relevant passages: ";
/// LlamaIndex's `DEFAULT_QUERY_BGE_INSTRUCTION_ZH`.
pub const DEFAULT_QUERY_BGE_INSTRUCTION_ZH: &str = "为这个句子生成表示以用于检索相关文章：";
/// LlamaIndex's `DEFAULT_QUERY_INSTRUCTION` (instructor models).
pub const DEFAULT_QUERY_INSTRUCTION: &str =
    "Represent the question for retrieving supporting documents: ";
/// LlamaIndex's `DEFAULT_EMBED_INSTRUCTION` (instructor models).
pub const DEFAULT_EMBED_INSTRUCTION: &str = "Represent the document for retrieval: ";

const BGE_MODELS: [&str; 12] = [
    "BAAI/bge-small-en",
    "BAAI/bge-small-en-v1.5",
    "BAAI/bge-base-en",
    "BAAI/bge-base-en-v1.5",
    "BAAI/bge-large-en",
    "BAAI/bge-large-en-v1.5",
    "BAAI/bge-small-zh",
    "BAAI/bge-small-zh-v1.5",
    "BAAI/bge-base-zh",
    "BAAI/bge-base-zh-v1.5",
    "BAAI/bge-large-zh",
    "BAAI/bge-large-zh-v1.5",
];
const INSTRUCTOR_MODELS: [&str; 6] = [
    "hku-nlp/instructor-base",
    "hku-nlp/instructor-large",
    "hku-nlp/instructor-xl",
    "hkunlp/instructor-base",
    "hkunlp/instructor-large",
    "hkunlp/instructor-xl",
];

/// LlamaIndex's `get_query_instruct_for_model_name`: the query instruction a
/// known model expects when none is given (BGE and instructor models), else "".
pub fn default_query_instruction(model_name: &str) -> &'static str {
    if INSTRUCTOR_MODELS.contains(&model_name) {
        DEFAULT_QUERY_INSTRUCTION
    } else if BGE_MODELS.contains(&model_name) {
        if model_name.contains("zh") {
            DEFAULT_QUERY_BGE_INSTRUCTION_ZH
        } else {
            DEFAULT_QUERY_BGE_INSTRUCTION_EN
        }
    } else {
        ""
    }
}

/// LlamaIndex's `get_text_instruct_for_model_name`: the text instruction of
/// instructor models, else "".
pub fn default_text_instruction(model_name: &str) -> &'static str {
    if INSTRUCTOR_MODELS.contains(&model_name) {
        DEFAULT_EMBED_INSTRUCTION
    } else {
        ""
    }
}

/// Settings for a [`HuggingFaceEmbedding`]; [`Self::build`] loads the model.
#[derive(Clone, Debug)]
pub struct HuggingFaceEmbeddingBuilder {
    folder: PathBuf,
    model_name: Option<String>,
    embed_batch_size: usize,
    query_instruction: Option<String>,
    text_instruction: Option<String>,
    max_length: Option<usize>,
    normalize: bool,
}

impl HuggingFaceEmbeddingBuilder {
    /// Settings for the sentence-transformers model folder `folder`
    /// (`config.json`, `tokenizer.json`, `model.safetensors`, and usually
    /// `modules.json`, `1_Pooling/config.json`, `sentence_bert_config.json`).
    pub fn new(folder: impl Into<PathBuf>) -> Self {
        Self {
            folder: folder.into(),
            model_name: None,
            embed_batch_size: DEFAULT_EMBED_BATCH_SIZE,
            query_instruction: None,
            text_instruction: None,
            max_length: None,
            normalize: true,
        }
    }

    /// The name reported by [`Embedding::model_name`] (default: the folder
    /// path, as LlamaIndex reports a local path). A known hub name (e.g.
    /// `BAAI/bge-small-en-v1.5`) also picks LlamaIndex's default instructions.
    pub fn model_name(mut self, model_name: impl Into<String>) -> Self {
        self.model_name = Some(model_name.into());
        self
    }

    /// Texts per forward pass (default 10, LlamaIndex's; 1 to 2048).
    pub fn embed_batch_size(mut self, embed_batch_size: usize) -> Self {
        self.embed_batch_size = embed_batch_size;
        self
    }

    /// Put before every query, e.g. `"query: "` for E5 models. It is prepended
    /// as is (sentence-transformers' prompt), so include any trailing space.
    pub fn query_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.query_instruction = Some(instruction.into());
        self
    }

    /// Put before every text (document chunk), e.g. `"passage: "`.
    pub fn text_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.text_instruction = Some(instruction.into());
        self
    }

    /// Tokens per text, special tokens included, beyond which texts are cut
    /// (default: the model's `max_seq_length`; at most `max_position_embeddings`).
    pub fn max_length(mut self, max_length: usize) -> Self {
        self.max_length = Some(max_length);
        self
    }

    /// Whether vectors are scaled to unit length (LlamaIndex's `normalize`,
    /// default true). A model whose `modules.json` lists a `Normalize` module
    /// returns unit vectors either way, as in sentence-transformers.
    pub fn normalize(mut self, normalize: bool) -> Self {
        self.normalize = normalize;
        self
    }

    /// Reads the folder and loads tokenizer and weights (blocking: call it
    /// from `tokio::task::spawn_blocking` inside an async runtime if the
    /// model is large). Every missing or corrupt file is an error naming it.
    pub fn build(self) -> Result<HuggingFaceEmbedding> {
        if self.embed_batch_size == 0 || self.embed_batch_size > MAX_EMBED_BATCH_SIZE {
            return Err(Error::InvalidInput(format!(
                "huggingface embedding: embed_batch_size must be between 1 and {MAX_EMBED_BATCH_SIZE}, got {}",
                self.embed_batch_size
            )));
        }
        let st = SentenceTransformerConfig::read(&self.folder)?;
        let config_path = self.folder.join("config.json");
        match st.model_type() {
            Some(t) if BERT_MODEL_TYPES.contains(&t) => {}
            other => {
                return Err(Error::Unsupported(format!(
                    "model_type `{}` in {}: only BERT-family models (model_type `bert`) are supported",
                    other.unwrap_or("<missing>"),
                    config_path.display()
                )));
            }
        }
        let bert_config: BertConfig =
            serde_json::from_value(st.model_config.clone()).map_err(|e| Error::CorruptFile {
                path: config_path.clone(),
                message: format!("not a BERT config candle can run: {e}"),
            })?;
        let max_length = match self.max_length {
            Some(m) if m == 0 || m > st.max_position_embeddings => {
                return Err(Error::InvalidInput(format!(
                    "huggingface embedding: max_length must be between 1 and the model's max_position_embeddings ({}), got {m}",
                    st.max_position_embeddings
                )));
            }
            Some(m) => m,
            None => st.max_seq_length.min(st.max_position_embeddings),
        };

        let tokenizer_path = self.folder.join("tokenizer.json");
        if !tokenizer_path.is_file() {
            return Err(Error::NotFound(format!(
                "{}: the model folder needs a fast-tokenizer file tokenizer.json",
                tokenizer_path.display()
            )));
        }
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| Error::CorruptFile {
                path: tokenizer_path.clone(),
                message: format!("not a tokenizer.json the tokenizers crate reads: {e}"),
            })?;
        // Padding is done per batch here; the file's own settings (often a
        // fixed 128) would pad or cut differently from sentence-transformers.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| Error::invalid(format!("max_length {max_length}"), e))?;

        let weights_path = self.folder.join("model.safetensors");
        let weights =
            std::fs::read(&weights_path).map_err(|e| Error::io("reading", &weights_path, e))?;
        let device = Device::Cpu;
        let corrupt_weights = |e: candle_core::Error| Error::CorruptFile {
            path: weights_path.clone(),
            message: format!("cannot load the BERT weights: {e}"),
        };
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(corrupt_weights)?;
        let encoder = BertEncoder::load(vb, &bert_config).map_err(corrupt_weights)?;

        let model_name = self
            .model_name
            .unwrap_or_else(|| self.folder.display().to_string());
        // LlamaIndex: the given instruction, else the model's known default.
        let query_instruction = self
            .query_instruction
            .filter(|i| !i.is_empty())
            .unwrap_or_else(|| default_query_instruction(&model_name).to_owned());
        let text_instruction = self
            .text_instruction
            .filter(|i| !i.is_empty())
            .unwrap_or_else(|| default_text_instruction(&model_name).to_owned());
        let inner = Inner {
            encoder,
            tokenizer,
            hidden_size: bert_config.hidden_size,
            pooling: st.pooling.clone(),
            normalize: self.normalize || st.normalize_module,
            do_lower_case: st.do_lower_case,
        };
        Ok(HuggingFaceEmbedding {
            inner: Arc::new(inner),
            model_name,
            folder: self.folder,
            embed_batch_size: self.embed_batch_size,
            query_instruction,
            text_instruction,
            max_length,
            normalize: self.normalize,
            normalize_module: st.normalize_module,
        })
    }
}

/// The loaded model, shared with the blocking threads that run it.
struct Inner {
    encoder: BertEncoder,
    tokenizer: Tokenizer,
    hidden_size: usize,
    pooling: Pooling,
    normalize: bool,
    do_lower_case: bool,
}

/// A sentence-transformers model (BERT family) run locally on the CPU.
///
/// Texts are prefixed with the instruction (and lowercased when the model
/// says so), tokenized, cut at [`Self::max_length`] tokens and run in
/// batches of [`Embedding::embed_batch_size`] off the async executor. A
/// batch's tokens are packed without padding; its matrix products use every
/// core (`RAYON_NUM_THREADS` sets how many). Weights load with candle.
/// Pooling and normalisation follow the model folder, as sentence-transformers does.
///
/// ```no_run
/// # async fn run() -> ragloom_core::Result<()> {
/// use ragloom_core::embeddings::{Embedding, embed_in_batches};
/// use ragloom_embeddings_huggingface::HuggingFaceEmbedding;
///
/// let embed = HuggingFaceEmbedding::from_folder("models/all-MiniLM-L6-v2")?;
/// let texts = vec!["first chunk".to_string(), "second chunk".to_string()];
/// let vectors = embed_in_batches(&embed, &texts, false).await?;
/// let query = embed.embed_query("which chunk?").await?;
/// assert_eq!(query.len(), 384);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HuggingFaceEmbedding {
    inner: Arc<Inner>,
    model_name: String,
    folder: PathBuf,
    embed_batch_size: usize,
    query_instruction: String,
    text_instruction: String,
    max_length: usize,
    normalize: bool,
    normalize_module: bool,
}

impl fmt::Debug for HuggingFaceEmbedding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HuggingFaceEmbedding")
            .field("model_name", &self.model_name)
            .field("folder", &self.folder)
            .field("embed_batch_size", &self.embed_batch_size)
            .field("query_instruction", &self.query_instruction)
            .field("text_instruction", &self.text_instruction)
            .field("max_length", &self.max_length)
            .field("normalize", &self.normalize)
            .field("normalize_module", &self.normalize_module)
            .field("pooling", &self.inner.pooling)
            .field("dimensions", &self.dimensions())
            .finish()
    }
}

impl HuggingFaceEmbedding {
    /// Settings for the model folder `folder`, to adjust and [`HuggingFaceEmbeddingBuilder::build`].
    pub fn builder(folder: impl Into<PathBuf>) -> HuggingFaceEmbeddingBuilder {
        HuggingFaceEmbeddingBuilder::new(folder)
    }

    /// Loads the model folder `folder` with every default.
    pub fn from_folder(folder: impl Into<PathBuf>) -> Result<Self> {
        Self::builder(folder).build()
    }

    /// The model folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Tokens per text (special tokens included) beyond which texts are cut.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// Whether vectors come out with unit length (the `normalize` setting or
    /// a `Normalize` module in the folder).
    pub fn normalize(&self) -> bool {
        self.inner.normalize
    }

    /// The pooling read from the folder.
    pub fn pooling(&self) -> &Pooling {
        &self.inner.pooling
    }

    /// The instruction put before queries ("" when none).
    pub fn query_instruction(&self) -> &str {
        &self.query_instruction
    }

    /// The instruction put before texts ("" when none).
    pub fn text_instruction(&self) -> &str {
        &self.text_instruction
    }

    /// Embeds `texts` after `prompt`, blocking the calling thread: the work
    /// [`Embedding::embed_texts`] and [`Embedding::embed_query`] move off the executor.
    pub fn embed_blocking(&self, texts: &[String], prompt: &str) -> Result<Vec<Vec<f32>>> {
        self.inner.embed(texts, prompt, self.embed_batch_size)
    }

    async fn embed_off_executor(
        &self,
        texts: Vec<String>,
        prompt: String,
    ) -> Result<Vec<Vec<f32>>> {
        let inner = Arc::clone(&self.inner);
        let batch = self.embed_batch_size;
        let span = tracing::debug_span!("embedding", provider = PROVIDER, model = %self.model_name, texts = texts.len());
        tokio::task::spawn_blocking(move || span.in_scope(|| inner.embed(&texts, &prompt, batch)))
            .await
            .map_err(|e| {
                Error::provider(
                    PROVIDER,
                    format!(
                        "the embedding thread for model `{}` failed",
                        self.model_name
                    ),
                    e,
                )
            })?
    }
}

impl Inner {
    /// The text as sentence-transformers tokenizes it: prompt first,
    /// lowercased when the model asks for it.
    fn prepare(&self, prompt: &str, text: &str) -> String {
        let joined = format!("{prompt}{text}");
        if self.do_lower_case {
            joined.to_lowercase()
        } else {
            joined
        }
    }

    fn embed(&self, texts: &[String], prompt: &str, batch_size: usize) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let tokenizer_error = |e: tokenizers::Error| Error::Provider {
            provider: PROVIDER.to_owned(),
            message: format!("tokenizing: {e}"),
            source: Some(e),
        };
        // Tokens of the instruction that pooling leaves out (`include_prompt`
        // false): sentence-transformers counts the prompt's tokens less a final special token.
        let prompt_tokens = if !self.pooling.include_prompt && !prompt.is_empty() {
            let enc = self
                .tokenizer
                .encode(self.prepare("", prompt), true)
                .map_err(tokenizer_error)?;
            let ends_special = enc.get_special_tokens_mask().last() == Some(&1);
            enc.get_ids().len() - usize::from(ends_special)
        } else {
            0
        };
        let inputs: Vec<String> = texts.iter().map(|t| self.prepare(prompt, t)).collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(tokenizer_error)?;
        // Longest first, as sentence-transformers batches; results go back in
        // order. Batches are packed, so their lengths no longer cost padding.
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].get_ids().len()));
        let mut out = vec![Vec::new(); encodings.len()];
        let mut scratch = Scratch::default();
        let (mut ids, mut types, mut spans) = (Vec::new(), Vec::new(), Vec::new());
        for chunk in order.chunks(batch_size.max(1)) {
            ids.clear();
            types.clear();
            spans.clear();
            for &i in chunk {
                let enc = &encodings[i];
                spans.push(Span {
                    start: ids.len(),
                    len: enc.get_ids().len(),
                });
                ids.extend_from_slice(enc.get_ids());
                types.extend_from_slice(enc.get_type_ids());
            }
            let hidden = self
                .encoder
                .forward(&ids, &types, &spans, &mut scratch)
                .map_err(|message| Error::Provider {
                    provider: PROVIDER.to_owned(),
                    message: format!("running the model on {} text(s): {message}", chunk.len()),
                    source: None,
                })?;
            let h = self.hidden_size;
            for (&i, span) in chunk.iter().zip(&spans) {
                let tokens = &hidden[span.start * h..(span.start + span.len) * h];
                let mut mask = encodings[i].get_attention_mask().to_vec();
                for m in mask.iter_mut().take(prompt_tokens) {
                    *m = 0;
                }
                let mut v = self.pooling.pool(tokens, &mask, h);
                if self.normalize {
                    l2_normalize(&mut v);
                }
                out[i] = v;
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Embedding for HuggingFaceEmbedding {
    fn model_name(&self) -> &str {
        &self.model_name
    }

    fn dimensions(&self) -> Option<usize> {
        Some(self.inner.pooling.output_dimension(self.inner.hidden_size))
    }

    fn embed_batch_size(&self) -> usize {
        self.embed_batch_size
    }

    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let mut vectors = self
            .embed_off_executor(vec![query.to_owned()], self.query_instruction.clone())
            .await?;
        vectors.pop().ok_or_else(|| {
            Error::provider(
                PROVIDER,
                format!(
                    "model `{}` returned no vector for the query",
                    self.model_name
                ),
                "empty result",
            )
        })
    }

    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.embed_off_executor(texts.to_vec(), self.text_instruction.clone())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_instructions_follow_llama_index() {
        assert_eq!(
            default_query_instruction("BAAI/bge-small-en-v1.5"),
            DEFAULT_QUERY_BGE_INSTRUCTION_EN
        );
        assert_eq!(
            default_query_instruction("BAAI/bge-base-zh"),
            DEFAULT_QUERY_BGE_INSTRUCTION_ZH
        );
        assert_eq!(
            default_query_instruction("hkunlp/instructor-xl"),
            DEFAULT_QUERY_INSTRUCTION
        );
        assert_eq!(
            default_query_instruction("sentence-transformers/all-MiniLM-L6-v2"),
            ""
        );
        assert_eq!(
            default_text_instruction("hkunlp/instructor-base"),
            DEFAULT_EMBED_INSTRUCTION
        );
        assert_eq!(default_text_instruction("BAAI/bge-small-en"), "");
    }
}

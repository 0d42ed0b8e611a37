//! A BERT cross-encoder on candle: the pair `[CLS] query [SEP] text [SEP]`
//! through BERT, its pooler and a one-logit classifier, then a sigmoid.

use candle_core::{DType, Device, IndexOp, Module, Tensor};
use candle_nn::{Linear, VarBuilder, linear};
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use ragloom_core::error::{Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokenizers::{
    EncodeInput, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy,
};

/// The name errors carry.
pub const PROVIDER: &str = "sbert-rerank";

/// The pair length LlamaIndex's reranker asks for (`DEFAULT_SENTENCE_TRANSFORMER_MAX_LENGTH`).
pub const DEFAULT_MAX_LENGTH: usize = 512;

/// Pairs per forward pass (sentence-transformers' `predict` default).
const BATCH_SIZE: usize = 32;

/// A loaded cross-encoder. Cheap to clone; scoring runs on the calling thread
/// ([`SentenceTransformerRerank`](crate::SentenceTransformerRerank) moves it off the executor).
#[derive(Clone)]
pub struct CrossEncoder {
    inner: Arc<Inner>,
    folder: PathBuf,
    max_length: usize,
}

struct Inner {
    bert: BertModel,
    pooler: Linear,
    classifier: Linear,
    tokenizer: Tokenizer,
    pad_id: u32,
    sigmoid: bool,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("folder", &self.folder)
            .field("max_length", &self.max_length)
            .finish_non_exhaustive()
    }
}

fn corrupt(path: &Path, message: impl Into<String>) -> Error {
    Error::CorruptFile {
        path: path.to_owned(),
        message: message.into(),
    }
}

impl CrossEncoder {
    /// Loads `folder` with pairs cut to [`DEFAULT_MAX_LENGTH`] tokens (or
    /// the model's `max_position_embeddings`, when smaller).
    pub fn from_folder(folder: impl Into<PathBuf>) -> Result<Self> {
        Self::with_max_length(folder, DEFAULT_MAX_LENGTH)
    }

    /// Loads `folder`, cutting pairs (longest side first) to `max_length` tokens.
    pub fn with_max_length(folder: impl Into<PathBuf>, max_length: usize) -> Result<Self> {
        let folder = folder.into();
        let config_path = folder.join("config.json");
        let text = std::fs::read_to_string(&config_path)
            .map_err(|e| Error::io("reading", &config_path, e))?;
        let config: Value = serde_json::from_str(&text)
            .map_err(|e| corrupt(&config_path, format!("not JSON: {e}")))?;
        let model_type = config.get("model_type").and_then(Value::as_str);
        if model_type != Some("bert") {
            return Err(Error::Unsupported(format!(
                "model_type `{}` in {}: only BERT cross-encoders (model_type `bert`) are supported",
                model_type.unwrap_or("<missing>"),
                config_path.display()
            )));
        }
        let labels = num_labels(&config);
        if labels != 1 {
            return Err(Error::Unsupported(format!(
                "{}: the model has {labels} labels; a reranker needs one score per pair (1 label)",
                config_path.display()
            )));
        }
        let bert_config: BertConfig = serde_json::from_value(config.clone()).map_err(|e| {
            corrupt(
                &config_path,
                format!("not a BERT config candle can run: {e}"),
            )
        })?;
        let max_positions = config
            .get("max_position_embeddings")
            .and_then(Value::as_u64)
            .unwrap_or(512) as usize;
        if max_length == 0 {
            return Err(Error::InvalidInput("max_length must be at least 1".into()));
        }
        let max_length = max_length.min(max_positions);
        let sigmoid = sigmoid_activation(&folder, &config)?;

        let tokenizer_path = folder.join("tokenizer.json");
        if !tokenizer_path.is_file() {
            return Err(Error::NotFound(format!(
                "{}: the model folder needs a fast-tokenizer file tokenizer.json",
                tokenizer_path.display()
            )));
        }
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| corrupt(&tokenizer_path, format!("not a tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| Error::invalid(format!("max_length {max_length}"), e))?;

        let weights_path = folder.join("model.safetensors");
        let weights =
            std::fs::read(&weights_path).map_err(|e| Error::io("reading", &weights_path, e))?;
        let bad_weights =
            |e: candle_core::Error| corrupt(&weights_path, format!("cannot load the weights: {e}"));
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(bad_weights)?;
        let hidden = bert_config.hidden_size;
        let bert = BertModel::load(vb.clone(), &bert_config).map_err(bad_weights)?;
        let pooler = linear(hidden, hidden, vb.pp("bert.pooler.dense")).map_err(bad_weights)?;
        let classifier = linear(hidden, 1, vb.pp("classifier")).map_err(bad_weights)?;
        Ok(Self {
            inner: Arc::new(Inner {
                bert,
                pooler,
                classifier,
                tokenizer,
                pad_id: u32::try_from(bert_config.pad_token_id).unwrap_or(0),
                sigmoid,
            }),
            folder,
            max_length,
        })
    }

    /// The folder loaded.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The longest pair, in tokens.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// One score per `(query, text)` pair, in order (sentence-transformers
    /// `CrossEncoder.predict`). Blocking: CPU work.
    pub fn predict(&self, pairs: &[(String, String)]) -> Result<Vec<f32>> {
        let inner = &self.inner;
        let inputs: Vec<EncodeInput> = pairs
            .iter()
            .map(|(q, t)| (q.as_str(), t.as_str()).into())
            .collect();
        let encodings =
            inner
                .tokenizer
                .encode_batch(inputs, true)
                .map_err(|e| Error::Provider {
                    provider: PROVIDER.into(),
                    message: format!("tokenizing: {e}"),
                    source: Some(e),
                })?;
        let mut scores = Vec::with_capacity(pairs.len());
        for batch in encodings.chunks(BATCH_SIZE) {
            let seq = batch
                .iter()
                .map(|e| e.get_ids().len())
                .max()
                .unwrap_or(0)
                .max(1);
            let n = batch.len();
            let mut ids = vec![inner.pad_id; n * seq];
            let mut types = vec![0_u32; n * seq];
            let mut mask = vec![0_u32; n * seq];
            for (row, enc) in batch.iter().enumerate() {
                let (at, len) = (row * seq, enc.get_ids().len());
                ids[at..at + len].copy_from_slice(enc.get_ids());
                types[at..at + len].copy_from_slice(enc.get_type_ids());
                mask[at..at + len].copy_from_slice(enc.get_attention_mask());
            }
            let logits = inner.logits(ids, types, mask, n, seq).map_err(|e| {
                Error::provider(PROVIDER, format!("running the model on {n} pair(s)"), e)
            })?;
            scores.extend(logits.into_iter().map(|x| {
                if inner.sigmoid {
                    1.0 / (1.0 + (-x).exp())
                } else {
                    x
                }
            }));
        }
        Ok(scores)
    }
}

impl Inner {
    fn logits(
        &self,
        ids: Vec<u32>,
        types: Vec<u32>,
        mask: Vec<u32>,
        n: usize,
        seq: usize,
    ) -> candle_core::Result<Vec<f32>> {
        let dev = Device::Cpu;
        let ids = Tensor::from_vec(ids, (n, seq), &dev)?;
        let types = Tensor::from_vec(types, (n, seq), &dev)?;
        let mask = Tensor::from_vec(mask, (n, seq), &dev)?;
        let hidden = self.bert.forward(&ids, &types, Some(&mask))?;
        let cls = hidden.i((.., 0))?.contiguous()?;
        let pooled = self.pooler.forward(&cls)?.tanh()?;
        self.classifier
            .forward(&pooled)?
            .flatten_all()?
            .to_vec1::<f32>()
    }
}

/// The number of labels: the size of `id2label` (which transformers prefers),
/// else `num_labels`, else 2 (the transformers default).
fn num_labels(config: &Value) -> usize {
    if let Some(labels) = config.get("id2label").and_then(Value::as_object) {
        return labels.len();
    }
    config
        .get("num_labels")
        .and_then(Value::as_u64)
        .map_or(2, |n| n as usize)
}

/// Whether scores go through a sigmoid, as sentence-transformers decides:
/// the `activation_fn` of `config_sentence_transformers.json`, else of
/// `config.json`'s `sentence_transformers` table, else its pre-4.0
/// `sbert_ce_default_activation_function`, else a sigmoid for one label.
fn sigmoid_activation(folder: &Path, config: &Value) -> Result<bool> {
    let st_path = folder.join("config_sentence_transformers.json");
    let st_config: Option<Value> = match std::fs::read_to_string(&st_path) {
        Ok(text) => Some(
            serde_json::from_str(&text).map_err(|e| corrupt(&st_path, format!("not JSON: {e}")))?,
        ),
        Err(_) => None,
    };
    let named = st_config
        .as_ref()
        .and_then(|c| c.get("activation_fn"))
        .or_else(|| config.pointer("/sentence_transformers/activation_fn"))
        .or_else(|| config.get("sbert_ce_default_activation_function"))
        .and_then(Value::as_str);
    match named {
        None => Ok(true),
        Some(name) if name.ends_with(".Sigmoid") => Ok(true),
        Some(name) if name.ends_with(".Identity") => Ok(false),
        Some(name) => Err(Error::Unsupported(format!(
            "{}: activation `{name}`: only Sigmoid and Identity are supported",
            folder.display()
        ))),
    }
}

//! The BERT encoder behind the embeddings: a batch's tokens packed end to end
//! (no padding), matrix products on buffers reused across layers and batches.
//!
//! The sums are those of candle's `BertModel` (the reference in the tests):
//! padding never enters a product, since attention runs per text over its own
//! tokens, which is what the padding mask achieves there.

use crate::kernels::{View, gelu_erf, gelu_tanh, layer_norm, matmul, relu, softmax_rows, widest};
use candle_core::Tensor;
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};
use rayon::prelude::*;
use std::cell::RefCell;

/// A dense layer with its weight stored transposed, `[inputs, outputs]` row-major.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    outputs: usize,
}

impl Linear {
    fn from_tensors(weight: &Tensor, bias: &Tensor) -> candle_core::Result<Self> {
        let outputs = weight.dim(0)?;
        Ok(Self {
            weight: weight.t()?.contiguous()?.flatten_all()?.to_vec1()?,
            bias: bias.to_vec1()?,
            outputs,
        })
    }

    fn load(vb: &VarBuilder, inputs: usize, outputs: usize) -> candle_core::Result<Self> {
        Self::from_tensors(
            &vb.get((outputs, inputs), "weight")?,
            &vb.get(outputs, "bias")?,
        )
    }

    /// `out[rows, outputs] = base + x[rows, inputs] · W + b`, where `base` is
    /// what `out` holds when `accumulate` (a residual) and zero otherwise.
    fn apply(&self, x: &[f32], rows: usize, out: &mut [f32], accumulate: bool, threads: usize) {
        let inputs = self.weight.len() / self.outputs;
        let out = &mut out[..rows * self.outputs];
        for row in out.chunks_exact_mut(self.outputs) {
            if accumulate {
                row.iter_mut().zip(&self.bias).for_each(|(o, b)| *o += b);
            } else {
                row.copy_from_slice(&self.bias);
            }
        }
        matmul(
            out,
            self.outputs,
            (rows, self.outputs, inputs),
            View::new(x, inputs, 1),
            View::new(&self.weight, self.outputs, 1),
            1.0,
            true,
            threads,
        );
    }
}

/// LayerNorm's scale and shift.
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(vb: &VarBuilder, size: usize, eps: f64) -> candle_core::Result<Self> {
        Ok(Self {
            gamma: vb.get(size, "weight")?.to_vec1()?,
            beta: vb.get(size, "bias")?.to_vec1()?,
            eps: eps as f32,
        })
    }

    fn apply(&self, x: &mut [f32]) {
        layer_norm(x, &self.gamma, &self.beta, self.eps);
    }
}

/// One transformer layer; query, key and value fused into one product.
struct Layer {
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    up: Linear,
    down: Linear,
    output_norm: Norm,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config) -> candle_core::Result<Self> {
        let h = c.hidden_size;
        let attention = vb.pp("attention");
        let this = attention.pp("self");
        let part = |name: &str| -> candle_core::Result<(Tensor, Tensor)> {
            let vb = this.pp(name);
            Ok((vb.get((h, h), "weight")?, vb.get(h, "bias")?))
        };
        let (q, k, v) = (part("query")?, part("key")?, part("value")?);
        let qkv = Linear::from_tensors(
            &Tensor::cat(&[&q.0, &k.0, &v.0], 0)?,
            &Tensor::cat(&[&q.1, &k.1, &v.1], 0)?,
        )?;
        let output = attention.pp("output");
        Ok(Self {
            qkv,
            attention_out: Linear::load(&output.pp("dense"), h, h)?,
            attention_norm: Norm::load(&output.pp("LayerNorm"), h, c.layer_norm_eps)?,
            up: Linear::load(&vb.pp("intermediate").pp("dense"), h, c.intermediate_size)?,
            down: Linear::load(&vb.pp("output").pp("dense"), c.intermediate_size, h)?,
            output_norm: Norm::load(&vb.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
        })
    }
}

/// Where one text's tokens sit in the packed batch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) len: usize,
}

/// Buffers of one embedding call, grown to the largest batch and reused.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    next: Vec<f32>,
    inner: Vec<f32>,
}

fn grow(buffer: &mut Vec<f32>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
}

thread_local! {
    /// One text's attention scores for one head, kept per worker thread.
    static SCORES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// A BERT encoder (embeddings and layers) loaded from safetensors.
pub(crate) struct BertEncoder {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    intermediate: usize,
    activation: HiddenAct,
    vocab: usize,
    max_positions: usize,
    type_vocab: usize,
}

impl BertEncoder {
    /// Loads the weights as candle's `BertModel` names them, with or without
    /// a `bert.` (or `{model_type}.`) prefix.
    pub(crate) fn load(vb: VarBuilder, c: &Config) -> candle_core::Result<Self> {
        let key = "embeddings.word_embeddings.weight";
        let vb = if vb.contains_tensor(key) {
            vb
        } else if vb.contains_tensor(&format!("bert.{key}")) {
            vb.pp("bert")
        } else {
            match &c.model_type {
                Some(t) if vb.contains_tensor(&format!("{t}.{key}")) => vb.pp(t),
                _ => vb,
            }
        };
        if c.hidden_size == 0 || c.intermediate_size == 0 || c.num_attention_heads == 0 {
            candle_core::bail!(
                "hidden_size {}, intermediate_size {} and num_attention_heads {} must all be positive",
                c.hidden_size,
                c.intermediate_size,
                c.num_attention_heads
            );
        }
        if !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            candle_core::bail!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                c.hidden_size,
                c.num_attention_heads
            );
        }
        let h = c.hidden_size;
        let e = vb.pp("embeddings");
        let table = |name: &str, rows: usize| -> candle_core::Result<Vec<f32>> {
            e.pp(name)
                .get((rows, h), "weight")?
                .flatten_all()?
                .to_vec1()
        };
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), c))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self {
            word: table("word_embeddings", c.vocab_size)?,
            position: table("position_embeddings", c.max_position_embeddings)?,
            token_type: table("token_type_embeddings", c.type_vocab_size)?,
            embedding_norm: Norm::load(&e.pp("LayerNorm"), h, c.layer_norm_eps)?,
            layers,
            hidden: h,
            heads: c.num_attention_heads,
            intermediate: c.intermediate_size,
            activation: c.hidden_act,
            vocab: c.vocab_size,
            max_positions: c.max_position_embeddings,
            type_vocab: c.type_vocab_size,
        })
    }

    /// The last hidden states of a packed batch: `ids` and `types` hold every
    /// text's tokens one after another, `spans` say where each text is.
    /// Returns the states of all tokens, `ids.len() * hidden` values, in
    /// `scratch`'s first buffer.
    pub(crate) fn forward<'s>(
        &self,
        ids: &[u32],
        types: &[u32],
        spans: &[Span],
        scratch: &'s mut Scratch,
    ) -> Result<&'s [f32], String> {
        let (h, t) = (self.hidden, ids.len());
        // Spans must tile the batch in order: attention splits the output by them.
        let mut end = 0;
        let tiled = spans.iter().all(|s| {
            let ok = s.start == end;
            end += s.len;
            ok
        });
        if types.len() != t || !tiled || end != t {
            return Err(format!(
                "{t} token ids, {} type ids and spans covering {end} tokens do not agree",
                types.len()
            ));
        }
        if let Some(s) = spans.iter().find(|s| s.len > self.max_positions) {
            return Err(format!(
                "a text of {} tokens is longer than the model's {} positions",
                s.len, self.max_positions
            ));
        }
        if let Some(id) = ids.iter().find(|&&id| id as usize >= self.vocab) {
            return Err(format!(
                "token id {id} is outside the vocabulary of {}",
                self.vocab
            ));
        }
        if let Some(ty) = types.iter().find(|&&ty| ty as usize >= self.type_vocab) {
            return Err(format!(
                "token type {ty} is outside the model's {}",
                self.type_vocab
            ));
        }
        let threads = rayon::current_num_threads();
        grow(&mut scratch.x, t * h);
        grow(&mut scratch.qkv, t * 3 * h);
        grow(&mut scratch.context, t * h);
        grow(&mut scratch.next, t * h);
        grow(&mut scratch.inner, t * self.intermediate);

        for span in spans {
            for p in 0..span.len {
                let at = span.start + p;
                let (id, ty) = (ids[at] as usize, types[at] as usize);
                let word = &self.word[id * h..(id + 1) * h];
                let kind = &self.token_type[ty * h..(ty + 1) * h];
                let position = &self.position[p * h..(p + 1) * h];
                let row = &mut scratch.x[at * h..(at + 1) * h];
                for (((o, w), k), q) in row.iter_mut().zip(word).zip(kind).zip(position) {
                    *o = (w + k) + q;
                }
            }
        }
        self.embedding_norm.apply(&mut scratch.x[..t * h]);

        for layer in &self.layers {
            layer
                .qkv
                .apply(&scratch.x, t, &mut scratch.qkv, false, threads);
            self.attention(&scratch.qkv, spans, &mut scratch.context[..t * h]);
            scratch.next[..t * h].copy_from_slice(&scratch.x[..t * h]);
            layer
                .attention_out
                .apply(&scratch.context, t, &mut scratch.next, true, threads);
            layer.attention_norm.apply(&mut scratch.next[..t * h]);

            let inner = &mut scratch.inner[..t * self.intermediate];
            layer.up.apply(&scratch.next, t, inner, false, threads);
            match self.activation {
                HiddenAct::Gelu => gelu_erf(inner),
                HiddenAct::GeluApproximate => gelu_tanh(inner),
                HiddenAct::Relu => relu(inner),
            }
            scratch.x[..t * h].copy_from_slice(&scratch.next[..t * h]);
            layer.down.apply(inner, t, &mut scratch.x, true, threads);
            layer.output_norm.apply(&mut scratch.x[..t * h]);
        }
        Ok(&scratch.x[..t * h])
    }

    /// Self-attention of every text over its own tokens, texts in parallel.
    fn attention(&self, qkv: &[f32], spans: &[Span], context: &mut [f32]) {
        let (h, heads) = (self.hidden, self.heads);
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut parts = Vec::with_capacity(spans.len());
        let mut rest = context;
        for span in spans {
            let (part, tail) = rest.split_at_mut(span.len * h);
            parts.push((part, *span));
            rest = tail;
        }
        parts.into_par_iter().for_each(|(out, span)| {
            let n = span.len;
            if n == 0 {
                return;
            }
            let rows = &qkv[span.start * 3 * h..(span.start + n) * 3 * h];
            SCORES.with_borrow_mut(
                #[inline(always)]
                |scores| {
                    widest(
                        #[inline(always)]
                        || {
                            grow(scores, n * n);
                            let scores = &mut scores[..n * n];
                            for head in 0..heads {
                                let q = View::new(&rows[head * d..], 3 * h, 1);
                                let k_t = View::new(&rows[h + head * d..], 1, 3 * h);
                                matmul(scores, n, (n, n, d), q, k_t, scale, false, 1);
                                softmax_rows(scores, n);
                                let v = View::new(&rows[2 * h + head * d..], 3 * h, 1);
                                let probs = View::new(scores, n, 1);
                                matmul(&mut out[head * d..], h, (n, d, n), probs, v, 1.0, false, 1);
                            }
                        },
                    )
                },
            );
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};
    use candle_transformers::models::bert::BertModel;
    use std::path::PathBuf;

    fn tiny() -> (Config, VarBuilder<'static>) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny_bert");
        let config = std::fs::read_to_string(dir.join("config.json")).expect("config");
        let config: Config = serde_json::from_str(&config).expect("bert config");
        let weights = std::fs::read(dir.join("model.safetensors")).expect("weights");
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .expect("safetensors");
        (config, vb)
    }

    /// Texts of 7, 3 and 12 tokens, as ids and type ids.
    fn texts() -> Vec<(Vec<u32>, Vec<u32>)> {
        [7_usize, 3, 12]
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let ids = (0..n)
                    .map(|i| ((i * 17 + k * 5 + 2) % 120) as u32)
                    .collect();
                let types = (0..n).map(|i| u32::from(i >= n / 2 && k == 2)).collect();
                (ids, types)
            })
            .collect()
    }

    #[test]
    fn packed_batches_equal_candles_padded_bert_model() {
        let (config, vb) = tiny();
        let reference = BertModel::load(vb.clone(), &config).expect("candle model");
        let encoder = BertEncoder::load(vb, &config).expect("encoder");
        let texts = texts();
        let seq = texts.iter().map(|t| t.0.len()).max().unwrap_or(0);
        let (mut ids, mut types, mut mask) = (Vec::new(), Vec::new(), Vec::new());
        for (i, t) in &texts {
            let pad = seq - i.len();
            ids.extend(i.iter().copied().chain(std::iter::repeat_n(0, pad)));
            types.extend(t.iter().copied().chain(std::iter::repeat_n(0, pad)));
            mask.extend(std::iter::repeat_n(1_u32, i.len()).chain(std::iter::repeat_n(0, pad)));
        }
        let n = texts.len();
        let tensor = |v: Vec<u32>| Tensor::from_vec(v, (n, seq), &Device::Cpu).expect("tensor");
        let want: Vec<f32> = reference
            .forward(&tensor(ids), &tensor(types), Some(&tensor(mask)))
            .and_then(|t| t.flatten_all()?.to_vec1())
            .expect("candle forward");

        let mut spans = Vec::new();
        let (mut packed, mut packed_types) = (Vec::new(), Vec::new());
        for (i, t) in &texts {
            spans.push(Span {
                start: packed.len(),
                len: i.len(),
            });
            packed.extend_from_slice(i);
            packed_types.extend_from_slice(t);
        }
        let mut scratch = Scratch::default();
        let got = encoder
            .forward(&packed, &packed_types, &spans, &mut scratch)
            .expect("forward")
            .to_vec();
        let h = config.hidden_size;
        let mut worst = 0.0_f32;
        for (row, span) in spans.iter().enumerate() {
            for p in 0..span.len {
                let a = &got[(span.start + p) * h..(span.start + p + 1) * h];
                let b = &want[(row * seq + p) * h..(row * seq + p + 1) * h];
                for (x, y) in a.iter().zip(b) {
                    worst = worst.max((x - y).abs());
                }
            }
        }
        assert!(worst < 1e-5, "largest difference from candle: {worst}");

        // The buffers are reused: a smaller batch after a larger one gives
        // the same states as on fresh buffers.
        let first = spans[1];
        let single = &packed[first.start..first.start + first.len];
        let single_types = &packed_types[first.start..first.start + first.len];
        let one = [Span {
            start: 0,
            len: first.len,
        }];
        let reused = encoder
            .forward(single, single_types, &one, &mut scratch)
            .expect("reused")
            .to_vec();
        let fresh = encoder
            .forward(single, single_types, &one, &mut Scratch::default())
            .expect("fresh")
            .to_vec();
        assert_eq!(reused, fresh);
        assert_eq!(reused, got[first.start * h..(first.start + first.len) * h]);
    }

    #[test]
    fn bad_tokens_are_errors_not_panics() {
        let (config, vb) = tiny();
        let encoder = BertEncoder::load(vb, &config).expect("encoder");
        let mut scratch = Scratch::default();
        let span = |len| [Span { start: 0, len }];
        let err = encoder
            .forward(&[1, 999], &[0, 0], &span(2), &mut scratch)
            .expect_err("id outside the vocabulary");
        assert!(err.contains("token id 999"), "{err}");
        let err = encoder
            .forward(&[1, 2], &[0, 7], &span(2), &mut scratch)
            .expect_err("type outside the model's");
        assert!(err.contains("token type 7"), "{err}");
        let long = vec![1_u32; config.max_position_embeddings + 1];
        let err = encoder
            .forward(&long, &vec![0; long.len()], &span(long.len()), &mut scratch)
            .expect_err("too long");
        assert!(err.contains("positions"), "{err}");
        let err = encoder
            .forward(&[1, 2], &[0, 0], &span(3), &mut scratch)
            .expect_err("spans disagree");
        assert!(err.contains("do not agree"), "{err}");
        let gap = [Span { start: 0, len: 1 }, Span { start: 2, len: 1 }];
        let err = encoder
            .forward(&[1, 2], &[0, 0], &gap, &mut scratch)
            .expect_err("spans leave a gap");
        assert!(err.contains("do not agree"), "{err}");
        assert!(
            encoder
                .forward(&[], &[], &[], &mut scratch)
                .expect("empty")
                .is_empty()
        );
    }
}

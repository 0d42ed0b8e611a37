//! The values Ollama's `/api/chat` and `/api/embed` both take (model options,
//! keep-alive) and the `/api/embed` request and reply, as serde types.
//!
//! Written here rather than taken from a client crate so that the whole
//! workspace speaks HTTP through one reqwest; the field names are Ollama's
//! API documentation's.

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// How long Ollama keeps a model loaded after a request (`keep_alive`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeepAlive {
    /// Stay loaded (`-1`).
    Indefinitely,
    /// Unload as soon as the request is answered (`0`).
    UnloadOnCompletion,
    /// Stay loaded this long after the request (`"30s"`, `"10m"`, `"2h"`).
    Until {
        /// How many units.
        time: u64,
        /// Seconds, minutes or hours.
        unit: TimeUnit,
    },
}

/// The unit of a [`KeepAlive::Until`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// `s`.
    Seconds,
    /// `m`.
    Minutes,
    /// `h`.
    Hours,
}

impl TimeUnit {
    /// The suffix Ollama reads: `s`, `m` or `h`.
    pub fn to_symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "m",
            TimeUnit::Hours => "h",
        }
    }

    /// The unit of a suffix, if it is `s`, `m` or `h`.
    pub fn from_symbol(symbol: &str) -> Option<Self> {
        match symbol {
            "s" => Some(TimeUnit::Seconds),
            "m" => Some(TimeUnit::Minutes),
            "h" => Some(TimeUnit::Hours),
            _ => None,
        }
    }
}

impl Serialize for KeepAlive {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            KeepAlive::Indefinitely => serializer.serialize_i64(-1),
            KeepAlive::UnloadOnCompletion => serializer.serialize_i64(0),
            KeepAlive::Until { time, unit } => {
                serializer.serialize_str(&format!("{time}{}", unit.to_symbol()))
            }
        }
    }
}

impl KeepAlive {
    /// `-1`, `0`, or a whole number followed by `s`, `m` or `h`.
    fn from_text(text: &str) -> Option<Self> {
        match text {
            "-1" => return Some(KeepAlive::Indefinitely),
            "0" => return Some(KeepAlive::UnloadOnCompletion),
            _ => {}
        }
        let unit = TimeUnit::from_symbol(text.get(text.len().checked_sub(1)?..)?)?;
        let time = text[..text.len() - 1].parse::<u64>().ok()?;
        Some(KeepAlive::Until { time, unit })
    }
}

impl<'de> Deserialize<'de> for KeepAlive {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeepAliveVisitor;
        impl Visitor<'_> for KeepAliveVisitor {
            type Value = KeepAlive;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("-1, 0, or a number followed by s, m or h (\"30s\", \"10m\", \"2h\")")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeepAlive, E> {
                match v {
                    -1 => Ok(KeepAlive::Indefinitely),
                    0 => Ok(KeepAlive::UnloadOnCompletion),
                    _ => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeepAlive, E> {
                match v {
                    0 => Ok(KeepAlive::UnloadOnCompletion),
                    _ => Err(E::invalid_value(de::Unexpected::Unsigned(v), &self)),
                }
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeepAlive, E> {
                KeepAlive::from_text(v)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(KeepAliveVisitor)
    }
}

/// Ollama's `options` object: the model parameters a request may set (a
/// Modelfile's `PARAMETER`s). Unset fields are not sent, so the model's own
/// values apply; options this type does not name ride in [`Self::extra`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelOptions {
    /// Mirostat sampling: 0 off, 1 Mirostat, 2 Mirostat 2.0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirostat: Option<u8>,
    /// Mirostat's learning rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirostat_eta: Option<f32>,
    /// Mirostat's balance between coherence and diversity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirostat_tau: Option<f32>,
    /// The context window in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u64>,
    /// Grouped-query attention groups (some older models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_gqa: Option<u32>,
    /// Layers to offload to the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_gpu: Option<u32>,
    /// CPU threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_thread: Option<u32>,
    /// How far back to look to penalise repetition (0 off, -1 the whole context).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_last_n: Option<i32>,
    /// How strongly repetition is penalised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_penalty: Option<f32>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The random seed, for reproducible output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i32>,
    /// Sequences that end generation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Tail-free sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tfs_z: Option<f32>,
    /// The most tokens to generate (-1 unbounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_predict: Option<i32>,
    /// Top-k sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Nucleus sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Min-p sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_p: Option<f32>,
    /// Any other option, sent as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ModelOptions {
    /// Sets `temperature`.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets `num_ctx`.
    pub fn num_ctx(mut self, num_ctx: u64) -> Self {
        self.num_ctx = Some(num_ctx);
        self
    }

    /// Sets `seed`.
    pub fn seed(mut self, seed: i32) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets `stop`.
    pub fn stop(mut self, stop: Vec<String>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Sets `num_predict`.
    pub fn num_predict(mut self, num_predict: i32) -> Self {
        self.num_predict = Some(num_predict);
        self
    }

    /// Sets `top_k`.
    pub fn top_k(mut self, top_k: u32) -> Self {
        self.top_k = Some(top_k);
        self
    }

    /// Sets `top_p`.
    pub fn top_p(mut self, top_p: f32) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Sets any other option by name.
    pub fn extra(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

/// The body of a `/api/embed` request.
#[derive(Clone, Debug, Serialize)]
pub struct EmbedRequest {
    /// The model's name.
    pub model: String,
    /// The texts, embedded in one batch.
    pub input: Vec<String>,
    /// Whether an input longer than the context is cut (`true`) or refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncate: Option<bool>,
    /// Model options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<ModelOptions>,
    /// How long the model stays loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<KeepAlive>,
    /// The output size, for models that can shorten their vectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
}

/// A `/api/embed` reply: one vector per input, in order.
#[derive(Clone, Debug, Deserialize)]
pub struct EmbedReply {
    /// The vectors.
    pub embeddings: Vec<Vec<f32>>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keep_alive_reads_and_writes_the_forms_ollama_accepts() {
        for (text, value) in [
            (json!(-1), KeepAlive::Indefinitely),
            (json!(0), KeepAlive::UnloadOnCompletion),
            (
                json!("30s"),
                KeepAlive::Until {
                    time: 30,
                    unit: TimeUnit::Seconds,
                },
            ),
            (
                json!("2h"),
                KeepAlive::Until {
                    time: 2,
                    unit: TimeUnit::Hours,
                },
            ),
        ] {
            assert_eq!(
                serde_json::from_value::<KeepAlive>(text.clone()).unwrap(),
                value
            );
            assert_eq!(serde_json::to_value(&value).unwrap(), text);
        }
        for bad in [
            json!("5"),
            json!("m"),
            json!("3d"),
            json!("é"),
            json!(7),
            json!(""),
        ] {
            assert!(
                serde_json::from_value::<KeepAlive>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn options_keep_unknown_keys_and_refuse_wrong_types() {
        let options: ModelOptions =
            serde_json::from_value(json!({"temperature": 0.5, "num_batch": 8})).unwrap();
        assert_eq!(options.temperature, Some(0.5));
        assert_eq!(
            serde_json::to_value(&options).unwrap(),
            json!({"temperature": 0.5, "num_batch": 8})
        );
        assert!(serde_json::from_value::<ModelOptions>(json!({"temperature": "hot"})).is_err());
    }
}

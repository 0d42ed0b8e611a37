//! Sentence-transformers pooling: turns a model's per-token vectors into one
//! vector per text (mean, CLS, max, mean-sqrt-len, weighted mean, last token).

use ragloom_core::{Error, Result};
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// One pooling mode of a sentence-transformers `Pooling` module
/// (`1_Pooling/config.json`'s `pooling_mode_*` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PoolingMode {
    /// The first counted token's vector (`[CLS]`): `pooling_mode_cls_token`.
    Cls,
    /// The largest value of each component over the text's tokens: `pooling_mode_max_tokens`.
    Max,
    /// The average of the text's token vectors: `pooling_mode_mean_tokens`.
    Mean,
    /// The sum of the token vectors over the square root of the token count:
    /// `pooling_mode_mean_sqrt_len_tokens`.
    MeanSqrtLen,
    /// The average weighted by position (1, 2, ...): `pooling_mode_weightedmean_tokens`.
    WeightedMean,
    /// The last token's vector: `pooling_mode_lasttoken`.
    LastToken,
}

impl PoolingMode {
    /// The modes in the order sentence-transformers concatenates them.
    pub const ALL: [PoolingMode; 6] = [
        PoolingMode::Cls,
        PoolingMode::Max,
        PoolingMode::Mean,
        PoolingMode::MeanSqrtLen,
        PoolingMode::WeightedMean,
        PoolingMode::LastToken,
    ];

    /// The `1_Pooling/config.json` key that turns this mode on.
    pub fn config_key(self) -> &'static str {
        match self {
            PoolingMode::Cls => "pooling_mode_cls_token",
            PoolingMode::Max => "pooling_mode_max_tokens",
            PoolingMode::Mean => "pooling_mode_mean_tokens",
            PoolingMode::MeanSqrtLen => "pooling_mode_mean_sqrt_len_tokens",
            PoolingMode::WeightedMean => "pooling_mode_weightedmean_tokens",
            PoolingMode::LastToken => "pooling_mode_lasttoken",
        }
    }

    /// The short name sentence-transformers accepts as `pooling_mode` (`"mean"`, `"cls"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            PoolingMode::Cls => "cls",
            PoolingMode::Max => "max",
            PoolingMode::Mean => "mean",
            PoolingMode::MeanSqrtLen => "mean_sqrt_len_tokens",
            PoolingMode::WeightedMean => "weightedmean",
            PoolingMode::LastToken => "lasttoken",
        }
    }
}

impl fmt::Display for PoolingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A sentence-transformers `Pooling` module: which modes, concatenated in
/// [`PoolingMode::ALL`]'s order, and whether an instruction's tokens count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pooling {
    /// The modes switched on (at least one), in concatenation order.
    pub modes: Vec<PoolingMode>,
    /// Whether the tokens of a query or text instruction take part in pooling
    /// (`include_prompt`, default true).
    pub include_prompt: bool,
}

impl Default for Pooling {
    /// Mean pooling, as sentence-transformers builds for a bare transformer folder.
    fn default() -> Self {
        Self {
            modes: vec![PoolingMode::Mean],
            include_prompt: true,
        }
    }
}

impl Pooling {
    /// One mode.
    pub fn new(mode: PoolingMode) -> Self {
        Self {
            modes: vec![mode],
            include_prompt: true,
        }
    }

    /// Reads a `Pooling` module's `config.json` (the file is named in errors).
    pub fn from_config(config: &Value, path: &Path) -> Result<Self> {
        let corrupt = |message: String| Error::CorruptFile {
            path: path.to_path_buf(),
            message,
        };
        let obj = config
            .as_object()
            .ok_or_else(|| corrupt("expected a JSON object".to_owned()))?;
        let flag = |key: &str| -> Result<bool> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(other) => Err(corrupt(format!(
                    "`{key}` must be true or false, got {other}"
                ))),
            }
        };
        let mut modes = Vec::new();
        for mode in PoolingMode::ALL {
            if flag(mode.config_key())? {
                modes.push(mode);
            }
        }
        // sentence-transformers 6 writes `pooling_mode`: a name or a list of names.
        let names: Vec<&Value> = match obj.get("pooling_mode") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list.iter().collect(),
            Some(one) => vec![one],
        };
        for name in names {
            let name = name
                .as_str()
                .ok_or_else(|| corrupt(format!("`pooling_mode` must name modes, got {name}")))?;
            let mode = PoolingMode::ALL
                .into_iter()
                .find(|m| m.name() == name || (name == "mean_sqrt_len" && *m == PoolingMode::MeanSqrtLen))
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "pooling mode `{name}` in {}: supported are cls, max, mean, mean_sqrt_len_tokens, weightedmean, lasttoken",
                        path.display()
                    ))
                })?;
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
        modes.sort_by_key(|m| PoolingMode::ALL.iter().position(|a| a == m));
        for key in obj.keys() {
            let known = PoolingMode::ALL.iter().any(|m| m.config_key() == key);
            if key.starts_with("pooling_mode_") && !known && flag(key)? {
                return Err(Error::Unsupported(format!(
                    "pooling mode `{key}` in {}: supported are {}",
                    path.display(),
                    PoolingMode::ALL.map(PoolingMode::config_key).join(", ")
                )));
            }
        }
        if modes.is_empty() {
            return Err(corrupt(
                "no pooling mode is switched on (e.g. \"pooling_mode_mean_tokens\": true)"
                    .to_owned(),
            ));
        }
        let include_prompt = match obj.get("include_prompt") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(corrupt(format!(
                    "`include_prompt` must be true or false, got {other}"
                )));
            }
        };
        Ok(Self {
            modes,
            include_prompt,
        })
    }

    /// The pooled vector's length for token vectors of length `hidden`.
    pub fn output_dimension(&self, hidden: usize) -> usize {
        hidden * self.modes.len()
    }

    /// Pools one text: `tokens` holds `mask.len()` token vectors of `hidden`
    /// values each, row after row; `mask` is 1 for tokens that count.
    pub(crate) fn pool(&self, tokens: &[f32], mask: &[u32], hidden: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.output_dimension(hidden));
        let rows = || {
            tokens
                .chunks_exact(hidden)
                .zip(mask.iter())
                .enumerate()
                .filter(|(_, (_, m))| **m != 0)
                .map(|(i, (row, _))| (i, row))
        };
        let counted = mask.iter().filter(|m| **m != 0).count() as f32;
        for mode in &self.modes {
            match mode {
                PoolingMode::Cls => {
                    // sentence-transformers takes the first token that counts
                    // (the first token when none does).
                    let first = rows()
                        .next()
                        .map(|(_, row)| row)
                        .or_else(|| tokens.get(..hidden));
                    match first {
                        Some(row) => out.extend_from_slice(row),
                        None => out.extend(std::iter::repeat_n(0.0, hidden)),
                    }
                }
                PoolingMode::Max => {
                    // Masked tokens never win (sentence-transformers fills them with -inf;
                    // -1e9 keeps a text with no counted token finite).
                    let mut acc = vec![-1e9_f32; hidden];
                    for (_, row) in rows() {
                        for (a, v) in acc.iter_mut().zip(row) {
                            *a = a.max(*v);
                        }
                    }
                    out.extend(acc);
                }
                PoolingMode::Mean | PoolingMode::MeanSqrtLen => {
                    let mut acc = vec![0.0_f32; hidden];
                    for (_, row) in rows() {
                        for (a, v) in acc.iter_mut().zip(row) {
                            *a += v;
                        }
                    }
                    let div = if *mode == PoolingMode::Mean {
                        counted.max(1e-9)
                    } else {
                        counted.sqrt().max(1e-9)
                    };
                    out.extend(acc.into_iter().map(|a| a / div));
                }
                PoolingMode::WeightedMean => {
                    let mut acc = vec![0.0_f32; hidden];
                    let mut total = 0.0_f32;
                    for (i, row) in rows() {
                        let w = (i + 1) as f32;
                        total += w;
                        for (a, v) in acc.iter_mut().zip(row) {
                            *a += v * w;
                        }
                    }
                    let div = total.max(1e-9);
                    out.extend(acc.into_iter().map(|a| a / div));
                }
                PoolingMode::LastToken => match rows().next_back() {
                    Some((_, row)) => out.extend_from_slice(row),
                    None => out.extend(std::iter::repeat_n(0.0, hidden)),
                },
            }
        }
        out
    }
}

/// Scales `v` to unit length (torch's `normalize`: divides by max(norm, 1e-12)).
pub(crate) fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for x in v {
        *x /= norm;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(mode: PoolingMode) -> Pooling {
        Pooling::new(mode)
    }

    // Three tokens of two values; the last one is padding.
    const TOKENS: [f32; 6] = [1.0, 2.0, 3.0, -4.0, 100.0, 100.0];
    const MASK: [u32; 3] = [1, 1, 0];

    #[test]
    fn each_mode_ignores_padding() {
        assert_eq!(
            p(PoolingMode::Mean).pool(&TOKENS, &MASK, 2),
            vec![2.0, -1.0]
        );
        assert_eq!(p(PoolingMode::Cls).pool(&TOKENS, &MASK, 2), vec![1.0, 2.0]);
        assert_eq!(p(PoolingMode::Max).pool(&TOKENS, &MASK, 2), vec![3.0, 2.0]);
        assert_eq!(
            p(PoolingMode::LastToken).pool(&TOKENS, &MASK, 2),
            vec![3.0, -4.0]
        );
        let s = 2.0_f32.sqrt();
        assert_eq!(
            p(PoolingMode::MeanSqrtLen).pool(&TOKENS, &MASK, 2),
            vec![4.0 / s, -2.0 / s]
        );
        // Weights 1 and 2: (1*1 + 2*3) / 3, (1*2 + 2*-4) / 3.
        assert_eq!(
            p(PoolingMode::WeightedMean).pool(&TOKENS, &MASK, 2),
            vec![7.0 / 3.0, -2.0]
        );
    }

    #[test]
    fn several_modes_concatenate_in_sentence_transformers_order() {
        let cfg = json!({"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true});
        let pooling = Pooling::from_config(&cfg, Path::new("1_Pooling/config.json")).unwrap();
        assert_eq!(pooling.modes, vec![PoolingMode::Cls, PoolingMode::Mean]);
        assert_eq!(pooling.output_dimension(2), 4);
        assert_eq!(pooling.pool(&TOKENS, &MASK, 2), vec![1.0, 2.0, 2.0, -1.0]);
    }

    #[test]
    fn config_errors_name_the_file_or_mode() {
        let path = Path::new("m/1_Pooling/config.json");
        let none = Pooling::from_config(&json!({"pooling_mode_mean_tokens": false}), path);
        let msg = none.unwrap_err().to_string();
        assert!(msg.contains("m/1_Pooling/config.json"), "{msg}");
        let odd = Pooling::from_config(&json!({"pooling_mode_fancy": true}), path);
        let msg = odd.unwrap_err().to_string();
        assert!(msg.contains("pooling_mode_fancy"), "{msg}");
        let named = Pooling::from_config(&json!({"pooling_mode": "lasttoken"}), path).unwrap();
        assert_eq!(named.modes, vec![PoolingMode::LastToken]);
        let listed = Pooling::from_config(&json!({"pooling_mode": ["mean", "cls"]}), path).unwrap();
        assert_eq!(listed.modes, vec![PoolingMode::Cls, PoolingMode::Mean]);
        let bad = Pooling::from_config(&json!({"pooling_mode": "median"}), path);
        assert!(bad.unwrap_err().to_string().contains("median"));
    }

    #[test]
    fn normalize_gives_unit_length_and_keeps_zero() {
        let mut v = vec![3.0, 4.0];
        l2_normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut z = vec![0.0, 0.0];
        l2_normalize(&mut z);
        assert_eq!(z, vec![0.0, 0.0]);
    }
}

//! What a GGUF file says besides its weights: architecture, context length,
//! and the tokenizer (`tokenizer.ggml.*`) rebuilt as a Hugging Face `tokenizers` BPE.

use candle_core::quantized::gguf_file::{Content, Value};
use ragloom_core::{Error, Result};
use std::path::Path;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, PreTokenizerWrapper, Tokenizer};

/// GGUF `tokenizer.ggml.token_type` of control tokens (`<|im_end|>`, ...).
const TOKEN_TYPE_CONTROL: i32 = 3;
/// GGUF `tokenizer.ggml.token_type` of user-defined tokens, matched whole too.
const TOKEN_TYPE_USER_DEFINED: i32 = 4;

/// Control tokens that end a turn in the common chat formats; llama.cpp
/// treats these as end-of-generation too, whatever `eos_token_id` says.
const END_OF_TURN_TOKENS: [&str; 6] = [
    "<|endoftext|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|end|>",
    "<end_of_turn>",
    "</s>",
];

/// Pre-tokenizer names (`tokenizer.ggml.pre`) whose models split digits one by
/// one before GPT-2's byte-level split (llama.cpp's grouping).
const DIGIT_SPLITTING_PRE: [&str; 7] = [
    "smollm",
    "starcoder",
    "refact",
    "command-r",
    "codeshell",
    "exaone",
    "minerva-7b",
];

/// The special tokens and settings read from the GGUF metadata.
#[derive(Clone, Debug)]
pub(crate) struct Specials {
    pub bos_token: String,
    pub bos_id: Option<u32>,
    pub eos_token: String,
    pub eos_ids: Vec<u32>,
    pub add_bos: bool,
}

pub(crate) fn get<'a>(content: &'a Content, key: &str) -> Option<&'a Value> {
    content.metadata.get(key)
}

pub(crate) fn get_str<'a>(content: &'a Content, key: &str) -> Option<&'a str> {
    get(content, key)
        .and_then(|v| v.to_string().ok())
        .map(String::as_str)
}

pub(crate) fn get_u32(content: &Content, key: &str) -> Option<u32> {
    get(content, key).and_then(|v| match v {
        Value::U32(x) => Some(*x),
        Value::I32(x) => u32::try_from(*x).ok(),
        Value::U64(x) => u32::try_from(*x).ok(),
        Value::I64(x) => u32::try_from(*x).ok(),
        _ => None,
    })
}

fn corrupt(path: &Path, what: impl Into<String>) -> Error {
    Error::CorruptFile {
        path: path.to_path_buf(),
        message: what.into(),
    }
}

/// The token strings of the vocabulary.
fn tokens(content: &Content, path: &Path) -> Result<Vec<String>> {
    let values = get(content, "tokenizer.ggml.tokens")
        .and_then(|v| v.to_vec().ok())
        .ok_or_else(|| corrupt(path, "no `tokenizer.ggml.tokens` in the GGUF metadata"))?;
    values
        .iter()
        .map(|v| v.to_string().cloned())
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| corrupt(path, format!("`tokenizer.ggml.tokens`: {e}")))
}

/// Builds the tokenizer from `tokenizer.ggml.*` (BPE models, "gpt2", only)
/// and reads the special tokens.
pub(crate) fn tokenizer_from_gguf(content: &Content, path: &Path) -> Result<(Tokenizer, Specials)> {
    let model = get_str(content, "tokenizer.ggml.model").unwrap_or("");
    if model != "gpt2" {
        return Err(Error::Unsupported(format!(
            "{}: tokenizer model `{model}` (only byte-level BPE, `gpt2`, is built from GGUF \
             metadata; pass a tokenizer.json with `tokenizer_json`)",
            path.display()
        )));
    }
    let tokens = tokens(content, path)?;
    let token_types: Vec<i32> = get(content, "tokenizer.ggml.token_type")
        .and_then(|v| v.to_vec().ok())
        .map(|vs| vs.iter().map(|v| v.to_i32().unwrap_or(1)).collect())
        .unwrap_or_default();
    let merges: Vec<(String, String)> = get(content, "tokenizer.ggml.merges")
        .and_then(|v| v.to_vec().ok())
        .ok_or_else(|| corrupt(path, "no `tokenizer.ggml.merges` in the GGUF metadata"))?
        .iter()
        .map(|v| {
            let merge = v
                .to_string()
                .map_err(|e| corrupt(path, format!("`tokenizer.ggml.merges`: {e}")))?;
            merge
                .split_once(' ')
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| corrupt(path, format!("merge `{merge}` has no space")))
        })
        .collect::<Result<_>>()?;
    let vocab: Vocab = tokens
        .iter()
        .enumerate()
        .filter_map(|(i, t)| u32::try_from(i).ok().map(|id| (t.clone(), id)))
        .collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| corrupt(path, format!("building the BPE tokenizer: {e}")))?;
    let mut tokenizer = Tokenizer::new(bpe);
    let byte_level = ByteLevel::new(false, true, true);
    let pre = get_str(content, "tokenizer.ggml.pre").unwrap_or("default");
    if DIGIT_SPLITTING_PRE.contains(&pre) {
        tokenizer.with_pre_tokenizer(Some(Sequence::new(vec![
            PreTokenizerWrapper::Digits(Digits::new(true)),
            PreTokenizerWrapper::ByteLevel(byte_level),
        ])));
    } else {
        tokenizer.with_pre_tokenizer(Some(byte_level));
    }
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    let specials: Vec<AddedToken> = tokens
        .iter()
        .zip(&token_types)
        .filter(|(_, t)| **t == TOKEN_TYPE_CONTROL || **t == TOKEN_TYPE_USER_DEFINED)
        .map(|(tok, _)| AddedToken::from(tok.clone(), true))
        .collect();
    tokenizer
        .add_special_tokens(specials)
        .map_err(|e| corrupt(path, format!("adding the control tokens: {e}")))?;
    let specials = specials_from(content, &tokens, &token_types);
    Ok((tokenizer, specials))
}

/// Special tokens of a GGUF file; `tokens` are its vocabulary (possibly empty
/// when a tokenizer.json is used, then names are looked up there by `token_name`).
pub(crate) fn specials_from(content: &Content, tokens: &[String], token_types: &[i32]) -> Specials {
    let name = |id: Option<u32>| {
        id.and_then(|id| tokens.get(id as usize))
            .cloned()
            .unwrap_or_default()
    };
    let bos_id = get_u32(content, "tokenizer.ggml.bos_token_id");
    let eos_id = get_u32(content, "tokenizer.ggml.eos_token_id");
    let mut eos_ids: Vec<u32> = [eos_id, get_u32(content, "tokenizer.ggml.eot_token_id")]
        .into_iter()
        .flatten()
        .collect();
    for (i, tok) in tokens.iter().enumerate() {
        let control = token_types.get(i).is_none_or(|t| *t == TOKEN_TYPE_CONTROL);
        if control && END_OF_TURN_TOKENS.contains(&tok.as_str()) {
            if let Ok(id) = u32::try_from(i) {
                eos_ids.push(id);
            }
        }
    }
    eos_ids.sort_unstable();
    eos_ids.dedup();
    Specials {
        bos_token: name(bos_id),
        bos_id,
        eos_token: name(eos_id),
        eos_ids,
        add_bos: get(content, "tokenizer.ggml.add_bos_token")
            .and_then(|v| v.to_bool().ok())
            .unwrap_or(false),
    }
}

/// The vocabulary strings, for naming special tokens when the tokenizer
/// comes from a tokenizer.json.
pub(crate) fn vocabulary(content: &Content, path: &Path) -> Result<(Vec<String>, Vec<i32>)> {
    let tokens = tokens(content, path)?;
    let types = get(content, "tokenizer.ggml.token_type")
        .and_then(|v| v.to_vec().ok())
        .map(|vs| vs.iter().map(|v| v.to_i32().unwrap_or(1)).collect())
        .unwrap_or_default();
    Ok((tokens, types))
}

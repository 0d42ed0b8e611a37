//! The model's own token count, so text can be split into chunks the model
//! reads whole: a chunk longer than `max_seq_length` is cut before it is embedded.

use crate::folder::SentenceTransformerConfig;
use ragloom_core::error::{Error, Result};
use std::path::Path;
use tokenizers::Tokenizer;

/// Counts tokens as a sentence-transformers folder's tokenizer makes them
/// (lowercased when the model asks for it), without the special tokens
/// added around every text. Reads the folder's configuration and
/// `tokenizer.json` only, not the weights.
#[derive(Clone)]
pub struct ModelTokenizer {
    tokenizer: Tokenizer,
    do_lower_case: bool,
    max_length: usize,
    special_tokens: usize,
}

impl std::fmt::Debug for ModelTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTokenizer")
            .field("max_length", &self.max_length)
            .field("special_tokens", &self.special_tokens)
            .finish_non_exhaustive()
    }
}

impl ModelTokenizer {
    /// The tokenizer of the model folder `folder`.
    pub fn from_folder(folder: &Path) -> Result<Self> {
        let st = SentenceTransformerConfig::read(folder)?;
        let path = folder.join("tokenizer.json");
        if !path.is_file() {
            return Err(Error::NotFound(format!(
                "{}: the model folder needs a fast-tokenizer file tokenizer.json",
                path.display()
            )));
        }
        let mut tokenizer = Tokenizer::from_file(&path).map_err(|e| Error::CorruptFile {
            path: path.clone(),
            message: format!("not a tokenizer.json the tokenizers crate reads: {e}"),
        })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| Error::invalid("tokenizer.json", e))?;
        let special_tokens = tokenizer
            .encode("", true)
            .map(|e| e.get_ids().len())
            .map_err(|e| Error::CorruptFile {
                path,
                message: format!("cannot encode with it: {e}"),
            })?;
        Ok(Self {
            tokenizer,
            do_lower_case: st.do_lower_case,
            max_length: st.max_seq_length.min(st.max_position_embeddings),
            special_tokens,
        })
    }

    /// The longest input the model reads, special tokens included.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// Tokens added around every text (`[CLS]` and `[SEP]` for BERT).
    pub fn special_tokens(&self) -> usize {
        self.special_tokens
    }

    /// The most tokens of text one input holds: the maximum length less
    /// the special tokens. A chunk this long (metadata included) is embedded whole.
    pub fn chunk_budget(&self) -> usize {
        self.max_length.saturating_sub(self.special_tokens).max(1)
    }
}

impl ragloom_core::Tokenizer for ModelTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        let text = if self.do_lower_case {
            text.to_lowercase()
        } else {
            text.to_owned()
        };
        match self.tokenizer.encode(text.as_str(), false) {
            Ok(e) => e.get_ids().to_vec(),
            // A tokenizer that cannot encode a text: counting one token per
            // byte overestimates, so chunks come out small rather than cut.
            Err(_) => vec![0; text.len()],
        }
    }
}

//! `KeywordNodePostprocessor`: keeps nodes containing every required keyword
//! phrase and none of the excluded ones, matched whole-token and case-sensitively.

use super::NodePostprocessor;
use crate::error::Result;
use crate::schema::{MetadataMode, NodeWithScore, QueryBundle};
use async_trait::async_trait;

/// Filters nodes by keyword phrases (LlamaIndex `KeywordNodePostprocessor`).
///
/// A node is kept when its bare text (`MetadataMode::None`, as Python's
/// `get_content()` of a text node) contains at least one of
/// `required_keywords` (if any are given) and none of `exclude_keywords`.
///
/// LlamaIndex matches with spaCy's `PhraseMatcher` over a blank pipeline of
/// `lang`: whole tokens, compared case-sensitively. ragloom does the same
/// without spaCy, with its own tokenization ([`keyword_tokens`]): runs of
/// letters and digits are tokens, every other non-space character is a token
/// of its own, whitespace separates. So `"cat"` matches `"the cat sat"` and
/// `"cat."` but not `"cats"`, `"Cat"` or `"concat"`, and `"New York"` matches
/// `"New  York"`. spaCy splits a few things differently (`"don't"` is
/// `do` + `n't` there), which can differ for keywords cut mid-word; `lang` is
/// kept for LlamaIndex compatibility but does not change the tokenization.
#[derive(Clone, Debug)]
pub struct KeywordNodePostprocessor {
    /// A node must contain at least one of these (when non-empty).
    pub required_keywords: Vec<String>,
    /// A node containing any of these is dropped.
    pub exclude_keywords: Vec<String>,
    /// The spaCy language LlamaIndex would tokenize with (default `"en"`).
    pub lang: String,
}

impl Default for KeywordNodePostprocessor {
    fn default() -> Self {
        Self {
            required_keywords: Vec::new(),
            exclude_keywords: Vec::new(),
            lang: "en".to_string(),
        }
    }
}

impl KeywordNodePostprocessor {
    /// A postprocessor with no keywords (keeps everything).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the required keywords.
    pub fn required_keywords<I, S>(mut self, keywords: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_keywords = keywords.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the excluded keywords.
    pub fn exclude_keywords<I, S>(mut self, keywords: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.exclude_keywords = keywords.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the language (kept for LlamaIndex compatibility).
    pub fn lang(mut self, lang: impl Into<String>) -> Self {
        self.lang = lang.into();
        self
    }
}

/// The tokens keyword matching compares: runs of alphanumeric characters,
/// and each other non-whitespace character alone.
pub fn keyword_tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut run_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() || c == '_' {
            run_start.get_or_insert(i);
            continue;
        }
        if let Some(s) = run_start.take() {
            out.push(&text[s..i]);
        }
        if !c.is_whitespace() {
            out.push(&text[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = run_start {
        out.push(&text[s..]);
    }
    out
}

/// Whether any of `phrases` occurs as a run of whole tokens in `tokens`.
fn any_phrase(tokens: &[&str], phrases: &[Vec<&str>]) -> bool {
    phrases
        .iter()
        .filter(|p| !p.is_empty())
        .any(|p| tokens.windows(p.len()).any(|w| w == p.as_slice()))
}

#[async_trait]
impl NodePostprocessor for KeywordNodePostprocessor {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        let required: Vec<Vec<&str>> = self
            .required_keywords
            .iter()
            .map(|k| keyword_tokens(k))
            .collect();
        let excluded: Vec<Vec<&str>> = self
            .exclude_keywords
            .iter()
            .map(|k| keyword_tokens(k))
            .collect();
        Ok(nodes
            .into_iter()
            .filter(|n| {
                let text = n.node.get_content(MetadataMode::None);
                let tokens = keyword_tokens(&text);
                if !required.is_empty() && !any_phrase(&tokens, &required) {
                    return false;
                }
                excluded.is_empty() || !any_phrase(&tokens, &excluded)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_words_and_punctuation() {
        assert_eq!(
            keyword_tokens("New  York's best, (really)!"),
            [
                "New", "York", "'", "s", "best", ",", "(", "really", ")", "!"
            ]
        );
        assert_eq!(keyword_tokens("  "), Vec::<&str>::new());
        assert_eq!(keyword_tokens("héllo wörld"), ["héllo", "wörld"]);
    }
}

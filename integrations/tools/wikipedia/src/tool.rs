//! `WikipediaToolSpec`: `load_data(page, lang)` and `search_data(query,
//! lang)`, named, described and answering as LlamaIndex's.

use crate::client::WikipediaClient;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::tools::{
    SpecFunctionTool, SpecFunctions, Tool, ToolArgs, ToolMetadata, ToolSpec, unknown_function,
};
use serde_json::{Value, json};
use std::sync::Arc;

/// `load_data`'s description, LlamaIndex's docstring as it reaches the model.
pub const LOAD_DATA_DESCRIPTION: &str = "load_data(page: str, lang: str = 'en') -> str\n\n        Retrieve a Wikipedia page. Useful for learning about a particular concept that isn't private information.\n\n        Args:\n            page (str): Title of the page to read.\n            lang (str): Language of Wikipedia to read. (default: English)";
/// `search_data`'s description.
pub const SEARCH_DATA_DESCRIPTION: &str = "search_data(query: str, lang: str = 'en') -> str\n\n        Search Wikipedia for a page related to the given query.\n        Use this tool when `load_data` returns no results.\n\n        Args:\n            query (str): the string to search for";

/// What `load_data` says when there is no such page (LlamaIndex's text).
pub const PAGE_NOT_FOUND: &str = "Unable to load page. Try searching instead.";
/// What `search_data` says when nothing matches.
pub const NO_SEARCH_RESULTS: &str = "No search results.";

/// Wikipedia as two agent tools (LlamaIndex `WikipediaToolSpec`): read a
/// page by title, or search and read the best hit. Wrap `load_data` in
/// `LoadAndSearchToolSpec` to let the model query long pages instead of
/// reading them whole.
#[derive(Clone, Debug, Default)]
pub struct WikipediaToolSpec {
    client: WikipediaClient,
}

impl WikipediaToolSpec {
    /// Tools over Wikipedia.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tools over another MediaWiki (or a test server).
    pub fn with_client(client: WikipediaClient) -> Self {
        Self { client }
    }

    /// The page's text, or [`PAGE_NOT_FOUND`] (LlamaIndex `load_data`, which
    /// never guesses a title: no auto-suggest).
    pub async fn load_data(&self, page: &str, lang: &str) -> Result<String> {
        match self.client.page(lang, page, false).await {
            Ok(p) => Ok(p.content),
            Err(Error::NotFound(_)) => Ok(PAGE_NOT_FOUND.to_owned()),
            Err(e) => Err(e),
        }
    }

    /// The text of the best hit for `query`, or [`NO_SEARCH_RESULTS`]
    /// (LlamaIndex `search_data`).
    pub async fn search_data(&self, query: &str, lang: &str) -> Result<String> {
        let (hits, _) = self.client.search(lang, query, 10, false).await?;
        match hits.first() {
            None => Ok(NO_SEARCH_RESULTS.to_owned()),
            Some(title) => self.load_data(title, lang).await,
        }
    }
}

#[async_trait]
impl SpecFunctions for WikipediaToolSpec {
    async fn call_function(&self, name: &str, args: &ToolArgs<'_>) -> Result<(String, Value)> {
        // A bad language, a disambiguation page, the API down: the model reads why.
        let lang = args.opt_str("lang")?.unwrap_or_else(|| "en".to_owned());
        let text = match name {
            "load_data" => {
                let page = args.text("page", "the title of the page to read")?;
                self.load_data(&page, &lang).await?
            }
            "search_data" => {
                let query = args.text("query", "what to search for")?;
                self.search_data(&query, &lang).await?
            }
            other => return Err(unknown_function(other)),
        };
        Ok((text.clone(), Value::String(text)))
    }
}

impl ToolSpec for WikipediaToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        vec!["load_data".into(), "search_data".into()]
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        let lang = json!({
            "default": "en",
            "description": "Language of Wikipedia to read. (default: English)",
            "type": "string",
        });
        let tool =
            |metadata| -> Arc<dyn Tool> { Arc::new(SpecFunctionTool::new(self.clone(), metadata)) };
        vec![
            tool(
                ToolMetadata::new("load_data", LOAD_DATA_DESCRIPTION).with_fn_schema(json!({
                    "type": "object",
                    "properties": {
                        "page": {"description": "Title of the page to read.", "type": "string"},
                        "lang": lang,
                    },
                    "required": ["page"],
                })),
            ),
            tool(
                ToolMetadata::new("search_data", SEARCH_DATA_DESCRIPTION).with_fn_schema(json!({
                    "type": "object",
                    "properties": {
                        "query": {"description": "the string to search for", "type": "string"},
                        "lang": {"default": "en", "type": "string"},
                    },
                    "required": ["query"],
                })),
            ),
        ]
    }
}

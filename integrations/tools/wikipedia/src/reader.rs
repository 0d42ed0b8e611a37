//! `WikipediaReader`: Wikipedia pages as documents, one per page, its id the
//! page id (LlamaIndex's `llama-index-readers-wikipedia`).

use crate::client::WikipediaClient;
use async_trait::async_trait;
use ragloom_core::error::Result;
use ragloom_core::readers::Reader;
use ragloom_core::schema::Document;

/// Reads the named pages (LlamaIndex `WikipediaReader`). As there, a title
/// is first looked up by search (`auto_suggest`, default on), so
/// `"Rust language"` reads the best match.
#[derive(Clone, Debug)]
pub struct WikipediaReader {
    client: WikipediaClient,
    pages: Vec<String>,
    lang: String,
    auto_suggest: bool,
}

impl WikipediaReader {
    /// A reader of `pages` on English Wikipedia.
    pub fn new<I, S>(pages: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            client: WikipediaClient::new(),
            pages: pages.into_iter().map(Into::into).collect(),
            lang: "en".into(),
            auto_suggest: true,
        }
    }

    /// The Wikipedia language (LlamaIndex `lang_prefix`, default `en`).
    pub fn lang(mut self, lang: impl Into<String>) -> Self {
        self.lang = lang.into();
        self
    }

    /// Whether titles are looked up by search first (default true).
    pub fn auto_suggest(mut self, on: bool) -> Self {
        self.auto_suggest = on;
        self
    }

    /// Reads from another MediaWiki (or a test server).
    pub fn client(mut self, client: WikipediaClient) -> Self {
        self.client = client;
        self
    }
}

#[async_trait]
impl Reader for WikipediaReader {
    async fn load_data(&self) -> Result<Vec<Document>> {
        let mut documents = Vec::with_capacity(self.pages.len());
        for title in &self.pages {
            let page = self
                .client
                .page(&self.lang, title, self.auto_suggest)
                .await?;
            let mut document = Document::document(page.content);
            document.id_ = page.pageid;
            documents.push(document);
        }
        Ok(documents)
    }
}

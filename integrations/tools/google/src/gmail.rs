//! `GmailToolSpec`: search and read mail, create, update, show and send
//! drafts, with LlamaIndex's function names, arguments and answers.

use crate::api::{GoogleApi, checked_id};
use crate::metadata;
use crate::mime::build_message;
use async_trait::async_trait;
use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE};
use ragloom_common_oauth::OAuthCredentials;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::{Document, py_repr};
use ragloom_core::tools::{
    SpecFunctions, Tool, ToolArgs, ToolSpec, documents_output, spec_function_tools,
    unknown_function,
};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;

/// The scopes LlamaIndex asks for: compose and read.
pub const GMAIL_SCOPES: [&str; 2] = [
    "https://www.googleapis.com/auth/gmail.compose",
    "https://www.googleapis.com/auth/gmail.readonly",
];

/// Gmail's API.
pub const GMAIL_ENDPOINT: &str = "https://gmail.googleapis.com/";

/// What `update_draft` answers without a draft id (LlamaIndex's text).
pub const NO_DRAFT_ID: &str = "You did not provide a draft id when calling this function. If you previously created or retrieved the draft, the id is available in context";

/// Gmail pages hold at most this many messages.
const PAGE_MAX: usize = 500;

/// Gmail's `raw` is base64url, padded or not.
const RAW: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Gmail as agent tools (LlamaIndex `GmailToolSpec`): `load_data`,
/// `search_messages`, `create_draft`, `update_draft`, `get_draft`,
/// `send_draft`. Drafts are plain-text mails built as Python's `email`
/// package builds them; every call goes to Gmail's API with the OAuth token.
#[derive(Clone, Debug)]
pub struct GmailToolSpec {
    api: GoogleApi,
    max_results: usize,
    max_results_limit: usize,
    max_text_bytes: usize,
}

impl GmailToolSpec {
    /// Tools over the mailbox these credentials open (see
    /// [`OAuthCredentials::from_authorized_user_file`] for `token.json`).
    pub fn new(credentials: OAuthCredentials) -> Self {
        let mut api = GoogleApi::new("Gmail", GMAIL_ENDPOINT, credentials);
        // A raw message with Gmail's largest attachments is about 35 MB of JSON.
        api.client = api.client.max_response_bytes(48 << 20);
        Self {
            api,
            max_results: 10,
            max_results_limit: 100,
            max_text_bytes: 64 << 20,
        }
    }

    /// How many messages a search returns when the model names no number
    /// (LlamaIndex: 10).
    pub fn max_results(mut self, n: usize) -> Self {
        self.max_results = n.max(1);
        self
    }

    /// The most messages one search reads, whatever the model asks (100):
    /// each is a full message fetched on its own.
    pub fn max_results_limit(mut self, n: usize) -> Self {
        self.max_results_limit = n.max(1);
        self
    }

    /// The most text one search reads (64 MiB): messages past it are left
    /// unread, with a warning.
    pub fn max_text_bytes(mut self, bytes: usize) -> Self {
        self.max_text_bytes = bytes;
        self
    }

    /// The latest messages (LlamaIndex `load_data`: a search for everything).
    pub async fn load_data(&self) -> Result<Vec<Document>> {
        self.search_messages("", None).await
    }

    /// Messages matching `query` (Gmail's search syntax), newest first: one
    /// document each, its text the message as sent (headers and MIME body,
    /// as LlamaIndex gives it), `id`, `threadId` and `snippet` as metadata.
    pub async fn search_messages(
        &self,
        query: &str,
        max_results: Option<usize>,
    ) -> Result<Vec<Document>> {
        let wanted = match max_results {
            Some(n) if n > 0 => n,
            _ => self.max_results,
        }
        .min(self.max_results_limit);
        let mut ids = Vec::new();
        let mut page_token: Option<String> = None;
        while ids.len() < wanted {
            let mut query_params = Vec::new();
            if !query.is_empty() {
                query_params.push(("q", query.to_owned()));
            }
            query_params.push(("maxResults", (wanted - ids.len()).min(PAGE_MAX).to_string()));
            if let Some(token) = &page_token {
                query_params.push(("pageToken", token.clone()));
            }
            let page = self
                .api
                .call(
                    Method::GET,
                    "gmail/v1/users/me/messages",
                    &query_params,
                    None,
                )
                .await?;
            let before = ids.len();
            let listed = page.get("messages").and_then(Value::as_array);
            for message in listed.into_iter().flatten() {
                if let Some(id) = message.get("id").and_then(Value::as_str) {
                    ids.push(id.to_owned());
                }
            }
            // A page that adds nothing ends the listing (a server cannot keep it going).
            page_token = page
                .get("nextPageToken")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty() && ids.len() > before)
                .map(str::to_owned);
            if page_token.is_none() {
                break;
            }
        }
        ids.truncate(wanted);
        let mut documents = Vec::with_capacity(ids.len());
        let mut text_bytes = 0;
        for id in &ids {
            if text_bytes >= self.max_text_bytes {
                tracing::warn!(
                    read = documents.len(),
                    of = ids.len(),
                    "Gmail search stopped at its text budget"
                );
                break;
            }
            if let Some(doc) = self.message_document(id).await? {
                text_bytes += doc.text.len();
                documents.push(doc);
            }
        }
        Ok(documents)
    }

    async fn message_document(&self, id: &str) -> Result<Option<Document>> {
        let id = checked_id("Gmail message id", id)?;
        let message = self
            .api
            .call(
                Method::GET,
                &format!("gmail/v1/users/me/messages/{id}"),
                &[("format", "raw".to_owned())],
                None,
            )
            .await?;
        let raw = message
            .get("raw")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let bytes = RAW.decode(raw.trim_end()).map_err(|e| {
            Error::provider(
                "google",
                format!("Gmail message {id}: `raw` is not base64url"),
                e,
            )
        })?;
        if bytes.is_empty() {
            tracing::warn!(id, "Gmail message without a body: skipped");
            return Ok(None);
        }
        let field = |k: &str| message.get(k).cloned().unwrap_or(Value::Null);
        Ok(Some(
            Document::document(String::from_utf8_lossy(&bytes).into_owned())
                .with_metadata("id", field("id"))
                .with_metadata("threadId", field("threadId"))
                .with_metadata("snippet", field("snippet")),
        ))
    }

    /// Creates a draft (LlamaIndex `create_draft`); Gmail's `Draft` reply.
    pub async fn create_draft(
        &self,
        to: Option<Vec<String>>,
        subject: Option<String>,
        message: Option<String>,
    ) -> Result<Value> {
        let body = draft_body(to.as_deref(), subject.as_deref(), message.as_deref())?;
        self.api
            .call(Method::POST, "gmail/v1/users/me/drafts", &[], Some(&body))
            .await
    }

    /// Replaces a draft's text (LlamaIndex `update_draft`): the draft's own
    /// recipients and subject are kept where none are given.
    pub async fn update_draft(
        &self,
        to: Option<Vec<String>>,
        subject: Option<String>,
        message: Option<String>,
        draft_id: &str,
    ) -> Result<Value> {
        let id = checked_id("Gmail draft id", draft_id)?;
        let draft = self.get_draft(id).await?;
        let headers = draft
            .pointer("/message/payload/headers")
            .and_then(Value::as_array);
        let header = |name: &str| {
            headers.into_iter().flatten().find_map(|h| {
                (h.get("name").and_then(Value::as_str) == Some(name))
                    .then(|| h.get("value").and_then(Value::as_str).map(str::to_owned))
                    .flatten()
            })
        };
        let to = match to {
            Some(list) if !list.is_empty() => Some(list),
            _ => header("To").map(|v| vec![v]),
        };
        let subject = match subject {
            Some(s) if !s.is_empty() => Some(s),
            _ => header("Subject"),
        };
        let body = draft_body(to.as_deref(), subject.as_deref(), message.as_deref())?;
        self.api
            .call(
                Method::PUT,
                &format!("gmail/v1/users/me/drafts/{id}"),
                &[],
                Some(&body),
            )
            .await
    }

    /// A draft with its message (LlamaIndex `get_draft`).
    pub async fn get_draft(&self, draft_id: &str) -> Result<Value> {
        let id = checked_id("Gmail draft id", draft_id)?;
        self.api
            .call(
                Method::GET,
                &format!("gmail/v1/users/me/drafts/{id}"),
                &[],
                None,
            )
            .await
    }

    /// Sends a draft (LlamaIndex `send_draft`); Gmail's `Message` reply.
    pub async fn send_draft(&self, draft_id: &str) -> Result<Value> {
        let id = checked_id("Gmail draft id", draft_id)?;
        self.api
            .call(
                Method::POST,
                "gmail/v1/users/me/drafts/send",
                &[],
                Some(&json!({ "id": id })),
            )
            .await
    }
}

/// `{"message": {"raw": ...}}` of the mail Python's `EmailMessage` makes.
fn draft_body(
    to: Option<&[String]>,
    subject: Option<&str>,
    message: Option<&str>,
) -> Result<Value> {
    let message = message.ok_or_else(|| {
        Error::InvalidInput("a draft needs `message`, the text of the mail".into())
    })?;
    let mail = build_message(to, subject, message)
        .map_err(|why| Error::InvalidInput(format!("the draft cannot be written: {why}")))?;
    Ok(json!({ "message": { "raw": URL_SAFE.encode(mail) } }))
}

const FUNCTIONS: [&str; 6] = [
    "load_data",
    "search_messages",
    "create_draft",
    "update_draft",
    "get_draft",
    "send_draft",
];

#[async_trait]
impl SpecFunctions for GmailToolSpec {
    async fn call_function(&self, name: &str, args: &ToolArgs<'_>) -> Result<(String, Value)> {
        let draft = |v: Value| (py_repr(&v), v);
        match name {
            "load_data" => documents_output(&self.load_data().await?),
            "search_messages" => {
                let query = args.required_str("query")?;
                let max = args.opt_usize("max_results")?;
                documents_output(&self.search_messages(&query, max).await?)
            }
            "create_draft" => Ok(draft(
                self.create_draft(
                    args.opt_strings("to")?,
                    args.opt_str("subject")?,
                    args.opt_str("message")?,
                )
                .await?,
            )),
            "update_draft" => match args.opt_str("draft_id")? {
                None => Ok((
                    NO_DRAFT_ID.to_owned(),
                    Value::String(NO_DRAFT_ID.to_owned()),
                )),
                Some(id) => Ok(draft(
                    self.update_draft(
                        args.opt_strings("to")?,
                        args.opt_str("subject")?,
                        args.opt_str("message")?,
                        &id,
                    )
                    .await?,
                )),
            },
            "get_draft" => Ok(draft(
                self.get_draft(&args.required_str("draft_id")?).await?,
            )),
            "send_draft" => Ok(draft(
                self.send_draft(&args.required_str("draft_id")?).await?,
            )),
            other => Err(unknown_function(other)),
        }
    }
}

impl ToolSpec for GmailToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        FUNCTIONS.iter().map(|n| (*n).to_owned()).collect()
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        spec_function_tools(self, &FUNCTIONS, |name| metadata("gmail", name))
    }
}

crate::api::api_settings!(GmailToolSpec, "Gmail");

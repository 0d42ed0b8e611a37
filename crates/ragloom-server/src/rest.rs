//! The REST API: query, retrieve, documents (list, upload, delete), jobs,
//! status and stored passages; every body typed for the OpenAPI document.

use crate::answer::{self, Answer};
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::index::DocumentInfo;
use crate::jobs::JobInfo;
use crate::passage::Passage;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ragloom::retrievers::keyword_query;
use ragloom::vector_stores::MetadataFilters;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

/// A question for `/v1/query` or `/v1/retrieve`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryRequest {
    /// The question (or search text).
    pub query: String,
    /// The index (default: the first one served).
    pub index: Option<String>,
    /// Passages to retrieve (default 4).
    pub top_k: Option<usize>,
    /// LlamaIndex's `MetadataFilters`, e.g.
    /// `{"filters": [{"key": "file_name", "value": "a.txt", "operator": "=="}], "condition": "and"}`.
    #[schema(value_type = Option<Object>)]
    pub filters: Option<MetadataFilters>,
}

/// `/v1/retrieve`'s answer.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RetrieveResponse {
    pub nodes: Vec<Passage>,
}

fn check_query(q: &str) -> Result<(), ApiError> {
    if q.trim().is_empty() {
        return Err(ApiError::bad_request("query is empty").param("query"));
    }
    Ok(())
}

async fn timed<T>(
    state: &AppState,
    f: impl std::future::Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    let t = state.config.request_timeout;
    tokio::time::timeout(t, f)
        .await
        .map_err(|_| ApiError::timeout(t.as_secs()))?
}

#[utoipa::path(post, path = "/v1/query", tag = "rest", request_body = QueryRequest,
    responses((status = 200, body = Answer), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub(crate) async fn query(
    State(state): State<Arc<AppState>>,
    ApiJson(req): ApiJson<QueryRequest>,
) -> Result<Json<Answer>, ApiError> {
    check_query(&req.query)?;
    let index = state.index(req.index.as_deref())?;
    let top_k = state.top_k(req.top_k)?;
    timed(&state, async {
        let view = index.view().await?;
        let (answer, _) = answer::query(&state, &view, &req.query, top_k, req.filters).await?;
        Ok(Json(answer))
    })
    .await
}

#[utoipa::path(post, path = "/v1/retrieve", tag = "rest", request_body = QueryRequest,
    responses((status = 200, body = RetrieveResponse), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn retrieve(
    State(state): State<Arc<AppState>>,
    ApiJson(req): ApiJson<QueryRequest>,
) -> Result<Json<RetrieveResponse>, ApiError> {
    check_query(&req.query)?;
    let index = state.index(req.index.as_deref())?;
    let top_k = state.top_k(req.top_k)?;
    timed(&state, async {
        let view = index.view().await?;
        // Tokenized once, for keyword retrieval and for the excerpts.
        let query = keyword_query(&req.query);
        let nodes = answer::retrieve(&view, &query, top_k, req.filters).await?;
        Ok(Json(RetrieveResponse {
            nodes: answer::passages(&state, &view, &query, &nodes),
        }))
    })
    .await
}

/// Which index, and a page of a list.
#[derive(Debug, Deserialize, IntoParams)]
pub(crate) struct ListParams {
    /// The index (default: the first one served).
    pub index: Option<String>,
    /// Where the page starts: `next_cursor` of the page before.
    pub cursor: Option<String>,
    /// Documents per page (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// A page of documents.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DocumentPage {
    pub documents: Vec<DocumentInfo>,
    /// Give it as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// A page of `items` from `cursor` (an offset), `limit` long.
pub(crate) fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    limit: usize,
) -> Result<(Vec<T>, Option<String>), ApiError> {
    let start = match cursor.filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            ApiError::bad_request("cursor is not one this server gave").param("cursor")
        })?,
    };
    let end = start.saturating_add(limit).min(items.len());
    let slice = items.get(start..end).unwrap_or_default().to_vec();
    let next = (end < items.len()).then(|| end.to_string());
    Ok((slice, next))
}

#[utoipa::path(get, path = "/v1/documents", tag = "rest", params(ListParams),
    responses((status = 200, body = DocumentPage), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_documents(
    State(state): State<Arc<AppState>>,
    Query(p): Query<ListParams>,
) -> Result<Json<DocumentPage>, ApiError> {
    let index = state.index(p.index.as_deref())?;
    let docs = index.view().await?.documents().await?;
    let (documents, next_cursor) = page(
        &docs,
        p.cursor.as_deref(),
        p.limit.unwrap_or(100).clamp(1, 1000),
    )?;
    Ok(Json(DocumentPage {
        documents,
        next_cursor,
    }))
}

/// Which index.
#[derive(Debug, Deserialize, IntoParams)]
pub(crate) struct IndexParam {
    /// The index (default: the first one served).
    pub index: Option<String>,
}

/// A job accepted: poll `GET /v1/jobs/{job_id}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Accepted {
    pub job_id: String,
    /// The names the uploaded files were saved under.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// A file name safe to save in the uploads folder: its last path part,
/// without control characters, never `.`, `..` or hidden.
pub(crate) fn sanitize_file_name(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|'))
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim().to_string();
    if cleaned.is_empty() {
        return None;
    }
    // Keep the end, with the extension (the reader is chosen by it), within 200 bytes.
    let mut out = cleaned.as_str();
    while out.len() > 200 {
        let first = out.chars().next().map_or(1, char::len_utf8);
        out = &out[first..];
    }
    Some(out.to_string())
}

#[utoipa::path(post, path = "/v1/documents", tag = "rest", params(IndexParam),
    request_body(content_type = "multipart/form-data", description = "one or more parts named `file`"),
    responses((status = 202, body = Accepted), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub(crate) async fn upload(
    State(state): State<Arc<AppState>>,
    Query(p): Query<IndexParam>,
    mut multipart: Multipart,
) -> Result<Response, ApiError> {
    let index = state.index(p.index.as_deref())?.clone();
    let Some(uploads) = index.uploads() else {
        return Err(crate::error::ServeError::Unsupported(format!(
            "the index `{}` takes no uploads",
            index.name()
        ))
        .into());
    };
    let dir = uploads.dir().to_path_buf();
    let _place = state.uploads.enter()?;
    // Bytes are drawn from the minute's budget as they arrive.
    let files = crate::upload::receive(&mut multipart, &dir, &state.uploads).await?;
    if files.is_empty() {
        return Err(ApiError::bad_request(
            "no file: send multipart parts named `file` with a file name",
        )
        .param("file"));
    }
    let mut names = Vec::new();
    for f in files {
        names.push(f.keep(&dir).await?);
    }
    // Files no job will ingest are not left behind for a later one.
    let job_id = match ingest_job(&state, index.name(), "ingest", uploads) {
        Ok(id) => id,
        Err(e) => {
            for name in &names {
                let _ = tokio::fs::remove_file(dir.join(name)).await;
            }
            return Err(e);
        }
    };
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            job_id,
            files: names,
        }),
    )
        .into_response())
}

/// Where an index's upload jobs are recorded: hidden in its uploads folder,
/// which an ingest reads without descending.
pub(crate) fn journal_dir(uploads: &dyn crate::index::Uploads) -> std::path::PathBuf {
    uploads.dir().join(".jobs")
}

/// Records the outcome of an ingest job in the metrics.
pub(crate) fn ingest_done(state: &Arc<AppState>) -> impl Fn(bool) + Clone + Send + 'static {
    let state = state.clone();
    move |ok| {
        state
            .metrics
            .ingest(if ok { "succeeded" } else { "failed" });
    }
}

fn ingest_job(
    state: &Arc<AppState>,
    index: &str,
    kind: &'static str,
    uploads: Arc<dyn crate::index::Uploads>,
) -> Result<String, ApiError> {
    let journal = journal_dir(uploads.as_ref());
    state
        .jobs
        .submit(
            index,
            kind,
            Some(&journal),
            async move { uploads.ingest().await.map_err(|e| e.to_string()) },
            ingest_done(state),
        )
        .map_err(|e| ApiError::internal(format!("cannot record the job: {e}")))
}

#[utoipa::path(delete, path = "/v1/documents/{id}", tag = "rest",
    params(("id" = String, Path, description = "the document id"), IndexParam),
    responses((status = 202, body = Accepted), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "not an uploaded document")))]
pub(crate) async fn delete_document(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(p): Query<IndexParam>,
) -> Result<Response, ApiError> {
    let index = state.index(p.index.as_deref())?.clone();
    let Some(uploads) = index.uploads() else {
        return Err(crate::error::ServeError::Unsupported(format!(
            "the index `{}` takes no uploads, so none can be deleted",
            index.name()
        ))
        .into());
    };
    let view = index.view().await?;
    let info = view.docstore.get_ref_doc_info(&id).await?.ok_or_else(|| {
        ApiError::not_found("not_found", format!("no document has the id `{id}`"))
    })?;
    // Only a file the server saved, straight in its folder, is ever removed.
    let file = std::path::Path::new(crate::passage::file_path(&info.metadata));
    let in_uploads = file.parent() == Some(uploads.dir())
        && file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(sanitize_file_name)
            .is_some_and(|n| file.file_name().and_then(|f| f.to_str()) == Some(n.as_str()));
    if !in_uploads {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "invalid_request_error",
            "not_uploaded",
            format!(
                "`{id}` comes from the ingested folder, not an upload: delete its file there and ingest again"
            ),
        ));
    }
    match tokio::fs::remove_file(file).await {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(ApiError::internal(format!("cannot delete the upload: {e}"))),
    }
    let job_id = ingest_job(&state, index.name(), "delete", uploads)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            job_id,
            files: Vec::new(),
        }),
    )
        .into_response())
}

#[utoipa::path(get, path = "/v1/jobs/{id}", tag = "rest",
    params(("id" = String, Path, description = "the job id")),
    responses((status = 200, body = JobInfo), (status = 404, body = ErrorBody)))]
pub(crate) async fn job(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<JobInfo>, ApiError> {
    state
        .jobs
        .get(&id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found("not_found", format!("no job has the id `{id}`")))
}

/// `/v1/status`: one entry per index.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct StatusResponse {
    #[schema(value_type = Vec<Object>)]
    pub indexes: Vec<serde_json::Value>,
}

#[utoipa::path(get, path = "/v1/status", tag = "rest",
    responses((status = 200, body = StatusResponse)))]
pub(crate) async fn status(
    State(state): State<Arc<AppState>>,
) -> Result<Json<StatusResponse>, ApiError> {
    let mut indexes = Vec::new();
    for index in &state.indexes {
        let mut s = match index.status().await {
            Ok(serde_json::Value::Object(m)) => serde_json::Value::Object(m),
            Ok(other) => serde_json::json!({ "status": other }),
            Err(e) => serde_json::json!({ "error": e.to_string() }),
        };
        s["name"] = serde_json::json!(index.name());
        indexes.push(s);
    }
    Ok(Json(StatusResponse { indexes }))
}

/// A stored passage, by node id.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct StoredNode {
    pub node_id: String,
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The node's text as stored in the index.
    pub text: String,
}

#[utoipa::path(get, path = "/v1/nodes/{id}", tag = "rest",
    params(("id" = String, Path, description = "the node id"), IndexParam),
    responses((status = 200, body = StoredNode), (status = 404, body = ErrorBody)))]
pub(crate) async fn node(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(p): Query<IndexParam>,
) -> Result<Json<StoredNode>, ApiError> {
    let index = state.index(p.index.as_deref())?;
    let view = index.view().await?;
    let node = match view.docstore.get_node(&id).await {
        Ok(n) => n,
        Err(ragloom::Error::NotFound(_)) => {
            return Err(ApiError::not_found(
                "not_found",
                format!("no node has the id `{id}`"),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let (path, page, line) = crate::passage::place(&node, 0, &state.lines);
    Ok(Json(StoredNode {
        node_id: node.node_id().to_string(),
        file: view.display_path(&path),
        line,
        page,
        text: node.get_text().to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_cannot_leave_the_uploads_folder() {
        assert_eq!(sanitize_file_name("notes.md").as_deref(), Some("notes.md"));
        assert_eq!(
            sanitize_file_name("../../etc/passwd").as_deref(),
            Some("passwd")
        );
        assert_eq!(
            sanitize_file_name("..\\..\\boot.ini").as_deref(),
            Some("boot.ini")
        );
        assert_eq!(
            sanitize_file_name("/abs/path/x.txt").as_deref(),
            Some("x.txt")
        );
        assert_eq!(sanitize_file_name(".."), None);
        assert_eq!(sanitize_file_name("."), None);
        assert_eq!(sanitize_file_name("dir/"), None);
        assert_eq!(sanitize_file_name(".hidden").as_deref(), Some("hidden"));
        assert_eq!(
            sanitize_file_name("a\u{0}b\nc.txt").as_deref(),
            Some("abc.txt")
        );
        let long = format!("{}.pdf", "x".repeat(300));
        let s = sanitize_file_name(&long).unwrap_or_default();
        assert!(s.len() <= 200 && s.ends_with(".pdf"), "{s}");
    }

    #[test]
    fn pages_follow_their_cursor() {
        let items: Vec<u32> = (0..5).collect();
        let (a, next) = page(&items, None, 2).unwrap_or_default();
        assert_eq!(a, vec![0, 1]);
        let (b, next) = page(&items, next.as_deref(), 2).unwrap_or_default();
        assert_eq!(b, vec![2, 3]);
        let (c, next) = page(&items, next.as_deref(), 2).unwrap_or_default();
        assert_eq!((c, next), (vec![4], None));
        assert!(page(&items, Some("x"), 2).is_err());
        assert_eq!(
            page(&items, Some("99"), 2).map(|p| p.0.len()).unwrap_or(9),
            0
        );
    }
}

//! The OpenAPI document at `/openapi.json`, generated from the route and
//! body types so it cannot drift from what the server does.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "ragloom", description = "An index as a service: OpenAI-compatible chat, REST and MCP (at /mcp, Streamable HTTP)."),
    paths(
        crate::openai::models,
        crate::openai::chat_completions,
        crate::rest::query,
        crate::rest::retrieve,
        crate::rest::list_documents,
        crate::rest::upload,
        crate::rest::delete_document,
        crate::rest::job,
        crate::rest::status,
        crate::rest::node,
    ),
    components(schemas(crate::answer::Usage, crate::answer::ChatModeArg)),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "openai", description = "OpenAI's chat completions API; the model is the index"),
        (name = "rest", description = "Questions, passages, documents, jobs and status"),
    )
)]
pub(crate) struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document, with the crate's version.
pub(crate) fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_route_and_body_is_described() {
        let doc = serde_json::to_value(super::document()).unwrap_or_default();
        for path in [
            "/v1/chat/completions",
            "/v1/models",
            "/v1/query",
            "/v1/retrieve",
            "/v1/documents",
            "/v1/documents/{id}",
            "/v1/jobs/{id}",
            "/v1/status",
            "/v1/nodes/{id}",
        ] {
            assert!(doc["paths"][path].is_object(), "{path} is missing");
        }
        for schema in [
            "Passage",
            "Answer",
            "ErrorBody",
            "JobInfo",
            "DocumentPage",
            "QueryRequest",
            "ChatCompletionRequest",
        ] {
            assert!(
                doc["components"]["schemas"][schema].is_object(),
                "{schema} is missing"
            );
        }
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
    }
}

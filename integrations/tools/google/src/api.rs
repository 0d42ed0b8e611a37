//! One Google REST API as `google-api-python-client` calls it: JSON in and
//! out, `alt=json` on every call, Google's error message read out of a failure.

use ragloom_common_oauth::{AuthorizedClient, OAuthCredentials};
use ragloom_core::error::{Error, Result};
use reqwest::Method;
use serde_json::Value;

const PROVIDER: &str = "google";

/// A Google API's endpoint and the client that sends its requests.
#[derive(Clone, Debug)]
pub(crate) struct GoogleApi {
    pub(crate) client: AuthorizedClient,
    /// With a trailing `/`: `https://gmail.googleapis.com/`.
    endpoint: String,
    /// The service's name in errors ("Gmail", "Google Calendar").
    service: &'static str,
}

impl GoogleApi {
    pub(crate) fn new(
        service: &'static str,
        endpoint: &str,
        credentials: OAuthCredentials,
    ) -> Self {
        Self {
            client: AuthorizedClient::new(PROVIDER, credentials),
            endpoint: with_slash(endpoint),
            service,
        }
    }

    /// The API at another address (`client_options={"api_endpoint": ..}`
    /// in Python): a test server, a proxy.
    pub(crate) fn set_endpoint(&mut self, endpoint: &str) {
        self.endpoint = with_slash(endpoint);
    }

    /// One call: `path` below the endpoint (its variable parts already
    /// checked by the caller), the query in order, a JSON body.
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Value> {
        let url = format!("{}{path}", self.endpoint);
        let mut params: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        params.push(("alt", "json"));
        let reply = self
            .client
            .send(|http| {
                let request = http.request(method.clone(), &url).query(&params);
                match body {
                    Some(b) => request.json(b),
                    None => request,
                }
            })
            .await?;
        if !reply.status.is_success() {
            let said = reply
                .json()
                .ok()
                .and_then(|v| {
                    v.pointer("/error/message")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| reply.excerpt());
            return Err(Error::provider(
                PROVIDER,
                format!(
                    "{} answered {} to {method} {path}: {said}",
                    self.service, reply.status
                ),
                std::io::Error::other(reply.excerpt()),
            ));
        }
        reply.json().map_err(|e| {
            Error::provider(
                PROVIDER,
                format!("{} sent something that is not JSON", self.service),
                e,
            )
        })
    }
}

/// `with_endpoint` and `map_client` for a spec holding a `GoogleApi` in `api`.
macro_rules! api_settings {
    ($spec:ty, $service:literal) => {
        impl $spec {
            #[doc = concat!($service, "'s API at another address (a test server, a proxy).")]
            pub fn with_endpoint(mut self, endpoint: &str) -> Self {
                self.api.set_endpoint(endpoint);
                self
            }

            /// Changes the HTTP client's settings (token file, retries, size cap).
            pub fn map_client(
                mut self,
                f: impl FnOnce(
                    ragloom_common_oauth::AuthorizedClient,
                ) -> ragloom_common_oauth::AuthorizedClient,
            ) -> Self {
                self.api.client = f(self.api.client);
                self
            }
        }
    };
}
pub(crate) use api_settings;

fn with_slash(endpoint: &str) -> String {
    if endpoint.ends_with('/') {
        endpoint.to_owned()
    } else {
        format!("{endpoint}/")
    }
}

/// An id a model gave, checked before it becomes part of a path: Google's
/// ids are letters, digits, `-` and `_`, so nothing else can steer the
/// request to another resource.
pub(crate) fn checked_id<'a>(what: &str, id: &'a str) -> Result<&'a str> {
    let ok = !id.is_empty()
        && id.len() <= 256
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(id)
    } else {
        Err(Error::InvalidInput(format!(
            "`{}` is not a {what}: ids are letters, digits, '-' and '_'",
            id.chars().take(80).collect::<String>()
        )))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_leave_their_resource() {
        assert!(checked_id("draft id", "r-5571190284436371421").is_ok());
        for bad in [
            "",
            "..",
            "a/b",
            "a?x=1",
            "a#b",
            "%2e%2e",
            "é",
            "a b",
            &"x".repeat(300),
        ] {
            assert!(checked_id("draft id", bad).is_err(), "{bad}");
        }
    }
}

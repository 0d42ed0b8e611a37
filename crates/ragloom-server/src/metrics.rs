//! `/metrics` in Prometheus' text format: requests by route and status, a
//! latency histogram per route, LLM tokens, ingests and the LLM queue.

use crate::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The server's counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    ingests: Mutex<BTreeMap<&'static str, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    pub(crate) fn record(&self, route: &str, method: &str, status: u16, seconds: f64) {
        *lock(&self.requests)
            .entry((route.to_string(), method.to_string(), status))
            .or_default() += 1;
        let mut l = lock(&self.latency);
        let h = l.entry(route.to_string()).or_default();
        h.count += 1;
        h.sum += seconds;
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                h.counts[i] += 1;
            }
        }
    }

    pub(crate) fn tokens(&self, prompt: usize, completion: usize) {
        self.prompt_tokens
            .fetch_add(prompt as u64, Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(completion as u64, Ordering::Relaxed);
    }

    pub(crate) fn ingest(&self, outcome: &'static str) {
        *lock(&self.ingests).entry(outcome).or_default() += 1;
    }

    /// The text `/metrics` answers.
    pub(crate) fn render(&self, llm_running: usize, llm_waiting: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP ragloom_http_requests_total HTTP requests answered, by route, method and status."
        );
        let _ = writeln!(out, "# TYPE ragloom_http_requests_total counter");
        for ((route, method, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(
                out,
                "ragloom_http_requests_total{{route=\"{}\",method=\"{method}\",status=\"{status}\"}} {n}",
                escape(route)
            );
        }
        let _ = writeln!(
            out,
            "# HELP ragloom_http_request_duration_seconds Time to the response head (streams: to the first byte), by route."
        );
        let _ = writeln!(
            out,
            "# TYPE ragloom_http_request_duration_seconds histogram"
        );
        for (route, h) in lock(&self.latency).iter() {
            let r = escape(route);
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "ragloom_http_request_duration_seconds_bucket{{route=\"{r}\",le=\"{b}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                out,
                "ragloom_http_request_duration_seconds_bucket{{route=\"{r}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "ragloom_http_request_duration_seconds_sum{{route=\"{r}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "ragloom_http_request_duration_seconds_count{{route=\"{r}\"}} {}",
                h.count
            );
        }
        let _ = writeln!(out, "# HELP ragloom_llm_tokens_total LLM tokens, by kind.");
        let _ = writeln!(out, "# TYPE ragloom_llm_tokens_total counter");
        let _ = writeln!(
            out,
            "ragloom_llm_tokens_total{{kind=\"prompt\"}} {}",
            self.prompt_tokens.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "ragloom_llm_tokens_total{{kind=\"completion\"}} {}",
            self.completion_tokens.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP ragloom_ingests_total Ingest jobs run by the server, by outcome."
        );
        let _ = writeln!(out, "# TYPE ragloom_ingests_total counter");
        let ingests = lock(&self.ingests);
        for outcome in ["succeeded", "failed"] {
            let _ = writeln!(
                out,
                "ragloom_ingests_total{{outcome=\"{outcome}\"}} {}",
                ingests.get(outcome).copied().unwrap_or(0)
            );
        }
        let _ = writeln!(
            out,
            "# HELP ragloom_llm_calls LLM calls running and waiting now."
        );
        let _ = writeln!(out, "# TYPE ragloom_llm_calls gauge");
        let _ = writeln!(out, "ragloom_llm_calls{{state=\"running\"}} {llm_running}");
        let _ = writeln!(out, "ragloom_llm_calls{{state=\"waiting\"}} {llm_waiting}");
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Counts and times every request, and logs it.
pub(crate) async fn track(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    // Routes by their pattern, so ids in paths do not make one series each.
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| {
            if req.uri().path().starts_with("/mcp") {
                "/mcp".to_string()
            } else {
                "unmatched".to_string()
            }
        });
    let method = req.method().to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    state
        .metrics
        .record(&route, &method, status, elapsed.as_secs_f64());
    tracing::info!(
        target: "ragloom_server::request",
        method,
        route,
        status,
        millis = elapsed.as_millis() as u64,
        "request"
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_holds_what_was_recorded() {
        let m = Metrics::default();
        m.record("/v1/retrieve", "POST", 200, 0.02);
        m.record("/v1/retrieve", "POST", 200, 3.0);
        m.tokens(10, 5);
        m.ingest("succeeded");
        let text = m.render(1, 2);
        assert!(text.contains(
            "ragloom_http_requests_total{route=\"/v1/retrieve\",method=\"POST\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "ragloom_http_request_duration_seconds_bucket{route=\"/v1/retrieve\",le=\"0.025\"} 1"
        ));
        assert!(text.contains(
            "ragloom_http_request_duration_seconds_bucket{route=\"/v1/retrieve\",le=\"5\"} 2"
        ));
        assert!(
            text.contains("ragloom_http_request_duration_seconds_count{route=\"/v1/retrieve\"} 2")
        );
        assert!(text.contains("ragloom_llm_tokens_total{kind=\"prompt\"} 10"));
        assert!(text.contains("ragloom_ingests_total{outcome=\"succeeded\"} 1"));
        assert!(text.contains("ragloom_llm_calls{state=\"waiting\"} 2"));
    }
}

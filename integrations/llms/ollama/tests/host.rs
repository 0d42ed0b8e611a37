//! `OLLAMA_HOST` is read as Ollama reads it: the cases of Ollama's own
//! `envconfig` tests (value → `host:port` Ollama prints), the URL requests go
//! to, and an end-to-end check that a model built without `base_url` talks to
//! the server `OLLAMA_HOST` names.
#![allow(clippy::unwrap_used)]

use ragloom_core::llms::{ChatMessage, Llm};
use ragloom_llms_ollama::{DEFAULT_OLLAMA_HOST, KeepAlive, Ollama, OllamaHost, TimeUnit};
use ragloom_llms_ollama::{keep_alive_from_duration, parse_keep_alive};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The host part (`host:port`) Ollama derives from an `OLLAMA_HOST` value;
/// the table of Ollama's `TestHost` (envconfig/config_test.go).
const OLLAMA_CASES: &[(&str, &str, &str)] = &[
    ("empty", "", "127.0.0.1:11434"),
    ("only address", "1.2.3.4", "1.2.3.4:11434"),
    ("only port", ":1234", ":1234"),
    ("address and port", "1.2.3.4:1234", "1.2.3.4:1234"),
    ("hostname", "example.com", "example.com:11434"),
    ("hostname and port", "example.com:1234", "example.com:1234"),
    ("zero port", ":0", ":0"),
    ("too large port", ":66000", ":11434"),
    ("too small port", ":-1", ":11434"),
    ("ipv6 localhost", "[::1]", "[::1]:11434"),
    ("ipv6 world open", "[::]", "[::]:11434"),
    ("ipv6 no brackets", "::1", "[::1]:11434"),
    ("ipv6 + port", "[::1]:1337", "[::1]:1337"),
    ("extra space", " 1.2.3.4 ", "1.2.3.4:11434"),
    ("extra quotes", "\"1.2.3.4\"", "1.2.3.4:11434"),
    ("extra space+quotes", " \" 1.2.3.4 \" ", "1.2.3.4:11434"),
    ("extra single quotes", "'1.2.3.4'", "1.2.3.4:11434"),
    ("http", "http://1.2.3.4", "1.2.3.4:80"),
    ("http port", "http://1.2.3.4:4321", "1.2.3.4:4321"),
    ("https", "https://1.2.3.4", "1.2.3.4:443"),
    ("https port", "https://1.2.3.4:4321", "1.2.3.4:4321"),
    (
        "proxy path",
        "https://example.com/ollama",
        "example.com:443",
    ),
    ("ollama.com", "ollama.com", "ollama.com:443"),
];

fn host_port(h: &OllamaHost) -> String {
    let shown = h.to_string();
    let after_scheme = shown.split_once("://").unwrap().1;
    after_scheme.split('/').next().unwrap().to_owned()
}

#[test]
fn ollama_host_is_parsed_as_ollama_parses_it() {
    for (name, value, expected) in OLLAMA_CASES {
        let host = OllamaHost::parse(value);
        assert_eq!(host_port(&host), *expected, "case {name:?}: {value:?}");
    }
}

#[test]
fn scheme_path_and_request_url() {
    let cases = [
        ("", "http://127.0.0.1:11434", "http://127.0.0.1:11434/"),
        (
            "localhost:8080",
            "http://localhost:8080",
            "http://localhost:8080/",
        ),
        (
            "https://1.2.3.4",
            "https://1.2.3.4:443",
            "https://1.2.3.4:443/",
        ),
        (
            "https://example.com/ollama",
            "https://example.com:443/ollama",
            "https://example.com:443/ollama/",
        ),
        (
            "http://proxy:80/a/b/",
            "http://proxy:80/a/b/",
            "http://proxy:80/a/b/",
        ),
        // `:port` has no host: Ollama's client dials this machine.
        (":1234", "http://:1234", "http://127.0.0.1:1234/"),
        ("::1", "http://[::1]:11434", "http://[::1]:11434/"),
        (
            "::ffff:10.0.0.1",
            "http://10.0.0.1:11434",
            "http://10.0.0.1:11434/",
        ),
        (
            "ollama.com",
            "https://ollama.com:443",
            "https://ollama.com:443/",
        ),
        ("host:port", "http://host:11434", "http://host:11434/"),
    ];
    for (value, shown, base) in cases {
        let host = OllamaHost::parse(value);
        assert_eq!(host.to_string(), shown, "{value:?}");
        assert_eq!(host.base_url(), base, "{value:?}");
    }
    assert_eq!(
        OllamaHost::parse("").to_string(),
        DEFAULT_OLLAMA_HOST,
        "an unset OLLAMA_HOST is the default"
    );
    let built = Ollama::builder("m")
        .base_url("https://example.com/ollama")
        .build()
        .unwrap();
    assert_eq!(built.base_url(), "https://example.com:443/ollama/");
    assert_eq!(built.host().port, 443);
}

#[test]
fn keep_alive_values() {
    assert_eq!(parse_keep_alive("-1").unwrap(), KeepAlive::Indefinitely);
    assert_eq!(
        parse_keep_alive("0").unwrap(),
        KeepAlive::UnloadOnCompletion
    );
    assert_eq!(
        parse_keep_alive("300").unwrap(),
        KeepAlive::Until {
            time: 300,
            unit: TimeUnit::Seconds
        }
    );
    assert_eq!(
        parse_keep_alive(" 10m ").unwrap(),
        KeepAlive::Until {
            time: 10,
            unit: TimeUnit::Minutes
        }
    );
    assert!(parse_keep_alive("2 days").is_err());
    assert!(parse_keep_alive("").is_err());
    assert_eq!(
        keep_alive_from_duration(Duration::from_millis(1500)),
        KeepAlive::Until {
            time: 2,
            unit: TimeUnit::Seconds
        }
    );
    assert_eq!(
        keep_alive_from_duration(Duration::ZERO),
        KeepAlive::UnloadOnCompletion
    );
}

const CHILD_FLAG: &str = "RAGLOOM_OLLAMA_ENV_CHILD";

/// Run by `a_model_without_base_url_uses_ollama_host` in a child process
/// whose environment sets `OLLAMA_HOST` (setting it in this process would
/// race the other tests); does nothing when run on its own.
#[tokio::test]
#[ignore = "run in a child process by a_model_without_base_url_uses_ollama_host"]
async fn env_child_chats_through_ollama_host() {
    if std::env::var_os(CHILD_FLAG).is_none() {
        return;
    }
    let llm = Ollama::new("llama3.2").unwrap();
    let reply = llm.chat(&[ChatMessage::user("hi")]).await.unwrap();
    assert_eq!(reply.message.content, "reached through OLLAMA_HOST");
}

#[tokio::test]
async fn a_model_without_base_url_uses_ollama_host() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"model":"llama3.2","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"reached through OLLAMA_HOST"},"done":true}"#,
            "application/json",
        ))
        .expect(1)
        .mount(&server)
        .await;
    // Ollama's own form: no scheme, host:port.
    let value = format!("  \"{}\" ", server.address());
    let exe = std::env::current_exe().unwrap();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(exe)
            .args([
                "env_child_chats_through_ollama_host",
                "--exact",
                "--include-ignored",
                "--test-threads=1",
            ])
            .env("OLLAMA_HOST", value)
            .env(CHILD_FLAG, "1")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

//! WikipediaToolSpec and WikipediaReader against a local server answering
//! as the MediaWiki API answers the `wikipedia` package's requests.

#![allow(clippy::unwrap_used)]

use ragloom_core::readers::Reader;
use ragloom_core::tools::ToolSpec;
use ragloom_tools_wikipedia::{
    NO_SEARCH_RESULTS, PAGE_NOT_FOUND, WikipediaClient, WikipediaReader, WikipediaToolSpec,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const RUST: &str = "Rust (programming language)";
const RUST_TEXT: &str = "Rust is a general-purpose programming language.\n\n== History ==\nRust began as a personal project.";

fn client(server: &MockServer) -> WikipediaClient {
    WikipediaClient::with_api_url(format!("{}/{{lang}}/w/api.php", server.uri()))
}

fn info(title: &str, pageid: u64) -> Value {
    json!({"batchcomplete": "", "query": {"pages": {pageid.to_string(): {
        "pageid": pageid, "ns": 0, "title": title, "contentmodel": "wikitext",
        "pagelanguage": "en", "touched": "2026-11-30T08:00:00Z", "lastrevid": 1270000000u64, "length": 120000,
        "fullurl": format!("https://en.wikipedia.org/wiki/{}", title.replace(' ', "_")),
        "editurl": "https://en.wikipedia.org/w/index.php?action=edit", "canonicalurl": "https://en.wikipedia.org/wiki/x"
    }}}})
}

fn extract(title: &str, pageid: u64, text: &str) -> Value {
    json!({"batchcomplete": "", "query": {"pages": {pageid.to_string(): {
        "pageid": pageid, "ns": 0, "title": title,
        "revisions": [{"revid": 1270000000u64, "parentid": 1269999999u64}], "extract": text
    }}}})
}

async fn mount(server: &MockServer, params: &[(&str, &str)], reply: Value, times: u64) {
    let mut mock = Mock::given(method("GET"))
        .and(path("/en/w/api.php"))
        .and(query_param("format", "json"))
        .and(query_param("action", "query"));
    for (k, v) in params {
        mock = mock.and(query_param(*k, *v));
    }
    mock.respond_with(ResponseTemplate::new(200).set_body_json(reply))
        .expect(times)
        .mount(server)
        .await;
}

/// The page requests of the `wikipedia` package for `title`.
async fn mount_page(server: &MockServer, title: &str, pageid: u64, text: &str) {
    mount(
        server,
        &[
            ("prop", "info|pageprops"),
            ("inprop", "url"),
            ("ppprop", "disambiguation"),
            ("redirects", ""),
            ("titles", title),
        ],
        info(title, pageid),
        1,
    )
    .await;
    mount(
        server,
        &[
            ("prop", "extracts|revisions"),
            ("explaintext", ""),
            ("rvprop", "ids"),
            ("titles", title),
        ],
        extract(title, pageid, text),
        1,
    )
    .await;
}

#[test]
fn tools_are_named_and_described_as_llama_index_s() {
    let recorded: Value =
        serde_json::from_str(include_str!("data/llama_index_tools.json")).unwrap();
    let tools = WikipediaToolSpec::new().to_tool_list();
    let ours: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.metadata().name, "description": t.metadata().description}))
        .collect();
    assert_eq!(Value::Array(ours), recorded);
}

#[tokio::test]
async fn load_data_follows_redirects_and_reads_the_extract() {
    let server = MockServer::start().await;
    mount(
        &server,
        &[("prop", "info|pageprops"), ("titles", "Rust language")],
        json!({"batchcomplete": "", "query": {
            "redirects": [{"from": "Rust language", "to": RUST}],
            "pages": {"29414838": {"pageid": 29414838, "ns": 0, "title": RUST}}
        }}),
        1,
    )
    .await;
    mount_page(&server, RUST, 29414838, RUST_TEXT).await;
    let spec = WikipediaToolSpec::with_client(client(&server));
    let tools = spec.to_tool_list();
    let out = tools[0]
        .call(json!({"page": "Rust language"}))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, RUST_TEXT);
}

#[tokio::test]
async fn a_missing_page_says_so_and_search_reads_the_best_hit() {
    let server = MockServer::start().await;
    mount(
        &server,
        &[("prop", "info|pageprops"), ("titles", "Rustlang")],
        json!({"batchcomplete": "", "query": {"pages": {"-1": {"ns": 0, "title": "Rustlang", "missing": ""}}}}),
        1,
    )
    .await;
    mount(
        &server,
        &[
            ("list", "search"),
            ("srprop", ""),
            ("srlimit", "10"),
            ("limit", "10"),
            ("srsearch", "rust language"),
        ],
        json!({"batchcomplete": "", "continue": {"sroffset": 10, "continue": "-||"},
               "query": {"searchinfo": {"totalhits": 2}, "search": [
                   {"ns": 0, "title": RUST, "pageid": 29414838},
                   {"ns": 0, "title": "Rust", "pageid": 26004}]}}),
        1,
    )
    .await;
    mount(
        &server,
        &[("list", "search"), ("srsearch", "zzqx")],
        json!({"batchcomplete": "", "query": {"searchinfo": {"totalhits": 0}, "search": []}}),
        1,
    )
    .await;
    mount_page(&server, RUST, 29414838, RUST_TEXT).await;
    let tools = WikipediaToolSpec::with_client(client(&server)).to_tool_list();
    let missing = tools[0]
        .call(json!({"page": "Rustlang", "lang": "en"}))
        .await
        .unwrap();
    assert_eq!(missing.content, PAGE_NOT_FOUND);
    let found = tools[1]
        .call(json!({"query": "rust language"}))
        .await
        .unwrap();
    assert_eq!(found.content, RUST_TEXT);
    let none = tools[1].call(json!("zzqx")).await.unwrap();
    assert_eq!(none.content, NO_SEARCH_RESULTS);
}

#[tokio::test]
async fn hostile_and_broken_input_are_observations_and_reach_nowhere_else() {
    let server = MockServer::start().await;
    // Nothing may be asked of the server by a bad language.
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .named("no request")
        .mount(&server)
        .await;
    let tools = WikipediaToolSpec::with_client(client(&server)).to_tool_list();
    for lang in [
        "en.evil.example/x#",
        "EN",
        "",
        "en/../../admin",
        "a-very-long-language-code",
    ] {
        let out = tools[0]
            .call(json!({"page": "Rust", "lang": lang}))
            .await
            .unwrap();
        assert!(
            out.is_error && out.content.contains("language code"),
            "{lang}: {}",
            out.content
        );
    }
    let out = tools[0].call(json!({"title": "Rust"})).await.unwrap();
    assert!(
        out.is_error && out.content.contains("`page`"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn disambiguation_errors_size_and_bad_replies_are_reported() {
    let server = MockServer::start().await;
    let mut disambiguation = info("Mercury", 19694);
    disambiguation["query"]["pages"]["19694"]["pageprops"] = json!({"disambiguation": ""});
    mount(
        &server,
        &[("prop", "info|pageprops"), ("titles", "Mercury")],
        disambiguation,
        1,
    )
    .await;
    mount(
        &server,
        &[("prop", "info|pageprops"), ("titles", "Bad")],
        json!({"error": {"code": "badvalue", "info": "Unrecognized value for parameter \"prop\"."}, "servedby": "mw1234"}),
        1,
    )
    .await;
    Mock::given(method("GET"))
        .and(query_param("titles", "Huge"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat(5000)))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(query_param("titles", "Down"))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream down"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(query_param("titles", "Html"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>maintenance</html>"))
        .mount(&server)
        .await;
    let spec = WikipediaToolSpec::with_client(client(&server).max_response_bytes(1000));
    let tools = spec.to_tool_list();
    for (page, says) in [
        ("Mercury", "disambiguation"),
        ("Bad", "Unrecognized value"),
        ("Huge", "larger than 1000 bytes"),
        ("Down", "503"),
        ("Html", "not JSON"),
    ] {
        let out = tools[0].call(json!({"page": page})).await.unwrap();
        assert!(
            out.is_error && out.content.contains(says),
            "{page}: {}",
            out.content
        );
    }
}

#[tokio::test]
async fn the_reader_looks_titles_up_and_keeps_page_ids() {
    let server = MockServer::start().await;
    mount(
        &server,
        &[
            ("list", "search"),
            ("srlimit", "1"),
            ("srinfo", "suggestion"),
            ("srsearch", "rust programing"),
        ],
        json!({"batchcomplete": "", "query": {
            "searchinfo": {"totalhits": 5, "suggestion": "rust programming"},
            "search": [{"ns": 0, "title": RUST, "pageid": 29414838}]}}),
        1,
    )
    .await;
    mount_page(&server, "rust programming", 29414838, RUST_TEXT).await;
    mount_page(&server, "Ferris", 777, "Ferris is a crab.").await;
    let docs = WikipediaReader::new(["rust programing"])
        .client(client(&server))
        .load_data()
        .await
        .unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(
        (docs[0].id_.as_str(), docs[0].text.as_str()),
        ("29414838", RUST_TEXT)
    );
    // Without auto-suggest the title is read as given.
    let docs = WikipediaReader::new(["Ferris"])
        .client(client(&server))
        .auto_suggest(false)
        .load_data()
        .await
        .unwrap();
    assert_eq!(
        (docs[0].id_.as_str(), docs[0].text.as_str()),
        ("777", "Ferris is a crab.")
    );
}

#[tokio::test]
async fn load_and_search_indexes_a_page_and_answers_from_it() {
    use ragloom_agent::tools::LoadAndSearchToolSpec;
    use ragloom_core::embeddings::HashEmbedding;
    use ragloom_core::llms::MockLlm;
    use std::sync::Arc;

    let server = MockServer::start().await;
    mount_page(&server, RUST, 29414838, RUST_TEXT).await;
    let wikipedia = WikipediaToolSpec::with_client(client(&server)).to_tool_list();
    let llm = Arc::new(MockLlm::scripted(["It began as a personal project."]));
    let spec = LoadAndSearchToolSpec::from_defaults(
        wikipedia[0].clone(),
        Arc::new(HashEmbedding::new(256)),
        llm.clone(),
    );
    let tools = spec.to_tool_list();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["load_data", "read_load_data"]);
    let loaded = tools[0].call(json!({"page": RUST})).await.unwrap();
    assert!(!loaded.is_error, "{}", loaded.content);
    let answer = tools[1]
        .call(json!({"query": "How did Rust begin?"}))
        .await
        .unwrap();
    assert_eq!(answer.content, "It began as a personal project.");
    // The model answered from the page's text.
    let prompt = llm.requests()[0].prompt_text();
    assert!(
        prompt.contains("Rust began as a personal project."),
        "{prompt}"
    );
}

//! The chat page in a real browser: headless Chromium driven over WebDriver
//! (chromedriver) asks for the key, streams an answer, lists and opens its sources.
//!
//! Needs `RAGLOOM_TEST_CHROMIUM` and `RAGLOOM_TEST_CHROMEDRIVER` (set by
//! `.ci/setup/chromium.sh`); skipped without them, except under CI. The page as
//! the browser drew it is saved to `$CARGO_TARGET_TMPDIR/server-chat.png`
//! before a source is opened (the picture in docs/server.md).

#![allow(clippy::unwrap_used)]

use fantoccini::{Client, ClientBuilder, Locator};
use ragloom::indices::VectorStoreIndex;
use ragloom::llms::MockLlm;
use ragloom::{HashEmbedding, Llm, Node};
use ragloom_server::{Server, ServerConfig, VectorIndexService};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEY: &str = "browser-test-key";
const ANSWER: &str = "Alice followed the White Rabbit because it took a watch out of its \
waistcoat-pocket: she had never seen a rabbit with either, and, burning with curiosity, \
ran across the field after it and down the rabbit-hole.";

/// A chromedriver process, killed on drop.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn browser_paths() -> Option<(String, String)> {
    let get = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (
        get("RAGLOOM_TEST_CHROMIUM"),
        get("RAGLOOM_TEST_CHROMEDRIVER"),
    ) {
        (Some(chromium), Some(driver)) => Some((chromium, driver)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_CHROMIUM / RAGLOOM_TEST_CHROMEDRIVER are unset: .ci/setup/chromium.sh should have set them"
            );
            eprintln!("skipped: no browser (source .ci/setup/chromium.sh)");
            None
        }
    }
}

/// Starts chromedriver on a free port and waits until it answers.
async fn start_driver(driver: &str) -> (Driver, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Driver(
        Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = http.get(format!("{url}/status")).send().await
            && r.status().is_success()
        {
            return (child, url);
        }
        assert!(Instant::now() < deadline, "chromedriver did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A headless Chromium session with a fresh profile and no background traffic
/// (this machine's network is closed: Chromium would retry its services).
async fn open_browser(webdriver: &str, chromium: &str, profile: &Path) -> Client {
    let mut caps = Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                "--window-size=1280,860", "--force-device-scale-factor=1",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    // Plain HTTP: chromedriver listens on loopback.
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(webdriver)
        .await
        .unwrap()
}

/// The server over one index of *Alice's Adventures in Wonderland*, with a
/// model that gives one scripted answer.
async fn start_server() -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let source = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/alice29.txt"
    );
    let path = dir.path().join("alice29.txt");
    std::fs::copy(source, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = Node::document(text)
        .with_id(path.display().to_string())
        .with_metadata("file_path", path.display().to_string())
        .with_metadata("file_name", "alice29.txt");
    let index = VectorStoreIndex::from_documents(&[doc], Arc::new(HashEmbedding::new(256)))
        .await
        .unwrap();
    // A window that holds the four passages: one call answers (with a smaller
    // one, compact-and-refine makes two, as in LlamaIndex).
    let llm: Arc<dyn Llm> = Arc::new(MockLlm::scripted([ANSWER]).context_window(32_768));
    let service = VectorIndexService::new("wonderland", index, Some(llm)).base(dir.path());
    let config = ServerConfig {
        api_keys: vec![KEY.into()],
        ..ServerConfig::default()
    };
    let server = Server::new(config, vec![Arc::new(service)]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });
    (base, dir)
}

/// Polls `read` until `done` holds of its value, or fails after 30 s.
async fn until<F, Fut>(what: &str, mut read: F, done: impl Fn(&str) -> bool) -> String
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let value = read().await;
        if done(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: still {value:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn text_of(c: &Client, css: &str) -> String {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_page_asks_for_a_key_streams_an_answer_and_opens_its_sources() {
    let Some((chromium, driver)) = browser_paths() else {
        return;
    };
    let (base, _data) = start_server().await;
    let (_driver, webdriver) = start_driver(&driver).await;
    let profile = tempfile::tempdir().unwrap();
    let c = open_browser(&webdriver, &chromium, profile.path()).await;
    let outcome = drive(&c, &base).await;
    let _ = c.close().await;
    outcome.unwrap();
}

async fn drive(c: &Client, base: &str) -> Result<(), fantoccini::error::CmdError> {
    c.goto(base).await?;

    // The models request gets a 401: the page asks for the key, then retries.
    let key = c.wait().for_element(Locator::Css("#key-form")).await?;
    until(
        "key form shown",
        || async { attr(&key, "hidden").await },
        |h| h.is_empty(),
    )
    .await;
    assert_eq!(
        text_of(c, "#key-msg").await,
        "This server needs an API key."
    );
    c.find(Locator::Css("#api-key"))
        .await?
        .send_keys(KEY)
        .await?;
    c.find(Locator::Css("#key-form button[type=submit]"))
        .await?
        .click()
        .await?;
    let picked = until(
        "index listed",
        || async { text_of(c, "#index").await },
        |t| t.contains("wonderland"),
    )
    .await;
    assert_eq!(picked.trim(), "wonderland");
    until(
        "status shown",
        || async { text_of(c, "#status").await },
        |t| !t.is_empty() && t != "Loading…",
    )
    .await;

    let question = "Why did Alice follow the White Rabbit?";
    c.find(Locator::Css("#question"))
        .await?
        .send_keys(question)
        .await?;
    c.find(Locator::Css("#send")).await?.click().await?;
    c.wait()
        .for_element(Locator::Css(".msg.assistant.done"))
        .await?;
    assert_eq!(text_of(c, ".msg.user").await.trim(), question);
    let answer = c.find(Locator::Css(".msg.assistant")).await?;
    let html = answer.html(false).await?;
    assert_eq!(text_of(c, ".msg.assistant .text").await, ANSWER, "{html}");
    let sources = c
        .find_all(Locator::Css(".msg.assistant ul.sources button.source"))
        .await?;
    assert!(!sources.is_empty(), "the answer lists its sources");
    let first = sources[0].text().await?;
    assert!(first.starts_with("[1] alice29.txt:"), "{first}");
    // Open the source whose excerpt speaks of the Rabbit (the first if none does).
    let mut chosen = 0;
    for (i, b) in sources.iter().enumerate() {
        if b.attr("title").await?.is_some_and(|t| t.contains("Rabbit")) {
            chosen = i;
            break;
        }
    }
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    assert!(
        overflow.as_i64().is_some_and(|px| px <= 0),
        "the page is wider than the window by {overflow} px"
    );
    // The page as a reader sees it: the answer, its sources, the side panels.
    let png = c.screenshot().await?;
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("server-chat.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());

    let label = sources[chosen].text().await?;
    sources[chosen].click().await?;
    let passage = until(
        "passage loaded",
        || async { text_of(c, "#passage-text").await },
        |t| !t.is_empty() && t != "Loading…",
    )
    .await;
    assert!(!passage.starts_with("Could not load"), "{passage}");
    let title = text_of(c, "#passage-title").await;
    assert!(title.starts_with("alice29.txt:"), "{title}");
    assert!(
        label.contains(&title),
        "the panel is titled with the cited place: {label} / {title}"
    );
    let node = c
        .execute("return document.getElementById('passage').hidden;", vec![])
        .await?;
    assert_eq!(node, Value::Bool(false), "the passage panel is open");

    c.find(Locator::Css("#passage-close"))
        .await?
        .click()
        .await?;
    let hidden = c
        .execute("return document.getElementById('passage').hidden;", vec![])
        .await?;
    assert_eq!(hidden, Value::Bool(true), "Close closes the panel");
    // "New chat" empties the conversation.
    c.find(Locator::Css("#new-chat")).await?.click().await?;
    assert!(
        c.find_all(Locator::Css(".msg")).await?.is_empty(),
        "new chat clears the messages"
    );
    Ok(())
}

async fn attr(e: &fantoccini::elements::Element, name: &str) -> String {
    match e.attr(name).await {
        Ok(Some(v)) if v.is_empty() => "present".into(),
        Ok(Some(v)) => v,
        _ => String::new(),
    }
}

//! Query engines over a scripted `MockLlm`: selectors and routers, sub-questions,
//! HyDE, citations and the query-engine tool, compared with LlamaIndex's recorded behaviour.
#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::indices::query::query_transform::{HyDEQueryTransform, QueryTransform};
use ragloom_core::llms::{
    ChatMessage, MessageRole, MockLlm, MockRequestKind, ToolCall, ToolChoice, predict,
};
use ragloom_core::output_parsers::SelectionOutputParser;
use ragloom_core::prelude::*;
use ragloom_core::prompts::default_prompts::tree_summarize_prompt;
use ragloom_core::prompts::{PromptDictType, PromptMixin, PromptTemplate};
use ragloom_core::query_engine::{
    CITATION_QA_TEMPLATE, CitationQueryEngine, RouterQueryEngine, SubQuestionQueryEngine,
    TransformQueryEngine,
};
use ragloom_core::question_gen::{
    FunctionCallingQuestionGenerator, LLMQuestionGenerator, QuestionGenerator, SubQuestion,
    SubQuestionOutputParser, sub_question_list_tool,
};
use ragloom_core::response_synthesizers::Synthesizer;
use ragloom_core::selectors::{
    FunctionCallingMultiSelector, LLMMultiSelector, LLMSingleSelector, PydanticSingleSelector,
    Selector, get_selector_from_llm, multi_selection_tool, single_selection_tool,
};
use ragloom_core::tools::{Tool, ToolMetadata, normalize_schema, source_nodes_of};
use ragloom_core::{QueryEngineTool, RetrieverTool};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

static PY: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("data/query_engines/query_engines.json")).unwrap()
});

fn py_str(path: &[&str]) -> String {
    let mut v = &*PY;
    for p in path {
        v = &v[*p];
    }
    v.as_str()
        .unwrap_or_else(|| panic!("{path:?} is not a string"))
        .to_owned()
}

fn py_strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

fn prompts(llm: &MockLlm) -> Vec<String> {
    llm.requests().iter().map(|r| r.prompt_text()).collect()
}

/// A query engine answering `answer` with one source node `src-{answer}`,
/// recording its queries and how many of its calls ran at once.
#[derive(Debug, Default)]
struct FixedEngine {
    answer: String,
    source_text: String,
    seen: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    fail: bool,
}

impl FixedEngine {
    fn new(answer: &str, source_text: &str) -> Arc<Self> {
        Arc::new(Self {
            answer: answer.into(),
            source_text: source_text.into(),
            ..Default::default()
        })
    }

    fn failing(answer: &str) -> Arc<Self> {
        Arc::new(Self {
            answer: answer.into(),
            fail: true,
            ..Default::default()
        })
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl QueryEngine for FixedEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        self.seen.lock().unwrap().push(query.query_str.clone());
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        // Give other calls a chance to start before this one ends.
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if self.fail {
            return Err(Error::Other(format!("{} is down", self.answer)));
        }
        let node =
            Node::text_node(self.source_text.clone()).with_id(format!("src-{}", self.answer));
        Ok(Response::new(
            self.answer.clone(),
            vec![NodeWithScore::new(node, Some(0.5))],
        ))
    }
}

/// A retriever returning fixed nodes and recording the bundles it got.
#[derive(Debug, Default)]
struct FixedRetriever {
    nodes: Vec<NodeWithScore>,
    seen: Mutex<Vec<QueryBundle>>,
}

#[async_trait]
impl Retriever for FixedRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        self.seen.lock().unwrap().push(query.clone());
        Ok(self.nodes.clone())
    }
}

/// Tree summarize as LlamaIndex runs it when every answer fits one pack: one
/// call of the tree-summarize prompt over the chunks joined by blank lines.
#[derive(Debug)]
struct OnePackSummarize {
    llm: Arc<dyn Llm>,
}

#[async_trait]
impl Synthesizer for OnePackSummarize {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        let context = text_chunks.join("\n\n");
        predict(
            &*self.llm,
            &tree_summarize_prompt(),
            &[("context_str", &context), ("query_str", query_str)],
        )
        .await
    }

    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<futures::stream::BoxStream<'static, Result<String>>> {
        let text = self.get_response(query_str, text_chunks).await?;
        Ok(futures::stream::once(async move { Ok(text) }).boxed())
    }
}

impl PromptMixin for OnePackSummarize {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([("summary_template".to_owned(), tree_summarize_prompt())])
    }
    fn update_own_prompts(&mut self, _prompts: &PromptDictType) -> Result<()> {
        Ok(())
    }
}

fn selector_choices() -> Vec<ToolMetadata> {
    vec![
        ToolMetadata::new(
            "vector",
            "Useful for specific facts\nabout the author's life.",
        ),
        ToolMetadata::new("summary", "Useful for summaries of the whole essay."),
        ToolMetadata::new("code", "Useful for questions about code."),
    ]
}

const SELECTOR_QUERY: &str = "What did the author do growing up?";

// --- selectors -------------------------------------------------------------------

#[tokio::test]
async fn llm_single_selector_sends_llamaindex_prompt_and_reads_the_choice() {
    let llm = Arc::new(MockLlm::scripted([
        r#"[{"choice": 1, "reason": "facts about life"}]"#,
    ]));
    let selector = LLMSingleSelector::new(llm.clone());
    let result = selector
        .select(&selector_choices(), &SELECTOR_QUERY.into())
        .await
        .unwrap();
    assert_eq!(prompts(&llm), [py_str(&["single_select", "prompt"])]);
    assert_eq!(llm.requests()[0].kind, MockRequestKind::Complete);
    let expected = &PY["single_select"]["selections"][0];
    assert_eq!(
        result.ind().unwrap() as i64,
        expected["index"].as_i64().unwrap()
    );
    assert_eq!(
        result.reason().unwrap(),
        expected["reason"].as_str().unwrap()
    );
}

#[tokio::test]
async fn llm_multi_selector_sends_the_format_instructions_twice_as_llamaindex_does() {
    let llm = Arc::new(MockLlm::scripted([
        r#"[{"choice": 1, "reason": "a"}, {"choice": 3, "reason": "b"}]"#,
        "[]",
    ]));
    let selector = LLMMultiSelector::new(llm.clone());
    let result = selector
        .select(&selector_choices(), &SELECTOR_QUERY.into())
        .await
        .unwrap();
    assert_eq!(result.inds(), [0, 2]);
    assert_eq!(result.reasons(), ["a", "b"]);
    assert!(result.ind().is_err(), "two selections have no single index");
    let limited = LLMMultiSelector::new(llm.clone()).max_outputs(2);
    let _ = limited
        .select(&selector_choices(), &SELECTOR_QUERY.into())
        .await;
    assert_eq!(
        prompts(&llm),
        [
            py_str(&["multi_select", "prompt"]),
            py_str(&["multi_select_max2_prompt"])
        ]
    );
}

#[tokio::test]
async fn chat_models_get_the_selector_prompt_as_one_user_message() {
    let llm = Arc::new(MockLlm::scripted([r#"[{"choice": 2, "reason": "r"}]"#]).chat_model(true));
    let result = LLMSingleSelector::new(llm.clone())
        .select(&selector_choices(), &SELECTOR_QUERY.into())
        .await
        .unwrap();
    assert_eq!(result.inds(), [1]);
    let request = llm.last_request().unwrap();
    assert_eq!(request.kind, MockRequestKind::Chat);
    assert_eq!(request.messages.len(), 1);
    assert_eq!(request.messages[0].role, MessageRole::User);
    assert_eq!(
        request.messages[0].content,
        py_str(&["single_select", "prompt"])
    );
}

#[test]
fn selection_parser_reads_what_llamaindex_reads() {
    let parser = SelectionOutputParser;
    for case in PY["selection_parse"].as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let got = parser.parse(input);
        match case.get("answers") {
            Some(answers) => {
                let got = got.unwrap_or_else(|e| panic!("{input:?}: {e}"));
                let got: Vec<Value> = got
                    .iter()
                    .map(|a| json!({"choice": a.choice, "reason": a.reason}))
                    .collect();
                assert_eq!(&Value::Array(got), answers, "{input:?}");
            }
            None => assert!(
                matches!(&got, Err(Error::OutputParse(m)) if m.contains(&format!("{input:?}"))),
                "{input:?} should fail, quoting the reply: {got:?}"
            ),
        }
    }
}

#[tokio::test]
async fn unparseable_or_out_of_range_choices_are_clear_errors() {
    let llm = Arc::new(MockLlm::scripted([
        "I would pick the second one.",
        r#"[{"choice": 7, "reason": "x"}]"#,
    ]));
    let selector = LLMSingleSelector::new(llm);
    let err = selector
        .select(&selector_choices(), &"q".into())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::OutputParse(m) if m.contains("I would pick the second one.")),
        "{err}"
    );
    let err = selector
        .select(&selector_choices(), &"q".into())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("numbered 1 to 3"), "{err}");
}

#[tokio::test]
async fn function_calling_selectors_offer_llamaindex_tools_and_read_the_call() {
    // The tool schemas are LlamaIndex's pydantic schemas, normalised as every tool schema is.
    let single = &PY["pydantic_tools"]["single"]["function"];
    assert_eq!(
        single_selection_tool().name,
        single["name"].as_str().unwrap()
    );
    assert_eq!(
        single_selection_tool().description,
        single["description"].as_str().unwrap()
    );
    assert_eq!(
        single_selection_tool().fn_schema,
        normalize_schema(&single["parameters"])
    );
    let multi = &PY["pydantic_tools"]["multi"]["function"];
    assert_eq!(multi_selection_tool().name, multi["name"].as_str().unwrap());
    assert_eq!(
        multi_selection_tool().fn_schema,
        normalize_schema(&multi["parameters"])
    );

    let call = ToolCall::new(
        "c1",
        "SingleSelection",
        json!({"index": 2, "reason": "summaries"}),
    );
    let llm = Arc::new(
        MockLlm::scripted([ChatMessage::assistant_with_tool_calls("", vec![call])])
            .function_calling(true),
    );
    let selector: PydanticSingleSelector = PydanticSingleSelector::new(llm.clone()).unwrap();
    let choices = [
        ToolMetadata::new("a", "a"),
        ToolMetadata::new("b", "b"),
        ToolMetadata::new("c", "c"),
    ];
    let result = selector.select(&choices, &"q".into()).await.unwrap();
    assert_eq!(
        result.inds(),
        [1],
        "the model's 1-based index becomes 0-based"
    );
    let request = llm.last_request().unwrap();
    assert_eq!(request.kind, MockRequestKind::ChatWithTools);
    assert_eq!(request.tool_choice, Some(ToolChoice::Required));
    assert_eq!(request.tools, [single_selection_tool()]);
    assert_eq!(
        request.messages[0].content,
        py_str(&["pydantic_prompts", "single"])
            .replace("(1) a\n\n(2) b", "(1) a\n\n(2) b\n\n(3) c")
    );

    let call = ToolCall::new(
        "c2",
        "MultiSelection",
        json!({"selections": [{"index": 1, "reason": "x"}, {"index": 3, "reason": "y"}]}),
    );
    let llm = Arc::new(
        MockLlm::scripted([ChatMessage::assistant_with_tool_calls("", vec![call])])
            .function_calling(true),
    );
    let result = FunctionCallingMultiSelector::new(llm.clone())
        .unwrap()
        .select(&choices, &"q".into())
        .await
        .unwrap();
    assert_eq!(result.inds(), [0, 2]);
    assert_eq!(llm.last_request().unwrap().tools, [multi_selection_tool()]);

    let plain = Arc::new(MockLlm::new());
    assert!(
        PydanticSingleSelector::new(plain.clone())
            .is_err_and(|e| e.to_string().contains("function calling"))
    );
    // get_selector_from_llm falls back to the text selector for such models.
    let fallback = get_selector_from_llm(plain, false);
    assert!(fallback.get_prompts().contains_key("prompt"));
}

// --- router ------------------------------------------------------------------------

fn router_tools() -> (Arc<FixedEngine>, Arc<FixedEngine>, Vec<QueryEngineTool>) {
    let a = FixedEngine::new("Answer from A.", "source a");
    let b = FixedEngine::new("Answer from B.", "source b");
    let tools = vec![
        QueryEngineTool::from_defaults(a.clone())
            .with_name("a")
            .with_description("Engine A: the author's childhood."),
        QueryEngineTool::from_defaults(b.clone())
            .with_name("b")
            .with_description("Engine B: the author's work."),
    ];
    (a, b, tools)
}

#[tokio::test]
async fn router_with_single_selector_runs_only_the_chosen_engine() {
    let (a, b, tools) = router_tools();
    let llm = Arc::new(MockLlm::scripted([r#"[{"choice": 2, "reason": "work"}]"#]));
    let router = RouterQueryEngine::builder(tools)
        .selector(Arc::new(LLMSingleSelector::new(llm.clone())))
        .build()
        .unwrap();
    let response = router
        .query(&"What work did the author do?".into())
        .await
        .unwrap();
    let expected = &PY["router_single"];
    assert_eq!(response.to_string(), expected["response"].as_str().unwrap());
    assert_eq!(prompts(&llm), py_strings(&expected["prompts"]));
    assert_eq!(b.seen(), py_strings(&expected["seen"]));
    assert!(a.seen().is_empty());
    assert_eq!(
        response.metadata["selector_result"],
        json!({"selections": [{"index": 1, "reason": "work"}]})
    );
    assert_eq!(response.source_nodes[0].node_id(), "src-Answer from B.");
}

#[tokio::test]
async fn router_with_multi_selector_runs_both_and_combines_with_the_summarizer() {
    let (a, b, tools) = router_tools();
    let llm = Arc::new(MockLlm::scripted([
        r#"[{"choice": 1, "reason": "childhood"}, {"choice": 2, "reason": "work"}]"#,
        "Combined answer.",
    ]));
    let router = RouterQueryEngine::builder(tools)
        .llm(llm.clone())
        .select_multi(true)
        .summarizer(Arc::new(OnePackSummarize { llm: llm.clone() }))
        .build()
        .unwrap();
    let query = "Tell me about childhood and work.";
    let response = router.query(&query.into()).await.unwrap();
    let expected = &PY["router_multi"];
    assert_eq!(response.to_string(), expected["response"].as_str().unwrap());
    assert_eq!(prompts(&llm), py_strings(&expected["prompts"]));
    let ids: Vec<&str> = response.source_nodes.iter().map(|n| n.node_id()).collect();
    assert_eq!(ids, py_strings(&expected["source_node_ids"]));
    assert_eq!(a.seen(), [query]);
    assert_eq!(b.seen(), [query]);
    assert_eq!(
        response.metadata["selector_result"]["selections"][1]["index"],
        1
    );
    let keys: Vec<String> = router.get_prompts().into_keys().collect();
    assert_eq!(keys, ["selector:prompt", "summarizer:summary_template"]);
}

#[tokio::test]
async fn router_errors_are_clear() {
    // An unparseable selector reply: the error quotes it and no engine runs.
    let (a, b, tools) = router_tools();
    let llm = Arc::new(MockLlm::scripted(["Engine B, definitely."]));
    let router = RouterQueryEngine::builder(tools)
        .selector(Arc::new(LLMSingleSelector::new(llm)))
        .build()
        .unwrap();
    let err = router.query(&"q".into()).await.unwrap_err();
    assert!(
        matches!(&err, Error::OutputParse(m) if m.contains("Engine B, definitely.")),
        "{err}"
    );
    assert!(a.seen().is_empty() && b.seen().is_empty());

    // Several selections without any summarizer: says what is missing.
    let (_, _, tools) = router_tools();
    let llm = Arc::new(MockLlm::scripted([
        r#"[{"choice": 1, "reason": "x"}, {"choice": 2, "reason": "y"}]"#,
    ]));
    let router = RouterQueryEngine::builder(tools)
        .selector(Arc::new(LLMMultiSelector::new(llm)))
        .build()
        .unwrap();
    let err = router.query(&"q".into()).await.unwrap_err();
    assert!(err.to_string().contains("summarizer"), "{err}");

    assert!(
        RouterQueryEngine::builder(Vec::new())
            .llm(Arc::new(MockLlm::new()))
            .build()
            .is_err()
    );
    let (_, _, tools) = router_tools();
    assert!(
        RouterQueryEngine::builder(tools)
            .build()
            .is_err_and(|e| e.to_string().contains("LLM"))
    );
}

#[tokio::test]
async fn router_with_a_function_calling_model_selects_through_a_tool_call() {
    let (_, b, tools) = router_tools();
    let call = ToolCall::new(
        "c",
        "SingleSelection",
        json!({"index": 2, "reason": "work"}),
    );
    let llm = Arc::new(
        MockLlm::scripted([ChatMessage::assistant_with_tool_calls("", vec![call])])
            .function_calling(true),
    );
    let router = RouterQueryEngine::builder(tools)
        .llm(llm.clone())
        .build()
        .unwrap();
    let streamed = router.stream_query(&"work?".into()).await;
    // FixedEngine does not stream: the router forwards to the chosen engine.
    assert!(matches!(streamed, Err(Error::Unsupported(_))));
    assert_eq!(llm.requests()[0].kind, MockRequestKind::ChatWithTools);
    assert!(b.seen().is_empty());
}

// --- sub-questions -------------------------------------------------------------------

fn sq_tool_metadata() -> Vec<ToolMetadata> {
    vec![
        ToolMetadata::new(
            "uber_10k",
            "Provides information about Uber financials for year 2021",
        ),
        ToolMetadata::new(
            "lyft_10k",
            "Provides information about Lyft financials for year 2021",
        ),
    ]
}

#[tokio::test]
async fn llm_question_generator_sends_the_few_shot_prompt() {
    let llm = Arc::new(MockLlm::scripted([
        "```json\n{\"items\": [{\"sub_question\": \"q1\", \"tool_name\": \"uber_10k\"}]}\n```",
    ]));
    let generator = LLMQuestionGenerator::new(llm.clone());
    let subs = generator
        .generate(
            &sq_tool_metadata(),
            &"Compare Uber and Lyft revenue growth in 2021".into(),
        )
        .await
        .unwrap();
    assert_eq!(prompts(&llm), [py_str(&["sub_question_gen", "prompt"])]);
    assert_eq!(subs, [SubQuestion::new("q1", "uber_10k")]);
}

#[test]
fn sub_question_parser_reads_what_llamaindex_reads() {
    for case in PY["sub_question_parse"].as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let got = SubQuestionOutputParser.parse(input);
        match case.get("subs") {
            Some(subs) => {
                let got = got.unwrap_or_else(|e| panic!("{input:?}: {e}"));
                assert_eq!(&serde_json::to_value(&got).unwrap(), subs, "{input:?}");
            }
            None => assert!(
                matches!(&got, Err(Error::OutputParse(m)) if m.contains(&format!("{input:?}"))),
                "{input:?}: {got:?}"
            ),
        }
    }
}

fn sq_engine_tools(uber: Arc<FixedEngine>, lyft: Arc<FixedEngine>) -> Vec<QueryEngineTool> {
    let meta = sq_tool_metadata();
    vec![
        QueryEngineTool::new(uber, meta[0].clone()),
        QueryEngineTool::new(lyft, meta[1].clone()),
    ]
}

#[tokio::test]
async fn sub_questions_fan_out_and_their_answers_reach_the_final_prompt() {
    let expected = &PY["sub_question_engine"];
    let uber = FixedEngine::new("Uber grew 57%.", "uber doc");
    let lyft = FixedEngine::new("Lyft grew 36%.", "lyft doc");
    let llm = Arc::new(MockLlm::scripted([
        json!({"items": [
            {"sub_question": "What is the revenue growth of Uber", "tool_name": "uber_10k"},
            {"sub_question": "What is the EBITDA of Uber", "tool_name": "uber_10k"},
            {"sub_question": "What is the revenue growth of Lyft", "tool_name": "lyft_10k"},
            {"sub_question": "What is the revenue of Didi", "tool_name": "didi_10k"},
        ]})
        .to_string(),
        "Final comparison.".to_owned(),
    ]));
    let engine = SubQuestionQueryEngine::builder(sq_engine_tools(uber.clone(), lyft.clone()))
        .llm(llm.clone())
        .build()
        .unwrap();
    let response = engine
        .query(&"Compare revenue growth of Uber and Lyft in 2021".into())
        .await
        .unwrap();
    assert_eq!(response.to_string(), expected["response"].as_str().unwrap());
    // The final prompt holds every answered sub-question, as LlamaIndex's does.
    assert_eq!(prompts(&llm)[1], expected["prompts"][1].as_str().unwrap());
    assert_eq!(uber.seen(), py_strings(&expected["seen_uber"]));
    assert_eq!(lyft.seen(), py_strings(&expected["seen_lyft"]));
    let sources: Vec<String> = response
        .source_nodes
        .iter()
        .map(|n| n.get_content(MetadataMode::All))
        .collect();
    assert_eq!(sources, py_strings(&expected["source_node_texts"]));
    // The unknown tool is skipped as LlamaIndex skips it, and said why.
    let failed = &response.metadata["failed_sub_questions"];
    assert_eq!(failed.as_array().unwrap().len(), 1);
    assert_eq!(failed[0]["tool_name"], "didi_10k");
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("no query engine tool is named `didi_10k`")
    );
    assert_eq!(response.metadata["sub_qa"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn sub_questions_run_concurrently_unless_told_otherwise() {
    let script = json!([
        {"sub_question": "u1", "tool_name": "uber_10k"},
        {"sub_question": "u2", "tool_name": "uber_10k"},
        {"sub_question": "u3", "tool_name": "uber_10k"},
    ])
    .to_string();
    for (use_async, expected_max) in [(true, 3), (false, 1)] {
        let uber = FixedEngine::new("U.", "u");
        let lyft = FixedEngine::new("L.", "l");
        let llm = Arc::new(MockLlm::scripted([script.as_str(), "done"]));
        let engine = SubQuestionQueryEngine::builder(sq_engine_tools(uber.clone(), lyft))
            .llm(llm)
            .use_async(use_async)
            .build()
            .unwrap();
        engine.query(&"q".into()).await.unwrap();
        assert_eq!(
            uber.max_in_flight.load(Ordering::SeqCst),
            expected_max,
            "use_async={use_async}"
        );
        assert_eq!(uber.seen(), ["u1", "u2", "u3"]);
    }
}

#[tokio::test]
async fn a_failing_sub_engine_is_skipped_and_streaming_synthesizes_the_rest() {
    let uber = FixedEngine::failing("Uber");
    let lyft = FixedEngine::new("Lyft grew.", "lyft doc");
    let llm = Arc::new(MockLlm::scripted([
        r#"[{"sub_question": "a", "tool_name": "uber_10k"}, {"sub_question": "b", "tool_name": "lyft_10k"}]"#,
        "Only Lyft is known.",
    ]));
    let engine = SubQuestionQueryEngine::builder(sq_engine_tools(uber, lyft))
        .llm(llm.clone())
        .build()
        .unwrap();
    let streamed = engine.stream_query(&"q".into()).await.unwrap();
    assert_eq!(
        streamed.metadata["failed_sub_questions"][0]["error"],
        "Uber is down"
    );
    let response = streamed.get_response().await.unwrap();
    assert_eq!(response.to_string(), "Only Lyft is known.");
    let last = llm.last_request().unwrap();
    assert!(last.stream);
    assert!(
        last.prompt_text()
            .contains("Sub question: b\nResponse: Lyft grew.")
    );
    assert!(!last.prompt_text().contains("Sub question: a"));
}

#[tokio::test]
async fn function_calling_question_generator_asks_for_a_sub_question_list_call() {
    let expected_schema = normalize_schema(&PY["sub_question_list_schema"]);
    assert_eq!(sub_question_list_tool().fn_schema, expected_schema);
    assert_eq!(
        sub_question_list_tool().description,
        PY["sub_question_list_schema"]["description"]
            .as_str()
            .unwrap()
    );
    let call = ToolCall::new(
        "c",
        "SubQuestionList",
        json!({"items": [{"sub_question": "What is the revenue growth of Uber", "tool_name": "uber_10k"}]}),
    );
    let llm = Arc::new(
        MockLlm::scripted([ChatMessage::assistant_with_tool_calls("", vec![call])])
            .function_calling(true),
    );
    let generator = FunctionCallingQuestionGenerator::new(llm.clone()).unwrap();
    let subs = generator
        .generate(&sq_tool_metadata(), &"Compare".into())
        .await
        .unwrap();
    assert_eq!(
        subs,
        [SubQuestion::new(
            "What is the revenue growth of Uber",
            "uber_10k"
        )]
    );
    let request = llm.last_request().unwrap();
    assert_eq!(
        request.tool_choice,
        Some(ToolChoice::Named("SubQuestionList".into()))
    );
    let prompt = &request.messages[0].content;
    assert!(prompt.starts_with("You are a world class state of the art agent."));
    assert!(prompt.contains("## Tools\n```json\n{\n    \"uber_10k\": \"Provides information about Uber financials for year 2021\","));
    assert!(prompt.ends_with("## User Question\nCompare\n"));
    // The builder picks this generator for function-calling models.
    let engine = SubQuestionQueryEngine::builder(Vec::new())
        .llm(llm)
        .build()
        .unwrap();
    assert!(
        engine.get_prompts()["question_gen:question_gen_prompt"]
            .format(&[("tools_str", "{}"), ("query_str", "x")])
            .unwrap()
            .starts_with("You are a world class")
    );
}

#[tokio::test]
async fn sub_question_prompts_can_be_replaced_by_key() {
    let llm = Arc::new(MockLlm::scripted([r#"[]"#]));
    let mut engine = SubQuestionQueryEngine::builder(Vec::new())
        .llm(llm.clone())
        .build()
        .unwrap();
    let keys: Vec<String> = engine.get_prompts().into_keys().collect();
    assert!(
        keys.contains(&"question_gen:question_gen_prompt".to_owned()),
        "{keys:?}"
    );
    assert!(
        keys.contains(&"response_synthesizer:text_qa_template".to_owned()),
        "{keys:?}"
    );
    engine
        .update_prompts(&PromptDictType::from([(
            "question_gen:question_gen_prompt".to_owned(),
            PromptTemplate::new("Tools: {tools_str}\nQ: {query_str}").into(),
        )]))
        .unwrap();
    let response = engine.query(&"why?".into()).await.unwrap();
    assert_eq!(prompts(&llm), ["Tools: {}\nQ: why?"]);
    // No sub-question answered: nothing to synthesize from, no further call.
    assert_eq!(response.to_string(), "Empty Response");
    let bad = engine.update_prompts(&PromptDictType::from([(
        "question_gen:question_gen_prompt".to_owned(),
        PromptTemplate::new("no variables").into(),
    )]));
    assert!(bad.is_err());
}

// --- HyDE ------------------------------------------------------------------------------

#[tokio::test]
async fn hyde_embeds_the_hypothetical_passage_then_the_query() {
    let expected = &PY["hyde"];
    let llm = Arc::new(MockLlm::scripted([
        "A hypothetical passage about the author.",
        "Another passage.",
        "Passage three.",
    ]));
    let hyde = HyDEQueryTransform::new(llm.clone());
    let cases = [
        (
            hyde.run(&"What did the author do growing up?".into())
                .await
                .unwrap(),
            "include_original",
        ),
        (
            HyDEQueryTransform::new(llm.clone())
                .include_original(false)
                .run(&"Who is Alice?".into())
                .await
                .unwrap(),
            "without_original",
        ),
        (
            hyde.run(&QueryBundle {
                query_str: "q".into(),
                custom_embedding_strs: Some(vec!["e1".into(), "e2".into()]),
                embedding: None,
                keyword_terms: None,
            })
            .await
            .unwrap(),
            "custom_strs",
        ),
    ];
    assert_eq!(prompts(&llm)[0], expected["prompt"].as_str().unwrap());
    for (bundle, key) in cases {
        assert_eq!(
            bundle.query_str,
            expected[key]["query_str"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(
            bundle.embedding_strs(),
            py_strings(&expected[key]["embedding_strs"]),
            "{key}"
        );
    }
}

#[tokio::test]
async fn transform_query_engine_retrieves_with_hyde_and_answers_the_original_question() {
    let retriever = Arc::new(FixedRetriever {
        nodes: vec![NodeWithScore::new(Node::text_node("ctx"), Some(1.0))],
        ..Default::default()
    });
    let llm = Arc::new(MockLlm::scripted(["Imagined answer.", "Final."]));
    let inner = RetrieverQueryEngine::builder(retriever.clone())
        .llm(llm.clone())
        .build()
        .unwrap();
    let engine = TransformQueryEngine::new(
        Arc::new(inner),
        Arc::new(HyDEQueryTransform::new(llm.clone())),
    );
    let response = engine.query(&"Original question?".into()).await.unwrap();
    assert_eq!(response.to_string(), "Final.");
    let seen = retriever.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0].embedding_strs(),
        ["Imagined answer.", "Original question?"]
    );
    let final_prompt = llm.last_request().unwrap().prompt_text();
    assert!(
        final_prompt.contains("Query: Original question?\n"),
        "{final_prompt}"
    );
    assert!(!final_prompt.contains("Imagined answer."));
    assert!(
        engine
            .get_prompts()
            .contains_key("query_transform:hyde_prompt")
    );
}

#[tokio::test]
async fn hyde_passage_steers_vector_retrieval() {
    let docs = [
        Document::document("Cats purr softly and chase mice around the house.").with_id("cats"),
        Document::document("Rockets burn fuel to lift satellites into orbit.").with_id("rockets"),
    ];
    let index = VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(256)))
        .await
        .unwrap();
    let retriever = Arc::new(index.as_retriever().similarity_top_k(1));
    let llm = Arc::new(MockLlm::scripted(["Cats chase mice and purr."]));
    let inner = Arc::new(
        RetrieverQueryEngine::builder(retriever)
            .llm(llm.clone())
            .build()
            .unwrap(),
    );
    // The question shares only "burn" with the rocket document...
    let question: QueryBundle = "What does a pet burn its energy on?".into();
    let plain = QueryEngine::retrieve(&*inner, &question).await.unwrap();
    assert_eq!(plain[0].node.ref_doc_id(), Some("rockets"));
    // ...while the hypothetical passage is about cats.
    let hyde = HyDEQueryTransform::new(llm).include_original(false);
    let engine = TransformQueryEngine::new(inner, Arc::new(hyde));
    let nodes = engine.retrieve(&question).await.unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].node.ref_doc_id(), Some("cats"));
}

// --- citations -----------------------------------------------------------------------

fn citation_nodes() -> Vec<NodeWithScore> {
    let c = &PY["citation"];
    vec![
        NodeWithScore::new(
            Node::text_node(c["text_a"].as_str().unwrap())
                .with_id("node-a")
                .with_metadata("file_name", "alice29.txt"),
            Some(0.9),
        ),
        NodeWithScore::new(
            Node::text_node(c["text_b"].as_str().unwrap()).with_id("node-b"),
            Some(0.7),
        ),
    ]
}

#[tokio::test]
async fn citation_engine_numbers_sources_and_uses_llamaindex_prompts() {
    let expected = &PY["citation"];
    let retriever = Arc::new(FixedRetriever {
        nodes: citation_nodes(),
        ..Default::default()
    });
    let llm = Arc::new(MockLlm::scripted([
        "Alice was bored [1] and followed the rabbit [2].",
    ]));
    let engine = CitationQueryEngine::builder(retriever)
        .llm(llm.clone())
        .build()
        .unwrap();
    let response = engine
        .query(&"Why did Alice follow the rabbit?".into())
        .await
        .unwrap();
    assert_eq!(response.to_string(), expected["response"].as_str().unwrap());
    assert_eq!(prompts(&llm), py_strings(&expected["prompts"]));
    let texts: Vec<String> = response
        .source_nodes
        .iter()
        .map(|n| n.node.text.clone())
        .collect();
    assert_eq!(texts, py_strings(&expected["source_texts"]));
    let scores: Vec<f64> = response
        .source_nodes
        .iter()
        .map(|n| f64::from(n.score.unwrap()))
        .collect();
    let expected_scores: Vec<f64> = expected["source_scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    for (got, want) in scores.iter().zip(&expected_scores) {
        assert!((got - want).abs() < 1e-6);
    }
    for (n, meta) in response
        .source_nodes
        .iter()
        .zip(expected["source_metadata"].as_array().unwrap())
    {
        assert_eq!(
            &Value::Object(n.node.metadata.clone().into_iter().collect()),
            meta
        );
        assert!(
            n.node.id_ != "node-a" && n.node.id_ != "node-b",
            "citation chunks get new ids"
        );
        assert_eq!((n.node.start_char_idx, n.node.end_char_idx), (None, None));
    }
    // Every citation `[n]` in the answer points at an existing source.
    assert!(response.to_string().contains("[2]") && response.source_nodes.len() >= 2);
    assert_eq!(
        engine.get_prompts()["response_synthesizer:text_qa_template"]
            .format(&[("context_str", "C"), ("query_str", "Q")])
            .unwrap(),
        CITATION_QA_TEMPLATE
            .replace("{context_str}", "C")
            .replace("{query_str}", "Q")
    );
}

/// Over a 1200-token window the numbered sources need several calls: the
/// first with the citation QA prompt, the rest refining the previous answer
/// with the citation refine prompt (LlamaIndex's text, including its missing
/// space after the existing answer). Compact packing keeps LlamaIndex's
/// response padding, so the calls are Python's, prompt for prompt
/// (`citation_refine`, recorded from LlamaIndex 0.14.25).
#[tokio::test]
async fn citation_engine_refines_over_a_small_window() {
    let retriever = Arc::new(FixedRetriever {
        nodes: citation_nodes(),
        ..Default::default()
    });
    let replies: Vec<String> = (1..=8).map(|i| format!("Answer {i} [{i}].")).collect();
    let llm = Arc::new(MockLlm::scripted(replies).context_window(1200));
    let engine = CitationQueryEngine::builder(retriever)
        .llm(llm.clone())
        .build()
        .unwrap();
    let response = engine
        .query(&"Why did Alice follow the rabbit?".into())
        .await
        .unwrap();
    let sent = prompts(&llm);
    let python = py_strings(&PY["citation_refine"]["prompts"]);
    assert_eq!(sent.len(), 5, "LlamaIndex makes 5 calls here");
    assert_eq!(sent.len(), python.len());
    for (i, (got, want)) in sent.iter().zip(&python).enumerate() {
        assert_eq!(got, want, "call {} differs from LlamaIndex's", i + 1);
    }
    assert_eq!(
        response.to_string(),
        PY["citation_refine"]["response"].as_str().unwrap()
    );
    assert!(sent[0].contains("------\nfile_name: alice29.txt\n\nSource 1:\n"));
    for (i, prompt) in sent.iter().enumerate().skip(1) {
        let refine_head = format!(
            "Now it's your turn. We have provided an existing answer: Answer {i} [{i}].Below are several numbered sources"
        );
        assert!(prompt.contains(&refine_head), "call {}: {prompt}", i + 1);
    }
}

#[tokio::test]
async fn citation_chunk_size_sets_the_granularity() {
    let llm = Arc::new(MockLlm::new());
    let engine = CitationQueryEngine::builder(Arc::new(FixedRetriever::default()))
        .llm(llm.clone())
        .citation_chunk_size(128)
        .citation_chunk_overlap(10)
        .build()
        .unwrap();
    let nodes = engine.create_citation_nodes(&citation_nodes()).unwrap();
    let texts: Vec<String> = nodes.iter().map(|n| n.node.text.clone()).collect();
    assert_eq!(texts, py_strings(&PY["citation_small_chunks"]));
    for (i, t) in texts.iter().enumerate() {
        assert!(t.starts_with(&format!("Source {}:\n", i + 1)));
    }
    let err = CitationQueryEngine::builder(Arc::new(FixedRetriever::default()))
        .llm(llm)
        .citation_chunk_size(10)
        .citation_chunk_overlap(20)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("chunk overlap"), "{err}");
}

#[tokio::test]
async fn citation_engine_streams_with_numbered_sources() {
    let retriever = Arc::new(FixedRetriever {
        nodes: citation_nodes(),
        ..Default::default()
    });
    let llm = Arc::new(MockLlm::scripted(["It was [1] and [3]."]));
    let engine = CitationQueryEngine::builder(retriever)
        .llm(llm)
        .build()
        .unwrap();
    let streamed = engine.stream_query(&"q".into()).await.unwrap();
    assert_eq!(streamed.source_nodes.len(), 3);
    assert!(
        streamed.source_nodes[2]
            .node
            .text
            .starts_with("Source 3:\n")
    );
    let mut text = String::new();
    let mut deltas = streamed.response_gen;
    while let Some(d) = deltas.next().await {
        text.push_str(&d.unwrap());
    }
    assert_eq!(text, "It was [1] and [3].");
}

// --- tools -------------------------------------------------------------------------------

#[tokio::test]
async fn query_engine_tool_takes_input_as_llamaindex_does() {
    let expected = &PY["query_engine_tool"];
    let engine = FixedEngine::new("Tool answer.", "t");
    let tool = QueryEngineTool::from_defaults(engine.clone());
    assert_eq!(
        tool.metadata().name,
        expected["metadata"]["name"].as_str().unwrap()
    );
    assert_eq!(
        tool.metadata().description,
        expected["metadata"]["description"].as_str().unwrap()
    );
    assert_eq!(
        tool.metadata().fn_schema,
        normalize_schema(&expected["metadata"]["fn_schema"])
    );
    for call in expected["calls"].as_array().unwrap() {
        let input = match call["args"].as_array().unwrap().first() {
            Some(positional) => positional.clone(),
            None => call["kwargs"].clone(),
        };
        let out = tool.call(input).await.unwrap();
        assert_eq!(out.content, call["content"].as_str().unwrap());
        assert_eq!(out.raw_input, call["raw_input"]);
        assert!(!out.is_error);
    }
    assert_eq!(engine.seen(), py_strings(&expected["seen"]));
    let out = tool.call(json!({"input": "x"})).await.unwrap();
    let sources = source_nodes_of(&out);
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0].node_id(), "src-Tool answer.");
    assert_eq!(sources[0].score, Some(0.5));

    let strict = QueryEngineTool::from_defaults(engine).resolve_input_errors(false);
    let out = strict.call(json!({"query": "x"})).await.unwrap();
    assert!(out.is_error);
    assert!(out.content.contains("`input`"), "{}", out.content);
}

#[tokio::test]
async fn retriever_tool_renders_arguments_and_nodes_as_llamaindex_does() {
    let expected = &PY["retriever_tool"];
    let retriever = Arc::new(FixedRetriever {
        nodes: vec![
            NodeWithScore::new(Node::text_node("first").with_metadata("k", "v"), Some(1.0)),
            NodeWithScore::new(Node::text_node("second"), Some(0.5)),
        ],
        ..Default::default()
    });
    let tool = RetrieverTool::from_defaults(retriever.clone());
    assert_eq!(
        tool.metadata().name,
        expected["metadata"]["name"].as_str().unwrap()
    );
    assert_eq!(
        tool.metadata().description,
        expected["metadata"]["description"].as_str().unwrap()
    );
    for call in expected["calls"].as_array().unwrap() {
        let input = match call["args"].as_array().unwrap().first() {
            Some(positional) => positional.clone(),
            None => call["kwargs"].clone(),
        };
        let out = tool.call(input).await.unwrap();
        assert_eq!(out.content, call["content"].as_str().unwrap());
        assert_eq!(out.raw_input, call["raw_input"]);
    }
    let out = tool.call(json!("q")).await.unwrap();
    assert_eq!(source_nodes_of(&out).len(), 2);
}

// --- retriever query engine options --------------------------------------------------------

#[tokio::test]
async fn index_query_engine_builder_sets_retriever_and_synthesizer_options() {
    let docs = [
        Document::document("Alpha particles are helium nuclei.").with_id("alpha"),
        Document::document("Beta particles are electrons.").with_id("beta"),
        Document::document("Gamma rays are photons.").with_id("gamma"),
    ];
    let index = VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(256)))
        .await
        .unwrap();
    let llm = Arc::new(MockLlm::scripted(["one", "two", "three streamed"]));
    let engine = index
        .query_engine_builder()
        .similarity_top_k(1)
        .llm(llm.clone())
        .response_mode(ResponseMode::Refine)
        .build()
        .unwrap();
    let response = engine
        .query(&"What are beta particles?".into())
        .await
        .unwrap();
    assert_eq!(response.source_nodes.len(), 1);
    assert_eq!(response.source_nodes[0].node.ref_doc_id(), Some("beta"));
    assert_eq!(response.to_string(), "one");

    let wide = index
        .query_engine_builder()
        .similarity_top_k(3)
        .llm(llm.clone())
        .build()
        .unwrap();
    assert_eq!(
        QueryEngine::retrieve(&wide, &"particles".into())
            .await
            .unwrap()
            .len(),
        3
    );
    let _ = wide.query(&"particles".into()).await.unwrap();
    let streamed = wide.stream_query(&"photons".into()).await.unwrap();
    let text = streamed.get_response().await.unwrap().to_string();
    assert_eq!(text, "three streamed");
    assert!(llm.last_request().unwrap().stream);
}

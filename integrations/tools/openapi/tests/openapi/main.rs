//! `OpenAPIToolSpec` against LlamaIndex's recorded output, the Petstore
//! specs of openapi-spec-validator 0.9.0's source distribution, and a real
//! FastAPI application that `.ci/run` starts (an agent drives it).

#![allow(clippy::unwrap_used)]

use ragloom_agent::FunctionAgent;
use ragloom_core::llms::{ChatMessage, MockLlm, ToolCall};
use ragloom_core::tools::ToolSpec;
use ragloom_tools_openapi::{LOAD_OPENAPI_SPEC_DESCRIPTION, OpenAPIToolSpec, RequestsToolSpec};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn recorded() -> Value {
    serde_json::from_str(&std::fs::read_to_string(data("llama_index_openapi.json")).unwrap())
        .unwrap()
}

#[test]
fn the_reduced_spec_and_its_tool_read_as_llama_index_s() {
    let rec = recorded();
    assert_eq!(
        LOAD_OPENAPI_SPEC_DESCRIPTION,
        rec["load_openapi_spec_description"]
    );
    let spec = OpenAPIToolSpec::from_file(data("notes_openapi.json")).unwrap();
    let tools = spec.to_tool_list();
    assert_eq!(tools[0].metadata().name, rec["load_openapi_spec_name"]);
    assert_eq!(
        tools[0].metadata().fn_schema,
        rec["load_openapi_spec_fn_schema"]
    );
    // LlamaIndex needs `servers`; FastAPI's document has none, and OpenAPI's
    // default, "/", is what the recording added.
    assert_eq!(spec.load_openapi_spec()[0].text, rec["reduced"]["fastapi"]);
    let reads = spec
        .operation_id_filter(|id| id.starts_with("read"))
        .unwrap();
    assert_eq!(
        reads.load_openapi_spec()[0].text,
        rec["reduced"]["fastapi_read_only"]
    );
    assert_eq!(reads.operations().len(), 1);
}

#[test]
fn operations_become_typed_tools() {
    let spec = OpenAPIToolSpec::from_file(data("notes_openapi.json")).unwrap();
    let names: Vec<String> = spec.operations().iter().map(|o| o.name.clone()).collect();
    assert_eq!(
        names,
        [
            "create_note_notes_post",
            "list_notes_notes_get",
            "read_note_notes__note_id__get",
            "replace_note_notes__note_id__put",
            "delete_note_notes__note_id__delete"
        ]
    );
    let tools = spec.operation_tools(RequestsToolSpec::new("http://127.0.0.1:9/").unwrap());
    let create = tools[0].metadata();
    assert_eq!(create.description, "POST /notes\nCreate a note");
    let schema = &create.fn_schema;
    assert_eq!(schema["required"], json!(["body"]));
    assert_eq!(
        schema["properties"]["body"]["properties"]["title"]["type"],
        "string"
    );
    assert_eq!(schema["properties"]["body"]["required"], json!(["title"]));
    let read = tools[2].metadata();
    assert_eq!(read.fn_schema["properties"]["note_id"]["type"], "integer");
    assert_eq!(read.fn_schema["required"], json!(["note_id"]));
}

#[tokio::test]
async fn bad_arguments_and_hostile_specs_are_errors_that_say_why() {
    let spec = OpenAPIToolSpec::from_file(data("notes_openapi.json")).unwrap();
    let tools = spec.operation_tools(RequestsToolSpec::new("http://127.0.0.1:9/").unwrap());
    // Many operations of one name: numbered, each name at most 64 characters.
    let mut paths = serde_json::Map::new();
    for i in 0..3000 {
        paths.insert(
            format!("/p{i}"),
            json!({"get": {"operationId": "x".repeat(64)}}),
        );
    }
    let many = OpenAPIToolSpec::from_value(json!({"openapi": "3.0.0", "paths": paths})).unwrap();
    let names: std::collections::BTreeSet<String> =
        many.operations().iter().map(|o| o.name.clone()).collect();
    assert_eq!(names.len(), 3000);
    assert!(names.iter().all(|n| n.len() <= 64));
    for (tool, args) in [
        (2, json!({})),
        (2, json!({"note_id": ".."})),
        (2, json!({"note_id": {"a": 1}})),
        (0, json!({})),
        (0, json!("not an object")),
    ] {
        let out = tools[tool].call(args.clone()).await.unwrap();
        assert!(out.is_error, "{args}: {}", out.content);
    }
    for text in [
        "{\"swagger\": \"2.0\", \"paths\": {}}",
        "{\"openapi\": \"4.0\"}",
        "just: [yaml",
        "{\"openapi\": \"3.0.0\", \"paths\": {\"/a\": {\"get\": {\"$ref\": \"#/nowhere\"}}}}",
        "{\"openapi\": \"3.0.0\", \"paths\": {\"/a\": {\"$ref\": \"../../etc/passwd\"}}}",
    ] {
        assert!(OpenAPIToolSpec::from_text(text).is_err(), "{text}");
    }
    // A file spec may not pull a URL in.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("spec.yaml");
    std::fs::write(
        &file,
        "openapi: 3.0.0\npaths:\n  /a:\n    $ref: 'http://169.254.169.254/latest'\n",
    )
    .unwrap();
    assert!(
        OpenAPIToolSpec::from_file(&file)
            .unwrap_err()
            .to_string()
            .contains("names a URL")
    );
    // Files a hostile spec names: absolute, outside its folder, not a regular
    // file, not a mapping (a `.env` would read as one string).
    let inner = dir.path().join("api");
    std::fs::create_dir(&inner).unwrap();
    std::fs::write(dir.path().join(".env"), "OPENAI_API_KEY=sk-secret\n").unwrap();
    std::fs::write(inner.join("plain.yaml"), "just a string\n").unwrap();
    for target in ["/etc/hostname", "../.env", "/dev/zero", "plain.yaml"] {
        let spec_file = inner.join("spec.yaml");
        std::fs::write(
            &spec_file,
            format!("openapi: 3.0.0\npaths:\n  /a:\n    $ref: '{target}'\n"),
        )
        .unwrap();
        let err = OpenAPIToolSpec::from_file(&spec_file)
            .unwrap_err()
            .to_string();
        assert!(!err.contains("sk-secret"), "{target}: {err}");
    }
    // A long chain of references is bounded, not a stack overflow.
    let mut chain = String::from(
        "{\"openapi\": \"3.0.0\", \"paths\": {\"/a\": {\"$ref\": \"#/c/l0\"}}, \"c\": {",
    );
    for i in 0..100_000 {
        chain.push_str(&format!("\"l{i}\": {{\"$ref\": \"#/c/l{}\"}}, ", i + 1));
    }
    chain.push_str("\"l100000\": {}}}");
    assert!(
        OpenAPIToolSpec::from_text(&chain)
            .unwrap_err()
            .to_string()
            .contains("nest deeper")
    );
    // Big strings copied by doubling references are bounded in bytes.
    let mut big = format!(
        "{{\"openapi\": \"3.0.0\", \"paths\": {{}}, \"d0\": \"{}\"",
        "x".repeat(900_000)
    );
    for i in 1..25 {
        big.push_str(&format!(
            ", \"d{i}\": [{{\"$ref\": \"#/d{p}\"}}, {{\"$ref\": \"#/d{p}\"}}]",
            p = i - 1
        ));
    }
    big.push_str(", \"root\": {\"$ref\": \"#/d24\"}}");
    let err = OpenAPIToolSpec::from_text(&big).unwrap_err().to_string();
    assert!(err.contains("bytes of text"), "{err}");
    // A cycle is cut, not followed.
    std::fs::write(
        &file,
        "openapi: 3.1.0\npaths: {}\ncomponents:\n  schemas:\n    Node:\n      type: object\n      properties:\n        next: {$ref: '#/components/schemas/Node'}\n",
    )
    .unwrap();
    let cyclic = OpenAPIToolSpec::from_file(&file).unwrap();
    let node = &cyclic.spec()["components"]["schemas"]["Node"];
    assert_eq!(node["properties"]["next"]["type"], "object");
    assert_eq!(
        node["properties"]["next"]["properties"]["next"],
        json!({"$ref": "#/components/schemas/Node"})
    );
}

#[test]
fn the_petstore_specs_parse() {
    let Some(dir) = ragloom_core::testing::ci_var("RAGLOOM_TEST_PETSTORE_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    for name in [
        "v3.0/petstore.yaml",
        "v3.1/petstore.yaml",
        "v3.0/petstore-separate/spec/openapi.yaml",
    ] {
        // The separate layout refers up to `../common`: that folder is allowed.
        let spec = OpenAPIToolSpec::from_file_in(dir.join(name), &dir)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ops: Vec<String> = spec.operations().iter().map(|o| o.name.clone()).collect();
        assert!(ops.contains(&"listPets".to_owned()), "{name}: {ops:?}");
        assert!(
            !spec.load_openapi_spec()[0].text.contains("$ref\": \""),
            "{name}: a $ref was left"
        );
    }
    // By default references stay in the spec's own folder.
    let outside = OpenAPIToolSpec::from_file(dir.join("v3.0/petstore-separate/spec/openapi.yaml"))
        .unwrap_err();
    assert!(outside.to_string().contains("leaves"), "{outside}");
    // The separate files' references, relative to each file, are followed.
    let separate = OpenAPIToolSpec::from_file_in(
        dir.join("v3.0/petstore-separate/spec/openapi.yaml"),
        dir.join("v3.0/petstore-separate"),
    )
    .unwrap();
    let list = &separate.spec()["paths"]["/pets"]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    assert_eq!(list["type"], "array");
    assert_eq!(list["items"]["required"], json!(["id", "name"]));
    let error = &separate.spec()["paths"]["/pets"]["get"]["responses"]["default"]["content"]["application/json"]
        ["schema"];
    assert_eq!(error["required"], json!(["code", "message"]));
}

#[tokio::test]
async fn an_agent_creates_reads_and_lists_through_the_fastapi_app() {
    let Some(base) = ragloom_core::testing::ci_var("RAGLOOM_TEST_OPENAPI_URL") else {
        return;
    };
    let requests = RequestsToolSpec::new(&base)
        .unwrap()
        .allow_internal_addresses(true);
    requests.post_request("reset", None).await.ok();
    let spec = OpenAPIToolSpec::from_url("openapi.json", &requests)
        .await
        .unwrap();
    assert_eq!(spec.operations().len(), 5);
    let rec = recorded();
    assert_eq!(spec.load_openapi_spec()[0].text, rec["reduced"]["fastapi"]);

    let llm = Arc::new(
        MockLlm::scripted([
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new(
                    "c1",
                    "create_note_notes_post",
                    json!({"body": {"title": "Milk", "tags": ["shopping"]}}),
                )],
            ),
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new(
                    "c2",
                    "create_note_notes_post",
                    json!({"body": {"title": "Call Ada", "body": "about the engine"}}),
                )],
            ),
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![
                    ToolCall::new("r1", "read_note_notes__note_id__get", json!({"note_id": 2})),
                    ToolCall::new("l1", "list_notes_notes_get", json!({"tag": "shopping"})),
                ],
            ),
            ChatMessage::assistant("Two notes saved; one is tagged shopping."),
        ])
        .function_calling(true),
    );
    let agent = FunctionAgent::builder(llm.clone())
        .tools(spec.operation_tools(requests.clone()))
        .build()
        .unwrap();
    let output = agent
        .run("Save two notes, then show the second and the shopping list.")
        .await
        .unwrap();
    assert_eq!(
        output.response.content,
        "Two notes saved; one is tagged shopping."
    );

    // What the API answered went back to the model, call by call.
    // Calls of one turn run together: results are matched by call id.
    let last = llm.requests().last().unwrap().messages.clone();
    let results: std::collections::BTreeMap<String, Value> = last
        .iter()
        .filter_map(|m| {
            let id = m.tool_call_id.clone()?;
            Some((id, serde_json::from_str(&m.content).unwrap()))
        })
        .collect();
    let milk = json!({"id": 1, "title": "Milk", "body": "", "tags": ["shopping"]});
    let ada = json!({"id": 2, "title": "Call Ada", "body": "about the engine", "tags": []});
    assert_eq!(results["c1"], milk);
    assert_eq!(results["c2"], ada);
    assert_eq!(results["r1"], ada);
    assert_eq!(results["l1"], json!([milk]));

    // The service holds what the agent wrote.
    let listed = requests.get_request("notes", None).await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    // A 404 reaches the model as an error it can read.
    let missing = spec.operation_tools(requests.clone())[2]
        .call(json!({"note_id": 99}))
        .await
        .unwrap();
    assert!(
        missing.is_error && missing.content.contains("404"),
        "{}",
        missing.content
    );
    // The LlamaIndex pairing: the reduced spec, then RequestsToolSpec's tools.
    let mut paired = spec.to_tool_list();
    paired.extend(requests.to_tool_list());
    let names: Vec<&str> = paired.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["load_openapi_spec", "get_request", "post_request"]);
}

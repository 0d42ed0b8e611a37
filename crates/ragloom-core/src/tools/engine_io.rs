//! What tools over engines share: a query rendered from a call's arguments, an
//! answer as a tool's raw output, and the source nodes read back out of it.

use super::types::ToolOutput;
use crate::schema::{NodeWithScore, Response, py_str};
use serde_json::{Map, Value, json};

/// A response as JSON for [`ToolOutput::raw_output`]: `response`,
/// `source_nodes` (each `{"node": <LlamaIndex node JSON>, "score"}`) and `metadata`.
pub fn response_to_value(response: &Response) -> Value {
    json!({
        "response": response.response,
        "source_nodes": nodes_to_value(&response.source_nodes),
        "metadata": Value::Object(response.metadata.clone()),
    })
}

/// Scored nodes as a tool's raw output holds them: each `{"node": <LlamaIndex
/// node JSON>, "score"}`.
pub fn nodes_to_value(nodes: &[NodeWithScore]) -> Value {
    nodes
        .iter()
        .map(|n| {
            json!({
                "node": serde_json::to_value(&n.node).unwrap_or(Value::Null),
                "score": n.score,
            })
        })
        .collect()
}

/// The source nodes recorded in a `QueryEngineTool`'s (or
/// `RetrieverTool`'s) output, for an agent to cite; empty for other outputs.
pub fn source_nodes_of(output: &ToolOutput) -> Vec<NodeWithScore> {
    let list = match &output.raw_output {
        Value::Object(map) => map.get("source_nodes").and_then(Value::as_array),
        Value::Array(list) => Some(list),
        _ => None,
    };
    list.map(|items| {
        items
            .iter()
            .filter_map(|item| {
                let node = serde_json::from_value(item.get("node")?.clone()).ok()?;
                let score = item.get("score").and_then(Value::as_f64).map(|s| s as f32);
                Some(NodeWithScore::new(node, score))
            })
            .collect()
    })
    .unwrap_or_default()
}

/// Arguments rendered as LlamaIndex's `RetrieverTool` renders them into a
/// query: positional text then `key is value` pairs, each part ending in a newline.
pub(crate) fn retriever_query_str(input: &Value) -> String {
    let (args, kwargs): (Vec<String>, Map<String, Value>) = match input {
        Value::Object(map) => (Vec::new(), map.clone()),
        Value::Array(items) => (items.iter().map(py_str).collect(), Map::new()),
        Value::Null => (Vec::new(), Map::new()),
        other => (vec![py_str(other)], Map::new()),
    };
    let kwargs: Vec<String> = kwargs
        .iter()
        .map(|(k, v)| format!("{k} is {}", py_str(v)))
        .collect();
    format!("{}\n{}\n", args.join(", "), kwargs.join(", "))
}

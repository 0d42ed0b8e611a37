//! LlamaIndex 0.14.25's sub-question prompts: the text prompt with its
//! few-shot example (`LLMQuestionGenerator`) and the function-calling one (`OpenAIQuestionGenerator`).

use crate::tools::ToolMetadata;
use serde_json::Value;

/// LlamaIndex's `DEFAULT_SUB_QUESTION_PROMPT_TMPL` (`{tools_str}`, `{query_str}`),
/// with the few-shot example verbatim. The literal braces of the example's
/// JSON are doubled, as ragloom templates (Python `str.format` rules) need;
/// formatted, the prompt is character for character LlamaIndex's.
pub const DEFAULT_SUB_QUESTION_PROMPT_TMPL: &str = "Given a user question, and a list of tools, output a list of relevant sub-questions in json markdown that when composed can help answer the full user question:\n\n# Example 1\n<Tools>\n```json\n{{\n    \"uber_10k\": \"Provides information about Uber financials for year 2021\",\n    \"lyft_10k\": \"Provides information about Lyft financials for year 2021\"\n}}\n```\n\n<User Question>\nCompare and contrast the revenue growth and EBITDA of Uber and Lyft for year 2021\n\n\n<Output>\n```json\n{{\n    \"items\": [\n        {{\n            \"sub_question\": \"What is the revenue growth of Uber\",\n            \"tool_name\": \"uber_10k\"\n        }},\n        {{\n            \"sub_question\": \"What is the EBITDA of Uber\",\n            \"tool_name\": \"uber_10k\"\n        }},\n        {{\n            \"sub_question\": \"What is the revenue growth of Lyft\",\n            \"tool_name\": \"lyft_10k\"\n        }},\n        {{\n            \"sub_question\": \"What is the EBITDA of Lyft\",\n            \"tool_name\": \"lyft_10k\"\n        }}\n    ]\n}}\n```\n\n# Example 2\n<Tools>\n```json\n{tools_str}\n```\n\n<User Question>\n{query_str}\n\n<Output>\n";

/// The prompt of LlamaIndex's `OpenAIQuestionGenerator` (`{tools_str}`, `{query_str}`),
/// used by [`super::FunctionCallingQuestionGenerator`].
pub const DEFAULT_OPENAI_SUB_QUESTION_PROMPT_TMPL: &str = "You are a world class state of the art agent.\n\nYou have access to multiple tools, each representing a different data source or API.\nEach of the tools has a name and a description, formatted as a JSON dictionary.\nThe keys of the dictionary are the names of the tools and the values are the descriptions.\nYour purpose is to help answer a complex user question by generating a list of sub questions that can be answered by the tools.\n\nThese are the guidelines you consider when completing your task:\n* Be as specific as possible\n* The sub questions should be relevant to the user question\n* The sub questions should be answerable by the tools provided\n* You can generate multiple sub questions for each tool\n* Tools must be specified by their name, not their description\n* You don't need to use a tool if you don't think it's relevant\n\nOutput the list of sub questions by calling the SubQuestionList function.\n\n## Tools\n```json\n{tools_str}\n```\n\n## User Question\n{query_str}\n";

/// The tools as a JSON object of name → description, indented by four spaces
/// and ASCII-escaped, as LlamaIndex's `build_tools_text` (`json.dumps(indent=4)`)
/// writes it. A repeated name keeps its first place and its last description.
pub fn build_tools_text(tools: &[ToolMetadata]) -> String {
    let mut entries: Vec<(&str, &str)> = Vec::new();
    for tool in tools {
        match entries.iter_mut().find(|(name, _)| *name == tool.name) {
            Some(entry) => entry.1 = &tool.description,
            None => entries.push((&tool.name, &tool.description)),
        }
    }
    if entries.is_empty() {
        return "{}".to_owned();
    }
    let quote = |s: &str| {
        crate::utils::to_python_json_string(&Value::String(s.to_owned()))
            .unwrap_or_else(|_| format!("{s:?}"))
    };
    let body = entries
        .iter()
        .map(|(name, description)| format!("    {}: {}", quote(name), quote(description)))
        .collect::<Vec<_>>()
        .join(",\n");
    format!("{{\n{body}\n}}")
}

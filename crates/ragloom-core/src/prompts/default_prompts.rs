//! LlamaIndex 0.14.25's default prompts, verbatim, with the chat forms that
//! its selectors pick for chat models.

use super::base::{
    BasePromptTemplate, ChatPromptTemplate, PromptTemplate, PromptType, SelectorPromptTemplate,
};
use crate::llms::MessageRole;

/// Text-QA prompt for completion models.
pub const DEFAULT_TEXT_QA_PROMPT_TMPL: &str = "Context information is below.\n---------------------\n{context_str}\n---------------------\nGiven the context information and not prior knowledge, answer the query.\nQuery: {query_str}\nAnswer: ";

/// Refine prompt for completion models.
pub const DEFAULT_REFINE_PROMPT_TMPL: &str = "The original query is as follows: {query_str}\nWe have provided an existing answer: {existing_answer}\nWe have the opportunity to refine the existing answer (only if needed) with some more context below.\n------------\n{context_msg}\n------------\nGiven the new context, refine the original answer to better answer the query. If the context isn't useful, return the original answer.\nRefined Answer: ";

/// Tree-summarize prompt for completion models.
pub const DEFAULT_TREE_SUMMARIZE_TMPL: &str = "Context information from multiple sources is below.\n---------------------\n{context_str}\n---------------------\nGiven the information from multiple sources and not prior knowledge, answer the query.\nQuery: {query_str}\nAnswer: ";

/// Pass-through prompt.
pub const DEFAULT_SIMPLE_INPUT_TMPL: &str = "{query_str}";

/// System message of the chat text-QA prompt.
pub const TEXT_QA_SYSTEM_PROMPT: &str = "You are an expert Q&A system that is trusted around the world.\nAlways answer the query using the provided context information, and not prior knowledge.\nSome rules to follow:\n1. Never directly reference the given context in your answer.\n2. Avoid statements like 'Based on the context, ...' or 'The context information ...' or anything along those lines.";

/// User message of the chat refine prompt.
pub const CHAT_REFINE_PROMPT_TMPL: &str = "You are an expert Q&A system that strictly operates in two modes when refining existing answers:\n1. **Rewrite** an original answer using the new context.\n2. **Repeat** the original answer if the new context isn't useful.\nNever reference the original answer or context directly in your answer.\nWhen in doubt, just repeat the original answer.\nNew Context: {context_msg}\nQuery: {query_str}\nOriginal Answer: {existing_answer}\nNew Answer: ";

/// The text-QA prompt with its chat form (LlamaIndex `DEFAULT_TEXT_QA_PROMPT_SEL`).
pub fn text_qa_prompt() -> BasePromptTemplate {
    selector(
        PromptTemplate::with_type(DEFAULT_TEXT_QA_PROMPT_TMPL, PromptType::QuestionAnswer),
        ChatPromptTemplate::from_messages(
            vec![
                (MessageRole::System, TEXT_QA_SYSTEM_PROMPT.to_string()),
                (MessageRole::User, DEFAULT_TEXT_QA_PROMPT_TMPL.to_string()),
            ],
            PromptType::QuestionAnswer,
        ),
    )
}

/// The refine prompt with its chat form (LlamaIndex `DEFAULT_REFINE_PROMPT_SEL`).
pub fn refine_prompt() -> BasePromptTemplate {
    selector(
        PromptTemplate::with_type(DEFAULT_REFINE_PROMPT_TMPL, PromptType::Refine),
        ChatPromptTemplate::from_messages(
            vec![(MessageRole::User, CHAT_REFINE_PROMPT_TMPL.to_string())],
            PromptType::Refine,
        ),
    )
}

/// The tree-summarize prompt with its chat form (LlamaIndex `DEFAULT_TREE_SUMMARIZE_PROMPT_SEL`).
pub fn tree_summarize_prompt() -> BasePromptTemplate {
    selector(
        PromptTemplate::with_type(DEFAULT_TREE_SUMMARIZE_TMPL, PromptType::Summary),
        ChatPromptTemplate::from_messages(
            vec![
                (MessageRole::System, TEXT_QA_SYSTEM_PROMPT.to_string()),
                (MessageRole::User, DEFAULT_TREE_SUMMARIZE_TMPL.to_string()),
            ],
            PromptType::Summary,
        ),
    )
}

/// The pass-through prompt.
pub fn simple_input_prompt() -> BasePromptTemplate {
    PromptTemplate::with_type(DEFAULT_SIMPLE_INPUT_TMPL, PromptType::SimpleInput).into()
}

fn selector(default: PromptTemplate, chat: ChatPromptTemplate) -> BasePromptTemplate {
    BasePromptTemplate::Selector(SelectorPromptTemplate {
        default_template: Box::new(default.into()),
        chat_template: Some(Box::new(chat.into())),
    })
}

/// LlamaIndex's `DEFAULT_CHOICE_SELECT_PROMPT_TMPL`, verbatim.
pub const DEFAULT_CHOICE_SELECT_PROMPT_TMPL: &str = "A list of documents is shown below. Each document has a number next to it along \
with a summary of the document. A question is also provided. \n\
Respond with the numbers of the documents \
you should consult to answer the question, in order of relevance, as well \n\
as the relevance score. The relevance score is a number from 1-10 based on \
how relevant you think the document is to the question.\n\
Do not include any documents that are not relevant to the question. \n\
Example format: \n\
Document 1:\n<summary of document 1>\n\n\
Document 2:\n<summary of document 2>\n\n\
...\n\n\
Document 10:\n<summary of document 10>\n\n\
Question: <question>\n\
Answer:\n\
Doc: 9, Relevance: 7\n\
Doc: 3, Relevance: 4\n\
Doc: 7, Relevance: 3\n\n\
Let's try this now: \n\n\
{context_str}\n\
Question: {query_str}\n\
Answer:\n";

//! LlamaIndex 0.14.25's text-to-SQL prompts, verbatim.

use ragloom_core::prompts::{BasePromptTemplate, PromptTemplate};

/// `DEFAULT_TEXT_TO_SQL_TMPL`: `{dialect}`, `{schema}` and `{query_str}`.
pub const DEFAULT_TEXT_TO_SQL_TMPL: &str = "Given an input question, first create a syntactically correct {dialect} query to run, then look at the results of the query and return the answer. You can order the results by a relevant column to return the most interesting examples in the database.\n\nNever query for all the columns from a specific table, only ask for a few relevant columns given the question.\n\nPay attention to use only the column names that you can see in the schema description. Be careful to not query for columns that do not exist. Pay attention to which column is in which table. Also, qualify column names with the table name when needed. You are required to use the following format, each taking one line:\n\nQuestion: Question here\nSQLQuery: SQL Query to run\nSQLResult: Result of the SQLQuery\nAnswer: Final answer here\n\nOnly use tables listed below.\n{schema}\n\nQuestion: {query_str}\nSQLQuery: ";

/// `DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2`: `{query_str}`, `{sql_query}`
/// and `{context_str}` (the query's result).
pub const DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2: &str = "Given an input question, synthesize a response from the query results.\nQuery: {query_str}\nSQL: {sql_query}\nSQL Response: {context_str}\nResponse: ";

/// The text-to-SQL prompt.
pub fn text_to_sql_prompt() -> BasePromptTemplate {
    PromptTemplate::new(DEFAULT_TEXT_TO_SQL_TMPL).into()
}

/// The prompt that answers from a query's result.
pub fn response_synthesis_prompt() -> BasePromptTemplate {
    PromptTemplate::new(DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2).into()
}

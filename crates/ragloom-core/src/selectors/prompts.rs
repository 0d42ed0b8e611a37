//! LlamaIndex 0.14.25's selector prompts, verbatim: choose one or several of a
//! numbered list of choices, as text (`LLMSingleSelector`) or through function calling.

/// Single-select prompt (`num_choices`, `context_list`, `query_str`).
pub const DEFAULT_SINGLE_SELECT_PROMPT_TMPL: &str = "Some choices are given below. It is provided in a numbered list (1 to {num_choices}), where each item in the list corresponds to a summary.\n---------------------\n{context_list}\n---------------------\nUsing only the choices above and not prior knowledge, return the choice that is most relevant to the question: '{query_str}'\n";

/// Multi-select prompt (`num_choices`, `context_list`, `max_outputs`, `query_str`).
pub const DEFAULT_MULTI_SELECT_PROMPT_TMPL: &str = "Some choices are given below. It is provided in a numbered list (1 to {num_choices}), where each item in the list corresponds to a summary.\n---------------------\n{context_list}\n---------------------\nUsing only the choices above and not prior knowledge, return the top choices (no more than {max_outputs}, but only select what is needed) that are most relevant to the question: '{query_str}'\n";

/// Single-select prompt for function calling (`PydanticSingleSelector`).
pub const DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL: &str = "Some choices are given below. It is provided in a numbered list (1 to {num_choices}), where each item in the list corresponds to a summary.\n---------------------\n{context_list}\n---------------------\nUsing only the choices above and not prior knowledge, generate the selection object and reason that is most relevant to the question: '{query_str}'\n";

/// Multi-select prompt for function calling (`PydanticMultiSelector`).
pub const DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL: &str = "Some choices are given below. It is provided in a numbered list (1 to {num_choices}), where each item in the list corresponds to a summary.\n---------------------\n{context_list}\n---------------------\nUsing only the choices above and not prior knowledge, return the top choice(s) (no more than {max_outputs}, but only select what is needed) by generating the selection object and reasons that are most relevant to the question: '{query_str}'\n";

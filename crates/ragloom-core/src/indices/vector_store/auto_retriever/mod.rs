//! `VectorIndexAutoRetriever`: the model reads what the store holds and turns
//! a question into a query text, metadata filters and a count, then retrieves.

pub mod prompts;

use super::{VectorIndexRetriever, VectorStoreIndex};
use crate::error::{Error, Result};
use crate::llms::{Llm, predict};
use crate::output_parsers::utils::parse_json_markdown;
use crate::prompts::{BasePromptTemplate, PromptTemplate, own_prompts};
use crate::retrievers::Retriever;
use crate::schema::{NodeWithScore, QueryBundle, py_repr};
use crate::vector_stores::{
    FilterCondition, FilterItem, FilterOperator, MetadataFilter, MetadataFilters, VectorStoreInfo,
    VectorStoreQueryMode, VectorStoreQuerySpec,
};
use async_trait::async_trait;
use serde_json::Value;
use std::sync::Arc;

/// Retrieves with what a model makes of the question (LlamaIndex
/// `VectorIndexAutoRetriever`): it is shown the store's [`VectorStoreInfo`]
/// and answers with a [`VectorStoreQuerySpec`]; a reply that is not one
/// falls back to the question itself, unfiltered, as in LlamaIndex.
#[derive(Clone, Debug)]
pub struct VectorIndexAutoRetriever {
    index: VectorStoreIndex,
    info: VectorStoreInfo,
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    similarity_top_k: usize,
    empty_query_top_k: Option<usize>,
    max_top_k: usize,
    mode: VectorStoreQueryMode,
    default_empty_query_vector: Option<Vec<f32>>,
    extra_filters: Vec<MetadataFilter>,
    verbose: bool,
}

own_prompts!(VectorIndexAutoRetriever {
    "prompt" => prompt ["schema_str", "info_str", "query_str"],
});

impl VectorIndexAutoRetriever {
    /// An auto retriever over `index`, described by `info`, asking `llm`:
    /// top 2, 10 when the query is empty, at most 10 however asked.
    pub fn new(index: VectorStoreIndex, info: VectorStoreInfo, llm: Arc<dyn Llm>) -> Self {
        Self {
            index,
            info,
            llm,
            prompt: BasePromptTemplate::from(PromptTemplate::new(
                prompts::DEFAULT_VECTOR_STORE_QUERY_PROMPT_TMPL,
            )),
            similarity_top_k: super::retriever::DEFAULT_SIMILARITY_TOP_K,
            empty_query_top_k: Some(10),
            max_top_k: 10,
            mode: VectorStoreQueryMode::Default,
            default_empty_query_vector: None,
            extra_filters: Vec::new(),
            verbose: false,
        }
    }

    /// Nodes returned when the model sets no count (default 2).
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.similarity_top_k = k;
        self
    }

    /// Nodes returned when the model's query is empty (filters alone);
    /// `None` uses `similarity_top_k`. Default 10.
    pub fn empty_query_top_k(mut self, k: Option<usize>) -> Self {
        self.empty_query_top_k = k;
        self
    }

    /// The most nodes a count the model sets may ask for (default 10).
    pub fn max_top_k(mut self, k: usize) -> Self {
        self.max_top_k = k;
        self
    }

    /// The vector store query mode.
    pub fn vector_store_query_mode(mut self, mode: VectorStoreQueryMode) -> Self {
        self.mode = mode;
        self
    }

    /// The vector used when the model's query is empty; without one, an
    /// empty query is an error (there is nothing to embed).
    pub fn default_empty_query_vector(mut self, vector: Vec<f32>) -> Self {
        self.default_empty_query_vector = Some(vector);
        self
    }

    /// Filters added to the model's, all of which must hold (an `OR` group
    /// is refused, as in LlamaIndex).
    pub fn extra_filters(mut self, filters: MetadataFilters) -> Result<Self> {
        if filters.condition == FilterCondition::Or {
            return Err(Error::InvalidInput(
                "extra_filters cannot be OR condition".into(),
            ));
        }
        self.extra_filters = filters
            .filters
            .into_iter()
            .map(|item| match item {
                FilterItem::Filter(f) => Ok(f),
                FilterItem::Filters(_) => Err(Error::InvalidInput(
                    "extra_filters cannot hold nested filter groups".into(),
                )),
            })
            .collect::<Result<_>>()?;
        Ok(self)
    }

    /// A prompt of your own, with `{schema_str}`, `{info_str}` and `{query_str}`.
    pub fn prompt_template_str(mut self, template: &str) -> Result<Self> {
        let prompt = BasePromptTemplate::from(PromptTemplate::new(template));
        prompt.require_vars(&["schema_str", "info_str", "query_str"])?;
        self.prompt = prompt;
        Ok(self)
    }

    /// Prints the query and filters the model chose.
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// What the model makes of `query` (LlamaIndex `generate_retrieval_spec`).
    pub async fn generate_retrieval_spec(
        &self,
        query: &QueryBundle,
    ) -> Result<VectorStoreQuerySpec> {
        let info = json_indent4(&self.info)?;
        let reply = predict(
            self.llm.as_ref(),
            &doubled_braces_kept(&self.prompt),
            &[
                ("schema_str", prompts::VECTOR_STORE_QUERY_SPEC_SCHEMA_STR),
                ("info_str", &info),
                ("query_str", &query.query_str),
            ],
        )
        .await?;
        Ok(parse_spec(&reply).unwrap_or_else(|why| {
            tracing::warn!(%why, "Failed to parse query spec, using defaults as fallback.");
            VectorStoreQuerySpec {
                query: query.query_str.clone(),
                filters: Vec::new(),
                top_k: None,
            }
        }))
    }

    /// The retriever and query a spec asks for (LlamaIndex `_build_retriever_from_spec`).
    pub fn build_retriever_from_spec(
        &self,
        spec: &VectorStoreQuerySpec,
    ) -> Result<(VectorIndexRetriever, QueryBundle)> {
        let filter_list: Vec<Value> = spec
            .filters
            .iter()
            .map(|f| {
                Value::Array(vec![
                    Value::String(f.key.clone()),
                    Value::String(f.operator.as_str().to_owned()),
                    f.value.clone(),
                ])
            })
            .collect();
        let filter_list = py_tuple_list(&filter_list);
        tracing::info!(query = %spec.query, filters = %filter_list, "auto retriever spec");
        if self.verbose {
            println!("Using query str: {}", spec.query);
            println!("Using filters: {filter_list}");
        }
        let query = if spec.query.is_empty() {
            match &self.default_empty_query_vector {
                Some(vector) => QueryBundle {
                    embedding: Some(vector.clone()),
                    ..QueryBundle::new("")
                },
                None => {
                    return Err(Error::InvalidInput(
                        "the model asked for no query text, only filters, and there is no \
                         default_empty_query_vector to search with: set one"
                            .into(),
                    ));
                }
            }
        } else {
            QueryBundle::new(spec.query.clone())
        };
        let mut top_k = match self.empty_query_top_k {
            Some(k) if spec.query.is_empty() => k,
            _ => self.similarity_top_k,
        };
        if let Some(k) = spec.top_k {
            top_k = k.min(self.max_top_k).min(top_k);
        }
        let mut retriever = VectorIndexRetriever::new(self.index.clone())
            .similarity_top_k(top_k)
            .vector_store_query_mode(self.mode);
        let filters: Vec<FilterItem> = spec
            .filters
            .iter()
            .chain(&self.extra_filters)
            .cloned()
            .map(FilterItem::Filter)
            .collect();
        if !filters.is_empty() {
            retriever = retriever.filters(MetadataFilters::new(filters, FilterCondition::And));
        }
        Ok((retriever, query))
    }
}

#[async_trait]
impl Retriever for VectorIndexAutoRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let spec = self.generate_retrieval_spec(query).await?;
        let (retriever, query) = self.build_retriever_from_spec(&spec)?;
        retriever.retrieve(&query).await
    }
}

/// The prompt with its doubled braces kept doubled when formatted:
/// LlamaIndex's formatter replaces `{name}` fields only, so the examples'
/// `{{` reach the model as written.
fn doubled_braces_kept(prompt: &BasePromptTemplate) -> BasePromptTemplate {
    match prompt {
        BasePromptTemplate::Text(t) => {
            let mut t = t.clone();
            t.template = t.template.replace("{{", "{{{{").replace("}}", "}}}}");
            BasePromptTemplate::Text(t)
        }
        other => other.clone(),
    }
}

/// Python's `str` of a list of tuples: `[('year', '>', 2018)]`.
fn py_tuple_list(items: &[Value]) -> String {
    let tuples: Vec<String> = items
        .iter()
        .map(|t| {
            let parts: Vec<String> = t.as_array().into_iter().flatten().map(py_repr).collect();
            format!("({})", parts.join(", "))
        })
        .collect();
    format!("[{}]", tuples.join(", "))
}

/// The model's reply as a spec, checked as LlamaIndex's pydantic model
/// checks it: `query` a string, `filters` a list of `{key, value,
/// operator}` whose value is a number, a string, a list of one of those or
/// null, `top_k` a count or null. Why not, otherwise.
pub fn parse_spec(reply: &str) -> std::result::Result<VectorStoreQuerySpec, String> {
    let value = parse_json_markdown(reply).map_err(|e| e.to_string())?;
    let Value::Object(object) = value else {
        return Err("the reply's JSON is not an object".into());
    };
    let query = match object.get("query") {
        Some(Value::String(q)) => q.clone(),
        _ => return Err("`query` is missing or not a string".into()),
    };
    let Some(Value::Array(raw_filters)) = object.get("filters") else {
        return Err("`filters` is missing or not a list".into());
    };
    let filters = raw_filters
        .iter()
        .map(filter)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let top_k = match object.get("top_k") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }) {
            Some(k) if k > 0 => Some(usize::try_from(k).unwrap_or(usize::MAX)),
            _ => return Err(format!("`top_k` {n} is not a positive count")),
        },
        Some(other) => return Err(format!("`top_k` {other} is not a count")),
    };
    Ok(VectorStoreQuerySpec {
        query,
        filters,
        top_k,
    })
}

fn filter(value: &Value) -> std::result::Result<MetadataFilter, String> {
    let Value::Object(object) = value else {
        return Err(format!("filter {value} is not an object"));
    };
    let key = match object.get("key") {
        Some(Value::String(k)) => k.clone(),
        _ => return Err(format!("filter {value} has no string `key`")),
    };
    let value_ok = |v: &Value| matches!(v, Value::Number(_) | Value::String(_));
    let filter_value = match object.get("value") {
        Some(v @ (Value::Number(_) | Value::String(_) | Value::Null)) => v.clone(),
        Some(Value::Array(items)) if items.iter().all(value_ok) && same_kind(items) => {
            Value::Array(items.clone())
        }
        _ => return Err(format!("filter {value} has no valid `value`")),
    };
    let operator = match object.get("operator") {
        None => FilterOperator::Eq,
        Some(Value::String(op)) => FilterOperator::ALL_OPERATORS
            .into_iter()
            .find(|o| o.as_str() == op)
            .ok_or_else(|| format!("filter {value} has an unknown operator `{op}`"))?,
        Some(other) => return Err(format!("filter operator {other} is not a string")),
    };
    Ok(MetadataFilter {
        key,
        value: filter_value,
        operator,
    })
}

/// A list of strings or a list of numbers, not a mix (LlamaIndex's
/// `List[StrictStr] | List[StrictFloat] | List[StrictInt]`).
fn same_kind(items: &[Value]) -> bool {
    items.iter().all(Value::is_string) || items.iter().all(Value::is_number)
}

/// JSON indented by four spaces, as pydantic's `model_dump_json(indent=4)`.
fn json_indent4<T: serde::Serialize>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer)?;
    String::from_utf8(out).map_err(|e| Error::failed("writing JSON", e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filters_print_as_python_tuples() {
        let list = [
            json!(["country", "==", "Japan"]),
            json!(["year", ">", 2018]),
            json!(["title", "in", ["Tokyo", "Osaka"]]),
        ];
        assert_eq!(
            py_tuple_list(&list),
            "[('country', '==', 'Japan'), ('year', '>', 2018), ('title', 'in', ['Tokyo', 'Osaka'])]"
        );
    }

    #[test]
    fn a_spec_is_checked_as_pydantic_checks_it() {
        assert!(parse_spec(r#"{"query": "q", "filters": [{"key": "k", "value": true}]}"#).is_err());
        assert!(
            parse_spec(r#"{"query": "q", "filters": [{"key": "k", "value": [1, "a"]}]}"#).is_err()
        );
        assert!(parse_spec(r#"{"query": "q"}"#).is_err());
        assert!(parse_spec(r#"{"query": "q", "filters": [], "top_k": -1}"#).is_err());
        let spec =
            parse_spec(r#"{"query": "q", "filters": [{"key": "k", "value": 3}], "top_k": 2.0}"#)
                .unwrap();
        assert_eq!(spec.top_k, Some(2));
        assert_eq!(spec.filters[0].operator, FilterOperator::Eq);
    }
}

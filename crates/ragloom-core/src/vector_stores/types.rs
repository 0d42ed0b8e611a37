//! The vocabulary shared by every vector store: metadata filters, query modes,
//! the query and its result, in LlamaIndex's shapes and JSON (`vector_stores/types.py`).

use crate::schema::Node;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// LlamaIndex's default persist directory (`./storage`).
pub const DEFAULT_PERSIST_DIR: &str = "./storage";
/// The vector store's file name inside a persist directory, after its namespace.
pub const DEFAULT_PERSIST_FNAME: &str = "vector_store.json";
/// The namespace of the default vector store (`default__vector_store.json`).
pub const DEFAULT_VECTOR_STORE: &str = "default";
/// Separator between a namespace and [`DEFAULT_PERSIST_FNAME`].
pub const NAMESPACE_SEP: &str = "__";

/// How one metadata value is compared with a filter's value. Serialised as
/// LlamaIndex's strings (`"=="`, `">"`, `"in"`, `"text_match"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum FilterOperator {
    /// `==`: equal (numbers compare as numbers, so 2 equals 2.0).
    #[default]
    #[serde(rename = "==")]
    Eq,
    /// `>`: greater than.
    #[serde(rename = ">")]
    Gt,
    /// `<`: less than.
    #[serde(rename = "<")]
    Lt,
    /// `!=`: not equal; also true when the key is missing.
    #[serde(rename = "!=")]
    Ne,
    /// `>=`: greater than or equal.
    #[serde(rename = ">=")]
    Gte,
    /// `<=`: less than or equal.
    #[serde(rename = "<=")]
    Lte,
    /// `in`: the metadata value is one of the filter's list (or a substring of its string).
    #[serde(rename = "in")]
    In,
    /// `nin`: the metadata value is not in the filter's list; true when the key is missing.
    #[serde(rename = "nin")]
    Nin,
    /// `any`: the metadata (list or string) contains at least one of the filter's values.
    #[serde(rename = "any")]
    Any,
    /// `all`: the metadata (list or string) contains every one of the filter's values.
    #[serde(rename = "all")]
    All,
    /// `text_match`: the filter's string is a substring of the metadata string.
    #[serde(rename = "text_match")]
    TextMatch,
    /// `text_match_insensitive`: as `text_match`, ignoring case.
    #[serde(rename = "text_match_insensitive")]
    TextMatchInsensitive,
    /// `contains`: the metadata list (or string, or object's keys) contains the filter's value.
    #[serde(rename = "contains")]
    Contains,
    /// `is_empty`: the key is missing, null, `""` or `[]`.
    #[serde(rename = "is_empty")]
    IsEmpty,
}

impl FilterOperator {
    /// Every operator, in LlamaIndex's declaration order.
    pub const ALL_OPERATORS: [FilterOperator; 14] = [
        Self::Eq,
        Self::Gt,
        Self::Lt,
        Self::Ne,
        Self::Gte,
        Self::Lte,
        Self::In,
        Self::Nin,
        Self::Any,
        Self::All,
        Self::TextMatch,
        Self::TextMatchInsensitive,
        Self::Contains,
        Self::IsEmpty,
    ];

    /// LlamaIndex's string for this operator (`"=="`, `"nin"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "==",
            Self::Gt => ">",
            Self::Lt => "<",
            Self::Ne => "!=",
            Self::Gte => ">=",
            Self::Lte => "<=",
            Self::In => "in",
            Self::Nin => "nin",
            Self::Any => "any",
            Self::All => "all",
            Self::TextMatch => "text_match",
            Self::TextMatchInsensitive => "text_match_insensitive",
            Self::Contains => "contains",
            Self::IsEmpty => "is_empty",
        }
    }
}

/// How the filters of one [`MetadataFilters`] combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterCondition {
    /// Every filter matches.
    #[default]
    And,
    /// At least one filter matches.
    Or,
    /// None of the filters matches.
    Not,
}

/// One condition on one metadata key (LlamaIndex `MetadataFilter`, also
/// known as `ExactMatchFilter` when the operator is `==`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetadataFilter {
    /// The metadata key.
    pub key: String,
    /// The value to compare with: a number, a string, a list of them, or null.
    #[serde(default)]
    pub value: Value,
    /// How to compare.
    #[serde(default)]
    pub operator: FilterOperator,
}

impl MetadataFilter {
    /// A filter `key <operator> value`.
    pub fn new(key: impl Into<String>, value: impl Into<Value>, operator: FilterOperator) -> Self {
        Self {
            key: key.into(),
            value: value.into(),
            operator,
        }
    }

    /// `key == value`.
    pub fn eq(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Eq)
    }

    /// `key != value`.
    pub fn ne(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Ne)
    }

    /// `key > value`.
    pub fn gt(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Gt)
    }

    /// `key >= value`.
    pub fn gte(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Gte)
    }

    /// `key < value`.
    pub fn lt(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Lt)
    }

    /// `key <= value`.
    pub fn lte(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Lte)
    }

    /// `key in values`.
    pub fn is_in<V: Into<Value>>(
        key: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        Self::new(key, list(values), FilterOperator::In)
    }

    /// `key not in values`.
    pub fn nin<V: Into<Value>>(
        key: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        Self::new(key, list(values), FilterOperator::Nin)
    }

    /// The metadata list `key` holds at least one of `values`.
    pub fn any<V: Into<Value>>(
        key: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        Self::new(key, list(values), FilterOperator::Any)
    }

    /// The metadata list `key` holds every one of `values`.
    pub fn all<V: Into<Value>>(
        key: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        Self::new(key, list(values), FilterOperator::All)
    }

    /// The metadata list (or string) `key` contains `value`.
    pub fn contains(key: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(key, value, FilterOperator::Contains)
    }

    /// The metadata string `key` contains `text`.
    pub fn text_match(key: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(key, Value::String(text.into()), FilterOperator::TextMatch)
    }

    /// The metadata string `key` contains `text`, ignoring case.
    pub fn text_match_insensitive(key: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(
            key,
            Value::String(text.into()),
            FilterOperator::TextMatchInsensitive,
        )
    }

    /// `key` is missing, null, `""` or `[]`.
    pub fn is_empty(key: impl Into<String>) -> Self {
        Self::new(key, Value::Null, FilterOperator::IsEmpty)
    }
}

fn list<V: Into<Value>>(values: impl IntoIterator<Item = V>) -> Value {
    Value::Array(values.into_iter().map(Into::into).collect())
}

/// One entry of [`MetadataFilters::filters`]: a single filter, or a nested
/// group with its own condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FilterItem {
    /// A nested group (tried first: it is the one with a `filters` field).
    Filters(MetadataFilters),
    /// A single filter.
    Filter(MetadataFilter),
}

impl From<MetadataFilter> for FilterItem {
    fn from(f: MetadataFilter) -> Self {
        FilterItem::Filter(f)
    }
}

impl From<MetadataFilters> for FilterItem {
    fn from(f: MetadataFilters) -> Self {
        FilterItem::Filters(f)
    }
}

/// Filters combined by a condition (LlamaIndex `MetadataFilters`). Groups may
/// nest; LlamaIndex's `SimpleVectorStore` rejects nesting, ragloom's stores
/// evaluate it (see [`crate::vector_stores::filters::matches`]).
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct MetadataFilters {
    /// The filters and nested groups.
    pub filters: Vec<FilterItem>,
    /// How they combine; `null` in JSON reads as `and`, as in LlamaIndex.
    #[serde(default, deserialize_with = "null_as_and")]
    pub condition: FilterCondition,
}

fn null_as_and<'de, D: Deserializer<'de>>(d: D) -> Result<FilterCondition, D::Error> {
    Ok(Option::<FilterCondition>::deserialize(d)?.unwrap_or_default())
}

impl MetadataFilters {
    /// `filters` combined by `condition`.
    pub fn new(filters: Vec<FilterItem>, condition: FilterCondition) -> Self {
        Self { filters, condition }
    }

    /// Every one of `filters` must match.
    pub fn and<I: Into<FilterItem>>(filters: impl IntoIterator<Item = I>) -> Self {
        Self::new(
            filters.into_iter().map(Into::into).collect(),
            FilterCondition::And,
        )
    }

    /// At least one of `filters` must match.
    pub fn or<I: Into<FilterItem>>(filters: impl IntoIterator<Item = I>) -> Self {
        Self::new(
            filters.into_iter().map(Into::into).collect(),
            FilterCondition::Or,
        )
    }

    /// None of `filters` may match.
    pub fn not<I: Into<FilterItem>>(filters: impl IntoIterator<Item = I>) -> Self {
        Self::new(
            filters.into_iter().map(Into::into).collect(),
            FilterCondition::Not,
        )
    }

    /// `key == value` for every pair, all required (LlamaIndex `MetadataFilters.from_dict`).
    pub fn from_pairs<K: Into<String>, V: Into<Value>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self::and(pairs.into_iter().map(|(k, v)| MetadataFilter::eq(k, v)))
    }

    /// Whether there is nothing to check (such filters match everything).
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }
}

/// How a store searches (LlamaIndex `VectorStoreQueryMode`). A store that does
/// not implement a mode answers [`crate::Error::Unsupported`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorStoreQueryMode {
    /// Dense vector similarity.
    #[default]
    Default,
    /// Sparse vectors only.
    Sparse,
    /// Dense and sparse (or text) search combined by `alpha`.
    Hybrid,
    /// Full-text search.
    TextSearch,
    /// A provider's semantic hybrid search (Azure AI Search).
    SemanticHybrid,
    /// Fit a linear SVM separating the query from the stored vectors.
    Svm,
    /// Fit a logistic regression likewise.
    LogisticRegression,
    /// Fit a linear regression likewise.
    LinearRegression,
    /// Maximum marginal relevance: relevant but not redundant results.
    Mmr,
}

impl VectorStoreQueryMode {
    /// LlamaIndex's string for this mode (`"default"`, `"mmr"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Sparse => "sparse",
            Self::Hybrid => "hybrid",
            Self::TextSearch => "text_search",
            Self::SemanticHybrid => "semantic_hybrid",
            Self::Svm => "svm",
            Self::LogisticRegression => "logistic_regression",
            Self::LinearRegression => "linear_regression",
            Self::Mmr => "mmr",
        }
    }
}

/// A query to a vector store (LlamaIndex `VectorStoreQuery`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VectorStoreQuery {
    /// The query's embedding.
    pub query_embedding: Option<Vec<f32>>,
    /// How many results (default 1, as LlamaIndex's dataclass; retrievers pass 2).
    pub similarity_top_k: usize,
    /// Only nodes of these source documents (ref doc ids).
    pub doc_ids: Option<Vec<String>>,
    /// Only these nodes.
    pub node_ids: Option<Vec<String>>,
    /// The query text, for text and hybrid modes.
    pub query_str: Option<String>,
    /// Fields a store should return (store specific).
    pub output_fields: Option<Vec<String>>,
    /// The field holding embeddings (store specific).
    pub embedding_field: Option<String>,
    /// The search mode.
    pub mode: VectorStoreQueryMode,
    /// Hybrid weighting: 0 is all sparse/text, 1 all dense.
    pub alpha: Option<f32>,
    /// Metadata filters, applied before scoring.
    pub filters: Option<MetadataFilters>,
    /// MMR's trade-off between relevance (1) and diversity (0); default 0.5.
    pub mmr_threshold: Option<f32>,
    /// How many sparse results hybrid search considers.
    pub sparse_top_k: Option<usize>,
    /// How many results hybrid search returns.
    pub hybrid_top_k: Option<usize>,
}

impl Default for VectorStoreQuery {
    fn default() -> Self {
        Self {
            query_embedding: None,
            similarity_top_k: 1,
            doc_ids: None,
            node_ids: None,
            query_str: None,
            output_fields: None,
            embedding_field: None,
            mode: VectorStoreQueryMode::Default,
            alpha: None,
            filters: None,
            mmr_threshold: None,
            sparse_top_k: None,
            hybrid_top_k: None,
        }
    }
}

impl VectorStoreQuery {
    /// The `similarity_top_k` nearest neighbours of `embedding`.
    pub fn new(embedding: Vec<f32>, similarity_top_k: usize) -> Self {
        Self {
            query_embedding: Some(embedding),
            similarity_top_k,
            ..Default::default()
        }
    }

    /// Sets the metadata filters.
    pub fn with_filters(mut self, filters: MetadataFilters) -> Self {
        self.filters = Some(filters);
        self
    }

    /// Restricts the search to these nodes.
    pub fn with_node_ids(mut self, node_ids: Vec<String>) -> Self {
        self.node_ids = Some(node_ids);
        self
    }

    /// Restricts the search to nodes of these source documents.
    pub fn with_doc_ids(mut self, doc_ids: Vec<String>) -> Self {
        self.doc_ids = Some(doc_ids);
        self
    }

    /// Sets the search mode.
    pub fn with_mode(mut self, mode: VectorStoreQueryMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the query text.
    pub fn with_query_str(mut self, query_str: impl Into<String>) -> Self {
        self.query_str = Some(query_str.into());
        self
    }

    /// Sets MMR's threshold (and nothing else: set the mode too).
    pub fn with_mmr_threshold(mut self, threshold: f32) -> Self {
        self.mmr_threshold = Some(threshold);
        self
    }
}

/// What a vector store answers (LlamaIndex `VectorStoreQueryResult`): ids and
/// scores best first, and the nodes when the store keeps them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct VectorStoreQueryResult {
    /// The nodes, for stores that keep text (`stores_text`); `None` otherwise.
    pub nodes: Option<Vec<Node>>,
    /// The scores, aligned with `ids`.
    pub similarities: Vec<f32>,
    /// The node ids, best first.
    pub ids: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operators_serialise_as_llamaindex_strings() {
        for op in FilterOperator::ALL_OPERATORS {
            let v = serde_json::to_value(op).unwrap_or_default();
            assert_eq!(v, json!(op.as_str()));
            let back: FilterOperator = serde_json::from_value(v).unwrap_or_default();
            assert_eq!(back, op);
        }
        assert_eq!(
            serde_json::to_value(VectorStoreQueryMode::TextSearch).unwrap_or_default(),
            json!("text_search")
        );
        assert_eq!(
            serde_json::to_value(FilterCondition::Not).unwrap_or_default(),
            json!("not")
        );
    }

    #[test]
    fn query_defaults_follow_python() {
        let q = VectorStoreQuery::default();
        assert_eq!(q.similarity_top_k, 1);
        assert_eq!(q.mode, VectorStoreQueryMode::Default);
        let f: MetadataFilters = serde_json::from_value(
            json!({"filters": [{"key": "a", "value": 1}], "condition": null}),
        )
        .unwrap_or_default();
        assert_eq!(f, MetadataFilters::from_pairs([("a", 1)]));
    }
}

/// One metadata field of a vector store's nodes, described for a model
/// (LlamaIndex `MetadataInfo`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataInfo {
    /// The metadata key.
    pub name: String,
    /// Its type as the model should read it (`str`, `int`, `float`, `list[str]`).
    #[serde(rename = "type")]
    pub type_: String,
    /// What it holds.
    pub description: String,
}

impl MetadataInfo {
    /// `name` of type `type_`, holding `description`.
    pub fn new(
        name: impl Into<String>,
        type_: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            type_: type_.into(),
            description: description.into(),
        }
    }
}

/// What a vector store holds, for a model choosing filters (LlamaIndex
/// `VectorStoreInfo`; fields in its order, so the JSON matches).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorStoreInfo {
    /// The metadata fields a filter may use.
    pub metadata_info: Vec<MetadataInfo>,
    /// What the nodes' text is about.
    pub content_info: String,
}

/// A model's structured request for a vector store (LlamaIndex
/// `VectorStoreQuerySpec`): the text to match, filters, and how many.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VectorStoreQuerySpec {
    /// Text expected to match the nodes' content.
    pub query: String,
    /// Conditions on metadata, all of which must hold.
    pub filters: Vec<MetadataFilter>,
    /// How many nodes, when the question says.
    pub top_k: Option<usize>,
}

//! Evaluation (LlamaIndex `evaluation`): measuring retrieval and answers, so
//! that retrievers, chunk sizes, rerankers and prompts can be compared.

pub mod retrieval_metrics;

pub use retrieval_metrics::{
    AveragePrecision, DiscountedGainMode, HitRate, Mrr, Ndcg, Precision, Recall, RetrievalMetric,
    RetrievalMetricResult, resolve_metrics,
};

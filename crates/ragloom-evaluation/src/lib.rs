//! ragloom-evaluation (LlamaIndex `evaluation`): measuring retrieval and
//! answers, so that retrievers, chunk sizes, rerankers and prompts can be compared.
//!
//! The top layer of the library, a crate of its own so the compiler keeps it
//! above the rest: it depends on `ragloom-core` and nothing depends on it but
//! the facade (`ragloom::evaluation`) and the front-ends.
//!
//! Response evaluators send LlamaIndex 0.14.25's prompts and read replies as
//! it does (tests/evaluation_responses.rs replays its recorded calls);
//! [`RetrieverEvaluator`] scores retrieval with [`retrieval_metrics`];
//! [`DatasetGenerator`] and [`generate_qa_embedding_pairs`] write questions;
//! [`BatchEvalRunner`] runs many evaluations concurrently;
//! [`compare_retrieval`] puts retrieval modes side by side on
//! [`LabelledQuestion`]s and [`EvalReport::to_html`] draws the result.

#![warn(missing_docs)]

mod answer_relevancy;
mod base;
mod batch_runner;
mod compare;
mod context_relevancy;
mod correctness;
mod dataset_generation;
mod faithfulness;
mod fusion_tuning;
mod guideline;
mod labelled;
mod pairwise;
mod qa_dataset;
mod relevancy;
mod report_html;
pub mod retrieval_metrics;
mod retriever_evaluator;
mod semantic_similarity;

pub use answer_relevancy::{ANSWER_RELEVANCY_EVAL_TMPL, AnswerRelevancyEvaluator};
pub use base::{EvaluationInput, EvaluationResult, EvaluationSource, Evaluator};
pub use batch_runner::{BatchEvalResults, BatchEvalRunner};
pub use compare::{
    EvalReport, JudgeSummary, MakeRerank, ModeSummary, QuestionResult, RetrievalMode, Retrieved,
    Run, compare_retrieval, judge_answers,
};
pub use context_relevancy::{
    CONTEXT_RELEVANCY_EVAL_TMPL, CONTEXT_RELEVANCY_REFINE_TMPL, ContextRelevancyEvaluator,
};
pub use correctness::{
    CORRECTNESS_SYSTEM_TMPL, CORRECTNESS_USER_TMPL, CorrectnessEvaluator, NO_REFERENCE,
    parse_score_and_reasoning,
};
pub use dataset_generation::{
    DEFAULT_QUESTION_GENERATION_PROMPT, DatasetGenerator, QueryResponseDataset,
    default_question_gen_query,
};
pub use faithfulness::{FAITHFULNESS_EVAL_TMPL, FAITHFULNESS_REFINE_TMPL, FaithfulnessEvaluator};
pub use fusion_tuning::{
    DEFAULT_DENSE_WEIGHTS, Figures, FusionTuning, QuestionSplit, Scored, tune_fusion,
};
pub use guideline::{
    DEFAULT_GUIDELINES, GUIDELINE_EVAL_TMPL, GUIDELINE_FORMAT_INSTRUCTIONS, GuidelineEvaluator,
};
pub use labelled::{
    LabelledQuestion, Relevance, generate_labelled_questions, read_labelled_questions,
};
pub use pairwise::{PAIRWISE_SYSTEM_TMPL, PAIRWISE_USER_TMPL, PairwiseComparisonEvaluator};
pub use qa_dataset::{
    DEFAULT_QA_GENERATE_PROMPT_TMPL, EmbeddingQAFinetuneDataset, OnFailure, QaGenerationOptions,
    generate_qa_embedding_pairs, parse_questions,
};
pub use relevancy::{RELEVANCY_EVAL_TMPL, RELEVANCY_REFINE_TMPL, RelevancyEvaluator};
pub use retrieval_metrics::{
    AveragePrecision, DiscountedGainMode, HitRate, Mrr, Ndcg, Precision, Recall, RetrievalMetric,
    RetrievalMetricResult, resolve_metrics,
};
pub use retriever_evaluator::{RetrievalEvalResult, RetrieverEvaluator, mean_metrics};
pub use semantic_similarity::SemanticSimilarityEvaluator;

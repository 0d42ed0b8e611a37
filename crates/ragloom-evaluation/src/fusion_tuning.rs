//! Choosing how an index's hybrid retrieval fuses: every fusion setting
//! scored on labelled questions, chosen on one part and reported on the other.

use super::compare::score;
use super::labelled::{LabelledQuestion, Relevance};
use super::qa_dataset::progress;
use ragloom_core::durable::{HybridFusion, IndexRetrievers};
use ragloom_core::schema::{NodeWithScore, QueryBundle};
use ragloom_core::{Error, Result};
use serde::Serialize;
use std::fmt;

/// The dense weights compared by default: both retrievers weigh at least 0.2.
pub const DEFAULT_DENSE_WEIGHTS: [f64; 7] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

/// How the questions were divided between choosing and reporting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionSplit {
    /// Chosen on the literal questions, reported on the paraphrased ones
    /// (a set that labels both kinds, as the shipped one does).
    LiteralThenParaphrased,
    /// Chosen on the odd-numbered questions (1st, 3rd, ...), reported on
    /// the others (a set without both kinds).
    Alternate,
}

impl QuestionSplit {
    fn of(questions: &[LabelledQuestion]) -> (Self, Vec<bool>) {
        let paraphrased: Vec<bool> = questions
            .iter()
            .map(|q| q.paraphrased == Some(true))
            .collect();
        if paraphrased.iter().any(|p| *p) && paraphrased.iter().any(|p| !p) {
            let held_out = paraphrased;
            (Self::LiteralThenParaphrased, held_out)
        } else {
            let held_out = (0..questions.len()).map(|i| i % 2 == 1).collect();
            (Self::Alternate, held_out)
        }
    }
}

/// Hit rate and MRR over some questions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    /// How many questions.
    pub questions: usize,
    /// Share with a relevant node retrieved.
    pub hit_rate: f64,
    /// Mean reciprocal rank of the first relevant node.
    pub mrr: f64,
}

impl Figures {
    fn better_than(&self, other: &Self) -> bool {
        (self.mrr, self.hit_rate) > (other.mrr, other.hit_rate)
    }
}

/// A way of retrieving, on the questions it is chosen on and those held out.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    /// `bm25` (the store's keyword search), `vector`, or a fusion setting.
    pub name: String,
    /// The fusion setting, for hybrid rows.
    pub fusion: Option<HybridFusion>,
    /// On the questions settings are chosen on.
    pub chosen_on: Figures,
    /// On the questions held out.
    pub held_out: Figures,
}

/// What [`tune_fusion`] measured and chose.
#[derive(Clone, Debug, Serialize)]
pub struct FusionTuning {
    /// Nodes kept per question.
    pub top_k: usize,
    /// How the questions were divided.
    pub split: QuestionSplit,
    /// Keyword and dense retrieval alone.
    pub alone: Vec<Scored>,
    /// Every fusion setting compared, in the order given.
    pub candidates: Vec<Scored>,
    /// The best setting on the questions it was chosen on (MRR, then hit
    /// rate; the earlier candidate on a tie).
    pub best: HybridFusion,
}

impl FusionTuning {
    /// The row of the best setting.
    pub fn best_row(&self) -> Option<&Scored> {
        self.candidates.iter().find(|c| c.fusion == Some(self.best))
    }
}

/// Scores each of `candidates` (see [`HybridFusion::candidates`]) as hybrid
/// retrieval of the `top_k` best over `questions`, beside keyword and dense
/// retrieval alone, and picks the best on one part of the questions (see
/// [`QuestionSplit`]) so that the other part reports it fairly. Each
/// question is retrieved once per retriever; the settings fuse those lists
/// as the fusing retriever would. `retrievers` must have dense search.
pub async fn tune_fusion(
    retrievers: &IndexRetrievers,
    questions: &[LabelledQuestion],
    candidates: &[HybridFusion],
    top_k: usize,
    show_progress: bool,
) -> Result<FusionTuning> {
    let Some(dense) = retrievers.vector(top_k) else {
        return Err(Error::InvalidInput(
            "tuning the fusion needs an index embedded with the configured model".to_owned(),
        ));
    };
    if questions.len() < 2 || top_k == 0 || candidates.is_empty() {
        return Err(Error::InvalidInput(
            "tuning the fusion needs at least two questions, one setting and a top_k of at least 1"
                .to_owned(),
        ));
    }
    let keyword = retrievers.keyword(top_k)?;
    let (split, held_out) = QuestionSplit::of(questions);
    let bar = progress(show_progress, questions.len(), 0);
    bar.set_message("retrieving");
    let mut lists: Vec<(Vec<NodeWithScore>, Vec<NodeWithScore>)> = Vec::new();
    for q in questions {
        let bundle = QueryBundle::new(&q.question);
        lists.push((
            dense.retrieve(&bundle).await?,
            keyword.retrieve(&bundle).await?,
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let relevance: Vec<Relevance> = questions.iter().map(LabelledQuestion::relevance).collect();
    let tally = |name: String,
                 fusion: Option<HybridFusion>,
                 pick: &dyn Fn(usize) -> Result<Vec<NodeWithScore>>|
     -> Result<Scored> {
        let mut sums = [Figures::default(); 2];
        for (i, r) in relevance.iter().enumerate() {
            let (hit, rr, _) = score(&pick(i)?, r)?;
            let f = &mut sums[usize::from(held_out[i])];
            f.questions += 1;
            f.hit_rate += hit;
            f.mrr += rr;
        }
        let [chosen_on, held_out] = sums.map(|f| {
            let n = f.questions.max(1) as f64;
            Figures {
                hit_rate: f.hit_rate / n,
                mrr: f.mrr / n,
                ..f
            }
        });
        Ok(Scored {
            name,
            fusion,
            chosen_on,
            held_out,
        })
    };
    let alone = vec![
        tally(retrievers.build().keyword_kind().to_owned(), None, &|i| {
            Ok(lists[i].1.clone())
        })?,
        tally("vector".to_owned(), None, &|i| Ok(lists[i].0.clone()))?,
    ];
    let mut scored = Vec::new();
    for &fusion in candidates {
        let (d, k) = (&lists, top_k);
        let fuse = move |i: usize| fusion.fuse(d[i].0.clone(), d[i].1.clone(), k);
        scored.push(tally(fusion.to_string(), Some(fusion), &fuse)?);
    }
    let mut best = &scored[0];
    for s in &scored[1..] {
        if s.chosen_on.better_than(&best.chosen_on) {
            best = s;
        }
    }
    let best = best.fusion.unwrap_or_default();
    Ok(FusionTuning {
        top_k,
        split,
        alone,
        candidates: scored,
        best,
    })
}

impl fmt::Display for FusionTuning {
    /// The comparison as a table, the best setting marked.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (chosen, held) = match self.split {
            QuestionSplit::LiteralThenParaphrased => ("literal", "paraphrased"),
            QuestionSplit::Alternate => ("odd", "even"),
        };
        let first = self.alone.first().or(self.candidates.first());
        let (nc, nh) = first.map_or((0, 0), |s| (s.chosen_on.questions, s.held_out.questions));
        writeln!(
            f,
            "hybrid fusion at top_k {}: chosen on {nc} {chosen} questions, reported on {nh} {held}",
            self.top_k
        )?;
        writeln!(f, "  {:<38} {chosen:>17} {held:>17}", "")?;
        writeln!(
            f,
            "  {:<38} {:>9} {:>7} {:>9} {:>7}",
            "retrieval", "hit rate", "MRR", "hit rate", "MRR"
        )?;
        for s in self.alone.iter().chain(&self.candidates) {
            let mark = if s.fusion == Some(self.best) {
                "*"
            } else {
                " "
            };
            writeln!(
                f,
                "{mark} {:<38} {:>9.3} {:>7.3} {:>9.3} {:>7.3}",
                s.name, s.chosen_on.hit_rate, s.chosen_on.mrr, s.held_out.hit_rate, s.held_out.mrr
            )?;
        }
        write!(
            f,
            "best on the {chosen} questions (MRR, then hit rate): {}",
            self.best
        )
    }
}

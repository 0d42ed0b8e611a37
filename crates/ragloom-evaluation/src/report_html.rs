//! A retrieval comparison as one self-contained HTML page (inline SVG
//! charts and styles, no script, nothing fetched) people can open or mail.

use super::compare::{EvalReport, ModeSummary, QuestionResult};
use std::fmt::Write;

/// Text made safe inside HTML elements and attributes.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One colour per mode, in the order modes first appear.
const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1",
];

fn colour(report: &EvalReport, mode: &str) -> &'static str {
    let mut seen: Vec<&str> = Vec::new();
    for m in &report.retrieval {
        if !seen.contains(&m.mode.as_str()) {
            seen.push(&m.mode);
        }
    }
    let at = seen.iter().position(|m| *m == mode).unwrap_or(0);
    PALETTE[at % PALETTE.len()]
}

/// A horizontal bar chart of `value` for every mode and top_k.
fn bar_chart(
    report: &EvalReport,
    id: &str,
    title: &str,
    value: impl Fn(&ModeSummary) -> f64,
    label: impl Fn(f64) -> String,
    max: Option<f64>,
) -> String {
    let rows = &report.retrieval;
    let (left, width, bar, gap) = (150.0, 360.0, 18.0, 6.0);
    let height = 30.0 + rows.len() as f64 * (bar + gap);
    let top = max
        .unwrap_or_else(|| rows.iter().map(&value).fold(0.0, f64::max))
        .max(f64::MIN_POSITIVE);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" id="{id}" role="img" aria-label="{t}" width="{w}" height="{height}" viewBox="0 0 {w} {height}" xmlns="http://www.w3.org/2000/svg"><title>{t}</title><text x="0" y="16" class="chart-title">{t}</text>"#,
        t = esc(title),
        w = left + width + 70.0,
    );
    for (i, m) in rows.iter().enumerate() {
        let y = 26.0 + i as f64 * (bar + gap);
        let v = value(m);
        let w = (v / top * width).clamp(0.0, width);
        let _ = write!(
            svg,
            r#"<g class="bar"><text x="{lx}" y="{ty}" text-anchor="end">{name} @{k}</text><rect x="{left}" y="{y}" width="{w:.1}" height="{bar}" fill="{c}"><title>{name} @{k}: {l}</title></rect><text x="{vx:.1}" y="{ty}">{l}</text></g>"#,
            lx = left - 6.0,
            ty = y + bar - 5.0,
            name = esc(&m.mode),
            k = m.top_k,
            c = colour(report, &m.mode),
            l = esc(&label(v)),
            vx = left + w + 4.0,
        );
    }
    svg.push_str("</svg>");
    svg
}

impl EvalReport {
    /// The report as a self-contained HTML page: charts of hit rate, MRR and
    /// latency per mode, the table, and the questions every mode missed most.
    pub fn to_html(&self) -> String {
        html(self)
    }
}

fn html(report: &EvalReport) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ragloom eval: {source}</title>
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #222; }}
h1 {{ font-size: 1.5rem; }} h2 {{ font-size: 1.15rem; margin-top: 2rem; }}
table {{ border-collapse: collapse; width: 100%; }} th, td {{ border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; vertical-align: top; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 1.5rem; }} .chart text {{ font-size: 12px; fill: #333; }} .chart .chart-title {{ font-weight: 600; font-size: 13px; }}
.hit {{ color: #1a7f37; font-weight: 600; }} .miss {{ color: #b3261e; }} .span {{ background: #fff3bf; }}
ol.retrieved {{ margin: 0; padding-left: 1.2rem; }} ol.retrieved li {{ margin-bottom: .3rem; font-size: 13px; }}
.muted {{ color: #666; }}
</style></head><body>
<h1>Retrieval evaluation of {source}</h1>
<p class="muted">{n} questions ({dataset}).</p>
"#,
        source = esc(&report.source),
        n = report.questions,
        dataset = esc(&report.dataset),
    );
    page.push_str(r#"<h2>Modes side by side</h2><div class="charts">"#);
    page.push_str(&bar_chart(
        report,
        "chart-hit-rate",
        "Hit rate",
        |m| m.hit_rate,
        |v| format!("{v:.3}"),
        Some(1.0),
    ));
    page.push_str(&bar_chart(
        report,
        "chart-mrr",
        "MRR",
        |m| m.mrr,
        |v| format!("{v:.3}"),
        Some(1.0),
    ));
    page.push_str(&bar_chart(
        report,
        "chart-latency",
        "Latency p50 (ms)",
        |m| m.latency_ms_p50,
        |v| format!("{v:.2} ms"),
        None,
    ));
    page.push_str("</div>\n");
    page.push_str(r#"<table id="summary"><thead><tr><th>mode</th><th class="num">top_k</th><th class="num">hit rate</th><th class="num">MRR</th><th class="num">p50 ms</th><th class="num">p95 ms</th></tr></thead><tbody>"#);
    for m in &report.retrieval {
        let _ = write!(
            page,
            r#"<tr><td>{}</td><td class="num">{}</td><td class="num">{:.3}</td><td class="num">{:.3}</td><td class="num">{:.2}</td><td class="num">{:.2}</td></tr>"#,
            esc(&m.mode),
            m.top_k,
            m.hit_rate,
            m.mrr,
            m.latency_ms_p50,
            m.latency_ms_p95
        );
    }
    page.push_str("</tbody></table>\n");
    if let Some(j) = &report.judged {
        let pct = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{:.0}%", v * 100.0));
        let _ = write!(
            page,
            r#"<h2>Answers judged by the LLM</h2><p id="judged">{} questions answered with {} at top_k {}: faithful {}, relevant {}, correct {}{}.</p>"#,
            j.questions,
            esc(&j.mode),
            j.top_k,
            pct(j.faithfulness),
            pct(j.relevancy),
            pct(j.correctness),
            j.correctness_score
                .map(|s| format!(" (mean score {s:.2} of 5)"))
                .unwrap_or_default()
        );
    }
    let runs = report.retrieval.len();
    let mut worst: Vec<&QuestionResult> = report
        .per_question
        .iter()
        .filter(|q| q.misses > 0)
        .collect();
    worst.sort_by_key(|q| std::cmp::Reverse(q.misses));
    worst.truncate(15);
    let first = report
        .retrieval
        .first()
        .map(|m| m.mode.as_str())
        .unwrap_or("");
    let largest = report.retrieval.iter().map(|m| m.top_k).max().unwrap_or(0);
    let _ = write!(
        page,
        r#"<h2>Worst questions</h2><p class="muted">Missed by the most runs (of {runs}); what {} retrieved at top_k {largest}, hits marked.</p>"#,
        esc(first)
    );
    if worst.is_empty() {
        page.push_str(r#"<p id="no-misses">Every run found every answer.</p>"#);
    } else {
        page.push_str(r#"<table id="worst"><thead><tr><th>question</th><th>answer</th><th class="num">missed</th><th>retrieved</th></tr></thead><tbody>"#);
        for q in worst {
            let answer = if q.question.answer_span.is_empty() {
                format!("node {}", esc(&q.question.node_ids.join(", ")))
            } else {
                format!(
                    r#"<span class="span">{}</span>"#,
                    esc(&q.question.answer_span)
                )
            };
            let _ = write!(
                page,
                r#"<tr class="worst"><td>{}</td><td>{}<div class="muted">{}</div></td><td class="num">{}/{runs}</td><td><ol class="retrieved">"#,
                esc(&q.question.question),
                answer,
                esc(&q.question.file),
                q.misses
            );
            for r in &q.retrieved {
                let _ = write!(
                    page,
                    r#"<li class="{}"><span class="muted">{}</span> {}</li>"#,
                    if r.hit { "hit" } else { "miss" },
                    esc(&r.file),
                    esc(&r.excerpt)
                );
            }
            page.push_str("</ol></td></tr>");
        }
        page.push_str("</tbody></table>\n");
    }
    page.push_str("</body></html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}

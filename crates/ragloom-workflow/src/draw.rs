//! Drawings of a workflow's possible flows (LlamaIndex's
//! `draw_all_possible_flows`): Mermaid text, and a self-contained HTML page.

use crate::event::{EventType, StartEvent, StopEvent};
use crate::workflow::Workflow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Write;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Step,
    Event,
    Stop,
}

struct Graph {
    /// (label, kind), in first-seen order.
    nodes: Vec<(String, Kind)>,
    edges: Vec<(usize, usize)>,
    external: Vec<usize>,
}

fn graph(wf: &Workflow) -> Graph {
    let mut nodes: Vec<(String, Kind)> = Vec::new();
    let mut index: HashMap<(String, bool), usize> = HashMap::new();
    let mut node = |label: &str, kind: Kind, nodes: &mut Vec<(String, Kind)>| {
        *index
            .entry((label.to_string(), kind == Kind::Step))
            .or_insert_with(|| {
                nodes.push((label.to_string(), kind));
                nodes.len() - 1
            })
    };
    let stop = EventType::of::<StopEvent>();
    let event_kind = |t: &EventType| if *t == stop { Kind::Stop } else { Kind::Event };
    let start = node(
        EventType::of::<StartEvent>().name(),
        Kind::Event,
        &mut nodes,
    );
    let mut edges = Vec::new();
    for s in wf.steps() {
        let step = node(s.name(), Kind::Step, &mut nodes);
        for t in s.accepts() {
            let e = node(t.name(), event_kind(t), &mut nodes);
            edges.push((e, step));
        }
        for t in s.emits() {
            let e = node(t.name(), event_kind(t), &mut nodes);
            edges.push((step, e));
        }
    }
    let produced: Vec<usize> = edges.iter().map(|&(_, to)| to).collect();
    let external = (0..nodes.len())
        .filter(|&i| nodes[i].1 != Kind::Step && i != start && !produced.contains(&i))
        .collect();
    Graph {
        nodes,
        edges,
        external,
    }
}

fn mermaid_id(label: &str, kind: Kind) -> String {
    let clean: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    match kind {
        Kind::Step => format!("step_{clean}"),
        _ => format!("event_{clean}"),
    }
}

fn mermaid_label(label: &str) -> String {
    label.replace('"', "#quot;")
}

/// The workflow's possible flows as a Mermaid `flowchart`: steps as boxes,
/// events as rounded nodes, `StopEvent` in red.
pub fn to_mermaid(wf: &Workflow) -> String {
    let g = graph(wf);
    let mut out = String::from("flowchart TD\n");
    for (label, kind) in &g.nodes {
        let id = mermaid_id(label, *kind);
        let text = mermaid_label(label);
        let _ = match kind {
            Kind::Step => writeln!(out, "    {id}[\"{text}\"]:::step"),
            Kind::Event => writeln!(out, "    {id}([\"{text}\"]):::event"),
            Kind::Stop => writeln!(out, "    {id}([\"{text}\"]):::stop"),
        };
    }
    for &(a, b) in &g.edges {
        let (la, ka) = &g.nodes[a];
        let (lb, kb) = &g.nodes[b];
        let _ = writeln!(
            out,
            "    {} --> {}",
            mermaid_id(la, *ka),
            mermaid_id(lb, *kb)
        );
    }
    out.push_str("    classDef step fill:#dbeafe,stroke:#1d4ed8,color:#0f172a\n");
    out.push_str("    classDef event fill:#dcfce7,stroke:#15803d,color:#0f172a\n");
    out.push_str("    classDef stop fill:#fee2e2,stroke:#b91c1c,color:#0f172a\n");
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The same drawing as one HTML page with an inline SVG (no script, no
/// network): rows follow the flow from `StartEvent` (and events sent from
/// outside) down to `StopEvent`.
pub fn to_html(wf: &Workflow) -> String {
    let g = graph(wf);
    // Rows: breadth-first distance from the start and the outside events.
    let mut level = vec![usize::MAX; g.nodes.len()];
    let mut queue = VecDeque::new();
    for i in std::iter::once(0).chain(g.external.iter().copied()) {
        level[i] = 0;
        queue.push_back(i);
    }
    while let Some(i) = queue.pop_front() {
        for &(a, b) in &g.edges {
            if a == i && level[b] == usize::MAX {
                level[b] = level[a] + 1;
                queue.push_back(b);
            }
        }
    }
    let last = level
        .iter()
        .filter(|&&l| l != usize::MAX)
        .max()
        .copied()
        .unwrap_or(0);
    for l in level.iter_mut().filter(|l| **l == usize::MAX) {
        *l = last + 1;
    }
    let mut rows: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &l) in level.iter().enumerate() {
        rows.entry(l).or_default().push(i);
    }
    let (box_w, box_h, gap_x, gap_y) = (170.0, 40.0, 40.0, 60.0);
    let widest = rows.values().map(Vec::len).max().unwrap_or(1) as f64;
    let width = widest * (box_w + gap_x) + gap_x;
    let height = rows.len() as f64 * (box_h + gap_y) + gap_y;
    let mut pos = vec![(0.0, 0.0); g.nodes.len()];
    for (r, members) in rows.values().enumerate() {
        let row_w = members.len() as f64 * (box_w + gap_x) - gap_x;
        let x0 = (width - row_w) / 2.0;
        for (k, &i) in members.iter().enumerate() {
            pos[i] = (
                x0 + k as f64 * (box_w + gap_x),
                gap_y + r as f64 * (box_h + gap_y),
            );
        }
    }
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="possible flows of {name}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#475569"/></marker></defs>"##,
        name = escape(wf.name())
    );
    for &(a, b) in &g.edges {
        let (ax, ay) = pos[a];
        let (bx, by) = pos[b];
        let (x1, x2) = (ax + box_w / 2.0, bx + box_w / 2.0);
        let (y1, y2) = if by > ay {
            (ay + box_h, by)
        } else if by < ay {
            (ay, by + box_h)
        } else {
            (ay + box_h / 2.0, by + box_h / 2.0)
        };
        let _ = write!(
            svg,
            r##"<line class="edge" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#475569" stroke-width="1.5" marker-end="url(#arrow)"/>"##
        );
    }
    for (i, (label, kind)) in g.nodes.iter().enumerate() {
        let (x, y) = pos[i];
        let (fill, stroke, rx, class) = match kind {
            Kind::Step => ("#dbeafe", "#1d4ed8", 4.0, "step"),
            Kind::Event => ("#dcfce7", "#15803d", 20.0, "event"),
            Kind::Stop => ("#fee2e2", "#b91c1c", 20.0, "event stop"),
        };
        let _ = write!(
            svg,
            r##"<g class="{class}"><rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="{rx}" fill="{fill}" stroke="{stroke}"/><text x="{tx}" y="{ty}" text-anchor="middle" dominant-baseline="middle" font-family="system-ui, sans-serif" font-size="13">{text}</text></g>"##,
            tx = x + box_w / 2.0,
            ty = y + box_h / 2.0,
            text = escape(label)
        );
    }
    svg.push_str("</svg>");
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>body{{font-family:system-ui,sans-serif;margin:2rem;color:#0f172a}}\
         .legend span{{display:inline-block;margin-right:1rem}}</style></head><body>\
         <h1>{title}</h1><p class=\"legend\"><span>▭ step</span><span>◯ event</span></p>\
         {svg}\n<h2>Mermaid</h2><pre>{mermaid}</pre></body></html>\n",
        title = escape(wf.name()),
        mermaid = escape(&to_mermaid(wf))
    )
}

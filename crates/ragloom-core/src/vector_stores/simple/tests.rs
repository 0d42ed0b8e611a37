//! The store's own unit tests: float formatting, the heap order, file reading.

use super::file::*;
use super::scoring::*;
use super::*;
use crate::schema::float_repr;
use crate::vector_stores::filters::matches;

#[test]
fn fast_floats_are_python_reprs() {
    let mut specials = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        1e-4,
        1.5e-4,
        1e-5,
        9.999e-5,
        0.00012345,
        1e15,
        1e16,
        9.999999999999998e15,
        1.5e16,
        123456789.0,
        1e300,
        5e-324,
        -2.5e-7,
        0.5,
        3.0,
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = f64::from_bits(x);
        if f.is_finite() {
            specials.push(f);
        }
        // Values like embeddings: f32s of every magnitude, widened.
        let g = f64::from(f32::from_bits((x >> 32) as u32));
        if g.is_finite() {
            specials.push(g);
        }
    }
    for v in specials {
        let mut out = Vec::new();
        push_float(&mut out, 0, v);
        let fast = String::from_utf8(out).unwrap_or_default();
        let general = float_repr(v);
        // Both are shortest round-trip digits in Python's layout; they may
        // differ only where two shortest candidates are equally near, and
        // there Python (as Ryū) rounds half to even (the table below).
        assert_eq!(fast.parse::<f64>().ok(), Some(v), "{fast}");
        assert_eq!(fast.len(), general.len(), "{v:e}: {fast} vs {general}");
        assert_eq!(
            fast.contains('e'),
            general.contains('e'),
            "{v:e}: {fast} vs {general}"
        );
    }
    // Python's repr of f32 values whose exact expansion ends in a tie.
    for (exact, python) in [
        ("750.34869384765625", "750.3486938476562"),
        ("-524.07073974609375", "-524.0707397460938"),
        ("-260.08966064453125", "-260.08966064453125"),
        ("-973.66400146484375", "-973.6640014648438"),
        ("674.93817138671875", "674.9381713867188"),
        ("672.92291259765625", "672.9229125976562"),
    ] {
        let mut out = Vec::new();
        push_float(&mut out, 0, exact.parse().unwrap_or_default());
        assert_eq!(String::from_utf8(out).unwrap_or_default(), python);
    }
    let mut out = Vec::new();
    push_float(&mut out, 1, 0.25);
    assert_eq!(out, b", 0.25");
}

#[test]
fn deleting_shrinks_the_buffers_and_keeps_answers() {
    let store = SimpleVectorStore::new();
    let nodes: Vec<Node> = (0..1000)
        .map(|i| {
            Node::text_node("")
                .with_id(format!("n{i:04}"))
                .with_relationship(
                    crate::schema::NodeRelationship::Source,
                    crate::schema::RelatedNodeInfo::new(format!("d{}", i % 10)),
                )
                .with_embedding(vec![i as f32, 1.0, (i % 7) as f32, 0.5])
        })
        .collect();
    assert!(store.add_nodes(&nodes).is_ok());
    assert_eq!(store.read().buffer_len(), 4000);
    assert!(
        store.read().wide.is_none(),
        "f32 embeddings need no f64 copy"
    );
    for d in 0..9 {
        assert!(futures::executor::block_on(store.delete(&format!("d{d}"))).is_ok());
    }
    let data = store.read();
    assert_eq!(data.buffer_len(), 400);
    assert!(
        data.vectors.capacity() < 4000,
        "{}",
        data.vectors.capacity()
    );
    assert_eq!(data.norms.len(), 100);
    assert_eq!(data.rows.len(), 100);
    assert!(data.ids.iter().all(|id| id.ends_with('9')));
    for (r, id) in data.ids.iter().enumerate() {
        assert_eq!(data.rows[id], r);
        let i: f32 = id[1..].parse().unwrap_or(-1.0);
        assert_eq!(data.row(r)[0], i);
    }
    drop(data);
    let q = VectorStoreQuery::new(vec![999.0, 1.0, 5.0, 0.5], 1);
    let top = store.query_sync(&q).map(|r| r.ids).unwrap_or_default();
    assert_eq!(top, ["n0999"]);
}

#[test]
fn cached_filter_rows_follow_writes() {
    let store = SimpleVectorStore::new();
    let node = |id: &str, color: &str, x: f32| {
        Node::text_node("")
            .with_id(id)
            .with_metadata("color", color)
            .with_embedding(vec![x, 1.0])
    };
    assert!(
        store
            .add_nodes(&[node("a", "red", 1.0), node("b", "blue", 2.0)])
            .is_ok()
    );
    let red = VectorStoreQuery::new(vec![1.0, 1.0], 0)
        .with_filters(MetadataFilters::from_pairs([("color", "red")]));
    let ids = |q: &VectorStoreQuery| store.query_sync(q).map(|r| r.ids).unwrap_or_default();
    assert_eq!(ids(&red), ["a"]);
    assert_eq!(ids(&red), ["a"]);
    // A write (a new red node, a changed colour) invalidates the rows.
    assert!(
        store
            .add_nodes(&[node("c", "red", 3.0), node("a", "blue", 1.0)])
            .is_ok()
    );
    assert_eq!(ids(&red), ["c"]);
    let blue = VectorStoreQuery::new(vec![1.0, 1.0], 0)
        .with_filters(MetadataFilters::from_pairs([("color", "blue")]));
    assert_eq!(ids(&blue).len(), 2);
    assert!(
        futures::executor::block_on(store.delete_nodes(Some(&["b".to_string()]), None)).is_ok()
    );
    assert_eq!(ids(&blue), ["a"]);
    assert_eq!(ids(&red), ["c"]);
}

#[test]
fn indexed_filters_keep_exactly_what_the_scan_keeps() {
    use crate::vector_stores::{FilterOperator, MetadataFilter};
    use serde_json::json;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let values = [
        json!("a"),
        json!("b"),
        json!(1),
        json!(1.0),
        json!(true),
        json!(2.5),
        json!(null),
        json!(["a"]),
        json!(0),
        json!(-0.0),
        json!(-3),
        json!(7.25),
        json!("ab"),
        json!(false),
    ];
    let store = SimpleVectorStore::new();
    let mut nodes = Vec::new();
    for i in 0..400 {
        let mut node = Node::text_node("")
            .with_id(format!("n{i:03}"))
            .with_embedding(vec![1.0, i as f32]);
        for key in ["k", "j"] {
            let v = next(values.len() + 1);
            if v < values.len() {
                node = node.with_metadata(key, values[v].clone());
            }
        }
        nodes.push(node);
    }
    assert!(store.add_nodes(&nodes).is_ok());
    let pick = |next: &mut dyn FnMut(usize) -> usize| values[next(values.len())].clone();
    for round in 0..600 {
        if round % 50 == 49 {
            // A write between queries: the indexes must follow it.
            let i = next(nodes.len());
            nodes[i] = nodes[i].clone().with_metadata("k", pick(&mut next));
            assert!(store.add_nodes(&nodes[i..=i]).is_ok());
        }
        let mut items = Vec::new();
        for _ in 0..1 + next(3) {
            let key = ["k", "j"][next(2)];
            let operator = [
                FilterOperator::Eq,
                FilterOperator::In,
                FilterOperator::Gt,
                FilterOperator::Gte,
                FilterOperator::Lt,
                FilterOperator::Lte,
                FilterOperator::Ne,
            ][next(7)];
            let value = match (operator, next(4)) {
                (FilterOperator::In, 0) => json!("ab"),
                (FilterOperator::In, _) => json!([pick(&mut next), pick(&mut next)]),
                _ => pick(&mut next),
            };
            items.push(MetadataFilter::new(key, value, operator));
        }
        let filters = if next(4) == 0 {
            MetadataFilters::or(items)
        } else {
            MetadataFilters::and(items)
        };
        let expected: Vec<String> = nodes
            .iter()
            .filter(|n| matches(&filters, &metadata_dict_without_content(n)))
            .map(|n| n.node_id().to_string())
            .collect();
        let mut got = store
            .query_sync(&VectorStoreQuery::new(vec![1.0, 0.0], 0).with_filters(filters.clone()))
            .map(|r| r.ids)
            .unwrap_or_default();
        got.sort();
        assert_eq!(got, expected, "{filters:?}");
    }
}

#[test]
fn parallel_persist_writes_rows_in_order() {
    let store = SimpleVectorStore::new();
    let n = PERSIST_ROUND_ROWS * 2 + PERSIST_PIECE_ROWS / 2 + 3;
    let nodes: Vec<Node> = (0..n)
        .map(|i| {
            Node::text_node("")
                .with_id(format!("n{i}"))
                .with_embedding(vec![i as f32 / 7.0, -(i as f32)])
        })
        .collect();
    assert!(store.add_nodes(&nodes).is_ok());
    let mut parallel = Vec::new();
    assert!(store.write_json(&mut parallel).is_ok());
    let data = store.read();
    let mut sequential = b"{\"embedding_dict\": {".to_vec();
    for r in 0..n {
        assert!(write_row(&data, r, &mut sequential).is_ok());
    }
    assert!(parallel.starts_with(&sequential), "rows out of order");
    let text = String::from_utf8(parallel).unwrap_or_default();
    assert!(
        text.contains(&format!("\"n{}\": [", n - 1)),
        "last row missing"
    );
    assert_eq!(text.matches("\"n").count(), 3 * n, "ids in all three dicts");
}

#[test]
fn values_beyond_f32_keep_their_digits() {
    let store = SimpleVectorStore::new();
    let exact = Node::text_node("")
        .with_id("a")
        .with_embedding(vec![0.5, 0.25]);
    assert!(store.add_nodes(&[exact]).is_ok());
    assert!(store.read().wide.is_none());
    // A row read from a file holding a value no f32 represents.
    store
        .write()
        .upsert("b", [0.1f64, 0.2].into_iter(), None, None);
    let data = store.read();
    assert_eq!(data.wide.as_deref(), Some(&[0.5, 0.25, 0.1, 0.2][..]));
    assert_eq!(data.values(0), [0.5, 0.25]);
    assert_eq!(data.values(1), [0.1, 0.2]);
    assert_eq!(data.row(1), [0.1f32, 0.2f32]);
}

#[test]
fn python_heap_keeps_largest_ids_among_ties() {
    let ids: Vec<String> = ["b", "a", "d", "c"].iter().map(|s| s.to_string()).collect();
    let scores = [1.0, 1.0, 1.0, 1.0];
    let top = python_top_k(&scores, &ids, |i| i, 2);
    // Python: [(1.0,'c'), (1.0,'d')] stays in heap order after the stable sort.
    let got: Vec<&str> = top.iter().map(|(_, r)| ids[*r].as_str()).collect();
    assert_eq!(got, ["c", "d"]);
}

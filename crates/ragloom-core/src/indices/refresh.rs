//! What `refresh_ref_docs` must do with a set of documents, decided from the
//! docstore's recorded hashes: shared by every index that refreshes.

use crate::error::Result;
use crate::schema::Node;
use crate::storage::DocStore;
use std::collections::HashMap;

/// The outcome of comparing documents with the hashes a docstore recorded
/// (LlamaIndex `refresh_ref_docs`' decisions, made for a whole batch).
#[derive(Debug, Default)]
pub struct RefreshPlan {
    /// For each input document, whether it is (re)written.
    pub written: Vec<bool>,
    /// Stored documents whose hash changed: their old nodes go first.
    pub changed: Vec<String>,
    /// Documents to insert, in input order.
    pub to_write: Vec<Node>,
    /// Their ids and hashes, to record with [`record_hashes`] once their
    /// nodes are written.
    pub hashes: Vec<(String, String)>,
}

/// Records each document's hash: the last step of a refresh, after its
/// nodes are stored, so a document whose nodes were not all written is not
/// taken for up to date.
pub async fn record_hashes(docstore: &dyn DocStore, hashes: &[(String, String)]) -> Result<()> {
    for (doc_id, hash) in hashes {
        docstore.set_document_hash(doc_id, hash).await?;
    }
    Ok(())
}

impl RefreshPlan {
    /// Compares `documents` with `docstore`'s hashes. A document with no
    /// recorded hash is new, one with a different hash changed, an equal one
    /// is skipped. A repeated id is compared with the version before it in
    /// `documents`, as Python's one-by-one loop does; only its last version is written.
    pub async fn new(docstore: &dyn DocStore, documents: &[Node]) -> Result<Self> {
        let mut plan = Self::default();
        let mut pending: HashMap<&str, usize> = HashMap::new();
        let mut to_write: Vec<Option<(Node, String)>> = Vec::new();
        // Hashed once, on every core: a large document's text is not hashed
        // again to insert it, and a batch of books is not hashed on one core
        // while the others wait for the plan.
        let hashes: Vec<String> = {
            use rayon::prelude::*;
            documents.par_iter().map(Node::hash).collect()
        };
        for (document, hash) in documents.iter().zip(hashes) {
            let stored = match pending.get(document.id_.as_str()) {
                Some(&i) => to_write[i].as_ref().map(|(_, h)| h.clone()),
                None => docstore.get_document_hash(&document.id_).await?,
            };
            let written = match stored {
                Some(stored) if stored == hash => false,
                stored => {
                    if let Some(&i) = pending.get(document.id_.as_str()) {
                        // Superseded within this call: the earlier version is never written.
                        to_write[i] = None;
                    } else if stored.is_some() {
                        plan.changed.push(document.id_.clone());
                    }
                    pending.insert(&document.id_, to_write.len());
                    to_write.push(Some((document.clone(), hash)));
                    true
                }
            };
            plan.written.push(written);
        }
        for (document, hash) in to_write.into_iter().flatten() {
            plan.hashes.push((document.id_.clone(), hash));
            plan.to_write.push(document);
        }
        Ok(plan)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::storage::SimpleDocumentStore;

    #[tokio::test]
    async fn new_changed_unchanged_and_repeated_documents() {
        let store = SimpleDocumentStore::new();
        let a = Node::document("alpha").with_id("a");
        let b = Node::document("beta").with_id("b");
        store.set_document_hash("a", &a.hash()).await.unwrap();
        store.set_document_hash("b", "old").await.unwrap();
        let c1 = Node::document("gamma").with_id("c");
        let c2 = Node::document("gamma 2").with_id("c");
        let plan = RefreshPlan::new(&store, &[a, b, c1.clone(), c2.clone(), c2])
            .await
            .unwrap();
        assert_eq!(plan.written, vec![false, true, true, true, false]);
        assert_eq!(plan.changed, vec!["b".to_string()]);
        let ids: Vec<(&str, &str)> = plan
            .to_write
            .iter()
            .map(|n| (n.id_.as_str(), n.get_text()))
            .collect();
        assert_eq!(ids, vec![("b", "beta"), ("c", "gamma 2")]);
        let hashed: Vec<&str> = plan.hashes.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(hashed, vec!["b", "c"]);
        assert_eq!(
            plan.hashes[1].1,
            Node::document("gamma 2").with_id("c").hash()
        );
    }
}

//! The store's contents as columns: ids, one contiguous `f32` buffer with
//! the norms, the values as given when they are not `f32`s, ref doc ids, metadata.

use crate::embeddings::similarity::dot;
use crate::schema::Metadata;
use std::collections::HashMap;

/// The store's contents. Row `r` of every column describes one node; rows
/// stay in insertion order (as Python's dicts do), which decides tie order.
#[derive(Default)]
pub(super) struct Data {
    /// Length of every vector; 0 while the store is empty.
    pub(super) dim: usize,
    pub(super) ids: Vec<String>,
    /// Node id to row.
    pub(super) rows: HashMap<String, usize>,
    /// `ids.len() * dim` floats, row-major, for scoring.
    pub(super) vectors: Vec<f32>,
    /// The Euclidean norm of each row of `vectors`.
    pub(super) norms: Vec<f64>,
    /// The values as given, same layout as `vectors`, for persisting; `None`
    /// while every value is exactly its `f32` (always so for nodes, whose
    /// embeddings are `f32`), so such stores hold 4 bytes per value, not 12.
    pub(super) wide: Option<Vec<f64>>,
    /// `text_id_to_ref_doc_id`: `None` only for a file that lacked the entry.
    pub(super) ref_doc_ids: Vec<Option<String>>,
    /// `metadata_dict`: `None` only for a file that lacked the entry.
    pub(super) metadata: Vec<Option<Metadata>>,
}

impl Data {
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(super) fn row(&self, r: usize) -> &[f32] {
        &self.vectors[r * self.dim..(r + 1) * self.dim]
    }

    /// Row `r`'s values as given.
    pub(super) fn values(&self, r: usize) -> Vec<f64> {
        let span = r * self.dim..(r + 1) * self.dim;
        match &self.wide {
            Some(wide) => wide[span].to_vec(),
            None => self.vectors[span].iter().map(|v| f64::from(*v)).collect(),
        }
    }

    /// Number of floats in the scoring buffer (rows × dimension).
    #[cfg(test)]
    pub(super) fn buffer_len(&self) -> usize {
        self.vectors.len()
    }

    /// Appends a row, or overwrites the row of an id already present (where
    /// Python's dict assignment keeps the key's position).
    pub(super) fn upsert(
        &mut self,
        id: &str,
        values: impl ExactSizeIterator<Item = f64> + Clone,
        ref_doc_id: Option<String>,
        metadata: Option<Metadata>,
    ) {
        if self.len() == 0 {
            self.dim = values.len();
        }
        let vector: Vec<f32> = values.clone().map(|v| v as f32).collect();
        let norm = dot(&vector, &vector).sqrt();
        let exact = values
            .clone()
            .zip(&vector)
            .all(|(v, f)| v.to_bits() == f64::from(*f).to_bits());
        if !exact && self.wide.is_none() {
            self.wide = Some(self.vectors.iter().map(|v| f64::from(*v)).collect());
        }
        match self.rows.get(id) {
            Some(&r) => {
                let span = r * self.dim..(r + 1) * self.dim;
                self.vectors[span.clone()].copy_from_slice(&vector);
                if let Some(wide) = &mut self.wide {
                    for (slot, v) in wide[span].iter_mut().zip(values) {
                        *slot = v;
                    }
                }
                self.norms[r] = norm;
                self.ref_doc_ids[r] = ref_doc_id;
                self.metadata[r] = metadata;
            }
            None => {
                self.rows.insert(id.to_string(), self.len());
                self.ids.push(id.to_string());
                self.vectors.extend_from_slice(&vector);
                if let Some(wide) = &mut self.wide {
                    wide.extend(values);
                }
                self.norms.push(norm);
                self.ref_doc_ids.push(ref_doc_id);
                self.metadata.push(metadata);
            }
        }
    }

    /// Drops the rows for which `keep` is false, moving the rest down in
    /// order, so the buffers stay contiguous and scans never touch dead rows.
    pub(super) fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        let n = self.len();
        let dim = self.dim;
        let mut w = 0;
        for r in 0..n {
            if !keep(r) {
                continue;
            }
            if w != r {
                self.vectors.copy_within(r * dim..(r + 1) * dim, w * dim);
                if let Some(wide) = &mut self.wide {
                    wide.copy_within(r * dim..(r + 1) * dim, w * dim);
                }
                self.ids.swap(w, r);
                self.norms.swap(w, r);
                self.ref_doc_ids.swap(w, r);
                self.metadata.swap(w, r);
            }
            w += 1;
        }
        if w == n {
            return;
        }
        self.ids.truncate(w);
        self.norms.truncate(w);
        self.ref_doc_ids.truncate(w);
        self.metadata.truncate(w);
        self.vectors.truncate(w * dim);
        // Give memory back once most of it is dead.
        let shrink = self.vectors.capacity() > 2 * self.vectors.len();
        if shrink {
            self.vectors.shrink_to_fit();
        }
        if let Some(wide) = &mut self.wide {
            wide.truncate(w * dim);
            if shrink {
                wide.shrink_to_fit();
            }
        }
        self.rows = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        if w == 0 {
            *self = Data::default();
        }
    }
}

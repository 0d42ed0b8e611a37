//! What a build records about itself, in its own transaction: the manifest
//! (source, settings, the last sync's report) and the files the last sync saw.

use super::fusion::HybridFusion;
use super::kv::DynKv;
use super::settings::BuildSettings;
use crate::error::{Error, Result};
use crate::storage::kvstore::KvValue;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The manifest's format version.
pub const MANIFEST_FORMAT: u32 = 2;

/// The kv collections of the manifest and of the files seen.
const MANIFEST: &str = "ragloom/manifest";
const FILES: &str = "ragloom/files";

/// What a build holds, written in the sync's own transaction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`] when written.
    pub format: u32,
    /// The source key (see [`Source::key`](super::Source::key)).
    pub source: String,
    /// What shaped the build's nodes and vectors.
    pub settings: BuildSettings,
    /// When the build was first written (RFC 3339).
    pub created: String,
    /// When the last sync committed (RFC 3339).
    pub updated: String,
    /// When the last sync listed the files (Unix nanoseconds): a file
    /// modified in that second or later is read again even if its size and
    /// time match, as git does for racy entries.
    pub listed_at_ns: i128,
    /// The last sync.
    pub last_ingest: SyncReport,
    /// The hybrid fusion recorded for this build (`ragloom eval
    /// --tune-fusion --record`), used where the caller sets none. Kept by
    /// later syncs of the build; a rebuild with other settings starts without.
    /// A value this build cannot use (a mode of a later release) reads as
    /// none, with a warning, rather than making the index unreadable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_fusion"
    )]
    pub fusion: Option<HybridFusion>,
}

fn lenient_fusion<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<HybridFusion>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    if value.is_null() {
        return Ok(None);
    }
    match serde_json::from_value(value.clone()) {
        Ok(f) => Ok(Some(f)),
        Err(e) => {
            tracing::warn!(%value, error = %e, "ignoring the index's recorded fusion");
            Ok(None)
        }
    }
}

/// A file as the last sync saw it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileRecord {
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time (Unix nanoseconds).
    pub mtime_ns: i128,
    /// The documents read from it (a PDF page is one).
    pub docs: Vec<String>,
}

/// What one sync did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SyncReport {
    /// Files found in the source.
    pub files: usize,
    /// Files whose size and time were unchanged, so they were not read.
    pub files_unchanged: usize,
    /// Documents read (a PDF page is one).
    pub documents: usize,
    /// Documents read but found unchanged (same hash).
    pub unchanged: usize,
    /// Documents split (and embedded) this time: new or changed.
    pub ingested: usize,
    /// Documents removed because their file vanished (or no longer yields them).
    pub deleted: usize,
    /// Files that could not be read: their earlier nodes are kept.
    pub failed_files: usize,
    /// Files found but left out of the source (see [`SkippedFile`]): their
    /// earlier nodes are deleted, as a vanished file's.
    #[serde(default)]
    pub skipped_files: usize,
    /// Each of them, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
    /// Nodes written this time.
    pub nodes_written: usize,
    /// Nodes in the index after the sync.
    pub nodes_total: usize,
    /// Nodes embedded this time (0 without an embedding model).
    pub nodes_embedded: usize,
    /// Wall time, in milliseconds.
    pub millis: u64,
    /// Where that time went.
    #[serde(default)]
    pub stages: IngestStages,
}

/// A file the listing found but left out of the source: a name that is not
/// UTF-8, or a symlink that resolves outside the synced folder.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkippedFile {
    /// The path, shown lossily where it is not UTF-8.
    pub path: String,
    /// Why it was left out.
    pub reason: String,
}

/// Wall milliseconds of each stage of a sync, summed over its batches.
/// Without an embedding model each batch is written while the next one is
/// split and encoded, so `write` overlaps `split` and `encode` and the
/// stages can add up to more than `millis`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct IngestStages {
    /// Opening the index, listing the source and stat'ing its files.
    pub list: u64,
    /// Reading files into documents.
    pub read: u64,
    /// Planning each batch: its documents hashed and compared with the
    /// stored hashes, changed documents' old nodes deleted.
    pub plan: u64,
    /// Splitting documents into nodes, on every core.
    pub split: u64,
    /// Of `split`, the time the splitter spent counting tokens, added up
    /// over the threads that split (so it can pass `split`).
    pub count: u64,
    /// Encoding nodes as the store keeps them, on every core.
    pub encode: u64,
    /// Writing nodes, their hashes and their keyword counts (with an
    /// embedding model, embedding them first), beside the next batch's split.
    pub write: u64,
    /// Of `write`, the CPU time of the thread that wrote; zero where the
    /// system does not say.
    pub write_cpu: u64,
    /// Merging the keyword index's postings.
    pub keyword_index: u64,
    /// Writing the manifest and committing (not in `millis`, which the
    /// manifest records).
    pub commit: u64,
}

fn decode<T: DeserializeOwned>(what: &str, v: KvValue) -> Result<T> {
    serde_json::from_value(serde_json::Value::Object(v)).map_err(|e| {
        super::IndexError::Damaged {
            what: format!("the stored {what} is damaged: {e}"),
        }
        .into()
    })
}

fn encode<T: Serialize>(v: &T) -> Result<KvValue> {
    match serde_json::to_value(v)? {
        serde_json::Value::Object(m) => Ok(m),
        _ => Err(Error::Other("expected a JSON object".into())),
    }
}

/// The manifest stored in a build, if any.
pub fn read_manifest(kv: &dyn DynKv) -> Result<Option<Manifest>> {
    let mut out = None;
    kv.read_dyn(&mut |t| {
        out = t
            .get("manifest", MANIFEST)?
            .map(|v| decode("manifest", v.into_owned()))
            .transpose()?;
        Ok(())
    })?;
    Ok(out)
}

/// Writes the manifest (inside the sync's transaction).
pub fn write_manifest(kv: &dyn DynKv, manifest: &Manifest) -> Result<()> {
    let mut value = Some(encode(manifest)?);
    kv.write_dyn(&mut |t| match value.take() {
        Some(v) => t.put("manifest", v, MANIFEST),
        None => Ok(()),
    })
}

/// Every file the last sync saw, by path.
pub fn read_files(kv: &dyn DynKv) -> Result<BTreeMap<String, FileRecord>> {
    let mut out = BTreeMap::new();
    kv.read_dyn(&mut |t| {
        for (k, v) in t.get_all(FILES)?.iter() {
            out.insert(k.clone(), decode("file record", v.clone())?);
        }
        Ok(())
    })?;
    Ok(out)
}

/// Records files as read now, and forgets `gone` ones (inside the sync's transaction).
pub fn write_files(kv: &dyn DynKv, seen: &[(String, FileRecord)], gone: &[String]) -> Result<()> {
    let mut values = Some(
        seen.iter()
            .map(|(k, r)| Ok((k.clone(), encode(r)?)))
            .collect::<Result<Vec<_>>>()?,
    );
    kv.write_dyn(&mut |t| {
        for (k, v) in values.take().unwrap_or_default() {
            t.put(&k, v, FILES)?;
        }
        for k in gone {
            t.delete(k, FILES)?;
        }
        Ok(())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::storage::kvstore::{KvBackend, SimpleKVStore};

    /// Manifests written before a stage was added still load, the new
    /// stages at zero.
    #[test]
    fn stages_of_older_manifests_load() {
        let old = r#"{"list":1,"read":2,"split":3,"write":4,"keyword_index":5,"commit":6}"#;
        let stages: IngestStages = serde_json::from_str(old).unwrap();
        assert_eq!(
            stages,
            IngestStages {
                list: 1,
                read: 2,
                split: 3,
                write: 4,
                keyword_index: 5,
                commit: 6,
                ..IngestStages::default()
            }
        );
    }

    /// A recorded fusion reads back; one this build cannot use reads as
    /// none and the manifest stays readable.
    #[test]
    fn a_recorded_fusion_reads_back_and_an_unusable_one_reads_as_none() {
        let settings: BuildSettings = serde_json::from_value(serde_json::json!({
            "chunk_size": 1024, "chunk_overlap": 200, "embed": null,
        }))
        .unwrap();
        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            source: "x".into(),
            settings,
            created: String::new(),
            updated: String::new(),
            listed_at_ns: 0,
            last_ingest: SyncReport::default(),
            fusion: Some(HybridFusion::default()),
        };
        let mut json = serde_json::to_value(&manifest).unwrap();
        let back: Manifest = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.fusion, Some(HybridFusion::default()));
        for unusable in [
            serde_json::json!({"mode": "learned_later", "dense_weight": 0.5}),
            serde_json::json!({"mode": "simple", "dense_weight": 7}),
            serde_json::json!("simple"),
        ] {
            json["fusion"] = unusable;
            let back: Manifest = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(back.fusion, None);
        }
        json.as_object_mut().unwrap().remove("fusion");
        let back: Manifest = serde_json::from_value(json).unwrap();
        assert_eq!(back.fusion, None);
    }

    #[test]
    fn file_records_round_trip_and_a_damaged_one_is_named() {
        let kv = SimpleKVStore::new();
        let rec = FileRecord {
            size: 3,
            mtime_ns: -5,
            docs: vec!["a".into()],
        };
        write_files(&kv, &[("/x".into(), rec.clone())], &[]).unwrap();
        assert_eq!(read_files(&kv).unwrap().get("/x"), Some(&rec));
        write_files(&kv, &[], &["/x".into()]).unwrap();
        assert!(read_files(&kv).unwrap().is_empty());
        let mut bad = KvValue::new();
        bad.insert("size".into(), "three".into());
        kv.write(|t| t.put("/y", bad, FILES)).unwrap();
        let err = read_files(&kv).unwrap_err().to_string();
        assert!(err.contains("file record is damaged"), "{err}");
    }
}

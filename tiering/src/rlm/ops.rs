//! Operations helpers behind `strata remote ls` and `strata remote verify`. Both return printable structs
//! (`Display` renders the CLI's table rows and report).
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use futures::TryStreamExt;
use object_store::path::Path;
use strata_metadata::{
    RemoteLogMetadataManager, RemoteLogMetadataRecord, RemoteLogSegmentState, ValueFormat,
    REMOTE_LOG_METADATA_TOPIC_NAME,
};
use strata_storage::{LogManager, RecordBatch, TopicIdPartition, TopicPartition};

use crate::error::{Error, Result};
use crate::key::{kafka_uuid, KeyLayout};
use crate::{BackendKind, ObjectStoreRsm};

/// One remote segment, as `strata remote ls` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteSegmentListing {
    /// The partition.
    pub partition: i32,
    /// The segment id, printed as Kafka prints a `Uuid`.
    pub segment_id: String,
    /// `COPY_SEGMENT_STARTED`, `COPY_SEGMENT_FINISHED` or `DELETE_SEGMENT_STARTED`.
    pub state: &'static str,
    /// First offset.
    pub start_offset: i64,
    /// Last offset.
    pub end_offset: i64,
    /// `.log` bytes.
    pub size_bytes: u64,
    /// Whether the segment has a transaction index (aborted transactions) in remote storage.
    pub txn_index: bool,
    /// Largest record timestamp.
    pub max_timestamp_ms: i64,
    /// Leader epoch → first offset.
    pub leader_epochs: BTreeMap<i32, i64>,
    /// The segment's object keys (`.log`, `.indexes`, `.rsm-manifest`).
    pub object_keys: Vec<String>,
}

impl RemoteSegmentListing {
    /// The header line matching `Display`.
    pub const HEADER: &'static str =
        "PARTITION  START_OFFSET  END_OFFSET  SIZE_BYTES  TXN_INDEX  STATE                   SEGMENT_ID              OBJECT_KEYS";
}

impl fmt::Display for RemoteSegmentListing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<9}  {:<12}  {:<10}  {:<10}  {:<9}  {:<22}  {:<22}  {}",
            self.partition,
            self.start_offset,
            self.end_offset,
            self.size_bytes,
            if self.txn_index { "yes" } else { "no" },
            self.state,
            self.segment_id,
            self.object_keys.join(" ")
        )
    }
}

/// The remote segments of `partitions` (every state but `DELETE_SEGMENT_FINISHED`), by partition then offset.
pub fn remote_ls(
    rlmm: &dyn RemoteLogMetadataManager,
    rsm: &ObjectStoreRsm,
    partitions: &[TopicIdPartition],
) -> Result<Vec<RemoteSegmentListing>> {
    let mut out = Vec::new();
    for tip in partitions {
        for s in rlmm
            .list_remote_log_segments(tip)
            .map_err(Error::meta("list segments"))?
        {
            out.push(RemoteSegmentListing {
                partition: tip.partition(),
                segment_id: kafka_uuid(&s.remote_log_segment_id.id),
                state: s.state.name(),
                start_offset: s.start_offset,
                end_offset: s.end_offset,
                size_bytes: s.segment_size_in_bytes,
                txn_index: !s.txn_idx_empty,
                max_timestamp_ms: s.max_timestamp_ms,
                leader_epochs: s.segment_leader_epochs.clone(),
                object_keys: rsm
                    .segment_keys(&s)
                    .all()
                    .iter()
                    .map(|p| p.to_string())
                    .collect(),
            });
        }
    }
    Ok(out)
}

/// What `strata remote verify` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyReport {
    /// `COPY_SEGMENT_FINISHED` segments checked.
    pub segments_checked: usize,
    /// (segment id, missing object key) for finished segments missing an object.
    pub missing_objects: Vec<(String, String)>,
    /// Objects under the partitions' prefixes that belong to no segment the RLMM knows.
    pub orphan_objects: Vec<String>,
    /// Multipart uploads never completed or aborted, when the backend can list them (`None` when it cannot:
    /// S3 through `object_store` has no ListMultipartUploads; keep an AbortIncompleteMultipartUpload lifecycle
    /// rule on the bucket).
    pub abandoned_uploads: Option<Vec<String>>,
}

impl VerifyReport {
    /// True when nothing is missing, orphaned or abandoned.
    pub fn is_clean(&self) -> bool {
        self.missing_objects.is_empty()
            && self.orphan_objects.is_empty()
            && self.abandoned_uploads.as_ref().is_none_or(Vec::is_empty)
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "segments checked: {}", self.segments_checked)?;
        writeln!(f, "missing objects: {}", self.missing_objects.len())?;
        for (seg, key) in &self.missing_objects {
            writeln!(f, "  missing {key} (segment {seg})")?;
        }
        writeln!(f, "orphan objects: {}", self.orphan_objects.len())?;
        for key in &self.orphan_objects {
            writeln!(f, "  orphan {key}")?;
        }
        match &self.abandoned_uploads {
            Some(v) => {
                writeln!(f, "abandoned multipart uploads: {}", v.len())?;
                for key in v {
                    writeln!(f, "  abandoned {key}")?;
                }
            }
            None => writeln!(
                f,
                "abandoned multipart uploads: not listable on this backend (use a lifecycle rule)"
            )?,
        }
        write!(
            f,
            "{}",
            if self.is_clean() {
                "OK"
            } else {
                "PROBLEMS FOUND"
            }
        )
    }
}

/// The object-key folders of a partition: `{key.prefix}{topic}-{topicId}/{partition}` in the current key layout
/// and, for a topic name long enough that they differ, in the layout of older versions.
fn partition_prefixes(rsm: &ObjectStoreRsm, tip: &TopicIdPartition) -> Vec<String> {
    let prefix = &rsm.config().key_prefix;
    let mut v = vec![KeyLayout::CURRENT.partition_folder(prefix, tip)];
    let old = KeyLayout::V1.partition_folder(prefix, tip);
    if old != v[0] {
        v.push(old);
    }
    v
}

/// Checks that every `COPY_SEGMENT_FINISHED` segment of `partitions` has all its objects, and lists objects under
/// the partitions' key folders that no known segment owns, and (filesystem backend) abandoned multipart uploads.
pub async fn remote_verify(
    rlmm: &dyn RemoteLogMetadataManager,
    rsm: &ObjectStoreRsm,
    partitions: &[TopicIdPartition],
    on_partition_done: &(dyn Fn(usize, usize) + Sync),
) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    let mut abandoned = Vec::new();
    for (done, tip) in partitions.iter().enumerate() {
        on_partition_done(done, partitions.len());
        let prefixes = partition_prefixes(rsm, tip);
        let mut listed = BTreeSet::new();
        for prefix in &prefixes {
            let found: Vec<String> = rsm
                .store()
                .list(Some(&Path::from(prefix.as_str())))
                .map_ok(|m| m.location.to_string())
                .try_collect()
                .await
                .map_err(|e| Error::store("list", prefix, e))?;
            listed.extend(found);
        }
        let mut known = BTreeSet::new();
        for s in rlmm
            .list_remote_log_segments(tip)
            .map_err(Error::meta("list segments"))?
        {
            let keys: Vec<String> = rsm
                .segment_keys(&s)
                .all()
                .iter()
                .map(|p| p.to_string())
                .collect();
            if s.state == RemoteLogSegmentState::CopySegmentFinished {
                report.segments_checked += 1;
                for k in &keys {
                    if !listed.contains(k) {
                        report
                            .missing_objects
                            .push((kafka_uuid(&s.remote_log_segment_id.id), k.clone()));
                    }
                }
            }
            known.extend(keys);
        }
        report
            .orphan_objects
            .extend(listed.into_iter().filter(|k| !known.contains(k)));
        if rsm.config().backend == BackendKind::Filesystem {
            for prefix in &prefixes {
                let dir = rsm.config().filesystem_root.join(prefix);
                collect_staged(&dir, &mut abandoned);
            }
        }
    }
    on_partition_done(partitions.len(), partitions.len());
    if rsm.config().backend != BackendKind::S3 {
        report.abandoned_uploads = Some(abandoned);
    }
    Ok(report)
}

/// `object_store`'s local backend stages a multipart upload as `<key>#<id>` next to the object.
fn collect_staged(dir: &std::path::Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_staged(&p, out);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains('#'))
        {
            out.push(p.display().to_string());
        }
    }
}

/// One record of `__remote_log_metadata`, as `strata remote ls --history` and the demo print it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MetadataRecordLine {
    /// The metadata partition.
    pub partition: i32,
    /// The record's offset in it.
    pub offset: i64,
    /// The record, readable: its JSON rendering (`strata_metadata::RemoteLogMetadataRecord::to_json`), or, for
    /// a value that does not decode, `{"undecodable": reason, "value_hex": …}`.
    pub json: String,
    /// How the value is stored: `"kafka"` (Kafka's `RemoteLogMetadataSerde`, what strata writes) or `"json"`
    /// (written by a version before issue 34).
    pub format: &'static str,
}

impl fmt::Display for MetadataRecordLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}@{}: {}",
            REMOTE_LOG_METADATA_TOPIC_NAME, self.partition, self.offset, self.json
        )
    }
}

/// A metadata value as JSON text, whichever format it is stored in.
fn readable(value: &[u8], tp: &TopicPartition, offset: i64) -> String {
    match RemoteLogMetadataRecord::from_bytes(value, || {
        format!("record at offset {offset} of {tp}")
    }) {
        Ok(r) => String::from_utf8(r.to_json()).expect("serde_json writes UTF-8"),
        Err(e) => serde_json::json!({
            "undecodable": e.to_string(),
            "value_hex": value.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        })
        .to_string(),
    }
}

/// Every record still held in `__remote_log_metadata` (all its partitions, each in offset order), for
/// inspection. Reads the local log directly; records are never re-encoded.
pub fn metadata_records(log_manager: &LogManager) -> Result<Vec<MetadataRecordLine>> {
    let mut logs: Vec<_> = log_manager
        .all_logs()
        .into_iter()
        .filter(|l| l.topic_partition().topic == REMOTE_LOG_METADATA_TOPIC_NAME)
        .collect();
    logs.sort_by_key(|l| l.topic_partition().partition);
    let mut out = Vec::new();
    for log in logs {
        let tp = log.topic_partition().clone();
        let mut offset = log.log_start_offset();
        while offset < log.log_end_offset() {
            let chunk = log
                .read(offset, 1 << 20, true, None)
                .map_err(Error::storage(&tp))?
                .records;
            if chunk.is_empty() {
                break;
            }
            for batch in RecordBatch::iter(&chunk) {
                let batch = batch.map_err(Error::storage(&tp))?;
                offset = batch.last_offset() + 1;
                for rec in batch.records().map_err(Error::storage(&tp))? {
                    let rec = rec.map_err(Error::storage(&tp))?;
                    if rec.offset < log.log_start_offset() {
                        continue;
                    }
                    let value = rec.value.unwrap_or_default();
                    out.push(MetadataRecordLine {
                        partition: tp.partition,
                        offset: rec.offset,
                        json: readable(&value, &tp, rec.offset),
                        format: ValueFormat::of(&value).name(),
                    });
                }
            }
        }
    }
    Ok(out)
}

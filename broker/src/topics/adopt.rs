//! Adopting a log dir Apache Kafka (KRaft, 3.x/4.x) wrote: strata starts on it as it is.
//!
//! The partition dirs are Kafka's own format and strata's (`{base_offset:020}.log`, `.index`, `.timeindex`,
//! `.txnindex`, producer `.snapshot`s, `leader-epoch-checkpoint`, `partition.metadata`), and so are the records of
//! `__consumer_offsets` and `__transaction_state`: those are loaded as they are. What strata keeps elsewhere is the
//! topic registry (`strata-topics.json`); Kafka keeps topics in its KRaft metadata log `__cluster_metadata-0`. So
//! when the metadata dir has no registry and holds `__cluster_metadata-0`, the registry is built from that log: the
//! latest snapshot (`{end_offset:020}-{epoch:010}.checkpoint`) and the log records after it, as Kafka's
//! `MetadataLoader` replays them —
//!
//! | record (api key) | fields read | what strata does |
//! |---|---|---|
//! | `TopicRecord` (2) | name, topic id | a topic with Kafka's id (the one in `partition.metadata`) |
//! | `PartitionRecord` (3) | partition id, topic id | its partition count |
//! | `ConfigRecord` (4), resource type 2 (topic) | topic, key, value (null removes) | topic configs strata implements; others named in a WARN and dropped |
//! | `RemoveTopicRecord` (9) | topic id | the topic is gone |
//! | `ProducerIdsRecord` (15) | next producer id | strata's `producer-id-block` starts above it, so no id is issued twice |
//!
//! Each value is Kafka's `ApiMessageAndVersion` framing: unsigned varints frame version, api key, record version,
//! then the record in the flexible encoding (compact strings, 16-byte UUIDs, tagged fields last, not read).
//!
//! Not taken over, each named in one WARN at start-up with how many records held it: broker and cluster configs
//! (`ConfigRecord` of other resource types), ACLs (18), SCRAM credentials (11), client quotas (14), delegation
//! tokens (10), and the controller's own state (broker registrations, features, the quorum). The metadata log is
//! then set aside (`__cluster_metadata-0-stray`, kept, never loaded again): strata has no controller quorum.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bytes::{Buf, Bytes};
use kafka_protocol::records::RecordBatchDecoder;
use strata_storage::{LogManager, TopicPartition};
use tracing::{info, warn};
use uuid::Uuid;

use super::registry::TopicMeta;
use crate::config::topic::TOPIC_CONFIG;
use crate::error::{Error, Result};

/// Kafka's KRaft metadata topic.
pub const CLUSTER_METADATA: &str = "__cluster_metadata";

/// One topic of the metadata log.
#[derive(Debug, Default)]
struct KafkaTopic {
    name: String,
    /// Partition ids seen.
    partitions: BTreeSet<i32>,
    configs: BTreeMap<String, String>,
}

/// What the metadata log says, replayed.
#[derive(Debug, Default)]
pub struct KafkaMetadata {
    /// Topics by id.
    topics: BTreeMap<Uuid, KafkaTopic>,
    /// Topic configs by topic name (a ConfigRecord can precede its topic's records in a snapshot).
    topic_configs: BTreeMap<String, BTreeMap<String, String>>,
    /// The next producer id the controller would hand out.
    pub next_producer_id: Option<i64>,
    /// Records of kinds strata does not take over, by what they are.
    not_taken: BTreeMap<&'static str, usize>,
}

/// The dir of Kafka's metadata log partition in `log_dir`, if there is one.
pub fn metadata_log_dir(log_dir: &Path) -> Option<PathBuf> {
    let d = log_dir.join(format!("{CLUSTER_METADATA}-0"));
    d.is_dir().then_some(d)
}

/// Reads `dir` (a `__cluster_metadata-0`): the latest snapshot, then the log's records after it.
pub fn read_metadata_log(dir: &Path) -> Result<KafkaMetadata> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("reading {}", dir.display()), e))?
        .filter_map(|e| e.ok())
        .map(|e| (e.path(), e.file_name().to_string_lossy().to_string()))
        .collect();
    files.sort_by(|a, b| a.1.cmp(&b.1));
    let snapshot = files
        .iter()
        .filter(|(_, n)| n.ends_with(".checkpoint") && n.contains('-'))
        .filter_map(|(p, n)| Some((n.split('-').next()?.parse::<i64>().ok()?, p)))
        .max_by_key(|(end, _)| *end);
    let mut meta = KafkaMetadata::default();
    let mut from = 0;
    if let Some((end, path)) = snapshot {
        replay_file(&mut meta, path, 0)?;
        from = end;
    }
    for (path, _) in files.iter().filter(|(_, n)| n.ends_with(".log")) {
        replay_file(&mut meta, path, from)?;
    }
    Ok(meta)
}

/// Applies the records of one file of batches whose offsets are at least `from`. A torn tail ends the file.
fn replay_file(meta: &mut KafkaMetadata, path: &Path, from: i64) -> Result<()> {
    let mut buf = Bytes::from(
        std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?,
    );
    while buf.remaining() >= 12 {
        let set = match RecordBatchDecoder::decode(&mut buf) {
            Ok(s) => s,
            Err(e) => {
                warn!(file = %path.display(), error = %e, "Kafka metadata log: unreadable tail ignored");
                break;
            }
        };
        for r in set
            .records
            .iter()
            .filter(|r| !r.control && r.offset >= from)
        {
            if let Some(v) = &r.value {
                if let Err(e) = meta.apply(v.clone()) {
                    warn!(file = %path.display(), offset = r.offset, error = %e,
                        "Kafka metadata log: a record strata cannot read is skipped");
                }
            }
        }
    }
    Ok(())
}

/// A cursor over one record value (Kafka's flexible encoding).
struct Reader(Bytes);

impl Reader {
    fn need(&self, n: usize) -> std::result::Result<(), String> {
        (self.0.remaining() >= n)
            .then_some(())
            .ok_or_else(|| "record shorter than its fields".to_string())
    }
    fn uvarint(&mut self) -> std::result::Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            self.need(1)?;
            let b = self.0.get_u8();
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint longer than 10 bytes".into())
    }
    fn i8(&mut self) -> std::result::Result<i8, String> {
        self.need(1)?;
        Ok(self.0.get_i8())
    }
    fn i32(&mut self) -> std::result::Result<i32, String> {
        self.need(4)?;
        Ok(self.0.get_i32())
    }
    fn i64(&mut self) -> std::result::Result<i64, String> {
        self.need(8)?;
        Ok(self.0.get_i64())
    }
    fn uuid(&mut self) -> std::result::Result<Uuid, String> {
        self.need(16)?;
        Ok(Uuid::from_u128(self.0.get_u128()))
    }
    /// A compact nullable string.
    fn string(&mut self) -> std::result::Result<Option<String>, String> {
        let n = self.uvarint()?;
        let Some(len) = n.checked_sub(1) else {
            return Ok(None);
        };
        let len = usize::try_from(len).map_err(|_| "string too long".to_string())?;
        self.need(len)?;
        let b = self.0.split_to(len);
        String::from_utf8(b.to_vec())
            .map(Some)
            .map_err(|_| "string not UTF-8".into())
    }
}

impl KafkaMetadata {
    /// Applies one `ApiMessageAndVersion` value.
    fn apply(&mut self, value: Bytes) -> std::result::Result<(), String> {
        let mut r = Reader(value);
        let _frame_version = r.uvarint()?;
        let api_key = r.uvarint()?;
        let _version = r.uvarint()?;
        match api_key {
            2 => {
                let name = r.string()?.ok_or("TopicRecord without a name")?;
                let id = r.uuid()?;
                let configs = self.topic_configs.get(&name).cloned().unwrap_or_default();
                let partitions = BTreeSet::new();
                self.topics.insert(
                    id,
                    KafkaTopic {
                        name,
                        partitions,
                        configs,
                    },
                );
            }
            3 => {
                let partition = r.i32()?;
                let id = r.uuid()?;
                if let Some(t) = self.topics.get_mut(&id) {
                    t.partitions.insert(partition);
                }
            }
            4 => {
                let resource_type = r.i8()?;
                let resource = r.string()?.unwrap_or_default();
                let key = r.string()?.unwrap_or_default();
                let value = r.string()?;
                if resource_type != 2 {
                    *self
                        .not_taken
                        .entry("broker and cluster configs")
                        .or_default() += 1;
                    return Ok(());
                }
                let set = |m: &mut BTreeMap<String, String>| match &value {
                    Some(v) => m.insert(key.clone(), v.clone()),
                    None => m.remove(&key),
                };
                set(self.topic_configs.entry(resource.clone()).or_default());
                for t in self.topics.values_mut().filter(|t| t.name == resource) {
                    set(&mut t.configs);
                }
            }
            9 => {
                let id = r.uuid()?;
                if let Some(t) = self.topics.remove(&id) {
                    self.topic_configs.remove(&t.name);
                }
            }
            15 => {
                let _broker = r.i32()?;
                let _epoch = r.i64()?;
                self.next_producer_id = Some(r.i64()?);
            }
            10 | 26 => *self.not_taken.entry("delegation tokens").or_default() += 1,
            11 | 22 => *self.not_taken.entry("SCRAM credentials").or_default() += 1,
            14 => *self.not_taken.entry("client quotas").or_default() += 1,
            18 | 19 => *self.not_taken.entry("ACLs").or_default() += 1,
            _ => {}
        }
        Ok(())
    }

    /// The topics for strata's registry: Kafka's ids and partition counts, the topic configs strata implements
    /// (the others are named in a WARN). Internal topics are left to the broker (registered from their logs).
    pub fn registry_topics(&self) -> BTreeMap<String, TopicMeta> {
        let known = |k: &str| TOPIC_CONFIG.keys().any(|c| c.name == k);
        let mut out = BTreeMap::new();
        for (
            id,
            KafkaTopic {
                name,
                partitions,
                configs,
            },
        ) in &self.topics
        {
            if super::is_internal(name) || partitions.is_empty() {
                continue;
            }
            let (kept, dropped): (BTreeMap<_, _>, BTreeMap<_, _>) =
                configs.clone().into_iter().partition(|(k, _)| known(k));
            if !dropped.is_empty() {
                warn!(topic = %name, configs = ?dropped,
                    "Kafka topic configs strata does not implement are not taken over");
            }
            let count = partitions.iter().max().map_or(0, |p| p + 1);
            out.insert(
                name.clone(),
                TopicMeta {
                    id: *id,
                    partitions: count,
                    configs: kept,
                    internal: false,
                },
            );
        }
        out
    }

    /// One WARN per kind of metadata strata does not take over.
    pub fn warn_not_taken(&self) {
        for (what, n) in &self.not_taken {
            warn!(
                records = n,
                "Kafka metadata not taken over: {what} (configure them in strata again)"
            );
        }
    }
}

/// Builds the registry's topics from the Kafka metadata log in `meta_dir`, says what is not taken over, and sets
/// the metadata log aside. Blocking.
pub fn adopt(
    logs: &LogManager,
    meta_dir: &Path,
    metadata_dir: &Path,
) -> Result<(BTreeMap<String, TopicMeta>, Option<i64>)> {
    let meta = read_metadata_log(metadata_dir)?;
    let topics = meta.registry_topics();
    info!(dir = %meta_dir.display(), topics = topics.len(),
        names = %topics.keys().cloned().collect::<Vec<_>>().join(","),
        "adopting a log dir Apache Kafka wrote: topics, ids, partition counts and topic configs from its metadata log; \
         records, committed offsets, transactions and producer state from the partition logs as they are");
    meta.warn_not_taken();
    let tp = TopicPartition::new(CLUSTER_METADATA, 0);
    if logs.get_log(&tp).is_some() {
        let aside = logs.set_aside_stray_log(&tp)?;
        warn!(aside = %aside.display(),
            "Kafka's KRaft metadata log is not served (strata has no controller quorum): set aside, kept on disk");
    }
    Ok((topics, meta.next_producer_id))
}

/// The `cluster.id` of Kafka's `meta.properties` in `log_dir`, if readable.
pub fn kafka_cluster_id(log_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log_dir.join("meta.properties")).ok()?;
    text.lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "cluster.id")
        .map(|(_, v)| v.trim().to_string())
}

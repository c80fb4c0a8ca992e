//! The topic registry: name → topic id, partition count, config overrides. Persisted as JSON in the metadata
//! dir (`strata-topics.json`, written tmp + fsync + rename + fsync dir) so topics survive restarts; see
//! [`metadata_dir`] for which of `log.dirs` that is.

use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{Error, Result};

/// File name of the registry inside the metadata dir.
pub const REGISTRY_FILE: &str = "strata-topics.json";

/// The log dir that holds the topic registry (and by default the filesystem remote tier and the remote log
/// metadata snapshot): the one with `strata-topics.json`, wherever it stands in `log.dirs` — a disk added in
/// front of the list, or a reordered list, must not hide every topic — else the first dir. Several dirs holding
/// a registry is an error naming them (the broker cannot tell which one describes the data).
pub fn metadata_dir(log_dirs: &[PathBuf]) -> Result<PathBuf> {
    let holding: Vec<&PathBuf> = log_dirs
        .iter()
        .filter(|d| d.join(REGISTRY_FILE).exists())
        .collect();
    match holding.as_slice() {
        [] => log_dirs.first().cloned().ok_or_else(|| {
            let reason = "at least one directory is needed";
            Error::config("log.dirs".into(), String::new(), reason.into())
        }),
        [one] => Ok((*one).clone()),
        many => {
            let joined = |dirs: &mut dyn Iterator<Item = &PathBuf>, sep: &str| {
                dirs.map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(sep)
            };
            let reason = format!(
                "several log dirs hold a topic registry ({REGISTRY_FILE} in {}); keep the one that describes \
                 the data and move the others away",
                joined(&mut many.iter().copied(), ", ")
            );
            Err(Error::config(
                "log.dirs".into(),
                joined(&mut log_dirs.iter(), ","),
                reason,
            ))
        }
    }
}

/// Name of the consumer offsets topic.
pub const CONSUMER_OFFSETS: &str = "__consumer_offsets";
/// Name of the transaction coordinator's topic.
pub const TRANSACTION_STATE: &str = "__transaction_state";
/// Name of the KIP-405 metadata topic.
pub const REMOTE_LOG_METADATA: &str = "__remote_log_metadata";

/// What the broker knows about one topic.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TopicMeta {
    /// Topic id (Metadata v10+, partition.metadata).
    pub id: Uuid,
    /// Number of partitions.
    pub partitions: i32,
    /// Topic-level config overrides (Kafka names).
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
    /// Internal topics are refused to client producers and listed with is_internal.
    #[serde(default)]
    pub internal: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RegistryFile {
    cluster_id: String,
    topics: BTreeMap<String, TopicMeta>,
}

/// Thread-safe registry of topics, written through to disk on every change.
#[derive(Debug)]
pub struct TopicRegistry {
    path: PathBuf,
    cluster_id: String,
    topics: RwLock<BTreeMap<String, TopicMeta>>,
}

/// An existing topic whose name equals `name` once '.' and '_' are treated alike (Kafka refuses such a topic:
/// both would have the same metric names).
pub fn colliding<'a>(existing: impl IntoIterator<Item = &'a String>, name: &str) -> Option<String> {
    let norm = |n: &str| n.replace('.', "_");
    let wanted = norm(name);
    existing
        .into_iter()
        .find(|e| e.as_str() != name && norm(e) == wanted)
        .cloned()
}

/// Checks a topic name as Kafka does: 1..=249 chars of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::InvalidTopic(name.into(), "the name is empty"));
    }
    if name == "." || name == ".." {
        return Err(Error::InvalidTopic(
            name.into(),
            "'.' and '..' are not allowed",
        ));
    }
    if name.len() > 249 {
        return Err(Error::InvalidTopic(
            name.into(),
            "longer than 249 characters",
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        return Err(Error::InvalidTopic(
            name.into(),
            "only ASCII alphanumerics, '.', '_' and '-' are allowed",
        ));
    }
    Ok(())
}

impl TopicRegistry {
    /// Loads the registry from `dir`, creating an empty one (with a fresh cluster id) if absent.
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let path = dir.join(REGISTRY_FILE);
        let file: RegistryFile = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::io(
                    format!(
                        "parsing {} (the topic registry; strata writes it whole and atomically, so it was edited or \
                         damaged on disk: restore it from a backup)",
                        path.display()
                    ),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => RegistryFile {
                cluster_id: cluster_id_from(Uuid::new_v4()),
                topics: BTreeMap::new(),
            },
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        let reg = TopicRegistry {
            path,
            cluster_id: file.cluster_id,
            topics: RwLock::new(file.topics),
        };
        reg.persist(&reg.topics.read())?;
        Ok(reg)
    }

    /// Creates the registry of `dir` (which has none) holding `topics`, with `cluster_id` when given (an adopted
    /// Kafka log dir keeps its cluster id). Blocking.
    pub fn create_with(
        dir: &Path,
        cluster_id: Option<String>,
        topics: BTreeMap<String, TopicMeta>,
    ) -> Result<Self> {
        let path = dir.join(REGISTRY_FILE);
        if path.exists() {
            return Err(Error::TopicExists(path.display().to_string()));
        }
        let reg = TopicRegistry {
            path,
            cluster_id: cluster_id.unwrap_or_else(|| cluster_id_from(Uuid::new_v4())),
            topics: RwLock::new(topics),
        };
        reg.persist(&reg.topics.read())?;
        Ok(reg)
    }

    /// The cluster id (persisted with the registry).
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// One topic's metadata.
    pub fn get(&self, name: &str) -> Option<TopicMeta> {
        self.read().get(name).cloned()
    }

    /// The topic name with this id.
    pub fn name_of(&self, id: Uuid) -> Option<String> {
        self.read()
            .iter()
            .find(|(_, m)| m.id == id)
            .map(|(n, _)| n.clone())
    }

    /// Every topic, sorted by name.
    pub fn all(&self) -> Vec<(String, TopicMeta)> {
        self.read()
            .iter()
            .map(|(n, m)| (n.clone(), m.clone()))
            .collect()
    }

    /// The names of the topics from `first` on (inclusive), sorted.
    pub fn names_from(&self, first: &str) -> Vec<String> {
        self.read()
            .range::<str, _>((std::ops::Bound::Included(first), std::ops::Bound::Unbounded))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Adds a topic; `TopicExists` if the name is taken.
    pub fn create(&self, name: &str, meta: TopicMeta) -> Result<()> {
        let mut topics = self.write();
        if topics.contains_key(name) {
            return Err(Error::TopicExists(name.into()));
        }
        if let Some(existing) = colliding(topics.keys(), name) {
            return Err(Error::TopicCollision {
                name: name.into(),
                existing,
            });
        }
        topics.insert(name.to_string(), meta);
        self.persist(&topics)
    }

    /// Changes a topic in place; `UnknownTopicOrPartition` if absent.
    pub fn update(
        &self,
        name: &str,
        f: impl FnOnce(&mut TopicMeta) -> Result<()>,
    ) -> Result<TopicMeta> {
        let mut topics = self.write();
        let mut meta = topics
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        f(&mut meta)?;
        topics.insert(name.to_string(), meta.clone());
        self.persist(&topics)?;
        Ok(meta)
    }

    /// Applies `f` to a copy of every topic and persists the result in one write; the registry changes only
    /// if `f` succeeds and the write does (a batch of creations costs one write, not one per topic).
    pub fn apply(
        &self,
        f: impl FnOnce(&mut BTreeMap<String, TopicMeta>) -> Result<()>,
    ) -> Result<()> {
        let mut topics = self.write();
        let mut changed = topics.clone();
        f(&mut changed)?;
        self.persist(&changed)?;
        *topics = changed;
        Ok(())
    }

    /// Partitions of every topic together (internal ones included), as `max.broker.partitions` counts them.
    pub fn partition_total(&self) -> i64 {
        self.read()
            .values()
            .map(|m| i64::from(m.partitions.max(0)))
            .sum()
    }

    /// Removes a topic, returning what it was.
    pub fn remove(&self, name: &str) -> Result<TopicMeta> {
        let mut topics = self.write();
        let meta = topics
            .remove(name)
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        self.persist(&topics)?;
        Ok(meta)
    }

    fn read(&self) -> parking_lot::RwLockReadGuard<'_, BTreeMap<String, TopicMeta>> {
        self.topics.read()
    }

    fn write(&self) -> parking_lot::RwLockWriteGuard<'_, BTreeMap<String, TopicMeta>> {
        self.topics.write()
    }

    /// Atomic write (storage's: tmp file, fsync, rename, fsync dir); callers hold the registry's write lock.
    fn persist(&self, topics: &BTreeMap<String, TopicMeta>) -> Result<()> {
        let file = RegistryFile {
            cluster_id: self.cluster_id.clone(),
            topics: topics.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| Error::io("encoding the topic registry", e.into()))?;
        strata_storage::crash_point("registry.before_write");
        Ok(strata_storage::atomic_write(&self.path, &bytes)?)
    }
}

/// Kafka cluster ids are 22-character URL-safe base64 of a UUID; a hex form is accepted by every client.
fn cluster_id_from(id: Uuid) -> String {
    id.simple().to_string()[..22].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let reg = TopicRegistry::open(dir.path()).unwrap();
        let meta = TopicMeta {
            id: Uuid::new_v4(),
            partitions: 3,
            configs: BTreeMap::new(),
            internal: false,
        };
        reg.create("a", meta.clone()).unwrap();
        let cluster = reg.cluster_id().to_string();
        drop(reg);
        let reg = TopicRegistry::open(dir.path()).unwrap();
        assert_eq!(reg.get("a"), Some(meta));
        assert_eq!(reg.cluster_id(), cluster);
    }

    #[test]
    fn duplicate_create_is_topic_exists() {
        let dir = tempfile::tempdir().unwrap();
        let reg = TopicRegistry::open(dir.path()).unwrap();
        let meta = TopicMeta {
            id: Uuid::new_v4(),
            partitions: 1,
            configs: BTreeMap::new(),
            internal: false,
        };
        reg.create("a", meta.clone()).unwrap();
        assert!(matches!(reg.create("a", meta), Err(Error::TopicExists(_))));
    }

    #[test]
    fn a_failed_batch_changes_neither_memory_nor_file() {
        let dir = tempfile::tempdir().unwrap();
        let reg = TopicRegistry::open(dir.path()).unwrap();
        let meta = TopicMeta {
            id: Uuid::new_v4(),
            partitions: 2,
            configs: BTreeMap::new(),
            internal: false,
        };
        reg.apply(|all| {
            all.insert("a".into(), meta.clone());
            all.insert("b".into(), meta.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(reg.partition_total(), 4);
        let file = std::fs::read(dir.path().join(REGISTRY_FILE)).unwrap();
        let failed = reg.apply(|all| {
            all.insert("c".into(), meta.clone());
            Err(Error::TopicExists("c".into()))
        });
        assert!(failed.is_err());
        assert!(reg.get("c").is_none());
        assert_eq!(std::fs::read(dir.path().join(REGISTRY_FILE)).unwrap(), file);
    }

    #[test]
    fn names_are_checked_like_kafka() {
        assert!(validate_name("ok.name_1-x").is_ok());
        assert!(validate_name("").is_err());
        assert!(validate_name("..").is_err());
        assert!(validate_name("bad/name").is_err());
        assert!(validate_name(&"x".repeat(250)).is_err());
    }
}

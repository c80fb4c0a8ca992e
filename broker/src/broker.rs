//! The broker's shared state: config, the local logs, the topic registry, the group coordinator, producer ids,
//! and the append notifier that wakes long-polling fetches.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use strata_storage::time::now_ms;
use strata_storage::{LogConfig, LogManager, LogManagerConfig, TopicPartition, UnifiedLog};
use strata_tiering::rlm::ConfigChangeAction;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::config::BrokerConfig;
use crate::error::{Error, Result};
use crate::group::GroupCoordinator;
use crate::producer_ids::ProducerIdManager;
use crate::remote::RemoteLogReader;
use crate::tiered::{self, Tiering};
use crate::topic_config;
use crate::topics::{self, TopicMeta, TopicRegistry, CONSUMER_OFFSETS, REMOTE_LOG_METADATA};

/// The running broker's state, shared by every connection.
pub struct Broker {
    config: BrokerConfig,
    advertised_host: String,
    advertised_port: i32,
    logs: Arc<LogManager>,
    topics: TopicRegistry,
    groups: GroupCoordinator,
    appended: Notify,
    producer_ids: ProducerIdManager,
    remote_reader: std::sync::OnceLock<Arc<dyn RemoteLogReader>>,
    tiering: std::sync::OnceLock<Arc<Tiering>>,
    cancel: CancellationToken,
    /// Serializes topic and partition creation (checks, limits, logs and the registry write of one request).
    topic_changes: std::sync::Mutex<()>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("node_id", &self.config.node_id)
            .finish_non_exhaustive()
    }
}

fn is_internal(name: &str) -> bool {
    name == CONSUMER_OFFSETS || name == REMOTE_LOG_METADATA
}

/// Partition logs of topics the registry does not know: with no registry anywhere in `log.dirs`, start-up is
/// refused (serving a partial view — topics missing, auto-create colliding with their dirs — would be worse than
/// stopping; the dir holding `strata-topics.json` was probably left out of `log.dirs`); with a registry, they are
/// reported (a topic deleted while the broker crashed) and set aside ([`set_aside_stray_logs`]).
fn check_logs_have_topics(
    logs: &LogManager,
    meta_dir: &Path,
    registry: Option<&TopicRegistry>,
) -> Result<()> {
    let mut unknown: Vec<String> = logs
        .all_logs()
        .iter()
        .map(|l| l.topic_partition().topic.to_string())
        .filter(|t| !is_internal(t) && registry.is_none_or(|r| r.get(t).is_none()))
        .collect();
    unknown.sort();
    unknown.dedup();
    if unknown.is_empty() {
        return Ok(());
    }
    if registry.is_none() {
        return Err(Error::Config {
            key: "log.dirs".into(),
            value: logs
                .config()
                .log_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(","),
            reason: format!(
                "the log dirs hold partitions of topics {} but none holds the topic registry ({}); is the dir that \
                 holds it missing from log.dirs?",
                unknown.join(", "),
                topics::REGISTRY_FILE
            ),
        });
    }
    warn!(topics = %unknown.join(","), registry = %meta_dir.join(topics::REGISTRY_FILE).display(),
        "partition dirs of topics the registry does not know (deleted while the broker stopped?) are set aside");
    Ok(())
}

/// Kafka's stray logs: partition logs of a topic the registry does not know (deleted while the broker was down, or
/// a delete that failed half-way) or whose `partition.metadata` names another topic id than the registry's (an
/// older topic of the same name). Each is set aside (its dir renamed `…-stray`, kept on disk, never loaded again),
/// so a topic created later under the name never serves the old records.
fn set_aside_stray_logs(logs: &LogManager, registry: &TopicRegistry) -> Result<()> {
    for log in logs.all_logs() {
        let tp = log.topic_partition();
        if is_internal(&tp.topic) {
            continue;
        }
        let stray = match registry.get(&tp.topic) {
            None => true,
            Some(meta) => {
                !meta.id.is_nil() && !log.topic_id().is_nil() && meta.id != log.topic_id()
            }
        };
        if stray {
            warn!(%tp, log_topic_id = %log.topic_id(), "partition log of a deleted or older topic set aside as stray");
            logs.set_aside_stray_log(tp)?;
        }
    }
    Ok(())
}

impl Broker {
    /// Opens (recovering) the logs and the topic registry and loads committed offsets. Blocking.
    /// `bound` is the listener's actual address, advertised unless `advertised.listeners` is set.
    pub fn open(config: BrokerConfig, bound: SocketAddr) -> Result<Arc<Broker>> {
        config.validate()?;
        let started = std::time::Instant::now();
        let mut lm = LogManagerConfig::default();
        lm.log_dirs = config.log_dirs.clone();
        lm.default_log_config = config.log.clone();
        lm.node_id = config.node_id;
        lm.ignored_dirs = config.reserved_dirs.clone();
        lm.max_open_files = config.log_max_open_files;
        let meta_dir = topics::metadata_dir(&config.log_dirs)?;
        let registry_existed = meta_dir.join(topics::REGISTRY_FILE).exists();
        let logs = Arc::new(LogManager::open(lm)?);
        if meta_dir != config.log_dirs[0] {
            info!(dir = %meta_dir.display(), "topic registry found in a log dir other than the first of log.dirs");
        }
        // Checked before a missing registry is created (opening writes the file).
        let topics = if registry_existed {
            let topics = TopicRegistry::open(&meta_dir)?;
            check_logs_have_topics(&logs, &meta_dir, Some(&topics))?;
            set_aside_stray_logs(&logs, &topics)?;
            topics
        } else {
            check_logs_have_topics(&logs, &meta_dir, None)?;
            TopicRegistry::open(&meta_dir)?
        };
        let (advertised_host, advertised_port) = match &config.advertised {
            // Kafka: an advertised port 0 (an ephemeral listener) is the bound port.
            Some((h, p)) => (
                h.clone(),
                i32::from(if *p == 0 { bound.port() } else { *p }),
            ),
            None => {
                let host = if bound.ip().is_unspecified() {
                    "127.0.0.1".to_string()
                } else {
                    bound.ip().to_string()
                };
                (host, i32::from(bound.port()))
            }
        };
        let max_pid = logs
            .all_logs()
            .iter()
            .map(|l| l.max_producer_id())
            .max()
            .unwrap_or(-1);
        // Ids continue after the durably recorded block, and above any id in the logs (older data dirs).
        let producer_ids = ProducerIdManager::open(&meta_dir, config.node_id, max_pid.max(-1) + 1)?;
        let groups = GroupCoordinator::new(&config);
        let broker = Arc::new(Broker {
            advertised_host,
            advertised_port,
            logs,
            topics,
            groups,
            appended: Notify::new(),
            producer_ids,
            remote_reader: std::sync::OnceLock::new(),
            tiering: std::sync::OnceLock::new(),
            cancel: CancellationToken::new(),
            topic_changes: std::sync::Mutex::new(()),
            config,
        });
        broker.repair_topic_registry();
        broker.apply_topic_configs();
        broker.ensure_consumer_offsets_topic(broker.config.offsets_topic_num_partitions)?;
        broker.register_internal_topic(REMOTE_LOG_METADATA)?;
        broker.groups.load_offsets(&broker)?;
        info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            topics = broker.topics.all().len(),
            "broker state loaded"
        );
        Ok(broker)
    }

    /// The broker config.
    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    /// The local logs.
    pub fn log_manager(&self) -> &Arc<LogManager> {
        &self.logs
    }

    /// The topic registry.
    pub fn topics(&self) -> &TopicRegistry {
        &self.topics
    }

    pub(crate) fn groups(&self) -> &GroupCoordinator {
        &self.groups
    }

    /// Held while topics or partitions are being created.
    pub(crate) fn topic_changes(&self) -> std::sync::MutexGuard<'_, ()> {
        self.topic_changes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Cancelled when the server shuts down.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Host and port given to clients.
    pub fn advertised(&self) -> (&str, i32) {
        (&self.advertised_host, self.advertised_port)
    }

    /// Installs the reader that serves fetches below the local log start (once; later calls return false).
    pub fn set_remote_log_reader(&self, reader: Arc<dyn RemoteLogReader>) -> bool {
        self.remote_reader.set(reader).is_ok()
    }

    /// Installs running tiered storage: topic config changes go through its rules and reach its
    /// RemoteLogManager, DeleteTopics deletes remote data, ListOffsets looks into remote segments. `false` if
    /// one was already installed. Call it before serving.
    pub fn set_tiering(&self, tiering: Arc<Tiering>) -> bool {
        self.tiering.set(tiering).is_ok()
    }

    /// The installed tiered storage, if tiering is on.
    pub fn tiering(&self) -> Option<&Arc<Tiering>> {
        self.tiering.get()
    }

    /// Validates a topic's configs: each key and value, the log config as a whole, the change from `old`
    /// (`None` on creation) and the tiering rules. Returns the log config and what tiering must do.
    pub fn check_topic_configs(
        &self,
        name: &str,
        old: Option<&BTreeMap<String, String>>,
        new: &BTreeMap<String, String>,
    ) -> Result<(LogConfig, ConfigChangeAction)> {
        let internal = is_internal(name);
        let cfg = self.topic_log_config(name, new)?;
        if internal && cfg.remote_storage_enable {
            return Err(Error::ConfigRule {
                topic: name.into(),
                reason: "internal topics are never tiered".into(),
            });
        }
        // The old overrides were valid when set; broker defaults may have changed since.
        let old_cfg = old.and_then(|o| self.topic_log_config(name, o).ok());
        if let Some(old_cfg) = &old_cfg {
            cfg.validate_change(old_cfg)?;
        }
        // The tiering rules see the effective remote.storage.enable (log.remote.storage.enable as default).
        let effective = |m: &BTreeMap<String, String>| {
            let mut m = m.clone();
            if self.config.log.remote_storage_enable && !internal {
                m.entry("remote.storage.enable".into())
                    .or_insert_with(|| "true".into());
            }
            m
        };
        let old = old.map(effective);
        let was_on = old_cfg.is_some_and(|c| c.remote_storage_enable);
        if !was_on
            && cfg.remote_storage_enable
            && self
                .tiering()
                .is_some_and(|t| t.remote_delete_pending(name))
        {
            return Err(Error::ConfigRule {
                topic: name.into(),
                reason: "its remote data is still being deleted after remote.storage.enable was turned off; \
                         turn it on again once that finished"
                    .into(),
            });
        }
        let action = tiered::check_topic_config(
            self.tiering().map(|t| &**t),
            name,
            old.as_ref(),
            &effective(new),
        )?;
        Ok((cfg, action))
    }

    /// A topic's log config: broker defaults with its overrides; internal topics ignore the broker default of
    /// `remote.storage.enable`.
    pub fn topic_log_config(
        &self,
        name: &str,
        overrides: &BTreeMap<String, String>,
    ) -> Result<LogConfig> {
        if name == CONSUMER_OFFSETS {
            // Compacted, as in Kafka: retention never removes the latest commit of a key; the offset store
            // compacts it by rewriting (group/offsets.rs). Only this topic may say `compact`.
            let mut defaults = self.config.log.clone();
            defaults.remote_storage_enable = false;
            defaults.cleanup_policy = strata_storage::CleanupPolicy::Compact;
            let mut overrides = overrides.clone();
            if overrides
                .get("cleanup.policy")
                .is_some_and(|v| v.trim() == "compact")
            {
                overrides.remove("cleanup.policy");
            }
            return topic_config::log_config(&defaults, &overrides);
        }
        if is_internal(name) && self.config.log.remote_storage_enable {
            let mut defaults = self.config.log.clone();
            defaults.remote_storage_enable = false;
            return topic_config::log_config(&defaults, overrides);
        }
        topic_config::log_config(&self.config.log, overrides)
    }

    pub(crate) fn remote_log_reader(&self) -> Option<&Arc<dyn RemoteLogReader>> {
        self.remote_reader.get()
    }

    /// Wakes every fetch waiting for new data.
    pub fn notify_appended(&self) {
        self.appended.notify_waiters();
    }

    pub(crate) fn appended(&self) -> &Notify {
        &self.appended
    }

    /// A producer id never handed out before, also across crashes (see [`crate::producer_ids`]). Blocking when a
    /// new block must be recorded.
    pub fn allocate_producer_id(&self) -> Result<i64> {
        self.producer_ids.generate()
    }

    /// The log of a known topic's partition, created if the registry has it but the disk does not.
    pub fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>> {
        let tp = TopicPartition::new(topic, partition);
        if let Some(log) = self.logs.get_log(&tp) {
            return Ok(log);
        }
        let meta = match self.topics.get(topic) {
            Some(m) => m,
            None if topic == REMOTE_LOG_METADATA => {
                self.register_internal_topic(topic)?;
                self.topics
                    .get(topic)
                    .ok_or_else(|| Error::UnknownTopicOrPartition(tp.to_string()))?
            }
            None => return Err(Error::UnknownTopicOrPartition(tp.to_string())),
        };
        // The metadata plane owns its topic's logs (and their config): never create them on its behalf.
        if partition < 0 || partition >= meta.partitions || topic == REMOTE_LOG_METADATA {
            return Err(Error::UnknownTopicOrPartition(tp.to_string()));
        }
        let cfg = self.topic_log_config(topic, &meta.configs)?;
        Ok(self.logs.get_or_create_log(&tp, meta.id, cfg)?)
    }

    /// Creates one topic (its logs, then the registry entry), outside the client partition limits: for
    /// internal topics and embedding. Blocking.
    pub fn create_topic(
        &self,
        name: &str,
        partitions: i32,
        configs: BTreeMap<String, String>,
    ) -> Result<TopicMeta> {
        let new = crate::topic_create::NewTopic {
            name: name.to_string(),
            partitions,
            configs,
        };
        self.create_topics_checked(vec![new], false, false)
            .pop()
            .unwrap_or(Err(Error::ShuttingDown))
    }

    /// Deletes a topic and its logs. Blocking.
    pub fn delete_topic(&self, name: &str) -> Result<TopicMeta> {
        let meta = self
            .topics
            .get(name)
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        if meta.internal {
            return Err(Error::InternalTopic(name.into()));
        }
        // Remote data first, while the logs still name the partitions and their topic id: its deletion is
        // recorded now and runs in the background (retried until done, also across restarts).
        if let Some(t) = self.tiering() {
            t.delete_topic_blocking(name)?;
        }
        let meta = self.topics.remove(name)?;
        for p in 0..meta.partitions {
            let tp = TopicPartition::new(name, p);
            if self.logs.get_log(&tp).is_some() {
                self.logs.delete_log(&tp)?;
            }
        }
        // Like Kafka, committed offsets of a deleted topic go with it: a recreated topic starts clean.
        self.groups.delete_topic_offsets(self, name)?;
        info!(topic = name, "topic deleted");
        Ok(meta)
    }

    /// Raises a topic's partition count (within the partition limits). Blocking.
    pub fn create_partitions(&self, name: &str, count: i32, validate_only: bool) -> Result<()> {
        self.create_partitions_batch(vec![(name.to_string(), count)], validate_only)
            .pop()
            .unwrap_or(Err(Error::ShuttingDown))
    }

    /// Replaces a topic's config overrides (validated first) and applies them to its open logs. Blocking.
    pub fn set_topic_configs(
        &self,
        name: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<()> {
        let meta = self
            .topics
            .get(name)
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        let (cfg, action) = self.check_topic_configs(name, Some(&meta.configs), &configs)?;
        if validate_only {
            return Ok(());
        }
        self.topics.update(name, |m| {
            m.configs = configs.clone();
            Ok(())
        })?;
        for p in 0..meta.partitions {
            if let Some(log) = self.logs.get_log(&TopicPartition::new(name, p)) {
                log.update_config(cfg.clone())?;
            }
        }
        if let Some(t) = self.tiering() {
            t.topic_config_applied(name, &configs, cfg.remote_storage_enable, action);
        }
        Ok(())
    }

    /// The log manager recovers logs with the broker defaults; topic overrides come from the registry. A topic
    /// whose overrides no longer apply keeps the defaults (a WARN names it); the others are not held up.
    fn apply_topic_configs(&self) {
        let mut logs: BTreeMap<String, Vec<Arc<UnifiedLog>>> = BTreeMap::new();
        for l in self.logs.all_logs() {
            logs.entry(l.topic_partition().topic.to_string())
                .or_default()
                .push(l);
        }
        for (name, meta) in self.topics.all() {
            if name == REMOTE_LOG_METADATA {
                continue; // configured by the metadata plane
            }
            let applied = self.topic_log_config(&name, &meta.configs).and_then(|cfg| {
                logs.remove(&name)
                    .unwrap_or_default()
                    .iter()
                    .filter(|l| l.topic_partition().partition < meta.partitions)
                    .try_for_each(|log| log.update_config(cfg.clone()).map_err(Error::from))
            });
            if let Err(e) = applied {
                warn!(topic = %name, error = %e, "the topic's registry configs cannot be applied; it runs with the broker defaults");
            }
        }
    }

    /// Creates `__consumer_offsets` if absent, with Kafka's `cleanup.policy=compact` override (also added to the
    /// registry of a data dir written before the topic was compacted).
    fn ensure_consumer_offsets_topic(&self, partitions: i32) -> Result<()> {
        let name = CONSUMER_OFFSETS;
        self.register_internal_topic(name)?;
        let compact = || BTreeMap::from([("cleanup.policy".to_string(), "compact".to_string())]);
        match self.topics.get(name) {
            None => {
                self.create_topic(name, partitions, compact())?;
            }
            Some(meta) if !meta.configs.contains_key("cleanup.policy") => {
                // Only the registry needs it: `topic_log_config` makes this topic compacted either way, and
                // `apply_topic_configs` already gave its logs that config.
                self.topics.update(name, |m| {
                    m.configs.extend(compact());
                    Ok(())
                })?;
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Hook for internal topics written by other components (e.g. `__remote_log_metadata` by the metadata
    /// plane): if logs of `name` exist in the log manager and the registry does not know the topic, it is
    /// registered as internal with the logs' topic id and partition count, so Metadata lists it and Fetch
    /// serves it. Call it again after the component has created its logs. Idempotent.
    pub fn register_internal_topic(&self, name: &str) -> Result<()> {
        let logs: Vec<_> = self
            .logs
            .all_logs()
            .into_iter()
            .filter(|l| l.topic_partition().topic == name)
            .collect();
        let Some(first) = logs.first() else {
            return Ok(());
        };
        let partitions = logs
            .iter()
            .map(|l| l.topic_partition().partition)
            .max()
            .unwrap_or(0)
            + 1;
        match self.topics.get(name) {
            Some(m) if m.partitions >= partitions => Ok(()),
            Some(_) => self
                .topics
                .update(name, |m| {
                    m.partitions = partitions;
                    Ok(())
                })
                .map(|_| ()),
            None => {
                let meta = TopicMeta {
                    id: first.topic_id(),
                    partitions,
                    configs: BTreeMap::new(),
                    internal: true,
                };
                self.topics.create(name, meta).or_else(|e| match e {
                    Error::TopicExists(_) => Ok(()),
                    e => Err(e),
                })
            }
        }
    }

    /// One retention pass (called every `log.retention.check.interval.ms`). Blocking.
    pub fn run_retention(&self) -> Result<()> {
        Ok(self.logs.run_retention(now_ms())?)
    }

    /// Flushes logs due by flush.ms and writes checkpoints. Blocking.
    pub fn flush_and_checkpoint(&self) -> Result<()> {
        Ok(self.logs.flush_dirty_and_checkpoint(now_ms())?)
    }

    /// Flushes everything and writes the clean-shutdown marker. Blocking; later appends fail.
    pub fn shutdown(&self) -> Result<()> {
        self.cancel.cancel();
        self.logs.shutdown()?;
        let offline = self.logs.offline_log_dirs();
        if offline.is_empty() {
            info!("logs flushed; clean shutdown marker written");
        } else {
            warn!(dirs = ?offline, "logs flushed; offline log dirs were not marked clean and are recovered at the next start");
        }
        Ok(())
    }
}

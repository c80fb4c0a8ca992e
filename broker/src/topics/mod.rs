//! Topics: the persistent registry ([`registry`]) and the component that owns every change to a topic
//! ([`TopicManager`]: create, delete, partitions, configs, the logs of a known partition). It is handed the log
//! manager and, when tiering is on, the [`TieringHooks`]; it knows nothing above it (committed offsets of a
//! deleted topic are the group coordinator's, removed by the broker after [`TopicManager::delete_topic`]).

pub mod adopt;
pub mod cleaner;
mod create;
pub mod dynamic;
pub mod registry;

use parking_lot::{Mutex, MutexGuard, RwLock};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata_storage::{LogConfig, LogManager, TopicPartition, UnifiedLog};
use strata_tiering::rlm::ConfigChangeAction;
use tracing::{info, warn};

pub use create::NewTopic;
pub use dynamic::{DynamicConfigs, Scope, DYNAMIC_CONFIG_FILE};
pub use registry::{
    colliding, metadata_dir, validate_name, TopicMeta, TopicRegistry, CONSUMER_OFFSETS,
    REGISTRY_FILE, REMOTE_LOG_METADATA, TRANSACTION_STATE,
};

use crate::config::topic;
use crate::config::BrokerConfig;
use crate::error::{Error, Result};
use crate::remote::hooks::{check_tiering_rules, TieringHooks};

/// Whether `name` is one of the internal topics (`__consumer_offsets`, `__transaction_state`,
/// `__remote_log_metadata`).
pub fn is_internal(name: &str) -> bool {
    name == CONSUMER_OFFSETS || name == TRANSACTION_STATE || name == REMOTE_LOG_METADATA
}

/// Opens the topic registry of `logs` (opened already): the metadata dir's `strata-topics.json`, created when
/// absent. Partition logs of topics the registry does not know: with no registry anywhere in `log.dirs`, start-up
/// is refused (serving a partial view — topics missing, auto-create colliding with their dirs — would be worse
/// than stopping; the dir holding the registry was probably left out of `log.dirs`); with a registry they are
/// reported (a topic deleted while the broker crashed) and set aside ([`set_aside_stray_logs`]). A log dir Apache
/// Kafka wrote (no registry, Kafka's `__cluster_metadata-0`) is adopted ([`adopt`]). Blocking.
/// Returns the registry, the metadata dir and, for an adopted Kafka dir, the next producer id Kafka's controller
/// would have handed out.
pub fn open_registry(
    config: &BrokerConfig,
    logs: &LogManager,
) -> Result<(Arc<TopicRegistry>, PathBuf, Option<i64>)> {
    let meta_dir = metadata_dir(&config.log_dirs)?;
    if meta_dir != config.log_dirs[0] {
        info!(dir = %meta_dir.display(), "topic registry found in a log dir other than the first of log.dirs");
    }
    // Checked before a missing registry is created (opening writes the file).
    let mut next_producer_id = None;
    let registry = if meta_dir.join(REGISTRY_FILE).exists() {
        let registry = TopicRegistry::open(&meta_dir)?;
        check_logs_have_topics(logs, &meta_dir, Some(&registry))?;
        set_aside_stray_logs(logs, &registry)?;
        registry
    } else if let Some(kafka_metadata) = config
        .log_dirs
        .iter()
        .find_map(|d| adopt::metadata_log_dir(d))
    {
        let (topics, next) = adopt::adopt(logs, &meta_dir, &kafka_metadata)?;
        next_producer_id = next;
        let registry =
            TopicRegistry::create_with(&meta_dir, adopt::kafka_cluster_id(&meta_dir), topics)?;
        check_logs_have_topics(logs, &meta_dir, Some(&registry))?;
        set_aside_stray_logs(logs, &registry)?;
        registry
    } else {
        check_logs_have_topics(logs, &meta_dir, None)?;
        TopicRegistry::open(&meta_dir)?
    };
    Ok((Arc::new(registry), meta_dir, next_producer_id))
}

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
        let dirs = logs
            .config()
            .log_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(",");
        let reason = format!(
            "the log dirs hold partitions of topics {} but none holds the topic registry ({}); is the dir that \
             holds it missing from log.dirs?",
            unknown.join(", "),
            REGISTRY_FILE
        );
        return Err(Error::config("log.dirs".into(), dirs, reason));
    }
    warn!(topics = %unknown.join(","), registry = %meta_dir.join(REGISTRY_FILE).display(),
        "partition dirs of topics the registry does not know (deleted while the broker stopped, or an interrupted CreateTopics?): set aside as stray, empty ones removed");
    Ok(())
}

/// Kafka's stray logs: partition logs of a topic the registry does not know (deleted while the broker was down, or
/// a delete that failed half-way) or whose `partition.metadata` names another topic id than the registry's (an
/// older topic of the same name). Each is set aside (its dir renamed `…-stray`, kept on disk, never loaded again;
/// one WARN naming the dir), so a topic created later under the name never serves the old records. An empty log of
/// a topic the registry does not know (a CreateTopics interrupted before the topic was registered, or an empty
/// partition of a deleted topic) holds nothing to keep: it is deleted as a deleted topic's (renamed `-delete`,
/// removed in the background), with one line per topic.
fn set_aside_stray_logs(logs: &LogManager, registry: &TopicRegistry) -> Result<()> {
    let mut empty: BTreeMap<String, Vec<TopicPartition>> = BTreeMap::new();
    for log in logs.all_logs() {
        let tp = log.topic_partition();
        if is_internal(&tp.topic) {
            continue;
        }
        let stray = match registry.get(&tp.topic) {
            None if log.log_end_offset() == 0 => {
                empty
                    .entry(tp.topic.to_string())
                    .or_default()
                    .push(tp.clone());
                continue;
            }
            None => true,
            Some(meta) => {
                !meta.id.is_nil() && !log.topic_id().is_nil() && meta.id != log.topic_id()
            }
        };
        if stray {
            let aside = logs.set_aside_stray_log(tp)?;
            warn!(%tp, log_topic_id = %log.topic_id(), aside = %aside.display(),
                "partition log of a deleted or older topic set aside as stray (kept, not loaded)");
        }
    }
    for (topic, tps) in empty {
        logs.delete_logs(&tps)?;
        info!(%topic, partitions = tps.len(),
            "removing the empty partition dirs of a topic the registry does not know (an interrupted CreateTopics?)");
    }
    Ok(())
}

/// Internal topics written by other components (e.g. `__remote_log_metadata` by the metadata plane): if logs of
/// `name` exist and the registry does not know the topic, it is registered as internal with the logs' topic id
/// and partition count, so Metadata lists it and Fetch serves it. Idempotent. Blocking.
pub fn register_internal_topic(
    registry: &TopicRegistry,
    logs: &LogManager,
    name: &str,
) -> Result<()> {
    let logs: Vec<_> = logs
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
    match registry.get(name) {
        Some(m) if m.partitions >= partitions => Ok(()),
        Some(_) => registry
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
            registry.create(name, meta).or_else(|e| match e {
                Error::TopicExists(_) => Ok(()),
                e => Err(e),
            })
        }
    }
}

/// A topic's log config over the broker log defaults `base`: its overrides; `__consumer_offsets` and
/// `__transaction_state` compacted; internal and compacted topics never tiered by the broker default.
fn topic_log_config_over(
    base: &LogConfig,
    name: &str,
    overrides: &BTreeMap<String, String>,
) -> Result<LogConfig> {
    if name == CONSUMER_OFFSETS || name == TRANSACTION_STATE {
        // Compacted, as in Kafka: retention never removes the latest record of a key (a commit, a
        // transactional id's state); the log cleaner compacts them.
        let mut defaults = base.clone();
        defaults.remote_storage_enable = false;
        defaults.cleanup_policy = strata_storage::CleanupPolicy::Compact;
        let mut overrides = overrides.clone();
        if overrides
            .get("cleanup.policy")
            .is_some_and(|v| v.trim() == "compact")
        {
            overrides.remove("cleanup.policy");
        }
        return topic::log_config(&defaults, &overrides);
    }
    // `log.remote.storage.enable` tiers new topics by default, but not internal or compacted ones (Kafka
    // tiers no compacted topic; asking for both is refused by the log config's rules).
    let compacts = overrides
        .get("cleanup.policy")
        .map_or(Some(base.cleanup_policy), |p| p.parse().ok())
        .is_some_and(|p: strata_storage::CleanupPolicy| p.compacts());
    if base.remote_storage_enable
        && (is_internal(name) || (compacts && !overrides.contains_key("remote.storage.enable")))
    {
        let mut defaults = base.clone();
        defaults.remote_storage_enable = false;
        return topic::log_config(&defaults, overrides);
    }
    topic::log_config(base, overrides)
}

/// Every change to a topic, and the log of a known partition. See the [module docs](self).
pub struct TopicManager {
    config: Arc<BrokerConfig>,
    logs: Arc<LogManager>,
    registry: Arc<TopicRegistry>,
    tiering: Option<Arc<dyn TieringHooks>>,
    cleaner: Option<Arc<strata_storage::LogCleaner>>,
    /// Serializes topic and partition creation (checks, limits, logs and the registry write of one request)
    /// and changes of the dynamic broker configs.
    changes: Mutex<()>,
    /// The metadata dir (the dynamic broker configs' file).
    meta_dir: PathBuf,
    /// The dynamic broker configs and the log defaults they make of the static ones.
    dynamic: RwLock<(DynamicConfigs, Arc<LogConfig>)>,
    /// The running components that take dynamic broker configs ([`TopicManager::add_reconfigurable`]).
    reconfigurables: RwLock<Vec<Arc<dyn dynamic::Reconfigurable>>>,
    /// Woken when a deletion leaves partition dirs to remove (the server's background task waits on it).
    deleted_dirs: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for TopicManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicManager")
            .field("tiered", &self.tiering.is_some())
            .finish_non_exhaustive()
    }
}

impl TopicManager {
    /// The topic component over `logs` and `registry` (see [`open_registry`]), with tiering's hooks when it runs.
    /// Brings the registry and the disk in line (missing partitions, topic config overrides on the recovered
    /// logs), creates `__consumer_offsets` when absent and lists `__remote_log_metadata`. The dynamic broker
    /// configs of `meta_dir` apply (ignored with a WARN when they no longer fit the static config). Blocking.
    pub fn open(
        config: Arc<BrokerConfig>,
        logs: Arc<LogManager>,
        registry: Arc<TopicRegistry>,
        meta_dir: PathBuf,
        tiering: Option<Arc<dyn TieringHooks>>,
        cleaner: Option<Arc<strata_storage::LogCleaner>>,
    ) -> Result<TopicManager> {
        let dynamic = DynamicConfigs::load(&meta_dir)?;
        let defaults = match dynamic.log_defaults(&config.log) {
            Ok(d) => d,
            Err(e) => {
                warn!(error = %e, file = %meta_dir.join(DYNAMIC_CONFIG_FILE).display(),
                    "the dynamic broker configs do not fit the static config; the static log defaults apply");
                config.log.clone()
            }
        };
        let topics = TopicManager {
            config,
            logs,
            registry,
            tiering,
            cleaner,
            changes: Mutex::new(()),
            meta_dir,
            dynamic: RwLock::new((dynamic, Arc::new(defaults))),
            reconfigurables: RwLock::new(Vec::new()),
            deleted_dirs: Arc::new(tokio::sync::Notify::new()),
        };
        topics.repair_topic_registry();
        topics.apply_topic_configs();
        topics.ensure_consumer_offsets_topic(topics.config.offsets_topic_num_partitions)?;
        topics.register_internal_topic(REMOTE_LOG_METADATA)?;
        topics.register_internal_topic(TRANSACTION_STATE)?;
        Ok(topics)
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
    pub fn registry(&self) -> &TopicRegistry {
        &self.registry
    }

    /// Tiered storage, when it runs.
    pub fn tiering(&self) -> Option<&Arc<dyn TieringHooks>> {
        self.tiering.as_ref()
    }

    /// Held while topics or partitions are being created.
    fn topic_changes(&self) -> MutexGuard<'_, ()> {
        self.changes.lock()
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
            return Err(Error::config_rule(
                name.into(),
                "internal topics are never tiered".into(),
            ));
        }
        // The old overrides were valid when set; broker defaults may have changed since.
        let old_cfg = old.and_then(|o| self.topic_log_config(name, o).ok());
        if let Some(old_cfg) = &old_cfg {
            cfg.validate_change(old_cfg)?;
        }
        // The tiering rules see the effective remote.storage.enable (log.remote.storage.enable as default).
        let effective = |m: &BTreeMap<String, String>, remote: bool| {
            let mut m = m.clone();
            if remote && !internal {
                m.entry("remote.storage.enable".into())
                    .or_insert_with(|| "true".into());
            }
            m
        };
        let old =
            old.map(|o| effective(o, old_cfg.as_ref().is_some_and(|c| c.remote_storage_enable)));
        let was_on = old_cfg.is_some_and(|c| c.remote_storage_enable);
        if !was_on
            && cfg.remote_storage_enable
            && self
                .tiering
                .as_ref()
                .is_some_and(|t| t.remote_delete_pending(name))
        {
            let reason = "its remote data is still being deleted after remote.storage.enable was turned off; \
                          turn it on again once that finished";
            return Err(Error::config_rule(name.into(), reason.into()));
        }
        let action = check_tiering_rules(
            self.tiering.is_some(),
            name,
            old.as_ref(),
            &effective(new, cfg.remote_storage_enable),
        )?;
        Ok((cfg, action))
    }

    /// A topic's log config: broker defaults (static, with the dynamic broker configs) with its overrides;
    /// internal topics ignore the broker default of `remote.storage.enable`.
    pub fn topic_log_config(
        &self,
        name: &str,
        overrides: &BTreeMap<String, String>,
    ) -> Result<LogConfig> {
        topic_log_config_over(&self.log_defaults(), name, overrides)
    }

    /// The log defaults every topic without its own override runs with: the static config's, with the dynamic
    /// broker configs applied.
    pub fn log_defaults(&self) -> Arc<LogConfig> {
        self.dynamic.read().1.clone()
    }

    /// The dynamic broker configs set.
    pub fn dynamic_configs(&self) -> DynamicConfigs {
        self.dynamic.read().0.clone()
    }

    /// Registers a running component for its dynamic broker configs and applies the ones set now (kept across
    /// restarts); one that no longer fits is logged and the component keeps its static values.
    pub fn add_reconfigurable(&self, r: Arc<dyn dynamic::Reconfigurable>) {
        let values = self.dynamic_configs().values_of(r.keys());
        if !values.is_empty() {
            if let Err(e) = r.reconfigure(&values) {
                warn!(error = %e, "a dynamic broker config does not fit; the static value applies");
            }
        }
        self.reconfigurables.write().push(r);
    }

    /// Replaces the dynamic broker configs of `scope` with `values` (Kafka's AlterConfigs; IncrementalAlterConfigs
    /// computes the whole set first): keys and values checked ([`dynamic::check_values`]), the resulting log
    /// defaults checked, and every topic whose config was valid must stay valid (else INVALID_CONFIG naming it),
    /// the components' keys checked by them; then persisted, applied to the running components and to the open
    /// logs of every topic without its own override. Nothing changes on
    /// an error or with `validate_only`. Blocking.
    pub fn set_dynamic_configs(
        &self,
        scope: Scope,
        values: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<()> {
        dynamic::check_values(&values)?;
        dynamic::check_scope(scope, &values)?;
        let _changes = self.topic_changes();
        let (current, old_defaults) = {
            let d = self.dynamic.read();
            (d.0.clone(), d.1.clone())
        };
        let next = current.with(scope, values);
        let defaults = next.log_defaults(&self.config.log)?;
        for (name, meta) in self.registry.all() {
            if name == REMOTE_LOG_METADATA
                || topic_log_config_over(&old_defaults, &name, &meta.configs).is_err()
            {
                continue;
            }
            if let Err(e) = topic_log_config_over(&defaults, &name, &meta.configs) {
                return Err(Error::config(
                    "(broker default)".into(),
                    String::new(),
                    format!("topic {name} would no longer have a valid config: {e}"),
                ));
            }
        }
        let components = self.reconfigurables.read().clone();
        for r in &components {
            r.validate(&next.values_of(r.keys()))?;
        }
        if validate_only {
            return Ok(());
        }
        next.persist(&self.meta_dir)?;
        for r in &components {
            if let Err(e) = r.reconfigure(&next.values_of(r.keys())) {
                warn!(error = %e, "applying a dynamic broker config failed");
            }
        }
        *self.dynamic.write() = (next, Arc::new(defaults));
        info!(
            ?scope,
            "dynamic broker configs changed; applying the log defaults to the topics"
        );
        self.apply_topic_configs();
        Ok(())
    }

    /// The log of a known topic's partition, created if the registry has it but the disk does not.
    pub fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>> {
        let tp = TopicPartition::new(topic, partition);
        if let Some(log) = self.logs.get_log(&tp) {
            return Ok(log);
        }
        let meta = match self.registry.get(topic) {
            Some(m) => m,
            None if topic == REMOTE_LOG_METADATA => {
                self.register_internal_topic(topic)?;
                self.registry
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
        let new = NewTopic {
            name: name.to_string(),
            partitions,
            configs,
        };
        self.create_topics_checked(vec![new], false, false)
            .pop()
            .unwrap_or(Err(Error::ShuttingDown))
    }

    /// Whether a client may delete `name`: it exists and is not internal (in memory; call it before asking the
    /// tier to delete its remote data, then [`delete_topic`](Self::delete_topic)).
    pub fn check_deletable(&self, name: &str) -> Result<TopicMeta> {
        let meta = self
            .registry
            .get(name)
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        if meta.internal {
            return Err(Error::InternalTopic(name.into()));
        }
        Ok(meta)
    }

    /// Deletes a topic's local state as Kafka does (the caller recorded the deletion of its remote data first,
    /// through [`TieringHooks::topic_deleted`], while the logs still name the partitions and their topic id): its
    /// registry entry (from then on it is unknown to Metadata, Produce and Fetch), its logs closed and their dirs
    /// renamed `-delete`; the dirs are removed in the background ([`TopicManager::remove_deleted_dirs`], woken
    /// through [`TopicManager::deleted_dirs_waiting`]), so the answer does not wait for the files. The caller
    /// removes what other components keep of it (committed offsets). Blocking.
    pub fn delete_topic(&self, name: &str) -> Result<TopicMeta> {
        self.check_deletable(name)?;
        let meta = self.registry.remove(name)?;
        let tps: Vec<TopicPartition> = (0..meta.partitions)
            .map(|p| TopicPartition::new(name, p))
            .collect();
        let deleted = self.logs.delete_logs(&tps);
        self.deleted_dirs.notify_one();
        for (tp, log_dir) in deleted? {
            // Kafka's updateCheckpoints on deletion: a later partition of the same name is cleaned from its start.
            if let Some(c) = &self.cleaner {
                if let Err(e) = c.forget_log(&log_dir, &tp) {
                    tracing::warn!(%tp, error = %e, "removing a deleted partition from cleaner-offset-checkpoint");
                }
            }
        }
        Ok(meta)
    }

    /// Notified when deleted partitions' dirs wait for [`TopicManager::remove_deleted_dirs`].
    pub fn deleted_dirs_waiting(&self) -> Arc<tokio::sync::Notify> {
        self.deleted_dirs.clone()
    }

    /// Removes the dirs of deleted partitions (renamed `-delete`). Blocking.
    pub fn remove_deleted_dirs(&self) -> usize {
        self.logs.remove_deleted_dirs()
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
            .registry
            .get(name)
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        let (cfg, action) = self.check_topic_configs(name, Some(&meta.configs), &configs)?;
        if validate_only {
            return Ok(());
        }
        self.registry.update(name, |m| {
            m.configs = configs.clone();
            Ok(())
        })?;
        for p in 0..meta.partitions {
            if let Some(log) = self.logs.get_log(&TopicPartition::new(name, p)) {
                log.update_config(cfg.clone())?;
            }
        }
        if let Some(t) = &self.tiering {
            t.topic_config_applied(name, cfg.remote_storage_enable, action);
        }
        Ok(())
    }

    /// See [`register_internal_topic`]: call it again after the component has created its logs.
    pub fn register_internal_topic(&self, name: &str) -> Result<()> {
        register_internal_topic(&self.registry, &self.logs, name)
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
        for (name, meta) in self.registry.all() {
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
    /// registry of a data dir written before the topic was compacted) and `offsets.topic.segment.bytes` segments.
    fn ensure_consumer_offsets_topic(&self, partitions: i32) -> Result<()> {
        let segment = BTreeMap::from([(
            "segment.bytes".to_string(),
            self.config.offsets_topic_segment_bytes.to_string(),
        )]);
        self.ensure_compacted_internal_topic(CONSUMER_OFFSETS, partitions, segment)
    }

    /// Creates `__transaction_state` if absent (the transaction coordinator asks on its first request, as Kafka
    /// creates it): compacted, `transaction.state.log.num.partitions` partitions and
    /// `transaction.state.log.segment.bytes` segments. Blocking.
    pub fn ensure_transaction_state_topic(&self) -> Result<()> {
        let t = &self.config.transaction;
        let segment = BTreeMap::from([(
            "segment.bytes".to_string(),
            t.state_segment_bytes.to_string(),
        )]);
        self.ensure_compacted_internal_topic(TRANSACTION_STATE, t.state_partitions, segment)
    }

    fn ensure_compacted_internal_topic(
        &self,
        name: &str,
        partitions: i32,
        configs: BTreeMap<String, String>,
    ) -> Result<()> {
        self.register_internal_topic(name)?;
        let compact = || BTreeMap::from([("cleanup.policy".to_string(), "compact".to_string())]);
        match self.registry.get(name) {
            None => {
                let mut all = compact();
                all.extend(configs);
                match self.create_topic(name, partitions, all) {
                    Ok(_) | Err(Error::TopicExists(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Some(meta) if !meta.configs.contains_key("cleanup.policy") => {
                // Only the registry needs it: `topic_log_config` makes this topic compacted either way, and
                // `apply_topic_configs` already gave its logs that config.
                self.registry.update(name, |m| {
                    m.configs.extend(compact());
                    Ok(())
                })?;
            }
            Some(_) => {}
        }
        Ok(())
    }
}

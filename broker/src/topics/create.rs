//! Creating topics and partitions in batches, and repairing the registry at start-up.
//!
//! A request is checked whole before anything is made: each topic on its own (name, partitions, configs), then
//! the partitions the request would add against `max.partitions.per.request` (Kafka's fixed
//! `MAX_PARTITIONS_PER_BATCH`: POLICY_VIOLATION "excessively large number of partitions per request") and
//! against `max.broker.partitions` (KIP-578's name; POLICY_VIOLATION too, as KIP-578's own error code was never
//! adopted). Then each topic's logs are created; a topic whose logs cannot all be made has those it got removed
//! again. Last, the registry is written once for the whole request: a topic is listed only once its partitions
//! exist, and a large request costs one write, not one per topic.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use strata_storage::{LogConfig, TopicPartition};
use strata_tiering::rlm::ConfigChangeAction;
use tracing::{info, warn};
use uuid::Uuid;

use super::registry::{self as topics, TopicMeta, CONSUMER_OFFSETS, REMOTE_LOG_METADATA};
use super::TopicManager;
use crate::error::{Error, Result};

/// One topic a request asks for.
#[derive(Debug, Clone)]
pub struct NewTopic {
    /// Topic name.
    pub name: String,
    /// Partition count (already resolved from -1 / assignments).
    pub partitions: i32,
    /// Config overrides.
    pub configs: BTreeMap<String, String>,
}

/// A topic that passed its own checks and waits for the request-wide ones.
struct Candidate {
    index: usize,
    name: String,
    meta: TopicMeta,
    cfg: LogConfig,
    action: ConfigChangeAction,
}

/// One result per entry of a request, filled in as the checks go.
type Answers<T> = Vec<Option<Result<T>>>;

fn finish<T>(answers: Answers<T>) -> Vec<Result<T>> {
    answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err(Error::ShuttingDown)))
        .collect()
}

impl TopicManager {
    /// Creates `topics` (one result per entry, in order), or with `validate_only` checks them all and creates
    /// nothing (the metas returned then carry a nil id). Client requests come here, so the partition limits
    /// apply. Blocking.
    pub fn create_topics(
        &self,
        topics: Vec<NewTopic>,
        validate_only: bool,
    ) -> Vec<Result<TopicMeta>> {
        self.create_topics_checked(topics, validate_only, true)
    }

    pub(crate) fn create_topics_checked(
        &self,
        topics: Vec<NewTopic>,
        validate_only: bool,
        enforce_limits: bool,
    ) -> Vec<Result<TopicMeta>> {
        let _serial = self.topic_changes();
        let mut answers: Answers<TopicMeta> = topics.iter().map(|_| None).collect();
        let mut candidates = self.candidates(topics, validate_only, &mut answers);
        if enforce_limits {
            let asked = candidates
                .iter()
                .map(|c| i64::from(c.meta.partitions))
                .sum();
            if let Err(e) = self.check_partition_limits(asked) {
                for c in candidates.drain(..) {
                    answers[c.index] = Some(Err(Error::PartitionLimit(e.clone())));
                }
            }
        }
        if validate_only {
            for c in candidates {
                answers[c.index] = Some(Ok(c.meta));
            }
            return finish(answers);
        }
        self.make_and_register(candidates, &mut answers);
        finish(answers)
    }

    /// The topics that pass their own checks (name free in the registry and in the request, partitions,
    /// configs); the others get their error in `answers`.
    fn candidates(
        &self,
        topics: Vec<NewTopic>,
        validate_only: bool,
        answers: &mut Answers<TopicMeta>,
    ) -> Vec<Candidate> {
        let mut candidates: Vec<Candidate> = Vec::new();
        // Every name taken (registry and this request so far), by its form with '.' and '_' alike: one map
        // instead of a scan of the registry per topic (a request may name thousands).
        let norm = |n: &str| n.replace('.', "_");
        let mut taken: HashMap<String, String> = self
            .registry()
            .all()
            .into_iter()
            .map(|(n, _)| (norm(&n), n))
            .collect();
        for (index, t) in topics.into_iter().enumerate() {
            let checked = match taken.get(&norm(&t.name)) {
                Some(existing) if *existing == t.name && self.registry().get(&t.name).is_none() => {
                    Err(Error::Protocol {
                        api: "CreateTopics".into(),
                        message: format!("topic {} is named more than once in the request", t.name),
                    })
                }
                Some(existing) if *existing == t.name => Err(Error::TopicExists(t.name.clone())),
                Some(existing) => Err(Error::TopicCollision {
                    name: t.name.clone(),
                    existing: existing.clone(),
                }),
                None => self.check_new_topic(&t),
            };
            if checked.is_ok() {
                taken.insert(norm(&t.name), t.name.clone());
            }
            match checked {
                Ok((cfg, action)) => candidates.push(Candidate {
                    index,
                    meta: TopicMeta {
                        id: if validate_only {
                            Uuid::nil()
                        } else {
                            Uuid::new_v4()
                        },
                        partitions: t.partitions,
                        configs: t.configs,
                        internal: t.name == CONSUMER_OFFSETS || t.name == REMOTE_LOG_METADATA,
                    },
                    name: t.name,
                    cfg,
                    action,
                }),
                Err(e) => answers[index] = Some(Err(e)),
            }
        }
        candidates
    }

    /// Makes each candidate's logs (a topic that cannot get all of them gets none and is not registered), then
    /// writes the registry once for every topic made; each topic's answer goes into `answers`.
    fn make_and_register(&self, candidates: Vec<Candidate>, answers: &mut Answers<TopicMeta>) {
        let mut made: Vec<Candidate> = Vec::new();
        for c in candidates {
            match self.make_logs(&c.name, c.meta.id, 0..c.meta.partitions, &c.cfg) {
                Ok(()) => made.push(c),
                Err(e) => answers[c.index] = Some(Err(e)),
            }
        }
        let written = self.registry().apply(|all| {
            for c in &made {
                if all.contains_key(&c.name) {
                    return Err(Error::TopicExists(c.name.clone()));
                }
                all.insert(c.name.clone(), c.meta.clone());
            }
            Ok(())
        });
        if let Err(e) = written {
            warn!(error = %e, topics = made.len(), "writing the topic registry failed; removing the new logs");
            for c in made {
                self.remove_logs(&c.name, 0..c.meta.partitions);
                answers[c.index] = Some(Err(Error::io(
                    format!("registering topic {}", c.name),
                    std::io::Error::other(e.to_string()),
                )));
            }
            return;
        }
        for c in made {
            if let Some(t) = self.tiering() {
                t.topic_config_applied(&c.name, c.cfg.remote_storage_enable, c.action);
            }
            info!(topic = %c.name, partitions = c.meta.partitions, id = %c.meta.id, "topic created");
            answers[c.index] = Some(Ok(c.meta));
        }
    }

    /// The checks of one new topic on its own (its name is known to be free).
    fn check_new_topic(&self, t: &NewTopic) -> Result<(LogConfig, ConfigChangeAction)> {
        topics::validate_name(&t.name)?;
        if t.partitions < 1 {
            return Err(Error::InvalidPartitions(format!(
                "{} partitions for {}: must be at least 1",
                t.partitions, t.name
            )));
        }
        self.check_topic_configs(&t.name, None, &t.configs)
    }

    /// Whether a request adding `asked` partitions fits `max.partitions.per.request` and
    /// `max.broker.partitions`; the error names the numbers and the key.
    fn check_partition_limits(&self, asked: i64) -> Result<(), String> {
        let per_request = self.config().max_partitions_per_request;
        if asked > per_request {
            return Err(format!(
                "excessively large number of partitions per request: {asked} requested, limit {per_request} \
                 (max.partitions.per.request)"
            ));
        }
        let held = self.registry().partition_total();
        let per_broker = self.config().max_broker_partitions;
        if held + asked > per_broker {
            return Err(format!(
                "the broker holds {held} partitions; {asked} more would exceed max.broker.partitions={per_broker}"
            ));
        }
        Ok(())
    }

    /// Creates the logs of `partitions` (not in the registry yet); on a failure removes those it made and
    /// returns the error. A partition dir already there belongs to no registered topic — a creation cut short
    /// before its registry write, or a topic deleted while the broker was down — and is removed first, so old
    /// records never reappear under the new topic (internal topics excepted: their logs are reused).
    fn make_logs(
        &self,
        name: &str,
        id: Uuid,
        partitions: std::ops::Range<i32>,
        cfg: &LogConfig,
    ) -> Result<()> {
        let first = partitions.start;
        let internal = name == CONSUMER_OFFSETS || name == REMOTE_LOG_METADATA;
        // Made durable together below, before the caller writes the registry: one pass of fsyncs, not one
        // round per partition (a 2,000-partition topic otherwise waits on some 8,000 fsyncs in a row).
        let mut new = strata_storage::NewLogs::default();
        for p in partitions {
            let tp = TopicPartition::new(name, p);
            if !internal && self.log_manager().get_log(&tp).is_some() {
                warn!(
                    topic = name,
                    partition = p,
                    "removing a partition dir no registered topic owns before creating it anew"
                );
                if let Err(e) = self.log_manager().delete_log(&tp) {
                    self.remove_logs(name, first..p);
                    return Err(e.into());
                }
            }
            if let Err(e) =
                self.log_manager()
                    .get_or_create_log_deferred(&tp, id, cfg.clone(), &mut new)
            {
                warn!(topic = name, partition = p, error = %e, "creating a partition failed; removing the ones made");
                self.remove_logs(name, first..p);
                return Err(e.into());
            }
        }
        // Only logs made here are removed on failure (an internal topic's reused logs stay).
        let made: Vec<i32> = new
            .partitions()
            .filter(|tp| tp.topic == name)
            .map(|tp| tp.partition)
            .collect();
        if let Err(e) = self.log_manager().sync_new_logs(new) {
            warn!(topic = name, error = %e, "syncing the new partitions failed; removing them");
            for p in made {
                self.remove_logs(name, p..p + 1);
            }
            return Err(e.into());
        }
        Ok(())
    }

    /// Removes the logs of `partitions` that exist (cleanup after a failed creation; failures are logged).
    fn remove_logs(&self, name: &str, partitions: std::ops::Range<i32>) {
        for p in partitions {
            let tp = TopicPartition::new(name, p);
            if self.log_manager().get_log(&tp).is_some() {
                if let Err(e) = self.log_manager().delete_log(&tp) {
                    warn!(topic = name, partition = p, error = %e, "removing a partition of a failed creation failed");
                }
            }
        }
    }

    /// Raises the partition counts of `changes` (name, new count); one result per entry. Checked whole first
    /// (each topic, then the partitions added against the limits), then logs, then one registry write.
    /// Blocking.
    pub fn create_partitions_batch(
        &self,
        changes: Vec<(String, i32)>,
        validate_only: bool,
    ) -> Vec<Result<()>> {
        let _serial = self.topic_changes();
        let mut answers: Answers<()> = changes.iter().map(|_| None).collect();
        // (index, name, meta, new count)
        let mut grow: Vec<(usize, String, TopicMeta, i32)> = Vec::new();
        for (index, (name, count)) in changes.into_iter().enumerate() {
            match self.check_growth(&name, count) {
                Ok(_) if grow.iter().any(|g| g.1 == name) => {
                    answers[index] = Some(Err(Error::Protocol {
                        api: "CreatePartitions".into(),
                        message: format!("topic {name} is named more than once in the request"),
                    }))
                }
                Ok(meta) => grow.push((index, name, meta, count)),
                Err(e) => answers[index] = Some(Err(e)),
            }
        }
        let asked = grow
            .iter()
            .map(|(_, _, m, count)| i64::from(*count) - i64::from(m.partitions))
            .sum();
        if let Err(e) = self.check_partition_limits(asked) {
            for (index, ..) in grow.drain(..) {
                answers[index] = Some(Err(Error::PartitionLimit(e.clone())));
            }
        }
        if validate_only {
            for (index, ..) in grow {
                answers[index] = Some(Ok(()));
            }
            return finish(answers);
        }
        let mut made = Vec::new();
        for (index, name, meta, count) in grow {
            let made_logs = self
                .topic_log_config(&name, &meta.configs)
                .and_then(|cfg| self.make_logs(&name, meta.id, meta.partitions..count, &cfg));
            match made_logs {
                Ok(()) => made.push((index, name, meta, count)),
                Err(e) => answers[index] = Some(Err(e)),
            }
        }
        let written = self.registry().apply(|all| {
            for (_, name, _, count) in &made {
                let m = all
                    .get_mut(name)
                    .ok_or_else(|| Error::UnknownTopicOrPartition(name.clone()))?;
                m.partitions = *count;
            }
            Ok(())
        });
        for (index, name, meta, count) in made {
            answers[index] = Some(match &written {
                Ok(()) => {
                    info!(topic = %name, from = meta.partitions, to = count, "partitions created");
                    Ok(())
                }
                Err(e) => {
                    self.remove_logs(&name, meta.partitions..count);
                    Err(Error::io(
                        format!("registering the new partitions of {name}"),
                        std::io::Error::other(e.to_string()),
                    ))
                }
            });
        }
        finish(answers)
    }

    /// The checks of one CreatePartitions entry on its own.
    fn check_growth(&self, name: &str, count: i32) -> Result<TopicMeta> {
        let meta = self
            .registry()
            .get(name)
            .ok_or_else(|| Error::UnknownTopicOrPartition(name.into()))?;
        if meta.internal {
            return Err(Error::InternalTopic(name.into()));
        }
        if count <= meta.partitions {
            return Err(Error::InvalidPartitions(format!(
                "topic {name} has {} partitions; the new count {count} must be larger",
                meta.partitions
            )));
        }
        Ok(meta)
    }

    /// Start-up repair of registry entries that do not match the disk (a creation cut short by a crash or a
    /// full disk, a hand-edited file). Partitions listed but missing on disk are created, as `log()` would
    /// on first use — unless the registry lists more partitions than `max.broker.partitions` in all, then each
    /// such topic is trimmed to the partitions it has on disk (at least one; creating them all could exhaust
    /// the file descriptors or the disk, which is how such an entry comes about). A topic whose entry cannot be
    /// repaired is reported and left as it is; the others are served. Each repair is a WARN; the registry is
    /// written once.
    pub(crate) fn repair_topic_registry(&self) {
        let over_budget = self.registry().partition_total() > self.config().max_broker_partitions;
        let mut on_disk: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for l in self.log_manager().all_logs() {
            let tp = l.topic_partition();
            on_disk
                .entry(tp.topic.to_string())
                .or_default()
                .insert(tp.partition);
        }
        let mut trim: Vec<(String, i32)> = Vec::new();
        for (name, meta) in self.registry().all() {
            if name == REMOTE_LOG_METADATA {
                continue; // the metadata plane owns its logs
            }
            let disk = on_disk.remove(&name).unwrap_or_default();
            let present = disk.range(0..meta.partitions.max(0)).count();
            let on_disk = disk.last().map_or(0, |p| p + 1);
            let missing = i64::from(meta.partitions.max(0)) - present as i64;
            if meta.partitions >= 1 && missing == 0 {
                continue;
            }
            let keep = if meta.partitions < 1 || over_budget {
                on_disk.max(1)
            } else {
                meta.partitions
            };
            if keep != meta.partitions {
                warn!(topic = %name, listed = meta.partitions, on_disk, kept = keep,
                    max_broker_partitions = self.config().max_broker_partitions,
                    "topic registry lists partitions that do not exist; trimming the entry to the partitions on disk \
                     (the registry lists more partitions than max.broker.partitions, or a count below 1)");
                trim.push((name.clone(), keep));
            }
            let make: Vec<i32> = (0..keep).filter(|p| !disk.contains(p)).collect();
            if make.is_empty() {
                continue;
            }
            warn!(topic = %name, partitions = ?make, "topic registry lists partitions missing on disk; creating them empty");
            let made = self.topic_log_config(&name, &meta.configs).and_then(|cfg| {
                make.iter().try_for_each(|p| {
                    self.log_manager()
                        .get_or_create_log(
                            &TopicPartition::new(name.as_str(), *p),
                            meta.id,
                            cfg.clone(),
                        )
                        .map(|_| ())
                        .map_err(Error::from)
                })
            });
            if let Err(e) = made {
                warn!(topic = %name, error = %e, "could not create the missing partitions; they are created on first use");
            }
        }
        if trim.is_empty() {
            return;
        }
        let written = self.registry().apply(|all| {
            for (name, keep) in &trim {
                if let Some(m) = all.get_mut(name) {
                    m.partitions = *keep;
                }
            }
            Ok(())
        });
        if let Err(e) = written {
            warn!(error = %e, "writing the repaired topic registry failed; the entries stay as they were");
        }
    }
}

//! Creating partition logs: [`LogManager::get_or_create_log`] makes one durable at once; a caller making many
//! (CreateTopics, CreatePartitions) creates them with [`LogManager::get_or_create_log_deferred`] and makes them
//! all durable with one [`LogManager::sync_new_logs`]: the fsyncs of one partition then no longer wait for the
//! next partition's writes, and the parallel ones share the file system's journal commits.
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use uuid::Uuid;

use super::{register, LogManager};
use crate::error::io_err;
use crate::log::{load_log, now_ms, LoadParams, LogDir};
use crate::{checkpoint, fsio, names, Error, LogConfig, Result, TopicPartition, UnifiedLog};

/// How many fsyncs of [`LogManager::sync_new_logs`] run at once: they wait on the disk, not the CPU, and
/// concurrent ones share a journal commit.
const SYNC_THREADS: usize = 8;

/// Partition logs created by [`LogManager::get_or_create_log_deferred`] whose files are not durable yet.
#[derive(Debug, Default)]
pub struct NewLogs {
    /// Each new partition dir with the log dir holding it, and its partition.
    created: Vec<(Arc<LogDir>, PathBuf, TopicPartition)>,
}

impl NewLogs {
    /// How many logs wait for [`LogManager::sync_new_logs`].
    pub fn len(&self) -> usize {
        self.created.len()
    }

    /// The partitions of the logs waiting.
    pub fn partitions(&self) -> impl Iterator<Item = &TopicPartition> {
        self.created.iter().map(|(_, _, tp)| tp)
    }

    /// Whether no log waits.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
    }
}

/// Creates the partition dir of `tp` in `log_dir` with its `partition.metadata`, nothing fsynced (that is
/// [`LogManager::sync_new_logs`]); a failure poisons `log_dir`.
fn create_partition_dir(log_dir: &LogDir, tp: &TopicPartition, topic_id: Uuid) -> Result<PathBuf> {
    let dir = log_dir.path().join(names::partition_dir_name(tp));
    let created = (|| {
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        // Written in place: until the sync pass the dir is not relied on (not in the topic registry), so a
        // torn file is no worse than none, and a tmp + rename would only add a syscall.
        let path = dir.join(names::PARTITION_METADATA);
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(checkpoint::partition_metadata_text(topic_id).as_bytes()))
            .map_err(io_err(&path))
    })();
    if let Err(e) = created {
        log_dir.poison(&e);
        return Err(e);
    }
    Ok(dir)
}

impl LogManager {
    /// The partition's log, created (in the least loaded healthy dir, with `partition.metadata` holding the topic
    /// id) if absent, its files durable on return. For an existing log, `config` replaces its config; a different
    /// non-nil topic id is [`Error::InconsistentTopicId`].
    pub fn get_or_create_log(
        &self,
        tp: &TopicPartition,
        topic_id: Uuid,
        config: LogConfig,
    ) -> Result<Arc<UnifiedLog>> {
        let mut new = NewLogs::default();
        let log = self.get_or_create_log_deferred(tp, topic_id, config, &mut new)?;
        self.sync_new_logs(new)?;
        Ok(log)
    }

    /// [`LogManager::get_or_create_log`] without its fsyncs: a log it creates is added to `new`, and is durable
    /// only once `new` is passed to [`LogManager::sync_new_logs`] (a caller making many partitions syncs them
    /// all in one pass, before anything that relies on them, such as the topic registry, is written). A crash
    /// before that may leave the partition dir incomplete (an empty `partition.metadata`, no segment), which
    /// the registry does not list yet.
    pub fn get_or_create_log_deferred(
        &self,
        tp: &TopicPartition,
        topic_id: Uuid,
        config: LogConfig,
        new: &mut NewLogs,
    ) -> Result<Arc<UnifiedLog>> {
        config.validate()?;
        let _guard = self.create_lock.lock();
        if let Some(log) = self.get_log(tp).filter(|l| {
            // A closed log still listed is one whose delete failed to rename its dir: a new topic's log sets it
            // aside (or fails with the rename's error) instead of refusing forever.
            !(l.is_closed() && l.topic_id() != topic_id)
        }) {
            if !log.topic_id().is_nil() && !topic_id.is_nil() && log.topic_id() != topic_id {
                return Err(Error::InconsistentTopicId {
                    tp: tp.clone(),
                    existing: log.topic_id(),
                    requested: topic_id,
                });
            }
            log.update_config(config)?;
            return Ok(log);
        }
        if self.shut_down.load(Ordering::SeqCst) {
            return Err(Error::Storage {
                dir: self.config.log_dirs[0].clone(),
                reason: "log manager is shut down".into(),
            });
        }
        if self.get_log(tp).is_some() {
            self.rename_away_locked(tp, &names::stray_dir_name(tp), |aside| {
                tracing::warn!(%tp, %topic_id, aside = %aside.display(),
                    "the closed log of a failed delete was set aside as stray before creating the log");
            })?;
        }
        let log_dir = self.next_log_dir()?;
        self.set_aside_leftover_dirs(tp, topic_id)?;
        let dir = create_partition_dir(&log_dir, tp, topic_id)?;
        new.created.push((log_dir.clone(), dir.clone(), tp.clone()));
        let log = Arc::new(load_log(LoadParams {
            tp: tp.clone(),
            topic_id,
            dir,
            config,
            log_dir: log_dir.clone(),
            listeners: self.listeners.clone(),
            clean_shutdown: true,
            sync_dir: false,
            recovery_point: 0,
            log_start_offset: None,
            config_is_authoritative: true,
            now_ms: now_ms(),
            handles: self.handles.clone(),
        })?);
        register(&self.handles, &log);
        tracing::info!(%tp, %topic_id, dir = %log_dir.path().display(), "created log");
        self.logs.write().insert(tp.clone(), log.clone());
        Ok(log)
    }

    /// Kafka's `nextLogDirs`: the healthy dir with the fewest partitions ([`Error::Storage`] if every dir is
    /// offline).
    fn next_log_dir(&self) -> Result<Arc<LogDir>> {
        // Partitions per dir (one dir, the usual case, needs no count: this runs for every partition created,
        // and counting walks every log).
        let mut counts = vec![0usize; self.dirs.len()];
        if self.dirs.len() > 1 {
            let logs = self.logs.read();
            for log in logs.values() {
                if let Some(i) = self.dirs.iter().position(|d| d.path() == log.log_dir()) {
                    counts[i] += 1;
                }
            }
        }
        self.dirs
            .iter()
            .zip(counts)
            .filter(|(d, _)| !d.is_poisoned())
            .min_by_key(|(_, n)| *n)
            .map(|(d, _)| d.clone())
            .ok_or_else(|| Error::Storage {
                dir: self.config.log_dirs[0].clone(),
                reason: "every log dir is offline".into(),
            })
    }

    /// A dir of this partition that no loaded log owns (a delete that failed half-way, a copy by hand) holds
    /// another topic's data, or data of unknown origin: never adopt it — a new topic would serve the old
    /// records. It is renamed aside as stray (kept, never loaded), as Kafka does with a log whose topic id
    /// does not match.
    fn set_aside_leftover_dirs(&self, tp: &TopicPartition, topic_id: Uuid) -> Result<()> {
        for d in &self.dirs {
            let leftover = d.path().join(names::partition_dir_name(tp));
            if leftover.exists() {
                let on_disk =
                    checkpoint::read_partition_metadata(&leftover.join(names::PARTITION_METADATA))
                        .ok()
                        .flatten();
                let aside = d.path().join(names::stray_dir_name(tp));
                std::fs::rename(&leftover, &aside).map_err(io_err(&leftover))?;
                fsio::sync_dir(d.path())?;
                tracing::warn!(%tp, %topic_id, leftover_topic_id = ?on_disk, aside = %aside.display(),
                    "a partition dir no loaded log owns was set aside as stray before creating the log");
            }
        }
        Ok(())
    }

    /// Makes the logs in `new` durable: each one's `partition.metadata` and directory (its entries: the metadata,
    /// the first segment's files), then each log dir holding them (their entries), [`SYNC_THREADS`] fsyncs at a
    /// time. A failed fsync poisons the log dir concerned and is returned; the logs stay listed (the caller
    /// removes them).
    pub fn sync_new_logs(&self, new: NewLogs) -> Result<()> {
        if new.created.is_empty() {
            return Ok(());
        }
        crate::failpoint::crash_point("log.create.before_sync");
        let mut jobs: Vec<(&LogDir, PathBuf)> = Vec::with_capacity(2 * new.created.len());
        for (log_dir, dir, _) in &new.created {
            jobs.push((log_dir, dir.join(names::PARTITION_METADATA)));
            jobs.push((log_dir, dir.clone()));
        }
        sync_poisoning(&jobs)?;
        let mut parents: Vec<(&LogDir, PathBuf)> = Vec::new();
        for (log_dir, ..) in &new.created {
            if !parents.iter().any(|(d, _)| d.path() == log_dir.path()) {
                parents.push((log_dir, log_dir.path().to_path_buf()));
            }
        }
        sync_poisoning(&parents)
    }
}

/// fsyncs every path of `jobs` (files and dirs), [`SYNC_THREADS`] at a time; the first failure poisons its log
/// dir and is returned (the others still run: they are harmless).
fn sync_poisoning(jobs: &[(&LogDir, PathBuf)]) -> Result<()> {
    fsio::sync_paths(jobs.iter().map(|(_, p)| p.as_path()), SYNC_THREADS).map_err(|(i, e)| {
        jobs[i].0.poison(&e);
        e
    })
}

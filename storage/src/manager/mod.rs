//! [`LogManager`]: every partition log across the `log.dirs`, their checkpoints, clean-shutdown markers,
//! retention and flush passes.
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use uuid::Uuid;

use crate::error::io_err;
use crate::handles::{HandleCache, ReleaseHandles};
use crate::log::{load_log, now_ms, LoadParams, LogDir, RollListener, RollListeners};
use crate::names::{
    self, CLEAN_SHUTDOWN_MARKER, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
};
use crate::progress::Progress;

mod create;
use crate::{checkpoint, fsio, Error, LogManagerConfig, Result, TopicPartition, UnifiedLog};
pub use create::NewLogs;

/// All partition logs of the broker. Thread-safe; share it behind an `Arc`.
pub struct LogManager {
    config: LogManagerConfig,
    dirs: Vec<Arc<LogDir>>,
    logs: RwLock<HashMap<TopicPartition, Arc<UnifiedLog>>>,
    listeners: Arc<RollListeners>,
    create_lock: Mutex<()>,
    /// Serialises [`LogManager::write_checkpoints`]: the retention task, the checkpoint task and shutdown all
    /// write the same files through the same temporary names, and the later writer must write the newer values.
    checkpoint_lock: Mutex<()>,
    /// Partition dirs renamed `-delete` by [`LogManager::delete_logs`], waiting for
    /// [`LogManager::remove_deleted_dirs`].
    deleted: Mutex<Vec<PathBuf>>,
    shut_down: AtomicBool,
    /// The open `.lock` file of each dir, locked; emptied (unlocking them) at shutdown.
    dir_locks: Mutex<Vec<std::fs::File>>,
    /// From `meta.properties`.
    cluster_id: String,
    /// Bounds the descriptors and index mappings of every log (`log.max.open.files`).
    handles: Arc<HandleCache>,
}

impl std::fmt::Debug for LogManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogManager")
            .field("log_dirs", &self.config.log_dirs)
            .finish()
    }
}

/// Loads (recovering where needed) the logs of one dir on `threads` threads, as Kafka's
/// `num.recovery.threads.per.data.dir`. The first error fails the whole open.
fn load_in_parallel(
    loads: Vec<LoadParams>,
    threads: usize,
    handles: &HandleCache,
) -> Result<Vec<Arc<UnifiedLog>>> {
    let threads = threads.max(1).min(loads.len().max(1));
    let progress = Progress::new("loading logs", loads.len() as u64);
    let jobs = Mutex::new(loads.into_iter());
    let loaded = Mutex::new(Vec::new());
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let next = jobs.lock().next();
                let Some(params) = next else { break };
                match load_log(params) {
                    Ok(log) => {
                        // Registered at once, so the handle cache may close its files while others load.
                        let log = Arc::new(log);
                        register(handles, &log);
                        loaded.lock().push(log);
                        progress.advance(1);
                    }
                    Err(e) => {
                        failed.lock().get_or_insert(e);
                        // The others stop at their next job.
                        jobs.lock().by_ref().for_each(drop);
                    }
                }
            });
        }
    });
    progress.finish();
    match failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(loaded.into_inner()),
    }
}

/// Creates each log dir if absent and locks it (Kafka's `lockLogDirs`).
fn lock_log_dirs(log_dirs: &[PathBuf]) -> Result<Vec<std::fs::File>> {
    let mut dir_locks = Vec::with_capacity(log_dirs.len());
    for path in log_dirs {
        std::fs::create_dir_all(path).map_err(io_err(path))?;
        dir_locks.push(lock_dir(path)?);
    }
    Ok(dir_locks)
}

/// An offsets checkpoint of a log dir. An unreadable checkpoint is not fatal: without recovery points every
/// segment is recovered, and without log start offsets each log starts at its first segment.
fn read_checkpoint_or_empty(path: &Path) -> BTreeMap<TopicPartition, i64> {
    match checkpoint::read_offsets(path) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!(error = %e, "ignoring unreadable checkpoint");
            BTreeMap::new()
        }
    }
}

/// What [`LogManager::open`] hands every log it loads.
struct Opening<'a> {
    config: &'a LogManagerConfig,
    listeners: &'a Arc<RollListeners>,
    handles: &'a Arc<HandleCache>,
    now: i64,
}

/// One log dir's checkpoints and clean-shutdown marker, as its logs load with them.
struct DirState {
    log_dir: Arc<LogDir>,
    clean: bool,
    recovery_points: BTreeMap<TopicPartition, i64>,
    log_starts: BTreeMap<TopicPartition, i64>,
}

impl Opening<'_> {
    /// Kafka's `loadLogs` for one dir: reads its checkpoints, loads every partition dir in it (adding each to
    /// `logs`; a partition already there is [`Error::Storage`]) and removes its clean-shutdown marker.
    fn load_logs(
        &self,
        path: &Path,
        logs: &mut HashMap<TopicPartition, Option<Arc<UnifiedLog>>>,
    ) -> Result<Arc<LogDir>> {
        let marker = path.join(CLEAN_SHUTDOWN_MARKER);
        let dir = DirState {
            log_dir: Arc::new(LogDir::new(path.to_path_buf())),
            clean: marker.exists(),
            recovery_points: read_checkpoint_or_empty(&path.join(RECOVERY_POINT_CHECKPOINT)),
            log_starts: read_checkpoint_or_empty(&path.join(LOG_START_OFFSET_CHECKPOINT)),
        };
        let mut loads = Vec::new();
        // Stray dirs set aside at an earlier start: one line for them all, not one per dir at every start.
        let mut stray: Vec<String> = Vec::new();
        for entry in std::fs::read_dir(path).map_err(io_err(path))? {
            let entry = entry.map_err(io_err(path))?;
            let Some(tp) = self.partition_of(&entry, &mut stray)? else {
                continue;
            };
            if logs.contains_key(&tp) {
                return Err(Error::Storage {
                    dir: entry.path(),
                    reason: format!("{tp} exists in more than one log dir"),
                });
            }
            loads.push(self.load_params(&dir, tp.clone(), entry.path()));
            logs.insert(tp, None);
        }
        if !stray.is_empty() {
            stray.sort();
            tracing::info!(dir = %path.display(), count = stray.len(), first = %stray[0],
                "stray partition dirs kept aside, not loaded (remove them when their data is not needed)");
        }
        for log in load_in_parallel(
            loads,
            self.config.recovery_threads_per_data_dir,
            self.handles,
        )? {
            logs.insert(log.topic_partition().clone(), Some(log));
        }
        if dir.clean {
            // From now on a crash must be treated as unclean.
            std::fs::remove_file(&marker).map_err(io_err(&marker))?;
            fsio::sync_dir(path)?;
        }
        Ok(dir.log_dir)
    }

    /// The partition of a log dir's entry, or None for what is not loaded: files, a partition dir left from a
    /// deletion (removed here), a stray dir (noted in `stray`), a dir another owner uses, any other dir (warned).
    fn partition_of(
        &self,
        entry: &std::fs::DirEntry,
        stray: &mut Vec<String>,
    ) -> Result<Option<TopicPartition>> {
        let name = entry.file_name().to_string_lossy().into_owned();
        let file_type = entry.file_type().map_err(io_err(entry.path()))?;
        if !file_type.is_dir() {
            return Ok(None);
        }
        if name.ends_with(names::DELETE_DIR_SUFFIX) {
            tracing::info!(dir = %entry.path().display(), "removing partition dir left from a deletion");
            std::fs::remove_dir_all(entry.path()).map_err(io_err(entry.path()))?;
            return Ok(None);
        }
        if name.ends_with(names::STRAY_DIR_SUFFIX) {
            stray.push(name);
            return Ok(None);
        }
        let tp = names::parse_partition_dir(&name);
        if tp.is_none() {
            let path = entry.path();
            let owned_elsewhere = self.config.ignored_dirs.iter().any(|d| {
                d == &path
                    || matches!((d.canonicalize(), path.canonicalize()), (Ok(a), Ok(b)) if a == b)
            });
            if !owned_elsewhere {
                tracing::warn!(dir = %entry.path().display(), "ignoring a directory that is not a partition");
            }
        }
        Ok(tp)
    }

    /// How the partition dir `dir` of `tp` loads: its topic id from `partition.metadata` (nil if unknown), its
    /// topic's config if known and valid (else the default), the dir's checkpoints and marker.
    fn load_params(&self, state: &DirState, tp: TopicPartition, dir: PathBuf) -> LoadParams {
        let topic_id = match checkpoint::read_partition_metadata(
            &dir.join(names::PARTITION_METADATA),
        ) {
            Ok(id) => id.unwrap_or_else(Uuid::nil),
            Err(e) => {
                tracing::warn!(%tp, error = %e, "unreadable partition.metadata; topic id unknown");
                Uuid::nil()
            }
        };
        let topic_config = self
            .config
            .topic_config
            .as_ref()
            .and_then(|f| f(&tp))
            .and_then(|c| match c.validate() {
                Ok(()) => Some(c),
                Err(e) => {
                    tracing::warn!(%tp, error = %e, "invalid topic config at open; loading with the default");
                    None
                }
            });
        let config_is_authoritative = topic_config.is_some();
        LoadParams {
            recovery_point: state.recovery_points.get(&tp).copied().unwrap_or(0),
            log_start_offset: state.log_starts.get(&tp).copied(),
            tp,
            topic_id,
            dir,
            config: topic_config.unwrap_or_else(|| self.config.default_log_config.clone()),
            config_is_authoritative,
            log_dir: state.log_dir.clone(),
            listeners: self.listeners.clone(),
            clean_shutdown: state.clean,
            sync_dir: true,
            now_ms: self.now,
            handles: self.handles.clone(),
        }
    }
}

impl LogManager {
    /// Opens (creating if absent) every log dir and recovers every partition directory found. First locks each
    /// dir's `.lock` (held until shutdown or drop; a dir locked by another manager or process is
    /// [`Error::Storage`] naming it) and checks or writes its `meta.properties` (another node's or cluster's dir
    /// is [`Error::Storage`] naming it). Logs load with
    /// the config from [`LogManagerConfig::topic_config`], else the default log config;
    /// [`LogManager::get_or_create_log`] applies a topic's config to a loaded log. A checkpointed log start
    /// offset below the first local segment is kept unless the topic's config is known and not tiered.
    pub fn open(config: LogManagerConfig) -> Result<LogManager> {
        config.validate()?;
        let listeners = Arc::new(RollListeners::default());
        let handles = HandleCache::new(config.effective_max_open_files());
        // None while the dir's logs load (the key only detects a partition found in two dirs).
        let mut logs: HashMap<TopicPartition, Option<Arc<UnifiedLog>>> = HashMap::new();
        let mut dirs = Vec::new();
        let now = now_ms();
        // Lock every dir before touching any: a second broker on the same dirs fails here. Dropping the files
        // (an error below, or the manager) releases the locks.
        let dir_locks = lock_log_dirs(&config.log_dirs)?;
        let cluster_id = crate::meta_properties::check_and_write(
            &config.log_dirs,
            config.node_id,
            config.cluster_id.as_deref(),
        )?;
        let opening = Opening {
            config: &config,
            listeners: &listeners,
            handles: &handles,
            now,
        };
        for path in &config.log_dirs {
            dirs.push(opening.load_logs(path, &mut logs)?);
        }
        Ok(LogManager {
            config,
            dirs,
            logs: RwLock::new(
                logs.into_iter()
                    .filter_map(|(tp, log)| Some((tp, log?)))
                    .collect(),
            ),
            listeners,
            create_lock: Mutex::new(()),
            checkpoint_lock: Mutex::new(()),
            deleted: Mutex::new(Vec::new()),
            shut_down: AtomicBool::new(false),
            dir_locks: Mutex::new(dir_locks),
            cluster_id,
            handles,
        })
    }

    /// The cluster id from the dirs' `meta.properties` (written on first start: the configured id or a new
    /// random one), for Metadata and DescribeCluster.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// This broker's node id (`node.id`, also in each dir's `meta.properties`).
    pub fn node_id(&self) -> i32 {
        self.config.node_id
    }

    /// The manager's config.
    pub fn config(&self) -> &LogManagerConfig {
        &self.config
    }

    fn logs_snapshot(&self) -> Vec<Arc<UnifiedLog>> {
        let logs = self.logs.read();
        let mut v: Vec<_> = logs.values().cloned().collect();
        v.sort_by(|a, b| a.topic_partition().cmp(b.topic_partition()));
        v
    }

    /// The partition's log, if present.
    pub fn get_log(&self, tp: &TopicPartition) -> Option<Arc<UnifiedLog>> {
        self.logs.read().get(tp).cloned()
    }

    /// Every log, ordered by partition.
    pub fn all_logs(&self) -> Vec<Arc<UnifiedLog>> {
        self.logs_snapshot()
    }

    /// Removes the partition's directory: renamed [`names::delete_dir_name`] (`<topic>-<partition>.<uuid>-delete`,
    /// the topic cut to fit 255 bytes) first, then removed. A missing partition is
    /// [`Error::UnknownTopicOrPartition`]. If the rename fails the log stays listed (closed: nothing more is
    /// appended), so its dir is never taken for a new topic's; a failed removal after the rename is only logged
    /// (the `-delete` dir is removed at the next start).
    pub fn delete_log(&self, tp: &TopicPartition) -> Result<()> {
        self.rename_away(tp, &names::delete_dir_name(tp), |renamed| {
            if let Err(e) = std::fs::remove_dir_all(renamed) {
                tracing::warn!(%tp, dir = %renamed.display(), error = %e,
                    "removing a deleted partition dir failed; it is removed at the next start");
            }
            tracing::info!(%tp, "deleted log");
        })
    }

    /// Deletes the partitions' logs as Kafka's `LogManager.asyncDelete`: each log closed and no longer listed, its
    /// directory renamed [`names::delete_dir_name`] (`<topic>-<p>.<uuid>-delete`; one directory sync per log dir
    /// for all of them), and queued for [`LogManager::remove_deleted_dirs`], which the broker runs in the
    /// background. A `-delete` dir left by a crash or a shutdown is removed at the next start. Partitions without
    /// a log are skipped. Returns each deleted partition with its log dir.
    pub fn delete_logs(&self, tps: &[TopicPartition]) -> Result<Vec<(TopicPartition, PathBuf)>> {
        let _guard = self.create_lock.lock();
        let mut done = Vec::with_capacity(tps.len());
        let mut parents: Vec<PathBuf> = Vec::new();
        let mut renamed_dirs = Vec::with_capacity(tps.len());
        let mut outcome = Ok(());
        for tp in tps {
            let Some(log) = self.get_log(tp) else {
                continue;
            };
            log.mark_closed();
            let parent = log.log_dir().to_path_buf();
            let renamed = parent.join(names::delete_dir_name(tp));
            if let Err(e) = std::fs::rename(log.dir(), &renamed) {
                outcome = Err(io_err(log.dir())(e));
                break;
            }
            self.logs.write().remove(tp);
            if !parents.contains(&parent) {
                parents.push(parent.clone());
            }
            renamed_dirs.push(renamed);
            done.push((tp.clone(), parent));
        }
        // What was renamed is queued even when a later rename failed: those dirs are gone from the logs.
        self.deleted.lock().extend(renamed_dirs);
        for parent in &parents {
            fsio::sync_dir(parent)?;
        }
        outcome.map(|()| done)
    }

    /// Removes the directories [`LogManager::delete_logs`] renamed; the number removed. Blocking (the broker runs
    /// it on a background task). A dir that cannot be removed is logged and left for the next start.
    pub fn remove_deleted_dirs(&self) -> usize {
        let dirs = std::mem::take(&mut *self.deleted.lock());
        let mut removed = 0;
        for dir in &dirs {
            match std::fs::remove_dir_all(dir) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!(dir = %dir.display(), error = %e,
                    "removing a deleted partition dir failed; it is removed at the next start"),
            }
        }
        if !dirs.is_empty() {
            tracing::info!(removed, "removed the dirs of deleted partitions");
        }
        removed
    }

    /// Whether partition dirs renamed by [`LogManager::delete_logs`] wait for removal.
    pub fn has_deleted_dirs(&self) -> bool {
        !self.deleted.lock().is_empty()
    }

    /// Sets the partition's log aside as stray: closed, no longer listed, its directory renamed
    /// [`names::stray_dir_name`] and kept (never loaded again). For a log of a topic that no longer exists, or
    /// whose topic id is not the registry's (Kafka's stray logs).
    /// Returns the dir's new path (the caller reports it).
    pub fn set_aside_stray_log(&self, tp: &TopicPartition) -> Result<PathBuf> {
        let mut aside = PathBuf::new();
        self.rename_away(tp, &names::stray_dir_name(tp), |renamed| {
            aside = renamed.to_path_buf();
        })?;
        Ok(aside)
    }

    fn rename_away(
        &self,
        tp: &TopicPartition,
        new_name: &str,
        then: impl FnOnce(&Path),
    ) -> Result<()> {
        let _guard = self.create_lock.lock();
        self.rename_away_locked(tp, new_name, then)
    }

    /// [`Self::rename_away`] with `create_lock` held by the caller.
    fn rename_away_locked(
        &self,
        tp: &TopicPartition,
        new_name: &str,
        then: impl FnOnce(&Path),
    ) -> Result<()> {
        let log = self
            .get_log(tp)
            .ok_or_else(|| Error::UnknownTopicOrPartition { tp: tp.clone() })?;
        log.mark_closed();
        let parent = log.log_dir().to_path_buf();
        let renamed = parent.join(new_name);
        std::fs::rename(log.dir(), &renamed).map_err(io_err(log.dir()))?;
        self.logs.write().remove(tp);
        fsio::sync_dir(&parent)?;
        then(&renamed);
        Ok(())
    }

    /// One retention pass over every log (the broker calls it every `log.retention.check.interval.ms`). Every log
    /// is visited; the first error is returned.
    pub fn run_retention(&self, now_ms: i64) -> Result<()> {
        if self.shut_down.load(Ordering::SeqCst) {
            // The dirs may belong to another manager now.
            return Ok(());
        }
        let mut first_err = None;
        let mut deleted = 0;
        for log in self.logs_snapshot() {
            log.remove_expired_producers(now_ms, self.config.producer_id_expiration_ms);
            match log.delete_old_segments(now_ms) {
                Ok(n) => deleted += n,
                Err(e) => {
                    tracing::warn!(tp = %log.topic_partition(), error = %e, "retention failed");
                    first_err.get_or_insert(e);
                }
            }
        }
        // Record the moved log start offsets at once: on a tiered partition the local segments are gone and only
        // the checkpoint remembers that the log starts lower (in remote storage).
        if deleted > 0 {
            if let Err(e) = self.write_checkpoints(false) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Flushes logs whose `flush.ms` elapsed; writes the recovery-point and log-start-offset checkpoints.
    pub fn flush_dirty_and_checkpoint(&self, now_ms: i64) -> Result<()> {
        if self.shut_down.load(Ordering::SeqCst) {
            // Shutdown wrote the last checkpoints; the dirs may belong to another manager now.
            return Ok(());
        }
        let mut first_err = None;
        for log in self.logs_snapshot() {
            if let Err(e) = log.maybe_flush_on_timer(now_ms) {
                first_err.get_or_insert(e);
            }
        }
        if let Err(e) = self.write_checkpoints(false) {
            first_err.get_or_insert(e);
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Writes the recovery-point and log-start-offset checkpoints of every healthy dir now (after a DeleteRecords,
    /// so a crash cannot bring deleted records back). A failure takes the dir offline and is returned.
    pub fn checkpoint_now(&self) -> Result<()> {
        self.write_checkpoints(false)
    }

    /// Writes every healthy dir's checkpoints; a no-op once shut down, unless `at_shutdown` (shutdown's own last
    /// write: after it the dirs may belong to another manager).
    fn write_checkpoints(&self, at_shutdown: bool) -> Result<()> {
        let _serialised = self.checkpoint_lock.lock();
        if !at_shutdown && self.shut_down.load(Ordering::SeqCst) {
            return Ok(());
        }
        let logs = self.logs_snapshot();
        for dir in self.dirs.iter().filter(|d| !d.is_poisoned()) {
            let mut rps = BTreeMap::new();
            let mut starts = BTreeMap::new();
            for log in logs.iter().filter(|l| l.log_dir() == dir.path()) {
                rps.insert(log.topic_partition().clone(), log.recovery_point());
                starts.insert(log.topic_partition().clone(), log.log_start_offset());
            }
            let r = checkpoint::write_offsets(&dir.path().join(RECOVERY_POINT_CHECKPOINT), &rps)
                .and_then(|_| {
                    crate::failpoint::crash_point("log_start.checkpoint.before_write");
                    checkpoint::write_offsets(
                        &dir.path().join(LOG_START_OFFSET_CHECKPOINT),
                        &starts,
                    )
                });
            if let Err(e) = r {
                dir.poison(&e);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Flush + checkpoints + `.kafka_cleanshutdown` in each healthy dir, then releases the dirs' `.lock`s (another
    /// manager may open them). Later appends fail; later retention and checkpoint passes do nothing. Idempotent.
    pub fn shutdown(&self) -> Result<()> {
        if self.shut_down.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut first_err = self.close_logs();
        if let Err(e) = self.write_checkpoints(true) {
            first_err.get_or_insert(e);
        }
        for dir in self.dirs.iter().filter(|d| !d.is_poisoned()) {
            // A dir with a failed log is not marked clean, so its next start recovers.
            let failed = first_err.is_some();
            if !failed {
                if let Err(e) = fsio::atomic_write(&dir.path().join(CLEAN_SHUTDOWN_MARKER), b"") {
                    first_err.get_or_insert(e);
                }
            }
        }
        // Another manager (a restarted broker) may now take the dirs.
        self.dir_locks.lock().clear();
        tracing::info!("log manager shut down");
        first_err.map_or(Ok(()), Err)
    }

    /// Closes every log on `num.recovery.threads.per.data.dir` threads per dir (Kafka closes logs in parallel
    /// too: each close may fsync a segment and write a producer snapshot). Returns the first error.
    fn close_logs(&self) -> Option<Error> {
        let logs = self.logs_snapshot();
        let threads = (self.config.recovery_threads_per_data_dir.max(1) * self.dirs.len().max(1))
            .min(logs.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let first_err = Mutex::new(None);
        let progress = Progress::new("closing logs", logs.len() as u64);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    while let Some(log) = logs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = log.close() {
                        tracing::error!(tp = %log.topic_partition(), error = %e, "closing log failed");
                        first_err
                            .lock()
                            .get_or_insert(e);
                    }
                    log.remove_deleted_files_now();
                    progress.advance(1);
                    }
                });
            }
        });
        progress.finish();
        first_err.into_inner()
    }

    /// (open, cap): the segment file descriptors and index mappings open now across every log, and the cap
    /// (`log.max.open.files`) past which idle ones are closed.
    pub fn open_file_handles(&self) -> (usize, usize) {
        (self.handles.open(), self.handles.cap())
    }

    /// Called with every segment that rolls (after it is flushed), from the appending thread: keep it cheap.
    pub fn add_roll_listener(&self, l: RollListener) {
        self.listeners.add(l);
    }

    /// Whether a failed write or fsync took the log dir holding `path` offline.
    pub fn is_log_dir_offline(&self, log_dir: &Path) -> bool {
        self.dirs
            .iter()
            .any(|d| d.path() == log_dir && d.is_poisoned())
    }

    /// The log dirs a failed write or fsync took offline (never marked clean at shutdown).
    pub fn offline_log_dirs(&self) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .filter(|d| d.is_poisoned())
            .map(|d| d.path().to_path_buf())
            .collect()
    }
}

/// Lets the handle sweep close `log`'s idle files.
fn register(handles: &HandleCache, log: &Arc<UnifiedLog>) {
    let holder: Arc<dyn ReleaseHandles> = log.clone();
    handles.register(Arc::downgrade(&holder));
}

/// Opens `<dir>/.lock` and takes an exclusive lock on it (Kafka's `FileLock`); held for the manager's lifetime.
fn lock_dir(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join(names::LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err(&path))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Storage {
            dir: dir.to_path_buf(),
            reason: format!(
                "failed to acquire lock on {}: another broker (process or log manager) is using this log dir",
                path.display()
            ),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::Io { path, source: e }),
    }
}

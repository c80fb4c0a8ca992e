//! Retention (Kafka's `UnifiedLog.deleteOldSegments`) and `DeleteRecords`.
//!
//! A local segment is deleted, oldest first, while it is entirely below the log start offset, or older than the
//! time limit, or not needed to stay within the size limit. The limits are `retention.ms|bytes` on a local-only
//! partition and `local.retention.ms|bytes` (-2 = the total value) on a tiered one. The one local-deletion rule:
//! on a tiered partition (`remote.storage.enable`) a segment may leave the disk only when its last offset is <=
//! the highest offset in remote storage, or when it is entirely below the log start offset. Total retention of a
//! tiered partition (local + remote) is enforced by tiering, which raises the log start offset through
//! [`UnifiedLog::maybe_increment_log_start_offset`].
//! With `remote.log.copy.disable` (KIP-950) a tiered partition's local retention uses `retention.ms|bytes`, is
//! not gated on remote storage, and moves the log start offset as on a local-only partition (Kafka's
//! `remoteLogEnabledAndRemoteCopyEnabled`). With
//! `cleanup.policy=compact` only the log start offset deletes segments (compaction is the log cleaner's,
//! `crate::cleaner`).
//!
//! The pass also forgets producer ids idle for Kafka's default `producer.id.expiration.ms` (1 day).
use super::unified::{LogState, UnifiedLog};
use crate::{producer, Error, Result};

/// Why segments are being deleted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reason {
    All,
    LogStartOnly,
}

impl UnifiedLog {
    /// One retention pass at `now_ms`; returns the number of segments deleted. Also removes `.deleted` files
    /// whose `file.delete.delay.ms` passed.
    pub fn delete_old_segments(&self, now_ms: i64) -> Result<usize> {
        let mut st = self.write_state();
        if st.closed {
            return Ok(0);
        }
        let n = self.delete_segments_locked(&mut st, now_ms, Reason::All)?;
        self.remove_due_files_locked(&mut st, now_ms);
        Ok(n)
    }

    /// Kafka's `removeExpiredProducers`: forgets the state of producers whose last batch's timestamp is
    /// `expiration_ms` (`producer.id.expiration.ms`) or more before `now_ms`, other than those with an open
    /// transaction; the next producer-state snapshot no longer holds them. Returns how many went.
    pub fn remove_expired_producers(&self, now_ms: i64, expiration_ms: i64) -> usize {
        let mut st = self.write_state();
        if st.closed {
            return 0;
        }
        let expired = st.producers.remove_expired(now_ms, expiration_ms);
        if expired > 0 {
            tracing::debug!(tp = %self.topic_partition(), expired, "expired idle producer ids");
        }
        expired
    }

    /// DeleteRecords: moves the log start offset to `offset` (-1 = the high watermark) and deletes the local
    /// segments entirely below it. Above the high watermark is [`Error::OffsetOutOfRange`]. Returns the new log
    /// start offset.
    pub fn delete_records(&self, offset: i64) -> Result<i64> {
        let mut st = self.write_state();
        let hw = st.log_end_offset();
        let offset = if offset == -1 { hw } else { offset };
        if offset < 0 || offset > hw {
            return Err(Error::OffsetOutOfRange {
                tp: self.topic_partition().clone(),
                offset,
                log_start: st.log_start_offset,
                log_end: hw,
            });
        }
        self.advance_log_start_locked(&mut st, offset)?;
        if !st.closed {
            self.delete_segments_locked(&mut st, super::now_ms(), Reason::LogStartOnly)?;
        }
        Ok(st.log_start_offset)
    }

    fn delete_segments_locked(
        &self,
        st: &mut LogState,
        now_ms: i64,
        reason: Reason,
    ) -> Result<usize> {
        let cfg = st.local.config.clone();
        let tiered = cfg.remote_storage_enable;
        // KIP-950: with copying disabled, local retention falls back to the total limits and is not gated on
        // remote storage (Kafka's `remoteLogEnabledAndRemoteCopyEnabled`).
        let gated = cfg.remote_copy_enabled();
        let reason = if cfg.cleanup_policy.deletes() {
            reason
        } else {
            Reason::LogStartOnly
        };
        let (ms, bytes) = if gated {
            (
                cfg.effective_local_retention_ms(),
                cfg.effective_local_retention_bytes(),
            )
        } else {
            (cfg.retention_ms, cfg.retention_bytes)
        };
        let remote_hw = self.highest_offset_in_remote_storage();
        let mut remaining: u64 = st.local.segments.size_in_bytes();
        let bases: Vec<i64> = st.local.segments.base_offsets();
        let leo = st.log_end_offset();
        let mut to_delete = Vec::new();
        for (i, base) in bases.iter().enumerate() {
            let seg = st.local.segments.get(*base).expect("listed above");
            let is_active = i + 1 == bases.len();
            if seg.size_in_bytes() == 0 {
                break;
            }
            let upper = bases.get(i + 1).copied().unwrap_or(leo);
            let below_start = upper <= st.log_start_offset;
            // Tiered with copying on: only segments fully in remote storage, or entirely below the log start
            // offset (DeleteRecords, remote expiry), may go; the active one never (Kafka's
            // `isSegmentEligibleForDeletion`).
            if gated && (is_active || (upper - 1 > remote_hw && !below_start)) {
                break;
            }
            let expired = reason == Reason::All
                && ms >= 0
                && now_ms.saturating_sub(seg.largest_timestamp()) > ms;
            let over_size = reason == Reason::All
                && bytes >= 0
                && remaining.saturating_sub(seg.size_in_bytes()) >= bytes as u64;
            if !(below_start || expired || over_size) {
                break;
            }
            remaining -= seg.size_in_bytes();
            to_delete.push(*base);
        }
        if to_delete.is_empty() {
            if !tiered {
                // A log start offset below the first local segment (loaded before the config was known) is
                // meaningless without remote storage.
                self.clamp_log_start_to_local_locked(st)?;
            }
            return Ok(0);
        }
        if to_delete.len() == bases.len() {
            // Deleting the active segment: roll first so an empty active segment remains at the log end.
            if let Some(r) = self.roll_locked(st, now_ms)? {
                tracing::debug!(
                    base_offset = r.base_offset,
                    "rolled before deleting every segment"
                );
            }
        }
        let delay = cfg.file_delete_delay_ms.min(i64::MAX as u64) as i64;
        for base in &to_delete {
            let mut seg = st.local.segments.remove(*base).expect("listed above");
            let files = seg.rename_to_deleted().map_err(|e| self.poison(e))?;
            crate::failpoint::crash_point("log.retention.after_rename_deleted");
            tracing::info!(tp = %self.topic_partition(), base_offset = base, next_offset = seg.next_offset(),
                size = seg.size_in_bytes(), "deleting segment by retention");
            st.local
                .pending_deletes
                .push((now_ms.saturating_add(delay), files));
        }
        let first = st
            .local
            .segments
            .first_base_offset()
            .expect("active segment remains");
        // Kafka: `if (!remoteLogEnabledAndRemoteCopyEnabled()) maybeIncrementLogStartOffset(localLogStartOffset)`.
        // With copying disabled the total limits deleted these segments, so whatever is older (remote data
        // included) is expired as well.
        if !gated {
            self.advance_log_start_locked(st, first)?;
        }
        producer::delete_snapshots_below(self.dir(), first).map_err(|e| self.poison(e))?;
        self.remove_due_files_locked(st, now_ms);
        Ok(to_delete.len())
    }

    pub(crate) fn remove_due_files_locked(&self, st: &mut LogState, now_ms: i64) {
        st.local.remove_due_files(now_ms);
    }

    /// Removes every pending `.deleted` file now (shutdown, tests).
    pub fn remove_deleted_files_now(&self) {
        let mut st = self.write_state();
        self.remove_due_files_locked(&mut st, i64::MAX);
    }
}

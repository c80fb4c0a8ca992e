//! `strata remote ls` and `strata remote verify`: open the data directory (the `LogManager` and the RLMM
//! replay of `__remote_log_metadata`) and the remote store without starting the broker.
//!
//! The `LogManager` locks each log dir (`.lock`), so these commands run while the broker on that directory is
//! stopped; beside a live broker they fail naming the locked directory.

use std::collections::BTreeSet;
use std::sync::Arc;

use strata_metadata::{
    TopicBasedRemoteLogMetadataManager, TopicIdPartition, REMOTE_LOG_METADATA_TOPIC_NAME,
};
use strata_storage::{LogManager, LogManagerConfig};
use strata_tiering::rlm::ops::{self, MetadataRecordLine, RemoteSegmentListing, VerifyReport};
use strata_tiering::ObjectStoreRsm;

use super::{joined, TieringConfig, TieringError};
use crate::config::BrokerConfig;

/// The data directory and remote store opened for inspection.
pub struct OfflineTier {
    logs: Arc<LogManager>,
    rlmm: TopicBasedRemoteLogMetadataManager,
    rsm: ObjectStoreRsm,
}

impl std::fmt::Debug for OfflineTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineTier")
            .field("rsm", &self.rsm)
            .finish_non_exhaustive()
    }
}

impl OfflineTier {
    /// Opens the broker's log dirs and the RLMM (replaying the metadata topic) and builds the RSM. Fails when
    /// a broker holds the log dirs.
    pub async fn open(broker: &BrokerConfig, tiering: TieringConfig) -> Result<Self, TieringError> {
        // Inspection never creates state: a dir the broker never formatted is a mistyped log.dirs.
        for dir in &broker.log_dirs {
            if !dir.join("meta.properties").is_file() {
                return Err(TieringError::Config {
                    key: "log.dirs".into(),
                    value: dir.display().to_string(),
                    reason: "not a strata data directory (no meta.properties); check log.dirs / --config".into(),
                });
            }
        }
        let mut lm = LogManagerConfig::default();
        lm.log_dirs = broker.log_dirs.clone();
        lm.default_log_config = broker.log.clone();
        lm.node_id = broker.node_id;
        lm.ignored_dirs = broker.reserved_dirs.clone();
        let rlmm_config = tiering.rlmm.clone();
        let dir = tiering.snapshot_dir.clone();
        let (logs, rlmm) = joined(
            tokio::task::spawn_blocking(move || {
                let logs = Arc::new(LogManager::open(lm).map_err(crate::Error::from)?);
                let (rlmm, _) =
                    TopicBasedRemoteLogMetadataManager::open(rlmm_config, logs.clone(), &dir)?;
                Ok::<_, TieringError>((logs, rlmm))
            })
            .await,
            "opening the data directory",
        )??;
        let rsm = ObjectStoreRsm::new(tiering.rsm)?;
        Ok(Self { logs, rlmm, rsm })
    }

    /// The partitions of `topic` (local logs and those the RLMM knows, e.g. of a deleted topic), or of every
    /// tiered topic when `None`.
    pub fn partitions(&self, topic: Option<&str>) -> Vec<TopicIdPartition> {
        let wanted = |t: &str| t != REMOTE_LOG_METADATA_TOPIC_NAME && topic.is_none_or(|x| x == t);
        let mut set: BTreeSet<(String, i32, uuid::Uuid)> = BTreeSet::new();
        for l in self.logs.all_logs() {
            let tp = l.topic_partition();
            if wanted(&tp.topic) && (topic.is_some() || l.config().remote_storage_enable) {
                set.insert((tp.topic.clone(), tp.partition, l.topic_id()));
            }
        }
        for tip in self.rlmm.partitions() {
            if wanted(tip.topic()) {
                set.insert((tip.topic().to_string(), tip.partition(), tip.topic_id));
            }
        }
        set.into_iter()
            .map(|(t, p, id)| TopicIdPartition::new(id, strata_storage::TopicPartition::new(t, p)))
            .collect()
    }

    /// `strata remote ls --topic T`: the topic's remote segments.
    pub fn ls(&self, topic: &str) -> Result<Vec<RemoteSegmentListing>, TieringError> {
        let parts = self.partitions(Some(topic));
        if parts.is_empty() {
            return Err(TieringError::Config {
                key: "--topic".into(),
                value: topic.into(),
                reason: "no such topic in the log dirs or in __remote_log_metadata".into(),
            });
        }
        Ok(ops::remote_ls(&self.rlmm, &self.rsm, &parts)?)
    }

    /// `strata remote verify [--topic T]`: missing objects of finished segments, orphan objects and abandoned
    /// multipart uploads.
    pub async fn verify(&self, topic: Option<&str>) -> Result<VerifyReport, TieringError> {
        self.verify_with_progress(topic, &|_, _| {}).await
    }

    /// [`OfflineTier::verify`], calling `on_progress(partitions done, partitions)` before each partition and at
    /// the end (the CLI's progress bar).
    pub async fn verify_with_progress(
        &self,
        topic: Option<&str>,
        on_progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<VerifyReport, TieringError> {
        let parts = self.partitions(topic);
        if let (Some(t), true) = (topic, parts.is_empty()) {
            return Err(TieringError::Config {
                key: "--topic".into(),
                value: t.into(),
                reason: "no such topic in the log dirs or in __remote_log_metadata".into(),
            });
        }
        Ok(ops::remote_verify(&self.rlmm, &self.rsm, &parts, on_progress).await?)
    }

    /// The records of `__remote_log_metadata`, oldest first per partition.
    pub fn metadata_records(&self) -> Result<Vec<MetadataRecordLine>, TieringError> {
        Ok(ops::metadata_records(&self.logs)?)
    }

    /// Closes the RLMM and releases the log dirs.
    pub async fn close(self) -> Result<(), TieringError> {
        self.rlmm.close().await?;
        let logs = self.logs;
        joined(
            tokio::task::spawn_blocking(move || logs.shutdown()).await,
            "closing the data directory",
        )?
        .map_err(crate::Error::from)?;
        Ok(())
    }
}

//! The conformance suite against the topic-based manager over a real `LogManager` on disk.
use std::sync::Arc;

use strata_metadata::conformance::rlmm_conformance;
use strata_metadata::{
    TopicBasedRemoteLogMetadataManager, TopicBasedRemoteLogMetadataManagerConfig,
};
use strata_storage::{LogManager, LogManagerConfig};

#[tokio::test]
async fn topic_based_manager_passes_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let lm =
        Arc::new(LogManager::open(LogManagerConfig::new(vec![dir.path().join("logs")])).unwrap());
    let config = TopicBasedRemoteLogMetadataManagerConfig::default().with_num_partitions(3);
    let (rlmm, _) =
        TopicBasedRemoteLogMetadataManager::open(config, lm, &dir.path().join("logs")).unwrap();
    rlmm_conformance(&rlmm).await;
}

#[tokio::test]
async fn topic_based_manager_passes_conformance_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let config = TopicBasedRemoteLogMetadataManagerConfig::default().with_num_partitions(50);
    {
        let lm = Arc::new(LogManager::open(LogManagerConfig::new(vec![logs.clone()])).unwrap());
        let (rlmm, _) =
            TopicBasedRemoteLogMetadataManager::open(config.clone(), Arc::clone(&lm), &logs)
                .unwrap();
        rlmm_conformance(&rlmm).await;
        rlmm.close().await.unwrap();
        lm.shutdown().unwrap();
    }
    let lm = Arc::new(LogManager::open(LogManagerConfig::new(vec![logs.clone()])).unwrap());
    let (rlmm, stats) = TopicBasedRemoteLogMetadataManager::open(config, lm, &logs).unwrap();
    assert!(stats.from_snapshot);
    assert!(stats.live_segments > 0, "the first run's segments are back");
    rlmm_conformance(&rlmm).await;
}

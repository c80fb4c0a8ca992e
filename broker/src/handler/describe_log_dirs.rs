//! DescribeLogDirs (key 35): each log dir with the local size of every partition in it (what `kafka-log-dirs.sh`
//! and cluster UIs show; a tiered partition's remote segments are not counted, as in Kafka) and, from v4, the
//! volume's total and usable bytes. A dir a failed write took offline answers KAFKA_STORAGE_ERROR with no topics.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use kafka_protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_protocol::messages::{
    DescribeLogDirsRequest, DescribeLogDirsResponse, RequestHeader, TopicName,
};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers DescribeLogDirs.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeLogDirsRequest,
) -> DescribeLogDirsResponse {
    // None: every partition; Some: only those asked for (unknown ones are left out, as Kafka does).
    let wanted: Option<HashSet<(String, i32)>> = req.topics.map(|topics| {
        topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(move |p| (t.topic.0.as_str().to_string(), *p))
            })
            .collect()
    });
    let logs = broker.log_manager().all_logs();
    let results = broker
        .config()
        .log_dirs
        .iter()
        .map(|dir| {
            let (total, usable) = volume_bytes(dir);
            let result = DescribeLogDirsResult::default()
                .with_log_dir(sb(dir.display().to_string()))
                .with_total_bytes(total)
                .with_usable_bytes(usable);
            if broker.log_manager().is_log_dir_offline(dir) {
                let e = Error::LogDirOffline(dir.clone());
                return result.with_error_code(error_code::code(&e));
            }
            let mut topics: BTreeMap<String, Vec<DescribeLogDirsPartition>> = BTreeMap::new();
            for log in logs.iter().filter(|l| l.log_dir() == dir.as_path()) {
                let tp = log.topic_partition();
                let key = (tp.topic.to_string(), tp.partition);
                if wanted.as_ref().is_some_and(|w| !w.contains(&key)) {
                    continue;
                }
                topics.entry(key.0).or_default().push(
                    DescribeLogDirsPartition::default()
                        .with_partition_index(key.1)
                        .with_partition_size(log.size_in_bytes() as i64),
                );
            }
            result.with_topics(
                topics
                    .into_iter()
                    .map(|(name, mut partitions)| {
                        partitions.sort_by_key(|p| p.partition_index);
                        DescribeLogDirsTopic::default()
                            .with_name(TopicName(sb(name)))
                            .with_partitions(partitions)
                    })
                    .collect(),
            )
        })
        .collect();
    DescribeLogDirsResponse::default().with_results(results)
}

/// (total, usable) bytes of the volume holding `dir`; -1 each when unknown (Kafka's `UNKNOWN_VOLUME_BYTES`).
fn volume_bytes(dir: &Path) -> (i64, i64) {
    match rustix::fs::statvfs(dir) {
        Ok(s) => (
            s.f_blocks.saturating_mul(s.f_frsize).min(i64::MAX as u64) as i64,
            s.f_bavail.saturating_mul(s.f_frsize).min(i64::MAX as u64) as i64,
        ),
        Err(_) => (-1, -1),
    }
}

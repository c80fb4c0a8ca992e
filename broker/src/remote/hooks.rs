//! What the broker asks of tiered storage, as a small trait: the topic component and the handlers reach the tier
//! only through [`TieringHooks`], so the tiering layer (`crate::tiered`, which implements it) is built before the
//! broker's shared state and handed in, and nothing below it imports it.
//!
//! Also the tiering rules every topic config passes, tier or not ([`check_tiering_rules`]): with tiering off,
//! `remote.storage.enable=true` is INVALID_CONFIG.

use std::collections::BTreeMap;
use std::sync::Arc;

use strata_storage::TopicPartition;
use strata_tiering::rlm::{validate_topic_config, ConfigChangeAction, TopicRemoteConfig};

use crate::error::{Error, Result};
use crate::remote::{BoxFuture, RemoteLogReader};

/// Running tiered storage as the broker uses it. What waits on the tier (the remote log metadata, remote
/// segments) is a future the caller awaits; the other methods read memory and return at once.
///
/// # Contract
/// - Present only while `remote.log.storage.system.enable=true` and the tier started; absent, the broker serves
///   local data only.
/// - Errors are the tier's: a rule broken or a bad value is [`Error::Config`]; a store failure
///   [`Error::Io`] (KAFKA_STORAGE_ERROR).
pub trait TieringHooks: Send + Sync + 'static {
    /// Serves Fetch below the local log start.
    fn remote_reader(&self) -> Arc<dyn RemoteLogReader>;

    /// Whether a remote deletion of one of the topic's partitions is recorded and not finished (turning
    /// `remote.storage.enable` back on waits for it).
    fn remote_delete_pending(&self, topic: &str) -> bool;

    /// A topic's configs were applied to its logs (CreateTopics, AlterConfigs), where the RemoteLogManager reads
    /// them; [`ConfigChangeAction::DeleteRemoteData`] records the deletion of its remote data and deletes it in the
    /// background. Blocking when it records a deletion (called from the topic component's blocking task; the
    /// one hook left to turn into a future).
    fn topic_config_applied(&self, topic: &str, remote_enabled: bool, action: ConfigChangeAction);

    /// DeleteTopics, before the local logs go: records the deletion of the topic's remote data (the future ends
    /// once it is recorded) and deletes it in the background. An error keeps the topic.
    fn topic_deleted(&self, topic: &str) -> BoxFuture<Result<()>>;

    /// ListOffsets -4 (earliest local): (offset, leader epoch).
    fn earliest_local(&self, tp: &TopicPartition) -> Result<(i64, i32)>;

    /// ListOffsets -5 (latest tiered): (offset, leader epoch).
    fn latest_tiered(&self, tp: &TopicPartition) -> Result<(i64, i32)>;

    /// ListOffsets -3 over local and remote segments: (timestamp, offset).
    fn max_timestamp(&self, tp: &TopicPartition) -> BoxFuture<Result<Option<(i64, i64)>>>;

    /// ListOffsets by timestamp over remote segments, then the local log: (offset, timestamp).
    fn offset_for_timestamp(
        &self,
        tp: &TopicPartition,
        ts: i64,
    ) -> BoxFuture<Result<Option<(i64, i64)>>>;
}

/// A tiering failure as the broker reports it: a bad property INVALID_CONFIG naming it, a broken rule
/// INVALID_CONFIG naming the topic, anything else [`Error::Tiering`] (a storage error). Only the two config
/// variants are picked out (by field); every other error is kept whole as the source, so the wildcard loses
/// nothing.
pub fn tiering_error(e: strata_tiering::Error) -> Error {
    match e {
        strata_tiering::Error::Config {
            key, value, reason, ..
        } => Error::config(key, value.unwrap_or_default(), reason),
        strata_tiering::Error::PolicyViolation { topic, reason } => {
            Error::config_rule(topic, reason)
        }
        other => Error::tiering("in tiered storage", other),
    }
}

/// Checks a topic's new configs (`old` = the current ones, `None` on CreateTopics) against Kafka's tiering
/// rules: `remote.storage.enable=true` needs tiering on (`enabled` = `remote.log.storage.system.enable`), no
/// tiering of compacted topics, turning it off needs `remote.log.delete.on.disable=true`, local retention within
/// retention. Errors are INVALID_CONFIG.
pub fn check_tiering_rules(
    enabled: bool,
    topic: &str,
    old: Option<&BTreeMap<String, String>>,
    new: &BTreeMap<String, String>,
) -> Result<ConfigChangeAction> {
    let parse = |c: &BTreeMap<String, String>| {
        TopicRemoteConfig::from_topic_props(c.iter()).map_err(tiering_error)
    };
    let old = old.map(parse).transpose()?;
    let new = parse(new)?;
    validate_topic_config(enabled, topic, old.as_ref(), &new).map_err(tiering_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn tiering_a_topic_while_the_system_is_off_is_invalid_config() {
        let err = check_tiering_rules(false, "t", None, &map(&[("remote.storage.enable", "true")]))
            .expect_err("system off");
        // Config is INVALID_CONFIG (pinned by error_code's table test).
        assert!(
            matches!(
                err,
                Error::Config {
                    subject: crate::error::ConfigSubject::Topic(_),
                    ..
                }
            ),
            "{err:?}"
        );
        let ok = check_tiering_rules(false, "t", None, &map(&[("retention.ms", "1000")]));
        assert!(matches!(ok, Ok(ConfigChangeAction::None)), "{ok:?}");
    }

    #[test]
    fn a_bad_tiering_value_names_the_key() {
        let err = check_tiering_rules(false, "t", None, &map(&[("remote.storage.enable", "yes")]))
            .expect_err("not a boolean");
        assert!(err.to_string().contains("remote.storage.enable"), "{err}");
    }
}

//! Group configs (resource type GROUP = 32, KIP-848 / KIP-932; Kafka 3.8+): DescribeConfigs answers Kafka 4.0's
//! `GroupConfig` keys with the broker's group defaults, source DEFAULT_CONFIG — a group strata does not know is
//! described too, as Kafka does (group configs exist apart from the group). strata keeps no per-group overrides:
//! IncrementalAlterConfigs / AlterConfigs of a group are refused naming the keys and the broker keys that apply.

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsSynonym,
};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use strata_storage::config_def::Type;

/// Kafka's GROUP resource type.
pub(crate) const RESOURCE_GROUP: i8 = 32;
/// DEFAULT_CONFIG.
const SOURCE_DEFAULT: i8 = 5;

/// One group config key: its name, type, documentation, the broker key whose value is its default and Kafka's
/// default of that broker key (used where strata has no such broker key).
struct GroupKey {
    name: &'static str,
    ty: Type,
    doc: &'static str,
    broker_key: &'static str,
    default: &'static str,
}

/// Kafka 4.0's `GroupConfig` keys. Share groups (KIP-932) are not served by strata: their keys show Kafka's
/// defaults (`group.share.*`).
const GROUP_KEYS: &[GroupKey] = &[
    GroupKey {
        name: "consumer.session.timeout.ms",
        ty: Type::Int,
        doc: "The timeout to detect client failures when using the consumer group protocol.",
        broker_key: "group.consumer.session.timeout.ms",
        default: "45000",
    },
    GroupKey {
        name: "consumer.heartbeat.interval.ms",
        ty: Type::Int,
        doc: "The heartbeat interval given to the members of a consumer group.",
        broker_key: "group.consumer.heartbeat.interval.ms",
        default: "5000",
    },
    GroupKey {
        name: "share.session.timeout.ms",
        ty: Type::Int,
        doc: "The timeout to detect client failures when using the share group protocol.",
        broker_key: "group.share.session.timeout.ms",
        default: "45000",
    },
    GroupKey {
        name: "share.heartbeat.interval.ms",
        ty: Type::Int,
        doc: "The heartbeat interval given to the members of a share group.",
        broker_key: "group.share.heartbeat.interval.ms",
        default: "5000",
    },
    GroupKey {
        name: "share.record.lock.duration.ms",
        ty: Type::Int,
        doc: "The record acquisition lock duration in milliseconds for share groups.",
        broker_key: "group.share.record.lock.duration.ms",
        default: "30000",
    },
    GroupKey {
        name: "share.auto.offset.reset",
        ty: Type::String,
        doc: "The strategy to initialize the share-partition start offset.",
        broker_key: "",
        default: "latest",
    },
];

/// The value of `k` on this broker: the consumer-group keys follow the broker's `group.consumer.*`.
fn value(broker: &Broker, k: &GroupKey) -> String {
    let config = broker.config();
    match k.broker_key {
        "group.consumer.session.timeout.ms" => config.group_consumer_session_timeout_ms.to_string(),
        "group.consumer.heartbeat.interval.ms" => {
            config.group_consumer_heartbeat_interval_ms.to_string()
        }
        _ => k.default.to_string(),
    }
}

/// One described entry (without synonyms, type and documentation), its synonyms, type and documentation.
pub(crate) type Described = (
    DescribeConfigsResourceResult,
    Vec<DescribeConfigsSynonym>,
    Type,
    &'static str,
);

/// The group's config entries (those `wanted`).
pub(crate) fn describe(
    broker: &Broker,
    group: &str,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<Described>, Error> {
    if group.is_empty() {
        return Err(Error::EmptyGroupName);
    }
    Ok(GROUP_KEYS
        .iter()
        .filter(|k| wanted(k.name))
        .map(|k| {
            let v = value(broker, k);
            let e = DescribeConfigsResourceResult::default()
                .with_name(sb(k.name))
                .with_value(Some(sb(v)))
                .with_read_only(false)
                .with_is_sensitive(false)
                .with_config_source(SOURCE_DEFAULT);
            (e, Vec::new(), k.ty, k.doc)
        })
        .collect())
}

/// An alteration of the group's configs: refused (no per-group overrides), naming what is unsupported.
pub(crate) fn refuse_alter(group: &str, keys: impl Iterator<Item = String>) -> Error {
    Error::GroupConfigsNotSupported {
        group: group.to_string(),
        keys: keys.collect::<Vec<_>>().join(", "),
    }
}

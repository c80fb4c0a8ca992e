//! Group configs (resource type GROUP = 32, KIP-848 / KIP-932; Kafka 4.0's `GroupConfig`): IncrementalAlterConfigs
//! / AlterConfigs set a group's overrides, checked as Kafka 4.x checks them (type, and the consumer keys within the
//! broker's `group.consumer.min/max.*` bounds), kept durably ([`crate::group::configs`]); DescribeConfigs answers
//! every key: a group's override as GROUP_CONFIG, else the broker's group default as DEFAULT_CONFIG, with Kafka's
//! synonyms. A group strata does not know is described and configured too, as Kafka does (group configs exist
//! apart from the group). `consumer.session.timeout.ms` and `consumer.heartbeat.interval.ms` take effect for the
//! group's KIP-848 members at their next heartbeat; the `share.*` keys are kept with no effect (strata serves no
//! share groups).

use std::collections::BTreeMap;

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsSynonym,
};

use super::sb;
use crate::broker::Broker;
use crate::config::BrokerConfig;
use crate::error::Error;
use strata_storage::config_def::{ConfigKey, Type, Validator};

/// Kafka's GROUP resource type.
pub(crate) const RESOURCE_GROUP: i8 = 32;
/// DEFAULT_CONFIG.
const SOURCE_DEFAULT: i8 = 5;
/// GROUP_CONFIG (Kafka 3.9+'s source of a group's override).
const SOURCE_GROUP: i8 = 8;

/// One group config key: the key (type, documentation), the broker key whose value is its default, and Kafka's
/// default of that broker key (used where strata has no such broker key).
struct GroupKey {
    key: ConfigKey,
    broker_key: &'static str,
    default: &'static str,
}

const fn int(name: &'static str, doc: &'static str) -> ConfigKey {
    ConfigKey::new(name, Type::Int, doc)
}

/// Kafka 4.0's `GroupConfig` keys. The consumer keys are bounded by the broker's `group.consumer.min/max.*`
/// ([`bounds`]); the share keys by Kafka's default share bounds (strata has no share group keys).
const GROUP_KEYS: &[GroupKey] = &[
    GroupKey {
        key: int(
            "consumer.session.timeout.ms",
            "The timeout to detect client failures when using the consumer group protocol.",
        ),
        broker_key: "group.consumer.session.timeout.ms",
        default: "45000",
    },
    GroupKey {
        key: int(
            "consumer.heartbeat.interval.ms",
            "The heartbeat interval given to the members of a consumer group.",
        ),
        broker_key: "group.consumer.heartbeat.interval.ms",
        default: "5000",
    },
    GroupKey {
        key: int(
            "share.session.timeout.ms",
            "The timeout to detect client failures when using the share group protocol.",
        )
        .validator(Validator::Between(45_000, 60_000)),
        broker_key: "group.share.session.timeout.ms",
        default: "45000",
    },
    GroupKey {
        key: int(
            "share.heartbeat.interval.ms",
            "The heartbeat interval given to the members of a share group.",
        )
        .validator(Validator::Between(5_000, 15_000)),
        broker_key: "group.share.heartbeat.interval.ms",
        default: "5000",
    },
    GroupKey {
        key: int(
            "share.record.lock.duration.ms",
            "The record acquisition lock duration in milliseconds for share groups.",
        )
        .validator(Validator::Between(15_000, 60_000)),
        broker_key: "group.share.record.lock.duration.ms",
        default: "30000",
    },
    GroupKey {
        key: ConfigKey::new(
            "share.auto.offset.reset",
            Type::String,
            "The strategy to initialize the share-partition start offset.",
        )
        .validator(Validator::Custom(share_auto_offset_reset)),
        broker_key: "share.auto.offset.reset",
        default: "latest",
    },
];

/// Kafka's `ShareGroupAutoOffsetResetStrategy`: earliest, latest or `by_duration:<ISO-8601 duration>`.
fn share_auto_offset_reset(v: &strata_storage::config_def::Value) -> Result<(), String> {
    let s = v.to_text().unwrap_or_default();
    match s.as_str() {
        "earliest" | "latest" => Ok(()),
        d if d.strip_prefix("by_duration:").is_some_and(|p| p.starts_with('P')) => Ok(()),
        _ => Err(format!(
            "Invalid value `{s}` for configuration share.auto.offset.reset. The value must be either \
             'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
        )),
    }
}

/// The `[min, max]` the broker allows for consumer key `name` (`group.consumer.min/max.*`), if it is one.
fn bounds(config: &BrokerConfig, name: &str) -> Option<(i32, i32)> {
    match name {
        "consumer.session.timeout.ms" => Some(config.group_consumer_session_bounds_ms),
        "consumer.heartbeat.interval.ms" => Some(config.group_consumer_heartbeat_bounds_ms),
        _ => None,
    }
}

/// The broker's value of `k`'s default: the consumer keys follow the broker's `group.consumer.*`.
fn default_value(config: &BrokerConfig, k: &GroupKey) -> String {
    match k.broker_key {
        "group.consumer.session.timeout.ms" => config.group_consumer_session_timeout_ms.to_string(),
        "group.consumer.heartbeat.interval.ms" => {
            config.group_consumer_heartbeat_interval_ms.to_string()
        }
        _ => k.default.to_string(),
    }
}

fn synonym(name: &str, value: String, source: i8) -> DescribeConfigsSynonym {
    DescribeConfigsSynonym::default()
        .with_name(sb(name))
        .with_value(Some(sb(value)))
        .with_source(source)
}

/// One described entry (without synonyms, type and documentation), its synonyms, type and documentation.
pub(crate) type Described = (
    DescribeConfigsResourceResult,
    Vec<DescribeConfigsSynonym>,
    Type,
    &'static str,
);

/// The group's config entries (those `wanted`): its override (GROUP_CONFIG, then the broker's default as a
/// synonym) or the broker's default (DEFAULT_CONFIG).
pub(crate) fn describe(
    broker: &Broker,
    group: &str,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<Described>, Error> {
    if group.is_empty() {
        return Err(Error::EmptyGroupName);
    }
    let set = broker.groups().group_configs().of(group);
    let config = broker.config();
    Ok(GROUP_KEYS
        .iter()
        .filter(|k| wanted(k.key.name))
        .map(|k| {
            let default = default_value(config, k);
            let mut syn = Vec::new();
            let (value, source) = match set.get(k.key.name) {
                Some(v) => {
                    syn.push(synonym(k.key.name, v.clone(), SOURCE_GROUP));
                    (v.clone(), SOURCE_GROUP)
                }
                None => (default.clone(), SOURCE_DEFAULT),
            };
            syn.push(synonym(k.broker_key, default, SOURCE_DEFAULT));
            let e = DescribeConfigsResourceResult::default()
                .with_name(sb(k.key.name))
                .with_value(Some(sb(value)))
                .with_read_only(false)
                .with_is_sensitive(false)
                .with_config_source(source);
            (e, syn, k.key.ty, k.key.doc)
        })
        .collect())
}

/// Checks `values` (a group's whole set of overrides after the change) as Kafka's `GroupConfig.validate`: known
/// keys (else "Unknown group config name"), values of the key's type, the consumer keys within the broker's
/// bounds. INVALID_CONFIG naming the key otherwise; an empty group name is INVALID_REQUEST.
pub(crate) fn check(
    config: &BrokerConfig,
    group: &str,
    values: &BTreeMap<String, String>,
) -> Result<(), Error> {
    if group.is_empty() {
        return Err(Error::DefaultGroupResource);
    }
    for (name, value) in values {
        let Some(k) = GROUP_KEYS.iter().find(|k| k.key.name == name) else {
            return Err(Error::InvalidGroupConfig(format!(
                "Unknown group config name: {name}"
            )));
        };
        let parsed = k.key.parse_value(value).map_err(|e| {
            Error::InvalidGroupConfig(format!(
                "Invalid value {value} for configuration {name}: {e}"
            ))
        })?;
        let n = crate::topics::dynamic::as_i64(parsed);
        if let (Some((min, max)), Some(n)) = (bounds(config, name), n) {
            if n < min as i64 || n > max as i64 {
                return Err(Error::InvalidGroupConfig(format!(
                    "{name} must be in the range {min} to {max} inclusive."
                )));
            }
        }
    }
    Ok(())
}

/// Whether `name` is a group config key of type list (none is: APPEND / SUBTRACT are refused, as Kafka).
pub(crate) fn list_key(_name: &str) -> Option<Option<String>> {
    None
}

/// Replaces the overrides of `group` with `values` (both AlterConfigs APIs end here): checked, then kept, unless
/// `validate_only`.
pub(crate) async fn set(
    broker: &std::sync::Arc<Broker>,
    group: String,
    values: BTreeMap<String, String>,
    validate_only: bool,
) -> Result<(), Error> {
    check(broker.config(), &group, &values)?;
    if validate_only {
        return Ok(());
    }
    let b = broker.clone();
    super::blocking(move || b.groups().group_configs().set(&group, values)).await
}

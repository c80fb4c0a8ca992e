//! `/metrics`: one `prometheus-client` registry per server, named as the Prometheus JMX exporter rules Strimzi
//! ships name Kafka's MBeans (lower case, `PerSec` dropped, `_total` on counters), so the common Kafka Grafana
//! dashboards find them:
//!
//! - the broker's request, byte and connection counters ([`crate::metrics`]);
//! - state read at each scrape: `kafka_server_replicamanager_partitioncount`, per partition
//!   `kafka_log_log_size`, `kafka_log_log_logstartoffset`, `kafka_log_log_logendoffset`,
//!   `kafka_log_log_numlogsegments`, and consumer-group lag as the Kafka exporter names it
//!   (`kafka_consumergroup_lag{consumergroup,topic,partition}`, `kafka_consumergroup_current_offset`);
//! - tiering (when on): `kafka_server_brokertopicmetrics_remotecopybytes_total{topic}` and the other
//!   `Remote*PerSec` meters, the `Remote*Lag*`/`RemoteLogSizeBytes`/`RemoteLogMetadataCount` gauges,
//!   `kafka_server_delayedremotefetchmetrics_expires_total`, and strata's RSM / object-store request counts,
//!   errors and seconds (`strata_object_store_requests_total{operation}`, …);
//! - the log cleaner ([`crate::topics::cleaner::CleanerCollector`]).
//!
//! Per-topic series are written only for topics that exist: a deleted topic's series disappear.

use std::collections::BTreeMap;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use strata_tiering::rlm::MetricsSnapshot;

use crate::broker::Broker;
use crate::tiered::Tiering;
use crate::topics::cleaner::CleanerCollector;

type Labels = Vec<(&'static str, String)>;

/// Writes one family: `rows` of (labels, value) as counters (`_total` is added) or gauges.
fn family<V: Copy + Into<f64>>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    counter: bool,
    rows: impl IntoIterator<Item = (Labels, V)>,
) -> std::fmt::Result {
    let kind = if counter {
        MetricType::Counter
    } else {
        MetricType::Gauge
    };
    let mut m = encoder.encode_descriptor(name, help, None, kind)?;
    let rows: Vec<(Labels, f64)> = rows.into_iter().map(|(l, v)| (l, v.into())).collect();
    if let [(labels, v)] = rows.as_slice() {
        if labels.is_empty() {
            return value(m, counter, *v);
        }
    }
    for (labels, v) in &rows {
        value(m.encode_family(labels)?, counter, *v)?;
    }
    Ok(())
}

/// Whole numbers are written as integers (`5`, not `5.0`).
fn value(enc: MetricEncoder<'_>, counter: bool, v: f64) -> std::fmt::Result {
    let whole = v.fract() == 0.0 && v.abs() < 9.0e15;
    match (counter, whole) {
        (true, true) => ConstCounter::new(v as u64).encode(enc),
        (true, false) => ConstCounter::new(v).encode(enc),
        (false, true) => ConstGauge::new(v as i64).encode(enc),
        (false, false) => ConstGauge::new(v).encode(enc),
    }
}

fn topic_label(t: &str) -> Labels {
    vec![("topic", t.to_string())]
}

fn tp_labels(t: &str, p: i32) -> Labels {
    vec![("topic", t.to_string()), ("partition", p.to_string())]
}

/// Reads the broker's state and per-topic counters at each scrape.
#[derive(Debug)]
struct BrokerCollector(Arc<Broker>);

impl Collector for BrokerCollector {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> std::fmt::Result {
        let b = &self.0;
        topic_families(&mut e, b)?;
        log_families(&mut e, b)?;
        group_families(&mut e, b)
    }
}

/// Kafka's BrokerTopicMetrics of the live topics (running totals).
fn topic_families(e: &mut DescriptorEncoder<'_>, b: &Broker) -> std::fmt::Result {
    let registry = b.registry();
    let live: std::collections::HashSet<String> =
        registry.all().into_iter().map(|(n, _)| n).collect();
    let totals = b.metrics().topic_totals(|t| live.contains(t));
    type Get = fn(&crate::metrics::TopicCounters) -> u64;
    let counters: [(&str, &str, Get); 5] = [
        (
            "kafka_server_brokertopicmetrics_messagesin",
            "Records appended, per topic (Kafka's MessagesInPerSec).",
            |c| c.messages_in,
        ),
        (
            "kafka_server_brokertopicmetrics_bytesin",
            "Record batch bytes appended by producers, per topic (Kafka's BytesInPerSec).",
            |c| c.bytes_in,
        ),
        (
            "kafka_server_brokertopicmetrics_bytesout",
            "Record bytes returned to fetchers, per topic (Kafka's BytesOutPerSec).",
            |c| c.bytes_out,
        ),
        (
            "kafka_server_brokertopicmetrics_failedproducerequests",
            "Produce partitions answered with an error, per topic.",
            |c| c.failed_produce,
        ),
        (
            "kafka_server_brokertopicmetrics_failedfetchrequests",
            "Fetch partitions answered with an error, per topic.",
            |c| c.failed_fetch,
        ),
    ];
    for (name, help, get) in counters {
        family(
            e,
            name,
            help,
            true,
            totals.iter().map(|(t, c)| (topic_label(t), get(c) as f64)),
        )?;
    }
    Ok(())
}

/// The partition count and each partition's log gauges (Kafka's `kafka.log:type=Log`).
fn log_families(e: &mut DescriptorEncoder<'_>, b: &Broker) -> std::fmt::Result {
    let mut logs = b.log_manager().all_logs();
    logs.sort_by(|a, b| a.topic_partition().cmp(b.topic_partition()));
    family(
        e,
        "kafka_server_replicamanager_partitioncount",
        "Partitions on this broker.",
        false,
        [(Labels::new(), logs.len() as f64)],
    )?;
    type LogGet = fn(&strata_storage::UnifiedLog) -> f64;
    let per_log: [(&str, &str, LogGet); 4] = [
        (
            "kafka_log_log_size",
            "Bytes of the partition's local segments (Kafka's Log Size).",
            |l| l.size_in_bytes() as f64,
        ),
        (
            "kafka_log_log_logstartoffset",
            "The partition's log start offset.",
            |l| l.log_start_offset() as f64,
        ),
        (
            "kafka_log_log_logendoffset",
            "The partition's log end offset.",
            |l| l.log_end_offset() as f64,
        ),
        (
            "kafka_log_log_numlogsegments",
            "Local segments of the partition.",
            |l| l.number_of_segments() as f64,
        ),
    ];
    for (name, help, get) in per_log {
        family(
            e,
            name,
            help,
            false,
            logs.iter().map(|l| {
                let tp = l.topic_partition();
                (tp_labels(&tp.topic, tp.partition), get(l))
            }),
        )?;
    }
    Ok(())
}

/// Each consumer group's committed offset and lag per partition.
fn group_families(e: &mut DescriptorEncoder<'_>, b: &Broker) -> std::fmt::Result {
    let lags = group_lags(b);
    family(
        e,
        "kafka_consumergroup_current_offset",
        "Committed offset of a consumer group on a partition.",
        false,
        lags.iter().map(|l| (l.labels(), l.committed as f64)),
    )?;
    family(
        e,
        "kafka_consumergroup_lag",
        "High watermark minus the group's committed offset on a partition.",
        false,
        lags.iter().map(|l| (l.labels(), l.lag as f64)),
    )
}

/// A group's position on one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupLag {
    /// The group.
    pub group: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// Committed offset.
    pub committed: i64,
    /// The partition's high watermark.
    pub high_watermark: i64,
    /// `high_watermark - committed`, at least 0.
    pub lag: i64,
}

impl GroupLag {
    fn labels(&self) -> Labels {
        vec![
            ("consumergroup", self.group.clone()),
            ("topic", self.topic.clone()),
            ("partition", self.partition.to_string()),
        ]
    }
}

/// Every group's committed offsets on existing partitions, with lag.
pub fn group_lags(b: &Broker) -> Vec<GroupLag> {
    let mut out = Vec::new();
    for group in b.groups().list().into_iter().map(|g| g.group_id) {
        for ((topic, partition), entry) in b.groups().committed_all(&group) {
            let Ok(log) = b.topics().log(&topic, partition) else {
                continue;
            };
            let hw = log.high_watermark();
            out.push(GroupLag {
                group: group.clone(),
                topic,
                partition,
                committed: entry.offset,
                high_watermark: hw,
                lag: (hw - entry.offset).max(0),
            });
        }
    }
    out
}

/// Tiering's metrics, from a snapshot at each scrape.
#[derive(Debug)]
struct TieringCollector {
    tiering: Arc<Tiering>,
    broker: Arc<Broker>,
}

/// `RemoteCopyBytesPerSec` → `remotecopybytes`.
fn strimzi(kafka_name: &str) -> String {
    kafka_name.trim_end_matches("PerSec").to_lowercase()
}

impl Collector for TieringCollector {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> std::fmt::Result {
        let s = self.tiering.rlm().metrics().snapshot();
        let live: std::collections::HashSet<String> = self
            .broker
            .registry()
            .all()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        tiering_topic_families(&mut e, &s, &live)?;
        tiering_op_families(&mut e, &s)?;
        family(
            &mut e,
            "strata_remote_log_local_bytes_held",
            "Local bytes kept on disk because their upload is failing.",
            false,
            [(Labels::new(), s.local_bytes_held as f64)],
        )?;
        family(
            &mut e,
            "kafka_server_delayedremotefetchmetrics_expires",
            "Remote reads that outlived remote.fetch.max.wait.ms (they finish into the cache).",
            true,
            [(Labels::new(), s.fetch_expires as f64)],
        )?;
        family(&mut e, "strata_remote_fetch_quota_deferrals", "Remote reads not started because remote.log.manager.fetch.max.bytes.per.second was used up.", true,
            [(Labels::new(), s.quota_deferrals as f64)])
    }
}

/// Kafka's per-topic remote storage meters (running totals) and lags (summed over each topic's partitions),
/// of the live topics.
fn tiering_topic_families(
    e: &mut DescriptorEncoder<'_>,
    s: &MetricsSnapshot,
    live: &std::collections::HashSet<String>,
) -> std::fmt::Result {
    for (kafka_name, per_topic) in &s.meters {
        family(
            e,
            &format!("kafka_server_brokertopicmetrics_{}", strimzi(kafka_name)),
            &format!("Kafka's {kafka_name}, per topic (a running total; use rate())."),
            true,
            per_topic
                .iter()
                .filter(|(t, _)| live.contains(t.as_str()))
                .map(|(t, v)| (topic_label(t), *v as f64)),
        )?;
    }
    let mut per_topic: BTreeMap<&str, [u64; 6]> = BTreeMap::new();
    for (tp, g) in &s.partitions {
        let t = per_topic.entry(tp.topic.as_str()).or_default();
        for (i, v) in [
            g.copy_lag_bytes,
            g.copy_lag_segments,
            g.delete_lag_bytes,
            g.delete_lag_segments,
            g.log_size_bytes,
            g.metadata_count,
        ]
        .into_iter()
        .enumerate()
        {
            t[i] += v;
        }
    }
    for (i, kafka_name) in [
        "RemoteCopyLagBytes",
        "RemoteCopyLagSegments",
        "RemoteDeleteLagBytes",
        "RemoteDeleteLagSegments",
        "RemoteLogSizeBytes",
        "RemoteLogMetadataCount",
    ]
    .into_iter()
    .enumerate()
    {
        family(
            e,
            &format!("kafka_server_brokertopicmetrics_{}", strimzi(kafka_name)),
            &format!("Kafka's {kafka_name}, summed over the topic's partitions."),
            false,
            per_topic
                .iter()
                .filter(|(t, _)| live.contains(**t))
                .map(|(t, v)| (topic_label(t), v[i] as f64)),
        )?;
    }
    Ok(())
}

/// Requests, errors and seconds per operation of the RSM and of the object store.
fn tiering_op_families(e: &mut DescriptorEncoder<'_>, s: &MetricsSnapshot) -> std::fmt::Result {
    for (prefix, what, ops) in [
        (
            "strata_remote_storage",
            "Remote storage manager (RSM) calls",
            &s.storage_ops,
        ),
        ("strata_object_store", "Object store requests", &s.store_ops),
    ] {
        let op = |o: &&str| vec![("operation", o.to_string())];
        family(
            e,
            &format!("{prefix}_requests"),
            &format!("{what}, per operation."),
            true,
            ops.iter().map(|(o, t)| (op(o), t.requests as f64)),
        )?;
        family(
            e,
            &format!("{prefix}_request_errors"),
            &format!("{what} that failed, per operation."),
            true,
            ops.iter().map(|(o, t)| (op(o), t.errors as f64)),
        )?;
        family(e, &format!("{prefix}_request_seconds"),
            &format!("{what}: seconds spent, per operation (divide its rate by the requests' rate for the mean latency)."), true,
            ops.iter().map(|(o, t)| (op(o), t.seconds)))?;
    }
    Ok(())
}

/// The registry of one server: the broker's families and the collectors above.
pub fn registry(broker: &Arc<Broker>, tiering: Option<&Arc<Tiering>>) -> Registry {
    let mut r = Registry::default();
    broker.metrics().register(&mut r);
    r.register_collector(Box::new(BrokerCollector(broker.clone())));
    if let Some(t) = tiering {
        r.register_collector(Box::new(TieringCollector {
            tiering: t.clone(),
            broker: broker.clone(),
        }));
    }
    if let Some(c) = broker.cleaner() {
        r.register_collector(Box::new(CleanerCollector(c.clone())));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_meter_names_become_strimzi_names() {
        assert_eq!(strimzi("RemoteCopyBytesPerSec"), "remotecopybytes");
        assert_eq!(strimzi("RemoteLogSizeBytes"), "remotelogsizebytes");
    }
}

//! Tiered-storage metrics with Kafka's names (`kafka.server:type=BrokerTopicMetrics,name=<X>`, per topic and for
//! all topics) plus remote storage request counts and latency, rendered as Prometheus text.
//!
//! Meters (`...PerSec`) are exposed as Prometheus counters (`rate()` gives the per-second value); the lag and
//! size gauges are kept per partition and summed per topic and in total, as Kafka does.
//!
//! | Prometheus family | Kafka name | kind |
//! |---|---|---|
//! | `kafka_server_BrokerTopicMetrics_RemoteCopyBytesPerSec` | RemoteCopyBytesPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteCopyRequestsPerSec` | RemoteCopyRequestsPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteCopyErrorsPerSec` | RemoteCopyErrorsPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteFetchBytesPerSec` | RemoteFetchBytesPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteFetchRequestsPerSec` | RemoteFetchRequestsPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteFetchErrorsPerSec` | RemoteFetchErrorsPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteDeleteRequestsPerSec` | RemoteDeleteRequestsPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteDeleteErrorsPerSec` | RemoteDeleteErrorsPerSec | counter |
//! | `kafka_server_BrokerTopicMetrics_RemoteCopyLagBytes` | RemoteCopyLagBytes | gauge |
//! | `kafka_server_BrokerTopicMetrics_RemoteCopyLagSegments` | RemoteCopyLagSegments | gauge |
//! | `kafka_server_BrokerTopicMetrics_RemoteDeleteLagBytes` | RemoteDeleteLagBytes | gauge |
//! | `kafka_server_BrokerTopicMetrics_RemoteDeleteLagSegments` | RemoteDeleteLagSegments | gauge |
//! | `kafka_server_BrokerTopicMetrics_RemoteLogSizeBytes` | RemoteLogSizeBytes | gauge |
//! | `kafka_server_BrokerTopicMetrics_RemoteLogMetadataCount` | RemoteLogMetadataCount | gauge |
//! | `strata_remote_storage_requests_total{operation}` | RSM calls (copy, fetch, fetch_index, delete) | counter |
//! | `strata_remote_storage_request_errors_total{operation}` | failed RSM calls | counter |
//! | `strata_remote_storage_request_duration_seconds{operation}` | RSM call latency (`_sum`, `_count`) | summary |
//! | `strata_object_store_requests_total{operation}` | object-store requests through a [`MeteredStore`](super::MeteredStore) (put, get, delete, list, put_part, ...) | counter |
//! | `strata_object_store_request_errors_total{operation}` | failed object-store requests | counter |
//! | `strata_object_store_request_duration_seconds{operation}` | object-store request latency (`_sum`, `_count`) | summary |
//! | `strata_remote_log_local_bytes_held` | bytes kept locally because uploads fail | gauge |
//! | `kafka_server_DelayedRemoteFetchMetrics_ExpiresPerSec` | remote reads that outlived `remote.fetch.max.wait.ms` (they finish into the cache) | counter |
//! | `strata_remote_fetch_quota_deferrals_total` | remote reads not started because the remote fetch quota was used up | counter |
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use strata_storage::TopicPartition;

/// The per-topic meters.
#[derive(Clone, Copy, Debug, Default)]
enum Meter {
    #[default]
    CopyBytes,
    CopyRequests,
    CopyErrors,
    FetchBytes,
    FetchRequests,
    FetchErrors,
    DeleteRequests,
    DeleteErrors,
}

const METERS: [(Meter, &str); 8] = [
    (Meter::CopyBytes, "RemoteCopyBytesPerSec"),
    (Meter::CopyRequests, "RemoteCopyRequestsPerSec"),
    (Meter::CopyErrors, "RemoteCopyErrorsPerSec"),
    (Meter::FetchBytes, "RemoteFetchBytesPerSec"),
    (Meter::FetchRequests, "RemoteFetchRequestsPerSec"),
    (Meter::FetchErrors, "RemoteFetchErrorsPerSec"),
    (Meter::DeleteRequests, "RemoteDeleteRequestsPerSec"),
    (Meter::DeleteErrors, "RemoteDeleteErrorsPerSec"),
];

/// Per-partition gauges, summed per topic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionGauges {
    /// Bytes of rolled local segments not yet copied (Kafka's `RemoteCopyLagBytes`).
    pub copy_lag_bytes: u64,
    /// Rolled local segments not yet copied (Kafka's `RemoteCopyLagSegments`).
    pub copy_lag_segments: u64,
    /// Bytes of remote segments due for deletion and not yet deleted.
    pub delete_lag_bytes: u64,
    /// Remote segments due for deletion and not yet deleted.
    pub delete_lag_segments: u64,
    /// Sum of the sizes of the partition's remote segments (Kafka's `RemoteLogSizeBytes`).
    pub log_size_bytes: u64,
    /// Remote segment metadata entries of the partition (Kafka's `RemoteLogMetadataCount`).
    pub metadata_count: u64,
}

/// A gauge's Kafka name and how to read it.
type GaugeDef = (&'static str, fn(&PartitionGauges) -> u64);

const GAUGES: [GaugeDef; 6] = [
    ("RemoteCopyLagBytes", |g| g.copy_lag_bytes),
    ("RemoteCopyLagSegments", |g| g.copy_lag_segments),
    ("RemoteDeleteLagBytes", |g| g.delete_lag_bytes),
    ("RemoteDeleteLagSegments", |g| g.delete_lag_segments),
    ("RemoteLogSizeBytes", |g| g.log_size_bytes),
    ("RemoteLogMetadataCount", |g| g.metadata_count),
];

/// Requests, failed requests and seconds spent of one remote storage or object-store operation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpTotals {
    /// Requests made.
    pub requests: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Seconds spent in them, summed.
    pub seconds: f64,
}

/// Every tiering metric at one moment (see [`RemoteLogMetrics::snapshot`]).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct MetricsSnapshot {
    /// Kafka meter name (`RemoteCopyBytesPerSec`, ...) → running total per topic.
    pub meters: Vec<(&'static str, BTreeMap<String, u64>)>,
    /// The lag and size gauges per partition.
    pub partitions: BTreeMap<TopicPartition, PartitionGauges>,
    /// RSM calls per operation (`copy`, `fetch`, `fetch_index`, `delete`).
    pub storage_ops: BTreeMap<&'static str, OpTotals>,
    /// Object-store requests per operation (`put`, `get`, `delete`, `list`, ...).
    pub store_ops: BTreeMap<&'static str, OpTotals>,
    /// Bytes kept locally because uploads fail.
    pub local_bytes_held: u64,
    /// Remote reads that outlived `remote.fetch.max.wait.ms`.
    pub fetch_expires: u64,
    /// Remote reads not started because the fetch quota was used up.
    pub quota_deferrals: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct OpStats {
    requests: u64,
    errors: u64,
    seconds: f64,
}

#[derive(Debug, Default)]
struct State {
    meters: BTreeMap<String, [u64; 8]>,
    gauges: BTreeMap<TopicPartition, PartitionGauges>,
    ops: BTreeMap<&'static str, OpStats>,
    store_ops: BTreeMap<&'static str, OpStats>,
    local_bytes_held: BTreeMap<TopicPartition, u64>,
    fetch_expires: u64,
    quota_deferrals: u64,
}

/// The metric registry of one RemoteLogManager. Cheap to update from any task.
#[derive(Debug, Default)]
pub struct RemoteLogMetrics {
    state: Mutex<State>,
}

impl RemoteLogMetrics {
    fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    fn mark(&self, topic: &str, meter: Meter, n: u64) {
        let mut s = self.lock();
        let m = s.meters.entry(topic.to_string()).or_default();
        m[meter as usize] += n;
    }

    pub(crate) fn copy_requested(&self, topic: &str) {
        self.mark(topic, Meter::CopyRequests, 1);
    }
    pub(crate) fn copy_finished(&self, topic: &str, bytes: u64) {
        self.mark(topic, Meter::CopyBytes, bytes);
    }
    pub(crate) fn copy_failed(&self, topic: &str) {
        self.mark(topic, Meter::CopyErrors, 1);
    }
    pub(crate) fn fetch_requested(&self, topic: &str) {
        self.mark(topic, Meter::FetchRequests, 1);
    }
    pub(crate) fn fetch_bytes(&self, topic: &str, bytes: u64) {
        self.mark(topic, Meter::FetchBytes, bytes);
    }
    pub(crate) fn fetch_failed(&self, topic: &str) {
        self.mark(topic, Meter::FetchErrors, 1);
    }
    /// A remote read outlived `remote.fetch.max.wait.ms` (not an error: it finishes into the cache).
    pub(crate) fn fetch_expired(&self) {
        self.lock().fetch_expires += 1;
    }

    /// A remote read was not started: the fetch quota is used up.
    pub(crate) fn quota_deferred(&self) {
        self.lock().quota_deferrals += 1;
    }

    pub(crate) fn delete_requested(&self, topic: &str) {
        self.mark(topic, Meter::DeleteRequests, 1);
    }
    pub(crate) fn delete_failed(&self, topic: &str) {
        self.mark(topic, Meter::DeleteErrors, 1);
    }

    /// Records one remote storage call of `operation` that took `elapsed`.
    pub(crate) fn storage_call(&self, operation: &'static str, elapsed: Duration, ok: bool) {
        let mut s = self.lock();
        let o = s.ops.entry(operation).or_default();
        o.requests += 1;
        o.errors += u64::from(!ok);
        o.seconds += elapsed.as_secs_f64();
    }

    /// Records one object-store request (from [`MeteredStore`](super::MeteredStore)).
    pub(crate) fn store_call(&self, operation: &'static str, elapsed: Duration, ok: bool) {
        let mut s = self.lock();
        let o = s.store_ops.entry(operation).or_default();
        o.requests += 1;
        o.errors += u64::from(!ok);
        o.seconds += elapsed.as_secs_f64();
    }

    /// Requests and errors of one object-store operation (`put`, `get`, `delete`, `list`, `put_part`, ...)
    /// seen by a [`MeteredStore`](super::MeteredStore).
    pub fn object_store_requests(&self, operation: &str) -> (u64, u64) {
        let s = self.lock();
        s.store_ops
            .get(operation)
            .map(|o| (o.requests, o.errors))
            .unwrap_or_default()
    }

    #[cfg(test)]
    pub(crate) fn set_gauges(&self, tp: &TopicPartition, g: PartitionGauges) {
        self.lock().gauges.insert(tp.clone(), g);
    }

    pub(crate) fn update_gauges(&self, tp: &TopicPartition, f: impl FnOnce(&mut PartitionGauges)) {
        let mut s = self.lock();
        f(s.gauges.entry(tp.clone()).or_default());
    }

    pub(crate) fn set_local_bytes_held(&self, tp: &TopicPartition, bytes: u64) {
        self.lock().local_bytes_held.insert(tp.clone(), bytes);
    }

    pub(crate) fn forget_partition(&self, tp: &TopicPartition) {
        let mut s = self.lock();
        s.gauges.remove(tp);
        s.local_bytes_held.remove(tp);
    }

    /// The gauges of one partition (tests, `remote ls`).
    pub fn partition_gauges(&self, tp: &TopicPartition) -> PartitionGauges {
        self.lock().gauges.get(tp).copied().unwrap_or_default()
    }

    /// The value of a Kafka meter (`RemoteCopyBytesPerSec`, ...) as a running total, for `topic` or, with
    /// `None`, for all topics. `None` for an unknown name.
    pub fn meter_total(&self, name: &str, topic: Option<&str>) -> Option<u64> {
        let (meter, _) = METERS.iter().find(|(_, n)| *n == name)?;
        let s = self.lock();
        Some(
            s.meters
                .iter()
                .filter(|(t, _)| topic.is_none_or(|want| want == t.as_str()))
                .map(|(_, m)| m[*meter as usize])
                .sum(),
        )
    }

    /// Requests and errors of one remote storage operation (`copy`, `fetch`, `fetch_index`, `delete`).
    pub fn storage_requests(&self, operation: &str) -> (u64, u64) {
        let s = self.lock();
        s.ops
            .get(operation)
            .map(|o| (o.requests, o.errors))
            .unwrap_or_default()
    }

    /// A copy of every metric now, for an exporter (the broker's `/metrics` encodes it with
    /// `prometheus-client` under the Strimzi JMX-exporter names) and the console.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let s = self.lock();
        let op = |o: &OpStats| OpTotals {
            requests: o.requests,
            errors: o.errors,
            seconds: o.seconds,
        };
        MetricsSnapshot {
            meters: METERS
                .iter()
                .map(|(meter, name)| {
                    let per_topic = s
                        .meters
                        .iter()
                        .map(|(t, m)| (t.clone(), m[*meter as usize]))
                        .collect();
                    (*name, per_topic)
                })
                .collect(),
            partitions: s.gauges.clone(),
            storage_ops: s.ops.iter().map(|(k, o)| (*k, op(o))).collect(),
            store_ops: s.store_ops.iter().map(|(k, o)| (*k, op(o))).collect(),
            local_bytes_held: s.local_bytes_held.values().sum(),
            fetch_expires: s.fetch_expires,
            quota_deferrals: s.quota_deferrals,
        }
    }

    /// Prometheus text exposition format (version 0.0.4) of every metric.
    pub fn render(&self) -> String {
        let s = self.lock();
        let mut out = String::new();
        render_meters(&mut out, &s);
        render_gauges(&mut out, &s);
        for (prefix, what, ops) in [
            (
                "strata_remote_storage",
                "Remote storage (RSM) calls",
                &s.ops,
            ),
            ("strata_object_store", "Object store requests", &s.store_ops),
        ] {
            render_ops(&mut out, prefix, what, ops);
        }
        render_totals(&mut out, &s);
        out
    }
}

/// Kafka's BrokerTopicMetrics meters: per topic and in total.
fn render_meters(out: &mut String, s: &State) {
    for (meter, name) in METERS {
        let family = format!("kafka_server_BrokerTopicMetrics_{name}");
        let _ = writeln!(
            out,
            "# HELP {family} Kafka's {name} (a running total; use rate())."
        );
        let _ = writeln!(out, "# TYPE {family} counter");
        let mut total = 0;
        for (topic, m) in &s.meters {
            let v = m[meter as usize];
            total += v;
            let _ = writeln!(out, "{family}{{topic=\"{}\"}} {v}", escape(topic));
        }
        let _ = writeln!(out, "{family} {total}");
    }
}

/// Kafka's BrokerTopicMetrics gauges, summed over each topic's partitions, and in total.
fn render_gauges(out: &mut String, s: &State) {
    let mut per_topic: BTreeMap<&str, PartitionGauges> = BTreeMap::new();
    for (tp, g) in &s.gauges {
        let t = per_topic.entry(tp.topic.as_str()).or_default();
        t.copy_lag_bytes += g.copy_lag_bytes;
        t.copy_lag_segments += g.copy_lag_segments;
        t.delete_lag_bytes += g.delete_lag_bytes;
        t.delete_lag_segments += g.delete_lag_segments;
        t.log_size_bytes += g.log_size_bytes;
        t.metadata_count += g.metadata_count;
    }
    for (name, get) in GAUGES {
        let family = format!("kafka_server_BrokerTopicMetrics_{name}");
        let _ = writeln!(
            out,
            "# HELP {family} Kafka's {name}, summed over partitions."
        );
        let _ = writeln!(out, "# TYPE {family} gauge");
        let mut total = 0;
        for (topic, g) in &per_topic {
            let v = get(g);
            total += v;
            let _ = writeln!(out, "{family}{{topic=\"{}\"}} {v}", escape(topic));
        }
        let _ = writeln!(out, "{family} {total}");
    }
}

/// Requests, errors and latency of one kind of call (RSM calls, object store requests), per operation.
fn render_ops<K: std::fmt::Display>(
    out: &mut String,
    prefix: &str,
    what: &str,
    ops: &BTreeMap<K, OpStats>,
) {
    let _ = writeln!(out, "# HELP {prefix}_requests_total {what}.");
    let _ = writeln!(out, "# TYPE {prefix}_requests_total counter");
    for (op, o) in ops {
        let _ = writeln!(
            out,
            "{prefix}_requests_total{{operation=\"{op}\"}} {}",
            o.requests
        );
    }
    let _ = writeln!(
        out,
        "# HELP {prefix}_request_errors_total {what} that failed."
    );
    let _ = writeln!(out, "# TYPE {prefix}_request_errors_total counter");
    for (op, o) in ops {
        let _ = writeln!(
            out,
            "{prefix}_request_errors_total{{operation=\"{op}\"}} {}",
            o.errors
        );
    }
    let family = format!("{prefix}_request_duration_seconds");
    let _ = writeln!(out, "# HELP {family} {what}: latency.");
    let _ = writeln!(out, "# TYPE {family} summary");
    for (op, o) in ops {
        let _ = writeln!(out, "{family}_sum{{operation=\"{op}\"}} {}", o.seconds);
        let _ = writeln!(out, "{family}_count{{operation=\"{op}\"}} {}", o.requests);
    }
}

/// Local bytes held by failing uploads, expired and deferred remote reads.
fn render_totals(out: &mut String, s: &State) {
    let held: u64 = s.local_bytes_held.values().sum();
    let _ = writeln!(
        out,
        "# HELP strata_remote_log_local_bytes_held Local bytes kept on disk because their upload is failing."
    );
    let _ = writeln!(out, "# TYPE strata_remote_log_local_bytes_held gauge");
    let _ = writeln!(out, "strata_remote_log_local_bytes_held {held}");
    for (family, help, v) in [
        (
            "kafka_server_DelayedRemoteFetchMetrics_ExpiresPerSec",
            "Remote reads that outlived remote.fetch.max.wait.ms (they finish into the cache; a running total).",
            s.fetch_expires,
        ),
        (
            "strata_remote_fetch_quota_deferrals_total",
            "Remote reads not started because remote.log.manager.fetch.max.bytes.per.second was used up.",
            s.quota_deferrals,
        ),
    ] {
        let _ = writeln!(out, "# HELP {family} {help}");
        let _ = writeln!(out, "# TYPE {family} counter");
        let _ = writeln!(out, "{family} {v}");
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_has_per_topic_and_total_lines() {
        let m = RemoteLogMetrics::default();
        m.copy_finished("a", 10);
        m.copy_finished("b", 5);
        m.set_gauges(
            &TopicPartition::new("a", 0),
            PartitionGauges {
                log_size_bytes: 7,
                ..Default::default()
            },
        );
        m.set_gauges(
            &TopicPartition::new("a", 1),
            PartitionGauges {
                log_size_bytes: 3,
                ..Default::default()
            },
        );
        m.storage_call("copy", Duration::from_millis(5), false);
        m.fetch_expired();
        m.fetch_expired();
        m.quota_deferred();
        let text = m.render();
        assert!(text.contains("kafka_server_DelayedRemoteFetchMetrics_ExpiresPerSec 2\n"));
        assert!(text.contains("strata_remote_fetch_quota_deferrals_total 1\n"));
        assert!(
            text.contains("kafka_server_BrokerTopicMetrics_RemoteCopyBytesPerSec{topic=\"a\"} 10")
        );
        assert!(text.contains("kafka_server_BrokerTopicMetrics_RemoteCopyBytesPerSec 15"));
        assert!(text.contains("kafka_server_BrokerTopicMetrics_RemoteLogSizeBytes{topic=\"a\"} 10"));
        assert!(text.contains("strata_remote_storage_request_errors_total{operation=\"copy\"} 1"));
        assert_eq!(m.meter_total("RemoteCopyBytesPerSec", Some("b")), Some(5));
        assert_eq!(m.meter_total("NoSuchMetric", None), None);
    }
}

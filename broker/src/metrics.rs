//! The broker's own counters: requests per API (count, errors, latency), bytes and messages in and out per topic,
//! connections per listener. Handlers and the connection loop update them with one call each; [`crate::http`]
//! encodes them with `prometheus-client` on `/metrics`, under the names the Prometheus JMX exporter rules
//! Strimzi ships give Kafka's MBeans (lower case, `_total` on counters), which the common Grafana dashboards
//! query:
//!
//! | family | Kafka MBean |
//! |---|---|
//! | `kafka_network_requestmetrics_requests_total{request}` | `kafka.network:type=RequestMetrics,name=RequestsPerSec` |
//! | `kafka_network_requestmetrics_errors_total{request,error}` | `…name=ErrorsPerSec` (error codes in responses) |
//! | `kafka_network_requestmetrics_totaltime_seconds{request}` | `…name=TotalTimeMs`, as a histogram in seconds |
//! | `kafka_server_brokertopicmetrics_messagesin_total{topic}` | `kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec` |
//! | `kafka_server_brokertopicmetrics_bytesin_total{topic}` | `…name=BytesInPerSec` |
//! | `kafka_server_brokertopicmetrics_bytesout_total{topic}` | `…name=BytesOutPerSec` |
//! | `kafka_server_brokertopicmetrics_failedproducerequests_total{topic}` | `…name=FailedProduceRequestsPerSec` |
//! | `kafka_server_brokertopicmetrics_failedfetchrequests_total{topic}` | `…name=FailedFetchRequestsPerSec` |
//! | `kafka_server_socketservermetrics_connection_count{listener}` | `kafka.server:type=socket-server-metrics,name=connection-count` |
//! | `kafka_server_socketservermetrics_connection_creation_total{listener}` | `…connection-creation-total` |
//! | `kafka_server_socketservermetrics_successful_reauthentication_total{listener}` | `…successful-reauthentication-total` (KIP-368) |
//! | `kafka_server_socketservermetrics_expired_connections_killed_total{listener}` | `…expired-connections-killed-count` (KIP-368) |
//! | `strata_faults_injected_total{api,kind}` | (strata's own) faults injected on demand ([`crate::faults`]); `api` is a Kafka API name or `remote_copy` / `remote_fetch` / `remote_delete` |
//!
//! Per-topic counters live here (not in a `prometheus-client` family) so that `/metrics` leaves out topics that
//! no longer exist: a deleted topic's series disappear.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;
use kafka_protocol::messages::fetch_response::PartitionData;
use kafka_protocol::messages::produce_response::PartitionProduceResponse;
use kafka_protocol::messages::{ApiKey, TopicName};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

use crate::error_code;

/// The `request` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// Kafka's request name (`Produce`, `Fetch`, ...).
    pub request: String,
}

/// The `request` and `error` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// Kafka's request name.
    pub request: String,
    /// Kafka's error name (`UNKNOWN_TOPIC_OR_PARTITION`).
    pub error: String,
}

/// The `listener` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ListenerLabels {
    /// The listener name.
    pub listener: String,
}

/// The `api` and `kind` labels of injected faults.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FaultLabels {
    /// Kafka's request name, or `remote_copy` / `remote_fetch` / `remote_delete`.
    pub api: String,
    /// `error`, `latency`, `close_connection`, `throttle`, `outage`.
    pub kind: String,
}

/// Running totals of one topic (Kafka's `BrokerTopicMetrics`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopicCounters {
    /// Records appended.
    pub messages_in: u64,
    /// Record batch bytes appended.
    pub bytes_in: u64,
    /// Record bytes returned by Fetch.
    pub bytes_out: u64,
    /// Produce partitions answered with an error.
    pub failed_produce: u64,
    /// Fetch partitions answered with an error.
    pub failed_fetch: u64,
}

fn latency_histogram() -> Histogram {
    // 0.1 ms .. ~26 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 19))
}

/// The broker's counters (see the [module docs](self)). One per [`crate::Broker`].
#[derive(Debug)]
pub struct BrokerMetrics {
    requests: Family<RequestLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    latency: Family<RequestLabels, Histogram, fn() -> Histogram>,
    connections: Family<ListenerLabels, Gauge>,
    connections_created: Family<ListenerLabels, Counter>,
    faults_injected: Family<FaultLabels, Counter>,
    reauthentications: Family<ListenerLabels, Counter>,
    expired_connections_killed: Family<ListenerLabels, Counter>,
    topics: Mutex<HashMap<String, TopicCounters>>,
}

impl Default for BrokerMetrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            errors: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            connections: Family::default(),
            connections_created: Family::default(),
            faults_injected: Family::default(),
            reauthentications: Family::default(),
            expired_connections_killed: Family::default(),
            topics: Mutex::new(HashMap::new()),
        }
    }
}

/// Times one request; [`BrokerMetrics::request_done`] records it.
#[derive(Debug)]
pub struct RequestTimer {
    api: ApiKey,
    started: Instant,
}

/// Counts one open connection of a listener until dropped.
#[derive(Debug)]
pub struct ConnectionGuard {
    gauge: Gauge,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

fn api_name(api: ApiKey) -> String {
    format!("{api:?}")
}

/// Records in a Produce payload (the sum of the batch headers' record counts). Headers only: the log checks
/// every batch's CRC once, on append (a CRC pass here cost a second pass over every produced byte).
fn record_count(records: &Bytes) -> u64 {
    strata_storage::RecordBatch::iter_unchecked_crc(records)
        .map_while(|b| b.ok())
        .map(|b| b.records_count().max(0) as u64)
        .sum()
}

impl BrokerMetrics {
    fn topic(&self, topic: &str, f: impl FnOnce(&mut TopicCounters)) {
        let mut t = self.topics.lock();
        match t.get_mut(topic) {
            Some(c) => f(c),
            None => f(t.entry(topic.to_string()).or_default()),
        }
    }

    /// Starts timing a request of `api`.
    pub fn request_started(&self, api: ApiKey) -> RequestTimer {
        RequestTimer {
            api,
            started: Instant::now(),
        }
    }

    /// Records a request answered (or, with `closed`, one that closed the connection: counted as an error
    /// `NETWORK_EXCEPTION`, as the client sees it).
    pub fn request_done(&self, timer: RequestTimer, closed: bool) {
        let labels = RequestLabels {
            request: api_name(timer.api),
        };
        self.requests.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&labels)
            .observe(timer.started.elapsed().as_secs_f64());
        if closed {
            self.error(timer.api, "NETWORK_EXCEPTION");
        }
    }

    fn error(&self, api: ApiKey, error: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                request: api_name(api),
                error: error.to_string(),
            })
            .inc();
    }

    /// (bytes, messages) of `records`, measured before they are appended: the append edits the client's buffer
    /// in place, which a clone kept for counting afterwards would turn into a copy of every produce.
    pub fn measure(records: &Bytes) -> (u64, u64) {
        (records.len() as u64, record_count(records))
    }

    /// One Produce partition answered with `resp` after appending records of `size` ([`Self::measure`]) to
    /// `topic` (bytes and messages in when it succeeded, a failed produce and an error otherwise). Returns `resp`.
    pub fn produced(
        &self,
        topic: &str,
        size: (u64, u64),
        resp: PartitionProduceResponse,
    ) -> PartitionProduceResponse {
        if resp.error_code == error_code::NONE {
            let (bytes, messages) = size;
            self.topic(topic, |c| {
                c.bytes_in += bytes;
                c.messages_in += messages;
            });
        } else {
            self.topic(topic, |c| c.failed_produce += 1);
            self.error(ApiKey::Produce, error_code::name(resp.error_code));
        }
        resp
    }

    /// A Fetch response's partitions (`parts[i]` of topic `names[i]`): bytes out, failed fetches and errors.
    pub fn fetched(&self, names: &[TopicName], parts: &[Vec<PartitionData>]) {
        for (name, parts) in names.iter().zip(parts) {
            let topic = name.0.as_str();
            for p in parts {
                if p.error_code == error_code::NONE {
                    let n = p.records.as_ref().map_or(0, Bytes::len) as u64;
                    if n > 0 {
                        self.topic(topic, |c| c.bytes_out += n);
                    }
                } else {
                    self.topic(topic, |c| c.failed_fetch += 1);
                    self.error(ApiKey::Fetch, error_code::name(p.error_code));
                }
            }
        }
    }

    /// A connection accepted on `listener`; counted open until the guard is dropped.
    pub fn connection_opened(&self, listener: &str) -> ConnectionGuard {
        let labels = ListenerLabels {
            listener: listener.to_string(),
        };
        self.connections_created.get_or_create(&labels).inc();
        let gauge = self.connections.get_or_create(&labels).clone();
        gauge.inc();
        ConnectionGuard { gauge }
    }

    /// A successful SASL re-authentication (KIP-368) on `listener`.
    pub fn reauthenticated(&self, listener: &str) {
        self.reauthentications
            .get_or_create(&ListenerLabels {
                listener: listener.to_string(),
            })
            .inc();
    }

    /// Successful SASL re-authentications on `listener` so far.
    pub fn reauthentications(&self, listener: &str) -> u64 {
        self.reauthentications
            .get(&ListenerLabels {
                listener: listener.to_string(),
            })
            .map_or(0, |c| c.get())
    }

    /// A connection of `listener` closed because its SASL session expired (KIP-368).
    pub fn expired_connection_killed(&self, listener: &str) {
        self.expired_connections_killed
            .get_or_create(&ListenerLabels {
                listener: listener.to_string(),
            })
            .inc();
    }

    /// Per-topic totals of the topics for which `live` holds, by name; the others are forgotten (a deleted
    /// topic's series disappear, and a topic created again under its name starts from zero).
    pub fn topic_totals(&self, live: impl Fn(&str) -> bool) -> Vec<(String, TopicCounters)> {
        let mut t = self.topics.lock();
        t.retain(|name, _| live(name));
        let mut out: Vec<_> = t.iter().map(|(k, v)| (k.clone(), *v)).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Requests answered so far of `request` (`Produce`, ...).
    pub fn requests_total(&self, request: &str) -> u64 {
        self.requests
            .get(&RequestLabels {
                request: request.to_string(),
            })
            .map_or(0, |c| c.get())
    }

    /// Counts one injected fault.
    pub fn fault_injected(&self, api: &str, kind: &str) {
        self.faults_injected
            .get_or_create(&FaultLabels {
                api: api.to_string(),
                kind: kind.to_string(),
            })
            .inc();
    }

    /// Faults injected so far on `api` of `kind`.
    pub fn faults_injected(&self, api: &str, kind: &str) -> u64 {
        self.faults_injected
            .get(&FaultLabels {
                api: api.to_string(),
                kind: kind.to_string(),
            })
            .map_or(0, |c| c.get())
    }

    /// Registers the request and connection families on `registry` (the per-topic counters are encoded by the
    /// caller from [`topic_totals`](Self::topic_totals)).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "kafka_network_requestmetrics_requests",
            "Requests answered, per API (Kafka's RequestMetrics RequestsPerSec).",
            self.requests.clone(),
        );
        registry.register(
            "kafka_network_requestmetrics_errors",
            "Errors in responses, per API and error (Kafka's RequestMetrics ErrorsPerSec).",
            self.errors.clone(),
        );
        registry.register_with_unit(
            "kafka_network_requestmetrics_totaltime",
            "Time from a request's arrival to its response, per API (Kafka's RequestMetrics TotalTimeMs).",
            Unit::Seconds,
            self.latency.clone(),
        );
        registry.register(
            "kafka_server_socketservermetrics_connection_count",
            "Open client connections, per listener.",
            self.connections.clone(),
        );
        registry.register(
            "kafka_server_socketservermetrics_connection_creation",
            "Client connections accepted, per listener.",
            self.connections_created.clone(),
        );
        registry.register(
            "kafka_server_socketservermetrics_successful_reauthentication",
            "SASL re-authentications (KIP-368) that succeeded, per listener.",
            self.reauthentications.clone(),
        );
        registry.register(
            "kafka_server_socketservermetrics_expired_connections_killed",
            "Connections closed because their SASL session expired without re-authentication, per listener.",
            self.expired_connections_killed.clone(),
        );
        registry.register(
            "strata_faults_injected",
            "Faults injected on demand (/api/v1/faults), per API and kind.",
            self.faults_injected.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::protocol::StrBytes;

    #[test]
    fn failed_produce_counts_an_error_named_as_kafka_names_it_and_no_bytes() {
        let m = BrokerMetrics::default();
        // 3: UNKNOWN_TOPIC_OR_PARTITION.
        let resp = PartitionProduceResponse::default().with_error_code(3);
        m.produced(
            "t",
            BrokerMetrics::measure(&Bytes::from_static(b"xxxx")),
            resp,
        );
        let totals = m.topic_totals(|_| true);
        assert_eq!(totals[0].1.failed_produce, 1);
        assert_eq!(totals[0].1.bytes_in, 0);
        let mut reg = Registry::default();
        m.register(&mut reg);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &reg).unwrap();
        assert!(
            text.contains(
                "kafka_network_requestmetrics_errors_total{request=\"Produce\",error=\"UNKNOWN_TOPIC_OR_PARTITION\"} 1"
            ),
            "{text}"
        );
    }

    #[test]
    fn deleted_topics_are_forgotten() {
        let m = BrokerMetrics::default();
        let names = vec![TopicName(StrBytes::from_static_str("gone"))];
        let parts = vec![vec![
            PartitionData::default().with_records(Some(Bytes::from_static(b"abc")))
        ]];
        m.fetched(&names, &parts);
        assert_eq!(m.topic_totals(|_| true)[0].1.bytes_out, 3);
        assert!(m.topic_totals(|t| t != "gone").is_empty());
        assert!(
            m.topic_totals(|_| true).is_empty(),
            "not remembered after it was gone"
        );
    }

    #[test]
    fn connections_are_counted_while_open() {
        let m = BrokerMetrics::default();
        let g = m.connection_opened("PLAINTEXT");
        let labels = ListenerLabels {
            listener: "PLAINTEXT".into(),
        };
        assert_eq!(m.connections.get_or_create(&labels).get(), 1);
        drop(g);
        assert_eq!(m.connections.get_or_create(&labels).get(), 0);
        assert_eq!(m.connections_created.get_or_create(&labels).get(), 1);
    }
}

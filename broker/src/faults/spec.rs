//! What a fault is: its target (an API, optionally one topic/partition, or a remote-tier operation), what it does,
//! and for how many requests or store calls; built with [`Fault`]'s typed constructors or parsed from the JSON of
//! `POST /api/v1/faults`.

use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kafka_protocol::ResponseError;
use serde_json::{json, Value};
use strata_tiering::faults::{RemoteFault, RemoteFaultKind, RemoteOp};

use crate::error_code;

/// The APIs error faults are supported on (`dispatch` builds their error responses).
pub(crate) const ERROR_APIS: &[ApiKey] = &[
    ApiKey::Produce,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::Metadata,
    ApiKey::FindCoordinator,
    ApiKey::JoinGroup,
    ApiKey::SyncGroup,
    ApiKey::Heartbeat,
    ApiKey::LeaveGroup,
    ApiKey::OffsetCommit,
    ApiKey::InitProducerId,
    ApiKey::CreateTopics,
    ApiKey::DeleteTopics,
    ApiKey::EndTxn,
    ApiKey::AddOffsetsToTxn,
];

fn topic_filter_supported(api: ApiKey) -> bool {
    matches!(
        api,
        ApiKey::Produce | ApiKey::Fetch | ApiKey::ListOffsets | ApiKey::Metadata
    )
}

/// Whether an error fault on `api` is applied to the served response (read-only APIs) rather than answered
/// in its place.
pub(crate) fn answers_after(api: ApiKey) -> bool {
    matches!(api, ApiKey::Fetch | ApiKey::ListOffsets | ApiKey::Metadata)
}

/// What a fault applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultTarget {
    /// Requests of a Kafka API, optionally only those naming `topic` (and `partition`).
    Api {
        /// The API (`ApiKey::Produce`).
        api: ApiKey,
        /// Only requests naming this topic (Produce, Fetch, ListOffsets, Metadata).
        topic: Option<String>,
        /// Only this partition of `topic` (Produce, Fetch, ListOffsets).
        partition: Option<i32>,
    },
    /// Store calls of a remote-tier operation.
    Remote(RemoteOp),
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The request is answered with this Kafka error (by its Kafka name) instead of being served.
    Error {
        /// The code.
        code: i16,
        /// Its Kafka name (`NOT_LEADER_OR_FOLLOWER`).
        name: String,
    },
    /// The request (or store call) waits this long first.
    Latency(Duration),
    /// The connection is closed after the request ran, without its response.
    CloseConnection,
    /// The response carries this `throttle_time_ms`.
    Throttle(Duration),
    /// A remote store call fails.
    RemoteError,
    /// Every remote store call of the operation fails until the fault is removed.
    Outage,
}

impl FaultKind {
    /// The `kind` label of `strata_faults_injected_total` and of the JSON listing.
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Error { .. } | FaultKind::RemoteError => "error",
            FaultKind::Latency(_) => "latency",
            FaultKind::CloseConnection => "close_connection",
            FaultKind::Throttle(_) => "throttle",
            FaultKind::Outage => "outage",
        }
    }
}

/// A bad fault: the message names the bad value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultError {
    /// The request is not what `/api/v1/faults` takes.
    #[error("{0}")]
    Invalid(String),
    /// No Kafka API has that name.
    #[error("unknown API {0:?} (Kafka API names, e.g. Produce, Fetch, Metadata, JoinGroup)")]
    UnknownApi(String),
    /// No Kafka error has that name or code.
    #[error("unknown error code {0:?} (a Kafka error name such as NOT_LEADER_OR_FOLLOWER, or its number)")]
    UnknownErrorCode(String),
    /// No remote operation has that name.
    #[error("unknown remote operation {0:?} (copy, fetch or delete)")]
    UnknownRemoteOp(String),
    /// Error faults are answered in the API's own response shape, which strata builds for some APIs only.
    #[error("error faults are not supported on {api} (supported: {supported})")]
    ErrorNotSupported {
        /// The API.
        api: String,
        /// Those that are.
        supported: String,
    },
    /// A remote fault on a broker without tiered storage.
    #[error("remote faults need tiered storage (remote.log.storage.system.enable=true)")]
    NoTiering,
}

/// A fault to set on a broker: one of the constructors, then optionally [`times`](Self::times),
/// [`topic`](Self::topic), [`partition`](Self::partition).
///
/// ```
/// use std::time::Duration;
/// use strata_broker::faults::{ApiKey, Fault, RemoteOp, ResponseError};
/// let retriable = Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower).times(3).topic("orders");
/// let slow = Fault::latency(ApiKey::Fetch, Duration::from_millis(500));
/// let outage = Fault::remote_outage(RemoteOp::Fetch);
/// # let _ = (retriable, slow, outage);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub(crate) target: FaultTarget,
    pub(crate) kind: FaultKind,
    /// Requests (store calls) still to apply to; `None`: until removed.
    pub(crate) count: Option<u64>,
}

/// A fault as set: its id and what remains of its count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetFault {
    /// Its id.
    pub id: u64,
    /// The fault, `count` being what remains.
    pub fault: Fault,
}

impl Fault {
    fn api(api: ApiKey, kind: FaultKind) -> Self {
        Fault {
            target: FaultTarget::Api {
                api,
                topic: None,
                partition: None,
            },
            kind,
            count: None,
        }
    }

    /// Requests of `api` answered with `error` (in the API's response shape) instead of being served.
    pub fn error(api: ApiKey, error: ResponseError) -> Self {
        let code = error.code();
        let name = error_code::by_name_or_number(&code.to_string())
            .map_or_else(|| code.to_string(), |(_, n)| n);
        Self::api(api, FaultKind::Error { code, name })
    }

    /// Requests of `api` wait `latency` before they are served.
    pub fn latency(api: ApiKey, latency: Duration) -> Self {
        Self::api(api, FaultKind::Latency(latency))
    }

    /// The connection is closed after a request of `api` ran, without its response.
    pub fn close_connection(api: ApiKey) -> Self {
        Self::api(api, FaultKind::CloseConnection)
    }

    /// Responses to `api` carry `throttle_time_ms` = `throttle`.
    pub fn throttle(api: ApiKey, throttle: Duration) -> Self {
        Self::api(api, FaultKind::Throttle(throttle))
    }

    /// Remote store calls of `op` wait `latency`.
    pub fn remote_latency(op: RemoteOp, latency: Duration) -> Self {
        Fault {
            target: FaultTarget::Remote(op),
            kind: FaultKind::Latency(latency),
            count: None,
        }
    }

    /// Remote store calls of `op` fail (give a count with [`times`](Self::times)).
    pub fn remote_error(op: RemoteOp) -> Self {
        Fault {
            target: FaultTarget::Remote(op),
            kind: FaultKind::RemoteError,
            count: None,
        }
    }

    /// Every remote store call of `op` fails until the fault is removed.
    pub fn remote_outage(op: RemoteOp) -> Self {
        Fault {
            target: FaultTarget::Remote(op),
            kind: FaultKind::Outage,
            count: None,
        }
    }

    /// Applies to the next `n` requests (store calls) only.
    pub fn times(mut self, n: u64) -> Self {
        self.count = Some(n);
        self
    }

    /// Applies only to requests naming `topic` (Produce, Fetch, ListOffsets, Metadata).
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        if let FaultTarget::Api { topic: t, .. } = &mut self.target {
            *t = Some(topic.into());
        }
        self
    }

    /// Applies only to `partition` of the fault's topic (Produce, Fetch, ListOffsets).
    pub fn partition(mut self, partition: i32) -> Self {
        if let FaultTarget::Api { partition: p, .. } = &mut self.target {
            *p = Some(partition);
        }
        self
    }

    /// The target.
    pub fn target(&self) -> &FaultTarget {
        &self.target
    }

    /// What it does.
    pub fn kind(&self) -> &FaultKind {
        &self.kind
    }

    /// Requests (store calls) it still applies to; `None`: until removed.
    pub fn count(&self) -> Option<u64> {
        self.count
    }

    pub(crate) fn filter(&self) -> (Option<String>, Option<i32>) {
        match &self.target {
            FaultTarget::Api {
                topic, partition, ..
            } => (topic.clone(), *partition),
            FaultTarget::Remote(_) => (None, None),
        }
    }

    pub(crate) fn from_remote(r: &RemoteFault) -> Self {
        Fault {
            target: FaultTarget::Remote(r.op),
            kind: match r.kind {
                RemoteFaultKind::Latency(d) => FaultKind::Latency(d),
                RemoteFaultKind::Error => FaultKind::RemoteError,
                RemoteFaultKind::Outage => FaultKind::Outage,
            },
            count: r.remaining,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), FaultError> {
        let bad = |m: String| Err(FaultError::Invalid(m));
        if self.count == Some(0) {
            return bad(
                "count must be at least 1 (omit it for a fault that lasts until cleared)".into(),
            );
        }
        match &self.target {
            FaultTarget::Remote(op) => match self.kind {
                FaultKind::Latency(_) | FaultKind::RemoteError => Ok(()),
                FaultKind::Outage if self.count.is_some() => bad(format!(
                    "a remote {} outage lasts until cleared: no count (use kind \"error\" with a count)",
                    op.name()
                )),
                FaultKind::Outage => Ok(()),
                _ => bad(format!(
                    "remote faults are latency, error or outage, not {}",
                    self.kind.name()
                )),
            },
            FaultTarget::Api {
                api,
                topic,
                partition,
            } => {
                if let FaultKind::Error { .. } = self.kind {
                    if !ERROR_APIS.contains(api) {
                        return Err(FaultError::ErrorNotSupported {
                            api: format!("{api:?}"),
                            supported: ERROR_APIS
                                .iter()
                                .map(|a| format!("{a:?}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                        });
                    }
                }
                if matches!(self.kind, FaultKind::RemoteError | FaultKind::Outage) {
                    return bad("outage is a remote fault: give \"remote\" instead of \"api\"".into());
                }
                if topic.is_some() && !topic_filter_supported(*api) {
                    return bad(format!(
                        "a topic filter applies to Produce, Fetch, ListOffsets and Metadata, not {api:?}"
                    ));
                }
                if partition.is_some() && (topic.is_none() || *api == ApiKey::Metadata) {
                    return bad(
                        "a partition filter needs a topic, on Produce, Fetch or ListOffsets".into(),
                    );
                }
                Ok(())
            }
        }
    }

    /// Whether the fault applies to a request of `api` touching `topics`.
    pub(crate) fn applies(&self, api: ApiKey, touches: &dyn Fn(&str, Option<i32>) -> bool) -> bool {
        match &self.target {
            FaultTarget::Api {
                api: a,
                topic,
                partition,
            } => *a == api && topic.as_deref().is_none_or(|t| touches(t, *partition)),
            FaultTarget::Remote(_) => false,
        }
    }

    /// One line for the log.
    pub fn describe(&self) -> String {
        let what = match &self.kind {
            FaultKind::Error { name, code } => format!("error {name} ({code})"),
            FaultKind::Latency(d) => format!("latency {}ms", d.as_millis()),
            FaultKind::CloseConnection => "close connection".into(),
            FaultKind::Throttle(d) => format!("throttle_time_ms {}", d.as_millis()),
            FaultKind::RemoteError => "error".into(),
            FaultKind::Outage => "outage".into(),
        };
        match &self.target {
            FaultTarget::Api {
                topic: Some(t),
                partition: Some(p),
                ..
            } => format!("{what} on {t}-{p}"),
            FaultTarget::Api { topic: Some(t), .. } => format!("{what} on topic {t}"),
            FaultTarget::Api { .. } => what,
            FaultTarget::Remote(op) => format!("remote {} {what}", op.name()),
        }
    }

    /// The JSON of `/api/v1/faults` (what [`from_json`](Self::from_json) reads, `count` as what remains).
    pub fn to_json(&self) -> Value {
        let mut v = json!({ "kind": self.kind.name(), "count": self.count });
        match &self.target {
            FaultTarget::Api {
                api,
                topic,
                partition,
            } => {
                v["api"] = json!(format!("{api:?}"));
                if let Some(t) = topic {
                    v["topic"] = json!(t);
                }
                if let Some(p) = partition {
                    v["partition"] = json!(p);
                }
            }
            FaultTarget::Remote(op) => v["remote"] = json!(op.name()),
        }
        match &self.kind {
            FaultKind::Error { code, name } => {
                v["error"] = json!(name);
                v["error_code"] = json!(code);
            }
            FaultKind::Latency(d) => v["latency_ms"] = json!(d.as_millis() as u64),
            FaultKind::Throttle(d) => v["throttle_ms"] = json!(d.as_millis() as u64),
            _ => {}
        }
        v
    }

    /// Reads a fault from the JSON of `POST /api/v1/faults`:
    /// `{"api": "Produce", "kind": "error", "error": "NOT_LEADER_OR_FOLLOWER", "count": 3, "topic": "t",
    /// "partition": 0}`; kinds `error` (`error`: a Kafka name or number), `latency` (`latency_ms`),
    /// `close_connection`, `throttle` (`throttle_ms`); remote faults `{"remote": "fetch", "kind": "outage"}`
    /// with kinds `latency`, `error`, `outage`.
    pub fn from_json(v: &Value) -> Result<Self, FaultError> {
        let obj = v
            .as_object()
            .ok_or_else(|| bad(format!("a fault is a JSON object, not {v}")))?;
        if let Some(k) = obj.keys().find(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
            return Err(bad(format!(
                "unknown field {k:?} (fields: {})",
                KNOWN_FIELDS.join(", ")
            )));
        }
        let fields = Fields(obj);
        let kind = fields.text("kind")?.ok_or_else(|| {
            bad("kind is required: error, latency, close_connection, throttle or outage".into())
        })?;
        let mut fault = match (fields.text("api")?, fields.text("remote")?) {
            (Some(_), Some(_)) => return Err(bad("give either api or remote, not both".into())),
            (None, None) => {
                return Err(bad(
                    "api (a Kafka API name) or remote (copy, fetch, delete) is required".into(),
                ))
            }
            (Some(api), None) => Self::api_from_json(&fields, api, &kind)?,
            (None, Some(op)) => Self::remote_from_json(&fields, op, &kind)?,
        };
        fault.count = fields.number("count")?;
        fault.validate()?;
        Ok(fault)
    }

    /// An API fault of `kind` on the API named `api`, with its topic and partition filter.
    fn api_from_json(fields: &Fields<'_>, api: String, kind: &str) -> Result<Self, FaultError> {
        let key = ApiKey::iter()
            .find(|k| format!("{k:?}").eq_ignore_ascii_case(&api))
            .ok_or(FaultError::UnknownApi(api))?;
        let kind = match kind {
            "error" => {
                let name = fields.text("error")?.ok_or_else(|| {
                    bad("kind \"error\" needs error (a Kafka error name or number)".into())
                })?;
                let (code, name) = error_code::by_name_or_number(&name)
                    .ok_or(FaultError::UnknownErrorCode(name))?;
                FaultKind::Error { code, name }
            }
            "latency" => FaultKind::Latency(fields.ms("latency_ms")?),
            "close_connection" => FaultKind::CloseConnection,
            "throttle" => FaultKind::Throttle(fields.ms("throttle_ms")?),
            other => {
                return Err(bad(format!(
                    "unknown kind {other:?} for an API fault (error, latency, close_connection, throttle)"
                )))
            }
        };
        let mut f = Self::api(key, kind);
        if let Some(t) = fields.text("topic")? {
            f = f.topic(t);
        }
        if let Some(p) = fields.0.get("partition").filter(|p| !p.is_null()) {
            let p = p
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .filter(|p| *p >= 0)
                .ok_or_else(|| bad(format!("partition must be a partition number, not {p}")))?;
            if f.filter().0.is_none() {
                return Err(bad("a partition filter needs a topic".into()));
            }
            f = f.partition(p);
        }
        Ok(f)
    }

    /// A remote storage fault of `kind` on the operation named `op`.
    fn remote_from_json(fields: &Fields<'_>, op: String, kind: &str) -> Result<Self, FaultError> {
        let op = RemoteOp::from_name(&op).ok_or(FaultError::UnknownRemoteOp(op))?;
        if fields.0.contains_key("topic") || fields.0.contains_key("partition") {
            return Err(bad(
                "remote faults apply to every topic: no topic or partition".into(),
            ));
        }
        Ok(match kind {
            "latency" => Self::remote_latency(op, fields.ms("latency_ms")?),
            "error" => Self::remote_error(op),
            "outage" => Self::remote_outage(op),
            other => {
                return Err(bad(format!(
                    "unknown kind {other:?} for a remote fault (latency, error, outage)"
                )))
            }
        })
    }
}

/// The fields of a fault's JSON.
const KNOWN_FIELDS: [&str; 9] = [
    "api",
    "remote",
    "kind",
    "error",
    "count",
    "topic",
    "partition",
    "latency_ms",
    "throttle_ms",
];

fn bad(m: String) -> FaultError {
    FaultError::Invalid(m)
}

/// A fault's JSON object, read field by field with errors that name the field.
struct Fields<'a>(&'a serde_json::Map<String, Value>);

impl Fields<'_> {
    /// A string field (`error` may also be a number).
    fn text(&self, k: &str) -> Result<Option<String>, FaultError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) if k == "error" => Ok(Some(n.to_string())),
            Some(other) => Err(bad(format!("{k} must be a string, not {other}"))),
        }
    }

    fn number(&self, k: &str) -> Result<Option<u64>, FaultError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(n) => n
                .as_u64()
                .map(Some)
                .ok_or_else(|| bad(format!("{k} must be a non-negative integer, not {n}"))),
        }
    }

    /// A duration in milliseconds the fault's kind needs.
    fn ms(&self, k: &str) -> Result<Duration, FaultError> {
        self.number(k)?.map(Duration::from_millis).ok_or_else(|| {
            bad(format!(
                "kind {:?} needs {k}",
                self.text("kind").ok().flatten()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: Value) -> Result<Fault, String> {
        Fault::from_json(&v).map_err(|e| e.to_string())
    }

    #[test]
    fn a_fault_is_read_from_json_by_kafka_names() {
        let f = parse(
            json!({"api": "Produce", "kind": "error", "error": "NOT_LEADER_OR_FOLLOWER",
            "count": 3, "topic": "t", "partition": 1}),
        )
        .unwrap();
        assert_eq!(
            f,
            Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower)
                .times(3)
                .topic("t")
                .partition(1)
        );
        assert_eq!(
            parse(json!({"api": "fetch", "kind": "latency", "latency_ms": 250})).unwrap(),
            Fault::latency(ApiKey::Fetch, Duration::from_millis(250))
        );
        assert_eq!(
            parse(json!({"remote": "fetch", "kind": "outage"})).unwrap(),
            Fault::remote_outage(RemoteOp::Fetch)
        );
        let by_number = parse(json!({"api": "Produce", "kind": "error", "error": 29})).unwrap();
        assert_eq!(by_number.to_json()["error"], "TOPIC_AUTHORIZATION_FAILED");
    }

    #[test]
    fn bad_faults_are_refused_naming_the_bad_value() {
        let e = parse(json!({"api": "Prodce", "kind": "latency", "latency_ms": 1})).unwrap_err();
        assert!(e.contains("\"Prodce\""), "{e}");
        let e =
            parse(json!({"api": "Produce", "kind": "error", "error": "NOT_A_CODE"})).unwrap_err();
        assert!(e.contains("\"NOT_A_CODE\""), "{e}");
        let e = parse(json!({"api": "Produce", "kind": "error", "error": 9999})).unwrap_err();
        assert!(e.contains("9999"), "{e}");
        let e = parse(json!({"remote": "upload", "kind": "error"})).unwrap_err();
        assert!(e.contains("\"upload\""), "{e}");
        let e = parse(json!({"remote": "fetch", "kind": "outage", "count": 2})).unwrap_err();
        assert!(e.contains("until cleared"), "{e}");
        let e = parse(json!({"api": "Produce", "kind": "error", "error": "NOT_LEADER_OR_FOLLOWER", "colour": 1}))
            .unwrap_err();
        assert!(e.contains("\"colour\""), "{e}");
        let e = parse(json!({"api": "Produce", "kind": "latency"})).unwrap_err();
        assert!(e.contains("latency_ms"), "{e}");
        let e = parse(json!({"api": "Produce", "kind": "error", "error": "NOT_LEADER_OR_FOLLOWER", "count": 0}))
            .unwrap_err();
        assert!(e.contains("count"), "{e}");
    }
}

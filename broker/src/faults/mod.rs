//! Faults on demand: a running broker told (through `/api/v1/faults` or `strata::Broker::faults`) to answer the
//! next N requests of an API with a Kafka error, to add latency, to close the connection after a request, to set
//! `throttle_time_ms`, or — on the remote tier — to slow down, fail or lose copies, fetches and deletes.
//!
//! Faults live in memory only (a restart starts with none). Every injected fault is logged (WARN, with the API,
//! the fault and what remains of its count) and counted on `/metrics` as
//! `strata_faults_injected_total{api,kind}`. The request path checks one atomic flag ([`Faults::armed`]) in
//! `dispatch`, the single injection point; with no fault set nothing else runs.
//!
//! Error faults answer with the API's own response shape: Produce, Fetch and ListOffsets put the code on each
//! partition (only the chosen topic/partition when the fault names one; the other partitions of the request
//! are served), Metadata on each topic, the group, transaction and topic-admin APIs in their top-level or
//! per-resource code ([`respond`]).

mod respond;
mod spec;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::RequestHeader;
use strata_tiering::faults::{RemoteFault, RemoteFaults};
use tracing::warn;

use crate::broker::Broker;

pub use kafka_protocol::messages::ApiKey;
pub use kafka_protocol::ResponseError;
pub(crate) use respond::Adjust;
pub use spec::{Fault, FaultError, FaultKind, FaultTarget, SetFault};
pub use strata_tiering::faults::{RemoteFaultKind, RemoteOp};

/// One fault set on the request path.
#[derive(Clone, Debug)]
struct Rule {
    id: u64,
    fault: Fault,
}

/// The faults set on a broker (see the [module docs](self)).
#[derive(Default)]
pub struct Faults {
    any: AtomicBool,
    next_id: AtomicU64,
    rules: Mutex<Vec<Rule>>,
    remote: OnceLock<Arc<RemoteFaults>>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults").field("set", &self.list()).finish()
    }
}

/// What the faults of one request do to it (see [`Faults::before`]).
#[derive(Debug, Default)]
pub(crate) struct Injected {
    /// The answer in place of the handler's (an error fault).
    pub response: Option<Result<Option<Bytes>, String>>,
    /// `throttle_time_ms` to set in the handler's response.
    pub throttle_ms: Option<i32>,
    /// An error fault applied to the handler's response (read-only APIs with partitions or topics).
    pub error_after: Option<(i16, Option<String>, Option<i32>)>,
    /// Close the connection after the request ran, without its response.
    pub close: bool,
}

impl Faults {
    /// Whether any request-path fault is set (one relaxed load: the cost of faults when none is set).
    #[inline]
    pub fn armed(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Wires the remote tier's faults (the store under the RSM) in; called once when tiering runs.
    pub fn set_remote(&self, remote: Arc<RemoteFaults>) {
        let _ = self.remote.set(remote);
    }

    /// Sets `fault`; its id (for [`remove`](Self::remove) and the listing).
    pub fn add(&self, fault: Fault) -> Result<u64, FaultError> {
        fault.validate()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        match fault.target.clone() {
            FaultTarget::Remote(op) => {
                let remote = self.remote.get().ok_or(FaultError::NoTiering)?;
                let kind = match fault.kind {
                    FaultKind::Latency(d) => RemoteFaultKind::Latency(d),
                    FaultKind::RemoteError => RemoteFaultKind::Error,
                    FaultKind::Outage => RemoteFaultKind::Outage,
                    _ => unreachable!("validated"),
                };
                remote.add(RemoteFault {
                    id,
                    op,
                    kind,
                    remaining: fault.count,
                });
            }
            FaultTarget::Api { .. } => {
                let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
                rules.push(Rule { id, fault });
                self.any.store(true, Ordering::Release);
            }
        }
        Ok(id)
    }

    /// Removes the fault `id`; whether it was set.
    pub fn remove(&self, id: u64) -> bool {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let before = rules.len();
        rules.retain(|r| r.id != id);
        self.any.store(!rules.is_empty(), Ordering::Release);
        let removed = rules.len() != before;
        drop(rules);
        removed || self.remote.get().is_some_and(|r| r.remove(id))
    }

    /// Removes every fault.
    pub fn clear(&self) {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        rules.clear();
        self.any.store(false, Ordering::Release);
        drop(rules);
        if let Some(r) = self.remote.get() {
            r.clear();
        }
    }

    /// Every fault set, oldest first, with its id and what remains of its count.
    pub fn list(&self) -> Vec<SetFault> {
        let mut out: Vec<SetFault> = self
            .rules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|r| SetFault {
                id: r.id,
                fault: r.fault.clone(),
            })
            .collect();
        if let Some(remote) = self.remote.get() {
            out.extend(remote.list().into_iter().map(|r| SetFault {
                id: r.id,
                fault: Fault::from_remote(&r),
            }));
        }
        out.sort_by_key(|f| f.id);
        out
    }

    /// Takes the faults of one request (counting them down, logging and counting each), waits out their
    /// latency, and says what else they do. `None`: no fault applies.
    pub(crate) async fn before(
        &self,
        broker: &Arc<Broker>,
        api: ApiKey,
        version: i16,
        header: &RequestHeader,
        body: &Bytes,
    ) -> Option<Injected> {
        let topics = respond::TopicsOf::new(api, version, body);
        // Versions below the codec's floor are served by the legacy handlers: no error response for them.
        let codec = !crate::versions::below_codec(api, version);
        let applied: Vec<Rule> = {
            let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
            let mut applied = Vec::new();
            let mut error_taken = false;
            for r in rules.iter_mut() {
                if !r.fault.applies(api, &topics, broker) {
                    continue;
                }
                // One error answers a request; a second error fault waits for the next one.
                if matches!(r.fault.kind, FaultKind::Error { .. }) {
                    if error_taken || !codec {
                        continue;
                    }
                    error_taken = true;
                }
                if let Some(n) = r.fault.count.as_mut() {
                    *n = n.saturating_sub(1);
                }
                applied.push(r.clone());
            }
            rules.retain(|r| r.fault.count != Some(0));
            self.any.store(!rules.is_empty(), Ordering::Release);
            applied
        };
        if applied.is_empty() {
            return None;
        }
        let mut out = Injected::default();
        let mut delay = Duration::ZERO;
        for r in &applied {
            let f = &r.fault;
            warn!(fault_id = r.id, api = ?api, fault = %f.describe(),
                remaining = f.count.map_or_else(|| "until cleared".to_string(), |n| n.to_string()),
                correlation_id = header.correlation_id, "injected fault");
            broker
                .metrics()
                .fault_injected(&format!("{api:?}"), f.kind.name());
            match &f.kind {
                FaultKind::Latency(d) => delay += *d,
                FaultKind::CloseConnection => out.close = true,
                FaultKind::Throttle(d) => {
                    out.throttle_ms = Some(i32::try_from(d.as_millis()).unwrap_or(i32::MAX))
                }
                FaultKind::Error { code, .. } => {
                    let (topic, partition) = f.filter();
                    if respond::answers_after(api) {
                        out.error_after = Some((*code, topic, partition));
                    } else {
                        out.response = Some(
                            respond::error_response(
                                broker,
                                api,
                                version,
                                header,
                                body.clone(),
                                *code,
                                topic.as_deref(),
                                partition,
                            )
                            .await,
                        );
                    }
                }
                FaultKind::RemoteError | FaultKind::Outage => {}
            }
        }
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Some(out)
    }
}

/// The close reason of a connection closed by a fault.
pub(crate) fn close_reason(api: ApiKey) -> String {
    format!("injected fault: closing the connection after a {api:?} request")
}

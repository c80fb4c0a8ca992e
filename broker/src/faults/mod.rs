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
//! per-resource code (built in `dispatch`, which applies what [`Faults::take`] returns).

mod spec;

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use strata_tiering::faults::{RemoteFault, RemoteFaults};
use tracing::warn;

use crate::metrics::BrokerMetrics;

pub use kafka_protocol::messages::ApiKey;
pub use kafka_protocol::ResponseError;
pub(crate) use spec::answers_after;
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

/// What the faults taken for one request do to it (see [`Faults::take`]).
#[derive(Debug, Default)]
pub(crate) struct Taken {
    /// Latency to add before serving.
    pub delay: Duration,
    /// `throttle_time_ms` to set in the response.
    pub throttle_ms: Option<i32>,
    /// An error to answer with: (code, topic, partition) chosen.
    pub error: Option<(i16, Option<String>, Option<i32>)>,
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
                let mut rules = self.rules.lock();
                rules.push(Rule { id, fault });
                self.any.store(true, Ordering::Release);
            }
        }
        Ok(id)
    }

    /// Removes the fault `id`; whether it was set.
    pub fn remove(&self, id: u64) -> bool {
        let mut rules = self.rules.lock();
        let before = rules.len();
        rules.retain(|r| r.id != id);
        self.any.store(!rules.is_empty(), Ordering::Release);
        let removed = rules.len() != before;
        drop(rules);
        removed || self.remote.get().is_some_and(|r| r.remove(id))
    }

    /// Removes every fault.
    pub fn clear(&self) {
        let mut rules = self.rules.lock();
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

    /// Takes the faults of one request of `api` (counting them down; logging and counting each on `metrics`):
    /// `touches(topic, partition)` says whether the request names a topic (partition) a fault is limited to;
    /// `errors` whether an error fault can answer it (versions below the codec's floor cannot). `None`: no
    /// fault applies.
    pub(crate) fn take(
        &self,
        api: ApiKey,
        errors: bool,
        touches: &dyn Fn(&str, Option<i32>) -> bool,
        metrics: &BrokerMetrics,
        correlation_id: i32,
    ) -> Option<Taken> {
        let applied: Vec<Rule> = {
            let mut rules = self.rules.lock();
            let mut applied = Vec::new();
            let mut error_taken = false;
            for r in rules.iter_mut() {
                if !r.fault.applies(api, touches) {
                    continue;
                }
                // One error answers a request; a second error fault waits for the next one.
                if matches!(r.fault.kind, FaultKind::Error { .. }) {
                    if error_taken || !errors {
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
        let mut out = Taken::default();
        for r in &applied {
            let f = &r.fault;
            warn!(fault_id = r.id, api = ?api, fault = %f.describe(),
                remaining = f.count.map_or_else(|| "until cleared".to_string(), |n| n.to_string()),
                correlation_id, "injected fault");
            metrics.fault_injected(&format!("{api:?}"), f.kind.name());
            match &f.kind {
                FaultKind::Latency(d) => out.delay += *d,
                FaultKind::CloseConnection => out.close = true,
                FaultKind::Throttle(d) => {
                    out.throttle_ms = Some(i32::try_from(d.as_millis()).unwrap_or(i32::MAX))
                }
                FaultKind::Error { code, .. } => {
                    let (topic, partition) = f.filter();
                    out.error = Some((*code, topic, partition));
                }
                FaultKind::RemoteError | FaultKind::Outage => {}
            }
        }
        Some(out)
    }
}

//! Bounds on connections as a whole: the open connections by client IP (`max.connections.per.ip`,
//! `max.connections.per.ip.overrides`), which of them is idle and for how long (so the longest-idle one can make
//! room at `max.connections`), and the request bytes being read across all of them (`queued.max.request.bytes`).
//! The three connection limits change at run time (Kafka's `SocketServer.ReconfigurableConfigs`, through the
//! dynamic broker configs: [`Connections`] is a [`Reconfigurable`]).

use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::config::{listeners::parse_ip_overrides, BrokerConfig};
use crate::error::{Error, Result};
use crate::network::budget::RequestBudget;
use crate::topics::dynamic::{as_i64, value_or, Reconfigurable};

/// What the registry and the connection's own task share about one connection.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// Microseconds since the registry's epoch of the last request received or response written (fine enough
    /// that connections served one after the other never tie).
    last_activity_us: AtomicU64,
    /// True while the connection waits for the first byte of its next request (nothing in flight).
    idle: AtomicBool,
    /// Cancelled to close the connection (eviction to make room, or shutdown through the parent token).
    close: CancellationToken,
    epoch: Instant,
}

impl ConnState {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// Records activity (a request read, a response written).
    pub(crate) fn touch(&self) {
        self.last_activity_us
            .store(self.now_us(), Ordering::Relaxed);
    }

    /// Marks the connection waiting for a request (true) or busy with one (false).
    pub(crate) fn set_idle(&self, idle: bool) {
        self.idle.store(idle, Ordering::Relaxed);
    }

    /// How long ago the last activity was.
    pub(crate) fn idle_for(&self) -> std::time::Duration {
        let last = self.last_activity_us.load(Ordering::Relaxed);
        std::time::Duration::from_micros(self.now_us().saturating_sub(last))
    }

    /// Cancelled when the connection must close.
    pub(crate) fn close_token(&self) -> &CancellationToken {
        &self.close
    }
}

#[derive(Debug, Default)]
struct Inner {
    by_ip: HashMap<IpAddr, usize>,
    conns: HashMap<u64, Arc<ConnState>>,
    next_id: u64,
}

/// The broker's open connections.
#[derive(Debug)]
pub(crate) struct Connections {
    inner: Mutex<Inner>,
    epoch: Instant,
    /// The limits in force (the static ones with the dynamic broker configs applied).
    limits: RwLock<Limits>,
    /// The limits of the static config.
    statics: Limits,
    /// `max.connections` as permits, one per open connection.
    max_connections: Arc<Semaphore>,
    /// `queued.max.request.bytes`; `None` when unbounded (-1).
    request_bytes: Option<Arc<RequestBudget>>,
}

/// The connection limits AlterConfigs may change at run time.
#[derive(Debug, Clone, PartialEq)]
struct Limits {
    max: usize,
    per_ip: usize,
    per_ip_overrides: BTreeMap<IpAddr, usize>,
}

/// A registered connection; dropping it unregisters it.
#[derive(Debug)]
pub(crate) struct Registered {
    owner: Arc<Connections>,
    id: u64,
    ip: IpAddr,
    state: Arc<ConnState>,
}

impl Registered {
    /// The state shared with the registry.
    pub(crate) fn state(&self) -> &Arc<ConnState> {
        &self.state
    }

    /// The request-bytes budget (`None` = unbounded).
    pub(crate) fn request_bytes(&self) -> Option<&Arc<RequestBudget>> {
        self.owner.request_bytes.as_ref()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut inner = self.owner.lock();
        inner.conns.remove(&self.id);
        if let Some(n) = inner.by_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                inner.by_ip.remove(&self.ip);
            }
        }
    }
}

impl Connections {
    /// Limits from the broker config.
    pub(crate) fn new(config: &BrokerConfig) -> Arc<Self> {
        let request_bytes = usize::try_from(config.queued_max_request_bytes)
            .ok()
            .map(|n| Arc::new(RequestBudget::new(n)));
        let statics = Limits {
            max: config.max_connections,
            per_ip: config.max_connections_per_ip,
            per_ip_overrides: config.max_connections_per_ip_overrides.clone(),
        };
        Arc::new(Connections {
            inner: Mutex::new(Inner::default()),
            epoch: Instant::now(),
            max_connections: Arc::new(Semaphore::new(statics.max.min(Semaphore::MAX_PERMITS))),
            limits: RwLock::new(statics.clone()),
            statics,
            request_bytes,
        })
    }

    /// `max.connections` as a semaphore: a connection is served while it holds a permit.
    pub(crate) fn max_connections(&self) -> &Arc<Semaphore> {
        &self.max_connections
    }

    /// `max.connections` in force.
    pub(crate) fn max(&self) -> usize {
        self.limits.read().max
    }

    /// The limits `values` (dynamic broker configs) make of the static ones.
    fn limits_of(&self, values: &BTreeMap<String, String>) -> Result<Limits> {
        let count = |n: i64| usize::try_from(n).ok().filter(|n| *n >= 1);
        let max = value_or(values, "max.connections", self.statics.max, |v| {
            as_i64(v).and_then(count)
        })?;
        let per_ip = value_or(values, "max.connections.per.ip", self.statics.per_ip, |v| {
            as_i64(v).and_then(count)
        })?;
        let per_ip_overrides = match values.get("max.connections.per.ip.overrides") {
            None => self.statics.per_ip_overrides.clone(),
            Some(raw) => parse_ip_overrides(raw).map_err(|reason| {
                Error::config(
                    "max.connections.per.ip.overrides".into(),
                    raw.clone(),
                    reason,
                )
            })?,
        };
        Ok(Limits {
            max: max.min(Semaphore::MAX_PERMITS),
            per_ip,
            per_ip_overrides,
        })
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// The limit of connections from `ip`.
    pub(crate) fn limit_for(&self, ip: IpAddr) -> usize {
        let limits = self.limits.read();
        limits
            .per_ip_overrides
            .get(&ip)
            .copied()
            .unwrap_or(limits.per_ip)
    }

    /// Registers a connection from `ip`, or `Err(limit)` if `ip` already has its limit of connections.
    /// `parent` cancels every connection at shutdown.
    pub(crate) fn register(
        self: &Arc<Self>,
        ip: IpAddr,
        parent: &CancellationToken,
    ) -> Result<Registered, usize> {
        let limit = self.limit_for(ip);
        let mut inner = self.lock();
        let n = inner.by_ip.entry(ip).or_insert(0);
        if *n >= limit {
            return Err(limit);
        }
        *n += 1;
        inner.next_id += 1;
        let id = inner.next_id;
        let state = Arc::new(ConnState {
            last_activity_us: AtomicU64::new(self.epoch.elapsed().as_micros() as u64),
            idle: AtomicBool::new(true),
            close: parent.child_token(),
            epoch: self.epoch,
        });
        inner.conns.insert(id, state.clone());
        Ok(Registered {
            owner: self.clone(),
            id,
            ip,
            state,
        })
    }

    /// Closes the connection idle the longest (waiting for a request, none in flight) to make room for a new
    /// one; false if every connection is busy.
    pub(crate) fn evict_longest_idle(&self) -> bool {
        let inner = self.lock();
        let victim = inner
            .conns
            .values()
            .filter(|c| c.idle.load(Ordering::Relaxed) && !c.close.is_cancelled())
            .min_by_key(|c| c.last_activity_us.load(Ordering::Relaxed));
        match victim {
            Some(c) => {
                c.close.cancel();
                true
            }
            None => false,
        }
    }
}

impl Reconfigurable for Connections {
    fn keys(&self) -> &'static [&'static str] {
        &[
            "max.connections",
            "max.connections.per.ip",
            "max.connections.per.ip.overrides",
        ]
    }

    fn validate(&self, values: &BTreeMap<String, String>) -> Result<()> {
        self.limits_of(values).map(|_| ())
    }

    /// New limits apply to the next connection accepted; open connections stay (as Kafka). A lower
    /// `max.connections` takes the permits back as connections close.
    fn reconfigure(&self, values: &BTreeMap<String, String>) -> Result<()> {
        let new = self.limits_of(values)?;
        let old = std::mem::replace(&mut *self.limits.write(), new.clone());
        if new.max > old.max {
            self.max_connections.add_permits(new.max - old.max);
        } else if new.max < old.max {
            let excess = old.max - new.max;
            let missing = excess - self.max_connections.forget_permits(excess);
            if missing > 0 {
                let sem = self.max_connections.clone();
                let handle = tokio::runtime::Handle::try_current()
                    .map_err(|e| Error::io("lowering max.connections", std::io::Error::other(e)))?;
                handle.spawn(async move {
                    if let Ok(p) = sem.acquire_many_owned(missing as u32).await {
                        p.forget();
                    }
                });
            }
        }
        tracing::info!(
            max = new.max,
            per_ip = new.per_ip,
            overrides = new.per_ip_overrides.len(),
            "connection limits changed"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> BrokerConfig {
        BrokerConfig::from_properties(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn per_ip_overrides_parse_kafka_syntax() {
        let c = config(&[(
            "max.connections.per.ip.overrides",
            "127.0.0.2:3, ::1:4,[::2]:6,localhost:5",
        )]);
        let o = &c.max_connections_per_ip_overrides;
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(o[&ip("127.0.0.2")], 3);
        assert_eq!(o[&ip("::2")], 6);
        assert_eq!(o[&ip("127.0.0.1")], 5);
        assert_eq!(o[&ip("::1")], 5);
        for bad in ["example.com:3", "127.0.0.1", "127.0.0.1:many"] {
            let err = BrokerConfig::from_properties(
                &[(
                    "max.connections.per.ip.overrides".to_string(),
                    bad.to_string(),
                )]
                .into(),
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("max.connections.per.ip.overrides") && err.contains(bad),
                "{err}"
            );
        }
    }

    #[test]
    fn per_ip_limit_counts_open_connections_and_frees_on_drop() {
        let c = Connections::new(&config(&[
            ("max.connections.per.ip", "1"),
            ("max.connections.per.ip.overrides", "127.0.0.2:2"),
        ]));
        let token = CancellationToken::new();
        let one: IpAddr = "127.0.0.1".parse().unwrap();
        let two: IpAddr = "127.0.0.2".parse().unwrap();
        let a = c.register(one, &token).unwrap();
        assert_eq!(c.register(one, &token).unwrap_err(), 1);
        let _b = c.register(two, &token).unwrap();
        let _b2 = c.register(two, &token).unwrap();
        assert!(c.register(two, &token).is_err());
        drop(a);
        assert!(c.register(one, &token).is_ok());
    }

    #[test]
    fn eviction_picks_the_longest_idle_and_skips_busy_ones() {
        let c = Connections::new(&BrokerConfig::default());
        let token = CancellationToken::new();
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let old = c.register(ip, &token).unwrap();
        let busy = c.register(ip, &token).unwrap();
        let recent = c.register(ip, &token).unwrap();
        old.state().last_activity_us.store(0, Ordering::Relaxed);
        busy.state().last_activity_us.store(0, Ordering::Relaxed);
        busy.state().set_idle(false);
        recent
            .state()
            .last_activity_us
            .store(1_000, Ordering::Relaxed);
        assert!(c.evict_longest_idle());
        assert!(old.state().close_token().is_cancelled());
        assert!(!busy.state().close_token().is_cancelled());
        assert!(c.evict_longest_idle());
        assert!(recent.state().close_token().is_cancelled());
        assert!(!c.evict_longest_idle(), "only the busy one is left");
    }
}

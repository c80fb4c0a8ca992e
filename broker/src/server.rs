//! The server: [`Server`] starts a broker in this process exactly as the `strata` binary does (tests, the demo and
//! embedding use it too), and owns its shutdown tree.
//!
//! Start-up, bottom-up: bind every client listener → open (recover) the logs and the topic registry → build the
//! log cleaner ([`crate::topics::cleaner`]) → start tiered storage on them → assemble the broker's components
//! ([`Broker::assemble`]: topics, group coordinator with its offset store, producer ids), handing tiering in
//! through its hooks → start the cleaner's threads → serve `http.listener` ([`crate::http`]: console, JSON API,
//! `/metrics`; a taken port is a WARN) → serve.
//!
//! Shutdown tree: one root [`CancellationToken`] and one [`TaskTracker`], both owned by the server. The serving
//! task (accept loops of every listener; its own tracker of connections and maintenance loops, drained with a
//! deadline) and tiering's background work run on the tracker, under child tokens of the root. Order: stop
//! accepting → drain connections → tiering stop (RLM, RLMM) → the log cleaner told to stop (root
//! token) → every remaining task ends → logs flushed and the clean-shutdown marker written.
//!
//! Serving: a connection semaphore (`max.connections`, making room by closing the longest-idle connection),
//! per-IP limits, one task per connection, periodic log maintenance and heap trimming ([`crate::heap`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use strata_storage::{LogManager, LogManagerConfig};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

use crate::broker::{shutdown_logs, Broker, Listener, Parts};
use crate::config::BrokerConfig;
use crate::error::Result;
use crate::heap;
use crate::http::{HttpContext, HttpServer};
use crate::network::connection;
use crate::network::limits::Connections;
use crate::remote::hooks::TieringHooks;
use crate::remote::RemoteLogReader;
use crate::security::{self, ListenerSecurity};
use crate::tiered::{configs_from_properties, Tiering, TieringConfig};
use crate::topics::cleaner;
use crate::topics::{self, TopicRegistry};

/// How long shutdown waits for open connections to finish their current request.
const DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// How long a new connection at `max.connections` waits for the idle connection closed to make room.
const EVICT_WAIT: Duration = Duration::from_secs(5);

/// How long shutdown waits for the tasks left on the tracker once serving and tiering stopped.
const TASKS_DEADLINE: Duration = Duration::from_secs(5);

/// Serves every listener (index `i` of `listeners` is the broker's listener `i`) until the broker's token is
/// cancelled, then drains connections (bounded by a deadline) and stops. Connections and the maintenance loops run
/// on this task's own tracker, a child of the server's.
async fn run(
    listeners: Vec<TcpListener>,
    security: Vec<Arc<ListenerSecurity>>,
    broker: Arc<Broker>,
) {
    let cancel = broker.cancel_token();
    let tracker = TaskTracker::new();
    let conns = Connections::new(broker.config());
    let limit = conns.max_connections().clone();
    broker.topics().add_reconfigurable(conns.clone());
    spawn_maintenance(&broker, &tracker, cancel.clone());

    loop {
        let accepts = listeners
            .iter()
            .enumerate()
            .map(|(i, l)| Box::pin(async move { (i, l.accept().await) }));
        let (index, socket, peer) = tokio::select! {
            _ = cancel.cancelled() => break,
            ((i, r), _, _) = futures::future::select_all(accepts) => match r {
                Ok((socket, peer)) => (i, socket, peer),
                Err(e) => {
                    warn!(error = %e, listener = %broker.listeners()[i].name, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Kafka's max.connections.per.ip: over the limit the new connection is closed at once.
        let registered = match conns.register(peer.ip(), &cancel) {
            Ok(r) => r,
            Err(limit) => {
                info!(%peer, limit, "rejected connection: the address already has max.connections.per.ip connections");
                continue;
            }
        };
        // At max.connections the longest-idle connection (between requests) is closed to make room, as Kafka
        // closes least-recently-used connections; a new client never waits behind idle sockets. If every
        // connection is busy with a request, the new one is closed at once.
        let permit = match limit.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) if conns.evict_longest_idle() => {
                tokio::time::timeout(EVICT_WAIT, limit.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
            Err(_) => None,
        };
        let Some(permit) = permit else {
            warn!(%peer, max = conns.max(),
                "rejected connection: max.connections reached and no connection is idle");
            continue;
        };
        let broker = broker.clone();
        let security = security[index].clone();
        tracker.spawn(async move {
            connection::serve(socket, peer, index, security, broker, registered).await;
            drop(permit);
        });
    }
    info!("shutting down: no new connections, draining open ones");
    drop(listeners);
    tracker.close();
    if tokio::time::timeout(DRAIN_DEADLINE, tracker.wait())
        .await
        .is_err()
    {
        warn!("connections still open after {DRAIN_DEADLINE:?}; closing them");
    }
}

fn spawn_maintenance(broker: &Arc<Broker>, tracker: &TaskTracker, cancel: CancellationToken) {
    let b = broker.clone();
    let c = cancel.clone();
    let every = Duration::from_millis(broker.config().log_retention_check_interval_ms);
    tracker.spawn(periodic(every, c, move || {
        Ok(b.log_manager()
            .run_retention(strata_storage::time::now_ms())?)
    }));
    let b = broker.clone();
    // Checkpoints every log.flush.offset.checkpoint.interval.ms; sooner when log.flush.interval.ms asks for
    // time-based flushes (topic-level flush.ms is honoured at this granularity).
    let cfg = broker.config();
    let every = Duration::from_millis(
        cfg.log_flush_checkpoint_interval_ms
            .min(cfg.log.flush_ms.max(100)),
    );
    tracker.spawn(periodic(every, cancel.clone(), move || {
        Ok(b.log_manager()
            .flush_dirty_and_checkpoint(strata_storage::time::now_ms())?)
    }));
    // Committed offsets of groups empty for offsets.retention.minutes expire (KIP-211).
    let b = broker.clone();
    let every = Duration::from_millis(broker.config().offsets_retention_check_interval_ms);
    tracker.spawn(periodic(every, cancel.clone(), move || {
        b.expire_offsets(strata_storage::time::now_ms())?;
        Ok(())
    }));
    // Transactions open longer than their transaction.timeout.ms are aborted (their producer fenced).
    // Idle transactional ids past transactional.id.expiration.ms are removed in the same pass.
    let b = broker.clone();
    let every = Duration::from_millis(broker.config().transaction.abort_interval_ms);
    let id_expiration_ms = broker.config().transaction.id_expiration_ms;
    tracker.spawn(periodic(every, cancel.clone(), move || {
        if b.txn().is_ready() {
            let now = strata_storage::time::now_ms();
            b.txn().abort_timed_out(now)?;
            b.txn()
                .remove_expired_transactional_ids(now, id_expiration_ms)?;
        }
        Ok(())
    }));
    // The dirs of deleted topics' partitions (renamed `-delete` when DeleteTopics answered), removed off the
    // request path as Kafka's asyncDelete; what is left at shutdown is removed at the next start.
    let b = broker.clone();
    let c = cancel.clone();
    tracker.spawn(async move {
        let waiting = b.topics().deleted_dirs_waiting();
        // A first pass for the dirs queued while the broker opened (empty partitions of unknown topics).
        loop {
            let r = b.clone();
            let _ = tokio::task::spawn_blocking(move || r.topics().remove_deleted_dirs()).await;
            tokio::select! {
                _ = c.cancelled() => return,
                _ = waiting.notified() => {}
            }
        }
    });
    // Free heap pages back to the OS (glibc keeps what a burst freed in its per-thread arenas; see crate::heap),
    // and the log's idle read buffers once reads stopped for an interval (strata_storage::buffers).
    tracker.spawn(periodic(heap::TRIM_INTERVAL, cancel.clone(), || {
        strata_storage::buffers::reads().release_idle();
        heap::trim();
        Ok(())
    }));
    // Group sessions and rebalance deadlines.
    let b = broker.clone();
    tracker.spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => {
                    b.groups().tick();
                    // Groups that became empty by expiry are stored, off the async workers.
                    let b = b.clone();
                    let _ = tokio::task::spawn_blocking(move || b.groups().persist_dirty()).await;
                }
            }
        }
    });
}

/// Runs `work` on the blocking pool every `every`, skipping ticks while a run is still going.
async fn periodic<F>(every: Duration, cancel: CancellationToken, work: F)
where
    F: Fn() -> Result<()> + Send + Sync + Clone + 'static,
{
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        let w = work.clone();
        match tokio::task::spawn_blocking(w).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => error!(error = %e, "periodic log maintenance failed"),
            Err(e) => error!(error = %e, "periodic log maintenance panicked"),
        }
    }
}

/// A step run on the assembled broker before it serves ([`ServerOptions::setup`]).
pub type SetupFn = Box<dyn FnOnce(&Arc<Broker>) -> Result<()> + Send>;

/// What a caller adds to a [`Server`] before it serves (tests and embedding; the binary adds nothing).
#[derive(Default)]
pub struct ServerOptions {
    /// Serves Fetch below the local log start when tiered storage is off (a test's canned remote tier).
    pub remote_reader: Option<Arc<dyn RemoteLogReader>>,
    /// Runs on the assembled broker before the first client is served; an error stops start-up cleanly.
    pub setup: Option<SetupFn>,
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("remote_reader", &self.remote_reader.is_some())
            .field("setup", &self.setup.is_some())
            .finish()
    }
}

/// A broker running in this process, serving its listeners in the background. See the [module docs](self).
pub struct Server {
    addrs: Vec<SocketAddr>,
    broker: Arc<Broker>,
    tiering: Option<Arc<Tiering>>,
    http: Option<HttpServer>,
    root: CancellationToken,
    tasks: TaskTracker,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addrs", &self.addrs)
            .finish_non_exhaustive()
    }
}

fn io_error(context: impl Into<String>, e: impl std::fmt::Display) -> crate::Error {
    crate::Error::io(context, std::io::Error::other(e.to_string()))
}

/// Opens (recovering) the logs and the topic registry. Blocking.
fn open_storage(config: &BrokerConfig) -> Result<(Arc<LogManager>, Arc<TopicRegistry>, PathBuf)> {
    config.validate()?;
    let mut lm = LogManagerConfig::default();
    lm.log_dirs = config.log_dirs.clone();
    lm.default_log_config = config.log.clone();
    lm.node_id = config.node_id;
    lm.cluster_id = config.cluster_id.clone();
    lm.ignored_dirs = config.reserved_dirs.clone();
    lm.max_open_files = config.log_max_open_files;
    lm.recovery_threads_per_data_dir = config.recovery_threads_per_data_dir;
    lm.producer_id_expiration_ms = config.producer_id_expiration_ms;
    let logs = Arc::new(LogManager::open(lm)?);
    let (registry, meta_dir, next_producer_id) = topics::open_registry(config, &logs)?;
    if let Some(next) = next_producer_id {
        // An adopted Kafka dir: ids continue above what Kafka's controller handed out.
        crate::txn::producer_ids::ProducerIdManager::raise_floor(&meta_dir, config.node_id, next)?;
    }
    Ok((logs, registry, meta_dir))
}

impl Server {
    /// Builds both configs from `props` (see [`configs_from_properties`]) and starts.
    pub async fn start_from_properties(props: &BTreeMap<String, String>) -> Result<Server> {
        let (b, t) = configs_from_properties(props)?;
        Self::start(b, t).await
    }

    /// Binds every client listener, opens the logs, starts tiering, assembles the broker, then serves.
    pub async fn start(config: BrokerConfig, tiering: TieringConfig) -> Result<Server> {
        Self::start_with(config, tiering, ServerOptions::default()).await
    }

    /// Like [`start`](Self::start), with `options` added before serving. The steps, bottom-up: security (a bad
    /// key or user stops start-up before anything is bound or opened) → bind the client listeners → open the
    /// logs and the cleaner → start tiering → assemble the broker → start what runs beside it → the
    /// `http.listener` → serve. A failed step undoes the ones before it.
    pub async fn start_with(
        config: BrokerConfig,
        tiering: TieringConfig,
        options: ServerOptions,
    ) -> Result<Server> {
        let (config, security) = build_security(config)?;
        let (sockets, listeners) = bind_listeners(&config).await?;
        let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.bound).collect();
        let config = Arc::new(config);
        let root = CancellationToken::new();
        let tasks = TaskTracker::new();
        let (logs, registry, meta_dir, log_cleaner) = open_logs(&config).await?;
        let http_listener = tiering.http_listener;
        let upload_limit = tiering.rsm.upload_rate_limit;
        let tiering = match Tiering::start(
            logs.clone(),
            registry.clone(),
            config.node_id,
            tiering,
            &tasks,
            root.child_token(),
        )
        .await
        {
            Ok(t) => t,
            Err(e) => {
                stop_logs(&logs, "after a failed tiering start").await;
                return Err(crate::Error::tiering("starting tiered storage", e));
            }
        };
        let hooks = tiering.clone().map(|t| t as Arc<dyn TieringHooks>);
        let remote_reader = options
            .remote_reader
            .or_else(|| hooks.as_ref().map(|h| h.remote_reader()));
        let parts = Parts {
            config: config.clone(),
            listeners,
            logs: logs.clone(),
            registry,
            meta_dir,
            tiering: hooks,
            remote_reader,
            cleaner: Some(log_cleaner.clone()),
            cancel: root.child_token(),
        };
        let broker = match assemble(parts, options.setup).await {
            Ok(b) => b,
            Err(e) => {
                if let Some(t) = &tiering {
                    if let Err(s) = t.shutdown().await {
                        warn!(error = %s, "stopping tiered storage after a failed start");
                    }
                }
                root.cancel();
                tasks.close();
                tasks.wait().await;
                stop_logs(&logs, "after a failed start").await;
                return Err(e);
            }
        };
        start_beside(
            &broker,
            tiering.as_deref(),
            &log_cleaner,
            &tasks,
            &root,
            upload_limit,
        );
        let http = match http_listener {
            Some(addr) => {
                let ctx = Arc::new(HttpContext::new(broker.clone(), tiering.clone()));
                HttpServer::start(addr, ctx, &tasks, root.child_token()).await
            }
            None => None,
        };
        if let Some(h) = &http {
            announce_http(h, &config, &security);
        }
        let serving = tasks.spawn(run(sockets, security, broker.clone()));
        Ok(Server {
            addrs,
            broker,
            tiering,
            http,
            root,
            tasks,
            serving: Some(serving),
        })
    }

    /// The bound address of the first client listener (`host:port` for `bootstrap.servers`).
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// The bound addresses of every client listener, in the order of `listeners`.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The running broker.
    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// The bound `http.listener` (console, `/api/v1/`, `/metrics`); `None` when off or its port was taken.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(HttpServer::local_addr)
    }

    /// Tiered storage (`None` when `remote.log.storage.system.enable=false`).
    pub fn tiering(&self) -> Option<&Arc<Tiering>> {
        self.tiering.as_ref()
    }

    /// Stops accepting, drains connections, stops tiering, waits for every task, then flushes the logs and
    /// writes the clean-shutdown marker.
    pub async fn shutdown(mut self) -> Result<()> {
        self.broker.cancel_token().cancel();
        if let Some(serving) = self.serving.take() {
            let _ = serving.await;
        }
        if let Some(h) = &self.http {
            h.stop();
            if let Some(dir) = self.broker.config().log_dirs.first() {
                crate::http::client::remove_addr(dir);
            }
        }
        let tiered = match &self.tiering {
            Some(t) => t
                .shutdown()
                .await
                .map_err(|e| crate::Error::tiering("stopping tiered storage", e)),
            None => Ok(()),
        };
        self.root.cancel();
        self.tasks.close();
        if tokio::time::timeout(TASKS_DEADLINE, self.tasks.wait())
            .await
            .is_err()
        {
            warn!(
                tasks = self.tasks.len(),
                "tasks still running {TASKS_DEADLINE:?} after shutdown began"
            );
        }
        let logs = self.broker.log_manager().clone();
        tokio::task::spawn_blocking(move || shutdown_logs(&logs))
            .await
            .map_err(|e| io_error("shutting down", e))??;
        tiered
    }

    /// Runs until `signal` completes, then shuts down like [`shutdown`](Self::shutdown).
    pub async fn run_until(self, signal: impl Future) -> Result<()> {
        signal.await;
        self.shutdown().await
    }
}

/// TLS keys and SASL users of every client listener, read first: a bad one stops start-up before anything is
/// bound or opened. The developer CA stays where it was made: the first log dir holding one (a new disk listed in
/// front does not get a second CA), else the first log dir; its directory is not a partition directory.
fn build_security(mut config: BrokerConfig) -> Result<(BrokerConfig, Vec<Arc<ListenerSecurity>>)> {
    let data_dir = config
        .log_dirs
        .iter()
        .find(|d| d.join("ssl").join("ca.pem").exists())
        .or(config.log_dirs.first())
        .cloned()
        .unwrap_or_default();
    config.reserved_dirs.push(data_dir.join("ssl"));
    let security = security::build(&config, &data_dir)?
        .into_iter()
        .map(Arc::new)
        .collect();
    Ok((config, security))
}

/// Binds every client listener (in the order of `listeners`), with the address each advertises.
async fn bind_listeners(config: &BrokerConfig) -> Result<(Vec<TcpListener>, Vec<Listener>)> {
    let mut sockets = Vec::new();
    let mut listeners = Vec::new();
    for served in config.client_listeners() {
        let (name, bind) = (served.name, served.bind);
        let socket = TcpListener::bind(bind)
            .await
            .map_err(|e| crate::Error::io(format!("binding {name} listener {bind}"), e))?;
        let bound = socket
            .local_addr()
            .map_err(|e| io_error("reading the bound address", e))?;
        let listener = Listener::new(&name, bound, served.advertised.as_ref());
        info!(listener = %name, protocol = %served.protocol, %bound, advertised = %format!("{}:{}", listener.advertised_host, listener.advertised_port),
            "client listener bound");
        listeners.push(listener);
        sockets.push(socket);
    }
    Ok((sockets, listeners))
}

/// Opens (recovering) the logs and the topic registry on the blocking pool, then the log cleaner (the logs are
/// shut down again if it fails).
async fn open_logs(
    config: &Arc<BrokerConfig>,
) -> Result<(
    Arc<LogManager>,
    Arc<TopicRegistry>,
    PathBuf,
    Arc<strata_storage::LogCleaner>,
)> {
    let c = config.clone();
    let (logs, registry, meta_dir) = tokio::task::spawn_blocking(move || open_storage(&c))
        .await
        .map_err(|e| io_error("opening the logs", e))??;
    match cleaner::open(config, &logs) {
        Ok(c) => Ok((logs, registry, meta_dir, c)),
        Err(e) => {
            stop_logs(&logs, "after a failed start").await;
            Err(e)
        }
    }
}

/// Assembles the broker's components on the blocking pool, then runs the caller's `setup` on it.
async fn assemble(parts: Parts, setup: Option<SetupFn>) -> Result<Arc<Broker>> {
    let broker = tokio::task::spawn_blocking(move || Broker::assemble(parts))
        .await
        .map_err(|e| io_error("opening the broker", e))??;
    if let Some(setup) = setup {
        setup(&broker)?;
    }
    Ok(broker)
}

/// What runs beside the assembled broker: remote-tier faults counted with the request-path ones, the cleaner's
/// threads (stopped by the root token, which shutdown cancels before the logs are flushed), and the remote
/// storage quotas as dynamic broker configs.
fn start_beside(
    broker: &Arc<Broker>,
    tiering: Option<&Tiering>,
    log_cleaner: &Arc<strata_storage::LogCleaner>,
    tasks: &TaskTracker,
    root: &CancellationToken,
    upload_limit: Option<u64>,
) {
    if let Some(t) = tiering {
        let remote = t.remote_faults().clone();
        let metrics = broker.metrics().clone();
        remote.on_injected(Box::new(move |op, kind| {
            metrics.fault_injected(&format!("remote_{}", op.name()), kind.name())
        }));
        broker.faults().set_remote(remote);
    }
    if let Some(threads) = cleaner::start(log_cleaner, tasks, root.child_token()) {
        broker.topics().add_reconfigurable(threads);
    }
    if let Some(t) = tiering {
        let rlm = t.rlm().clone();
        let statics = rlm.config().clone();
        broker
            .topics()
            .add_reconfigurable(Arc::new(crate::tiered::quotas::RemoteQuotas::new(
                rlm,
                statics,
                upload_limit,
            )));
    }
}

/// Writes the bound `http.listener` address next to the data (for `strata` admin commands) and, next to
/// listeners that require authentication, warns that the console and JSON API have none.
fn announce_http(h: &HttpServer, config: &BrokerConfig, security: &[Arc<ListenerSecurity>]) {
    if let Some(dir) = config.log_dirs.first() {
        crate::http::client::write_addr(dir, h.local_addr());
    }
    let secured: Vec<&str> = security
        .iter()
        .filter(|s| s.protocol != "PLAINTEXT")
        .map(|s| s.name.as_str())
        .collect();
    let authorizer = !config
        .config_values()
        .value(&crate::config::keys::AUTHORIZER_CLASS_NAME)
        .trim()
        .is_empty();
    if !secured.is_empty() || authorizer {
        tracing::warn!(http = %h.local_addr(), secured = ?secured, authorizer,
            loopback_only = h.local_addr().ip().is_loopback(),
            "http.listener (console, /api/v1, /metrics) has no authentication or TLS and is not subject to ACLs: \
             whoever reaches it reads and writes every topic; bind it to 127.0.0.1 or turn it off (http.listener=)");
    }
}

/// Flushes the logs of a start-up that failed half-way (errors are logged).
async fn stop_logs(logs: &Arc<LogManager>, when: &str) {
    let l = logs.clone();
    if let Ok(Err(e)) = tokio::task::spawn_blocking(move || shutdown_logs(&l)).await {
        warn!(error = %e, "shutting the logs down {when}");
    }
}

impl Drop for Server {
    /// A server dropped without [`shutdown`](Self::shutdown) stops every task (the logs are recovered at the next
    /// start). The cleaner's blocking threads are told to stop here, not by a task awaiting the token: a
    /// current-thread runtime dropped right after (a plain `#[tokio::test]`) polls no task again, and waits for its
    /// blocking threads.
    fn drop(&mut self) {
        self.root.cancel();
        if let Some(cleaner) = self.broker.cleaner() {
            cleaner.shutdown();
        }
    }
}

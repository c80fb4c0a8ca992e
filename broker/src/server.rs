//! The TCP server: an injected listener, a shutdown future, a connection semaphore (`max.connections`, making
//! room by closing the longest-idle connection), per-IP limits, one task per connection, and periodic log
//! maintenance. Tests bind `127.0.0.1:0` and pass the listener in.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

use crate::broker::Broker;
use crate::config::BrokerConfig;
use crate::connection;
use crate::connection_limits::Connections;
use crate::error::{Error, Result};

/// How long shutdown waits for open connections to finish their current request.
const DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// How long a new connection at `max.connections` waits for the idle connection closed to make room.
const EVICT_WAIT: Duration = Duration::from_secs(5);

/// Serves `listener` until `shutdown` completes, then drains connections (bounded by a deadline) and stops.
/// The caller then calls [`Broker::shutdown`] to flush and write the clean-shutdown marker.
pub async fn run(listener: TcpListener, broker: Arc<Broker>, shutdown: impl Future) {
    let cancel = broker.cancel_token();
    let tracker = TaskTracker::new();
    let limit = Arc::new(Semaphore::new(broker.config().max_connections));
    let conns = Connections::new(broker.config());
    spawn_maintenance(&broker, &tracker, cancel.clone());

    tokio::pin!(shutdown);
    loop {
        let (socket, peer) = tokio::select! {
            _ = &mut shutdown => break,
            _ = cancel.cancelled() => break,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    warn!(error = %e, "accept failed");
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
            warn!(%peer, max = broker.config().max_connections,
                "rejected connection: max.connections reached and no connection is idle");
            continue;
        };
        let broker = broker.clone();
        tracker.spawn(async move {
            connection::serve(socket, peer, broker, registered).await;
            drop(permit);
        });
    }
    info!("shutting down: no new connections, draining open ones");
    cancel.cancel();
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
    tracker.spawn(periodic(every, c, move || b.run_retention()));
    let b = broker.clone();
    // Checkpoints every log.flush.offset.checkpoint.interval.ms; sooner when log.flush.interval.ms asks for
    // time-based flushes (topic-level flush.ms is honoured at this granularity).
    let cfg = broker.config();
    let every = Duration::from_millis(
        cfg.log_flush_checkpoint_interval_ms
            .min(cfg.log.flush_ms.max(100)),
    );
    tracker.spawn(periodic(every, cancel.clone(), move || {
        b.flush_and_checkpoint()
    }));
    // Group sessions and rebalance deadlines.
    let b = broker.clone();
    tracker.spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => b.groups().tick(),
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

/// A broker running in this process (for tests and embedding): listener bound, server task spawned.
pub struct ServerHandle {
    addr: SocketAddr,
    broker: Arc<Broker>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ServerHandle {
    /// Binds `config.listener`, opens the broker and serves in a background task.
    pub async fn start(config: BrokerConfig) -> Result<ServerHandle> {
        Self::start_with(config, |_| Ok(())).await
    }

    /// Like [`ServerHandle::start`], running `setup` on the opened broker before the first client is served
    /// (where the tiering layer attaches: roll listener, `__remote_log_metadata`, remote log reader).
    pub async fn start_with(
        config: BrokerConfig,
        setup: impl FnOnce(&Arc<Broker>) -> Result<()>,
    ) -> Result<ServerHandle> {
        let listener = TcpListener::bind(config.listener)
            .await
            .map_err(|e| Error::io(format!("binding {}", config.listener), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("reading the bound address", e))?;
        let broker = tokio::task::spawn_blocking(move || Broker::open(config, addr))
            .await
            .map_err(|e| Error::io("opening the broker", std::io::Error::other(e.to_string())))??;
        if let Err(e) = setup(&broker) {
            let b = broker.clone();
            let _ = tokio::task::spawn_blocking(move || b.shutdown()).await;
            return Err(e);
        }
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(run(listener, broker.clone(), stopped));
        Ok(ServerHandle {
            addr,
            broker,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The bound address (`host:port` for `bootstrap.servers`).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The running broker.
    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// Stops serving, drains connections and shuts the logs down cleanly.
    pub async fn shutdown(mut self) -> Result<()> {
        self.stop_serving().await;
        let b = self.broker.clone();
        tokio::task::spawn_blocking(move || b.shutdown())
            .await
            .map_err(|e| Error::io("shutting down", std::io::Error::other(e.to_string())))?
    }

    async fn stop_serving(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.broker.cancel_token().cancel();
    }
}

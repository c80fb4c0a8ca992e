//! [`TieredServer`]: a broker with tiered storage running in this process (the `strata` binary's start-up and
//! shutdown order, for tests, the demo and embedding).

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tracing::warn;

use super::{joined, split_properties, Tiering, TieringConfig, TieringError};
use crate::broker::Broker;
use crate::config::BrokerConfig;

/// Broker and tiering configs from one Kafka property map (a properties file, then `--override`s).
pub fn configs_from_properties(
    props: &BTreeMap<String, String>,
) -> Result<(BrokerConfig, TieringConfig), TieringError> {
    let (broker_props, tiering_props) = split_properties(props);
    let mut broker = BrokerConfig::from_properties(&broker_props)?;
    // The library also takes `memory` (tests); the broker names only what it accepts.
    let prefix = props
        .get(super::config::RSM_PREFIX_KEY)
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or(super::config::DEFAULT_RSM_PREFIX);
    let backend_key = format!("{prefix}storage.backend");
    if let Some(v) = props.get(&backend_key) {
        if !matches!(v.trim(), "s3" | "filesystem" | "memory") {
            return Err(TieringError::Config {
                key: backend_key,
                value: v.clone(),
                reason: "expected s3 or filesystem".into(),
            });
        }
    }
    let tiering = TieringConfig::from_properties(&tiering_props, &broker.log_dirs)?;
    broker.tiering_props = tiering_props;
    if broker.log.remote_storage_enable && !tiering.rlm.system_enable {
        return Err(TieringError::Config {
            key: "log.remote.storage.enable".into(),
            value: "true".into(),
            reason: "new topics cannot be tiered with remote.log.storage.system.enable=false"
                .into(),
        });
    }
    if tiering.rlm.system_enable && tiering.rsm.backend == strata_tiering::BackendKind::Memory {
        return Err(TieringError::Config {
            key: "rsm.config.storage.backend".into(),
            value: "memory".into(),
            reason: "the memory backend (for tests) loses every remote segment at a restart, after their local \
                     copies were deleted; use filesystem or s3"
                .into(),
        });
    }
    if tiering.rlm.system_enable && tiering.rsm.backend == strata_tiering::BackendKind::Filesystem {
        broker
            .reserved_dirs
            .push(tiering.rsm.filesystem_root.clone());
    }
    Ok((broker, tiering))
}

/// Opens the broker and starts tiering on it (stopping the broker cleanly when tiering fails to start).
pub async fn open_broker(
    config: BrokerConfig,
    tiering: TieringConfig,
    bound: SocketAddr,
) -> Result<(Arc<Broker>, Option<Arc<Tiering>>), TieringError> {
    let broker = joined(
        tokio::task::spawn_blocking(move || Broker::open(config, bound)).await,
        "opening the broker",
    )??;
    match Tiering::start(&broker, tiering).await {
        Ok(t) => Ok((broker, t)),
        Err(e) => {
            let b = broker.clone();
            if let Ok(Err(s)) = tokio::task::spawn_blocking(move || b.shutdown()).await {
                warn!(error = %s, "shutting the logs down after a failed tiering start");
            }
            Err(e)
        }
    }
}

/// Stops tiering (RLM → RLMM) and then the logs. Call after the server stopped serving.
pub async fn shutdown_broker(
    broker: &Arc<Broker>,
    tiering: Option<&Arc<Tiering>>,
) -> Result<(), TieringError> {
    let tiered = match tiering {
        Some(t) => t.shutdown().await,
        None => Ok(()),
    };
    let b = broker.clone();
    joined(
        tokio::task::spawn_blocking(move || b.shutdown()).await,
        "shutting down",
    )??;
    tiered
}

/// A broker with tiered storage serving on a bound listener in a background task.
pub struct TieredServer {
    addr: SocketAddr,
    broker: Arc<Broker>,
    tiering: Option<Arc<Tiering>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for TieredServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TieredServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl TieredServer {
    /// Builds both configs from `props` (see [`configs_from_properties`]) and starts.
    pub async fn start_from_properties(
        props: &BTreeMap<String, String>,
    ) -> Result<TieredServer, TieringError> {
        let (b, t) = configs_from_properties(props)?;
        Self::start(b, t).await
    }

    /// Binds `config.listener`, opens the broker, starts tiering, then serves.
    pub async fn start(
        config: BrokerConfig,
        tiering: TieringConfig,
    ) -> Result<TieredServer, TieringError> {
        let listener = TcpListener::bind(config.listener)
            .await
            .map_err(|e| TieringError::io(format!("binding {}", config.listener), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| TieringError::io("reading the bound address", e))?;
        let (broker, tiering) = open_broker(config, tiering, addr).await?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(crate::server::run(listener, broker.clone(), stopped));
        Ok(TieredServer {
            addr,
            broker,
            tiering,
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

    /// Tiered storage (`None` when `remote.log.storage.system.enable=false`).
    pub fn tiering(&self) -> Option<&Arc<Tiering>> {
        self.tiering.as_ref()
    }

    /// Stops serving (draining connections), then tiering, then the logs.
    pub async fn shutdown(mut self) -> Result<(), TieringError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        shutdown_broker(&self.broker, self.tiering.as_ref()).await
    }

    /// Runs until `signal` completes, then shuts down like [`shutdown`](Self::shutdown).
    pub async fn run_until(self, signal: impl Future) -> Result<(), TieringError> {
        signal.await;
        self.shutdown().await
    }
}

impl Drop for TieredServer {
    fn drop(&mut self) {
        self.broker.cancel_token().cancel();
    }
}

//! An embeddable broker for Rust integration tests and applications: the same [`Server`] the `strata` binary runs,
//! on `127.0.0.1:0` with a fresh temporary data dir by default.
//!
//! ```no_run
//! # async fn demo() -> Result<(), strata::Error> {
//! let broker = strata::Broker::builder()
//!     .property("num.partitions", "3") // any key strata accepts, as --override
//!     .start()
//!     .await?;
//! let bootstrap: String = broker.bootstrap_servers();
//! // ... point a Kafka client at `bootstrap` ...
//! broker.shutdown().await?; // graceful; dropping it also stops it and removes the temp dir
//! # Ok(())
//! # }
//! ```
//!
//! Tiering is on, to a filesystem tier under the data dir (S3 and the rest through properties, as with the binary).
//! Several brokers may run in one process; each serves its console and `/metrics` on its own free port
//! (`http.listener=127.0.0.1:0` unless given). [`Broker::faults`] sets faults on demand (errors, latency, closed
//! connections, throttling, remote-tier outages), as `/api/v1/faults` does.

use std::collections::BTreeMap;
use std::path::PathBuf;

use strata_broker::server::Server;

/// What can go wrong starting or stopping an embedded broker: a bad property (named), the data dir, or start-up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The temporary data dir could not be created.
    #[error("creating a temporary data dir: {0}")]
    TempDir(#[source] std::io::Error),
    /// The broker refused its configuration or failed to start or stop.
    #[error(transparent)]
    Broker(#[from] strata_broker::Error),
    /// The runtime of a broker started with [`Builder::start_blocking`] could not be built.
    #[error("building a tokio runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// [`Builder::start_blocking`] was called on a thread that runs a tokio runtime (where blocking would stall it).
    #[error(
        "start_blocking called inside a tokio runtime: use `Broker::builder().start().await` there"
    )]
    InsideRuntime,
}

/// Configures an embedded broker; see the [module docs](self).
#[derive(Debug, Default, Clone)]
pub struct Builder {
    props: BTreeMap<String, String>,
    data_dir: Option<PathBuf>,
}

impl Builder {
    /// Sets one property (any key strata accepts, with the precedence of `--override`).
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.props.insert(key.into(), value.into());
        self
    }

    /// Keeps data in `dir` (created if missing, kept after shutdown) instead of a temporary dir.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Starts the broker on the current tokio runtime (multi-threaded: the broker runs blocking work on it).
    pub async fn start(self) -> Result<Broker, Error> {
        let (props, temp) = self.resolve()?;
        let server = Server::start_from_properties(&props).await?;
        Ok(Broker::new(server, temp, None))
    }

    /// Starts the broker on a runtime of its own, for tests without one; the runtime lives as long as the broker.
    /// Called inside a tokio runtime it returns [`Error::InsideRuntime`] (use [`start`](Self::start) there).
    pub fn start_blocking(self) -> Result<Broker, Error> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(Error::InsideRuntime);
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("strata-embedded")
            .build()
            .map_err(Error::Runtime)?;
        let (props, temp) = self.resolve()?;
        let server = rt.block_on(Server::start_from_properties(&props))?;
        Ok(Broker::new(server, temp, Some(rt)))
    }

    /// The properties to start with, and the temporary dir holding the data when none was given.
    fn resolve(self) -> Result<(BTreeMap<String, String>, Option<tempfile::TempDir>), Error> {
        let mut props = self.props;
        props
            .entry("listeners".into())
            .or_insert_with(|| "PLAINTEXT://127.0.0.1:0".into());
        // The console and /metrics on a free port too: several brokers of one process (or test run) would
        // otherwise race for 9464, and all but the first run without it.
        props
            .entry("http.listener".into())
            .or_insert_with(|| "127.0.0.1:0".into());
        // As Kafka's own test harnesses (EmbeddedKafka, testcontainers): a test's consumers join at once.
        props
            .entry("group.initial.rebalance.delay.ms".into())
            .or_insert_with(|| "0".into());
        let temp = match (&self.data_dir, props.contains_key("log.dirs")) {
            (Some(dir), _) => {
                props.insert("log.dirs".into(), dir.display().to_string());
                None
            }
            (None, true) => None,
            (None, false) => {
                let t = tempfile::Builder::new()
                    .prefix("strata-")
                    .tempdir()
                    .map_err(Error::TempDir)?;
                props.insert("log.dirs".into(), t.path().display().to_string());
                Some(t)
            }
        };
        Ok((props, temp))
    }
}

/// A running embedded broker. Dropping it stops it (without the graceful drain of [`shutdown`](Self::shutdown))
/// and removes its temporary data dir.
#[derive(Debug)]
pub struct Broker {
    server: Option<Server>,
    bootstrap: String,
    /// Held for its `Drop`, which removes the temporary data dir after the server has stopped.
    _temp_dir: Option<tempfile::TempDir>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Broker {
    /// A builder with every property at strata's default, `127.0.0.1:0` and a temporary data dir.
    pub fn builder() -> Builder {
        Builder::default()
    }

    fn new(
        server: Server,
        temp: Option<tempfile::TempDir>,
        runtime: Option<tokio::runtime::Runtime>,
    ) -> Self {
        let (host, port) = server.broker().advertised();
        Broker {
            bootstrap: format!("{host}:{port}"),
            server: Some(server),
            _temp_dir: temp,
            runtime,
        }
    }

    /// `host:port` for a client's `bootstrap.servers`.
    pub fn bootstrap_servers(&self) -> String {
        self.bootstrap.clone()
    }

    /// The data dir (a temporary one unless [`Builder::data_dir`] or `log.dirs` was given).
    pub fn data_dir(&self) -> Option<PathBuf> {
        self.server
            .as_ref()
            .and_then(|s| s.broker().config().log_dirs.first().cloned())
    }

    /// Faults on demand: set with [`add`](strata_broker::faults::Faults::add), list, clear.
    ///
    /// ```no_run
    /// # async fn demo(broker: strata::Broker) -> Result<(), strata::faults::FaultError> {
    /// use strata::faults::{ApiKey, Fault, ResponseError};
    /// // The next 3 produce requests fail with NOT_LEADER_OR_FOLLOWER (retriable: clients retry).
    /// broker.faults().add(Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower).times(3))?;
    /// broker.faults().clear();
    /// # Ok(()) }
    /// ```
    pub fn faults(&self) -> &strata_broker::faults::Faults {
        self.server().broker().faults()
    }

    /// The `http.listener` address (console, `/api/v1/` including `/api/v1/faults`, `/metrics`), when served.
    pub fn http_addr(&self) -> Option<std::net::SocketAddr> {
        self.server().http_addr()
    }

    /// The running server (the same type the binary runs), for what this handle does not wrap.
    pub fn server(&self) -> &Server {
        self.server.as_ref().expect("running until shutdown")
    }

    /// Stops serving (draining connections), stops tiering, flushes the logs; then removes a temporary data dir.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        if let Some(server) = self.server.take() {
            server.shutdown().await?;
        }
        Ok(())
    }

    /// [`shutdown`](Self::shutdown) for a broker started with [`Builder::start_blocking`].
    pub fn shutdown_blocking(mut self) -> Result<(), Error> {
        let server = self.server.take();
        match (server, &self.runtime) {
            (Some(server), Some(rt)) => rt.block_on(server.shutdown())?,
            (Some(server), None) => drop(server),
            (None, _) => {}
        }
        Ok(())
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        // Cancels every task of the server; a runtime of our own then waits (bounded) for them to end.
        drop(self.server.take());
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(std::time::Duration::from_secs(5));
        }
    }
}

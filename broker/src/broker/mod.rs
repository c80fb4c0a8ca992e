//! The context every handler gets: the components of a running broker, built bottom-up and handed in —
//! config, the listeners, the local logs, the topic component, the group coordinator, producer ids, tiered storage
//! (through its hooks) and the append notifier that wakes long-polling fetches. The methods here only reach the
//! component that owns the work; the one that spans two components is [`Broker::delete_topic`] (the topic, then
//! the committed offsets of it).

pub(crate) mod request;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use strata_storage::{LogCleaner, LogManager};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::authz::Authorizer;
use crate::config::BrokerConfig;
use crate::error::Result;
use crate::group::configs::GroupConfigs;
use crate::group::offsets::{OffsetStore, OffsetsLog};
use crate::group::GroupCoordinator;
use crate::metrics::BrokerMetrics;
use crate::remote::hooks::TieringHooks;
use crate::remote::RemoteLogReader;
use crate::security::scram::ScramStore;
use crate::topics::{TopicManager, TopicMeta, TopicRegistry, TRANSACTION_STATE};
use crate::txn::producer_ids::ProducerIdManager;
use crate::txn::{BrokerTxnLogs, CoordinatorParts, TransactionCoordinator};

/// One served client listener: its name, the bound address and what clients are told (`advertised.listeners`
/// for its name, else the bound address, `127.0.0.1` for a wildcard bind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// The listener name (`PLAINTEXT`, `EXTERNAL`, ...).
    pub name: String,
    /// The bound address.
    pub bound: SocketAddr,
    /// Host given to clients.
    pub advertised_host: String,
    /// Port given to clients.
    pub advertised_port: i32,
}

impl Listener {
    /// `name` bound on `bound`, advertised as `advertised` when given (an advertised port 0 is the bound port,
    /// as Kafka does for an ephemeral listener).
    pub fn new(name: &str, bound: SocketAddr, advertised: Option<&(String, u16)>) -> Listener {
        let (advertised_host, advertised_port) = match advertised {
            Some((h, p)) => (
                h.clone(),
                i32::from(if *p == 0 { bound.port() } else { *p }),
            ),
            None => {
                let host = if bound.ip().is_unspecified() {
                    "127.0.0.1".to_string()
                } else {
                    bound.ip().to_string()
                };
                (host, i32::from(bound.port()))
            }
        };
        Listener {
            name: name.to_string(),
            bound,
            advertised_host,
            advertised_port,
        }
    }
}

/// The running broker's components, shared by every connection. See the [module docs](self).
pub struct Broker {
    config: Arc<BrokerConfig>,
    listeners: Vec<Listener>,
    logs: Arc<LogManager>,
    topics: Arc<TopicManager>,
    groups: GroupCoordinator,
    txn: TransactionCoordinator,
    appended: Arc<Notify>,
    producer_ids: Arc<ProducerIdManager>,
    tiering: Option<Arc<dyn TieringHooks>>,
    remote_reader: Option<Arc<dyn RemoteLogReader>>,
    scram: Arc<ScramStore>,
    authorizer: Option<Arc<Authorizer>>,
    cleaner: Option<Arc<LogCleaner>>,
    cancel: CancellationToken,
    metrics: Arc<BrokerMetrics>,
    faults: crate::faults::Faults,
    features: Arc<crate::features::Features>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("node_id", &self.config.node_id)
            .field("listeners", &self.listeners)
            .finish_non_exhaustive()
    }
}

/// What [`Broker::assemble`] is built from: the parts opened before tiering started.
pub struct Parts {
    /// The broker config.
    pub config: Arc<BrokerConfig>,
    /// The served listeners (at least one).
    pub listeners: Vec<Listener>,
    /// The local logs, recovered.
    pub logs: Arc<LogManager>,
    /// The topic registry ([`crate::topics::open_registry`]).
    pub registry: Arc<TopicRegistry>,
    /// The dir holding the registry (and the producer id block).
    pub meta_dir: std::path::PathBuf,
    /// Tiered storage, when it runs.
    pub tiering: Option<Arc<dyn TieringHooks>>,
    /// Serves Fetch below the local log start (tiering's reader, or a test's).
    pub remote_reader: Option<Arc<dyn RemoteLogReader>>,
    /// The log cleaner ([`crate::topics::cleaner`]), told about deleted partitions.
    pub cleaner: Option<Arc<LogCleaner>>,
    /// Cancelled when the server stops serving (long polls and rebalances waiting end).
    pub cancel: CancellationToken,
}

impl Broker {
    /// Builds the components on the opened logs and registry, bottom-up: topics (repairing the registry,
    /// `__consumer_offsets`), the group coordinator with its offset store (replaying committed offsets),
    /// producer ids, the transaction coordinator (replaying `__transaction_state` if it exists; else it is
    /// created on the first transactional request). Blocking.
    pub fn assemble(parts: Parts) -> Result<Arc<Broker>> {
        let started = std::time::Instant::now();
        let Parts {
            config,
            listeners,
            logs,
            registry,
            meta_dir,
            tiering,
            remote_reader,
            cleaner,
            cancel,
        } = parts;
        let topics = Arc::new(TopicManager::open(
            config.clone(),
            logs.clone(),
            registry,
            meta_dir.clone(),
            tiering.clone(),
            cleaner.clone(),
        )?);
        let appended = Arc::new(Notify::new());
        let offsets = OffsetStore::new(OffsetsLog::new(topics.clone(), appended.clone()));
        let groups = GroupCoordinator::new(&config, offsets)
            .with_group_configs(GroupConfigs::open(&meta_dir)?);
        groups.load_offsets()?;
        let producer_ids = Arc::new(open_producer_ids(&config, &logs, &meta_dir)?);
        let ids = producer_ids.clone();
        let features = Arc::new(crate::features::Features::open(&meta_dir)?);
        let txn = TransactionCoordinator::new(CoordinatorParts {
            logs: Arc::new(BrokerTxnLogs {
                topics: topics.clone(),
                offsets: groups.offset_store().clone(),
            }),
            producer_ids: Arc::new(move || ids.generate()),
            state_partitions: config.transaction.state_partitions,
            max_timeout_ms: config.transaction.max_timeout_ms,
            appended: appended.clone(),
            features: features.clone(),
        });
        if topics.registry().get(TRANSACTION_STATE).is_some() {
            // Transactions found preparing when the broker stopped are completed here.
            txn.ensure_ready()?;
        }
        let scram = Arc::new(ScramStore::open(&meta_dir)?);
        let authorizer = Authorizer::from_config(&config, &meta_dir)?.map(Arc::new);
        if let Some(a) = &authorizer {
            info!(acls = a.store().len(), "authorizer on: ACLs enforced");
        }
        info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            topics = topics.registry().all().len(),
            "broker state loaded"
        );
        Ok(Arc::new(Broker {
            config,
            listeners,
            logs,
            topics,
            groups,
            txn,
            appended,
            producer_ids,
            tiering,
            remote_reader,
            scram,
            authorizer,
            cleaner,
            cancel,
            metrics: Arc::new(BrokerMetrics::default()),
            faults: crate::faults::Faults::default(),
            features,
        }))
    }

    /// Request, byte and connection counters (`/metrics`).
    pub fn metrics(&self) -> &Arc<BrokerMetrics> {
        &self.metrics
    }

    /// The finalized feature levels (ApiVersions, UpdateFeatures).
    pub fn features(&self) -> &Arc<crate::features::Features> {
        &self.features
    }

    /// Faults set on demand (`/api/v1/faults`); in memory only.
    pub fn faults(&self) -> &crate::faults::Faults {
        &self.faults
    }

    /// The broker config.
    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    /// The local logs.
    pub fn log_manager(&self) -> &Arc<LogManager> {
        &self.logs
    }

    /// The topic registry (names, ids, partition counts, configs).
    pub fn registry(&self) -> &TopicRegistry {
        self.topics.registry()
    }

    /// The topic component: creation, deletion, partitions, topic and dynamic broker configs, the logs of known
    /// partitions.
    pub fn topics(&self) -> &TopicManager {
        &self.topics
    }

    /// Producer ids never handed out before, also across crashes (see [`crate::txn::producer_ids`]).
    pub fn producer_ids(&self) -> &ProducerIdManager {
        &self.producer_ids
    }

    pub(crate) fn groups(&self) -> &GroupCoordinator {
        &self.groups
    }

    /// One run of the offset expiration (`offsets.retention.minutes`, KIP-211) as the broker's clock reads
    /// `now_ms`: see [`GroupCoordinator::expire_offsets`]. Returns how many committed offsets expired. Blocking.
    pub fn expire_offsets(&self, now_ms: i64) -> Result<usize> {
        self.groups
            .expire_offsets(now_ms, self.config().offsets_retention_ms)
    }

    /// Whether `group_id` is a group: classic, KIP-848, or known by its committed offsets.
    pub fn group_exists(&self, group_id: &str) -> bool {
        self.groups.group_exists(group_id)
    }

    /// The transaction coordinator.
    pub fn txn(&self) -> &TransactionCoordinator {
        &self.txn
    }

    /// The `__consumer_offsets` partition of `group`.
    pub fn offsets_partition(&self, group: &str) -> i32 {
        let partitions = self
            .registry()
            .get(crate::topics::CONSUMER_OFFSETS)
            .map_or(1, |m| m.partitions);
        crate::group::offsets::partition_for(group, partitions)
    }

    /// The SCRAM credentials (AlterUserScramCredentials, SASL SCRAM-SHA-256/512).
    pub fn scram(&self) -> &Arc<ScramStore> {
        &self.scram
    }

    /// The authorizer, when `authorizer.class.name` switches it on ([`crate::authz`]).
    pub fn authorizer(&self) -> Option<&Arc<Authorizer>> {
        self.authorizer.as_ref()
    }

    /// Cancelled when the server stops serving.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The served listeners, the first being `listeners`' first client listener.
    pub fn listeners(&self) -> &[Listener] {
        &self.listeners
    }

    /// Host and port given to clients: those of the listener the request being handled arrived on (Kafka
    /// answers with the endpoints of that listener); outside a request, the first listener's.
    pub fn advertised(&self) -> (&str, i32) {
        let l = request::listener()
            .and_then(|i| self.listeners.get(i))
            .unwrap_or(&self.listeners[0]);
        (&l.advertised_host, l.advertised_port)
    }

    /// The log cleaner (`None` in a broker assembled without one).
    pub fn cleaner(&self) -> Option<&Arc<LogCleaner>> {
        self.cleaner.as_ref()
    }

    /// Tiered storage, if it runs.
    pub fn tiering(&self) -> Option<&Arc<dyn TieringHooks>> {
        self.tiering.as_ref()
    }

    pub(crate) fn remote_log_reader(&self) -> Option<&Arc<dyn RemoteLogReader>> {
        self.remote_reader.as_ref()
    }

    /// Wakes every fetch waiting for new data.
    pub fn notify_appended(&self) {
        self.appended.notify_waiters();
    }

    pub(crate) fn appended(&self) -> &Notify {
        &self.appended
    }

    /// Deletes a topic: the deletion of its remote data recorded first (awaited; deleted in the background,
    /// retried until done, also across restarts; a failure keeps the topic), then its logs on the blocking pool,
    /// then, as Kafka does, its committed offsets: a recreated topic starts clean.
    pub async fn delete_topic(self: &Arc<Self>, name: &str) -> Result<TopicMeta> {
        self.topics.check_deletable(name)?;
        if let Some(t) = self.topics.tiering() {
            t.topic_deleted(name).await?;
        }
        let (broker, topic) = (self.clone(), name.to_string());
        tokio::task::spawn_blocking(move || broker.delete_topic_locally(&topic))
            .await
            .map_err(|e| crate::Error::Internal(format!("deleting topic {name}: {e}")))?
    }

    /// [`delete_topic`](Self::delete_topic) once the remote data's deletion is recorded. Blocking.
    fn delete_topic_locally(&self, name: &str) -> Result<TopicMeta> {
        let meta = self.topics.delete_topic(name)?;
        self.groups.delete_topic_offsets(name)?;
        info!(
            topic = name,
            partitions = meta.partitions,
            "topic deleted (partition dirs renamed -delete, removed in the background)"
        );
        Ok(meta)
    }
}

/// Ids continue after the durably recorded block, and above any id in the logs (older data dirs).
fn open_producer_ids(
    config: &BrokerConfig,
    logs: &LogManager,
    meta_dir: &Path,
) -> Result<ProducerIdManager> {
    let max_pid = logs
        .all_logs()
        .iter()
        .map(|l| l.max_producer_id())
        .max()
        .unwrap_or(-1);
    ProducerIdManager::open(meta_dir, config.node_id, max_pid.max(-1) + 1)
}

/// Flushes everything and writes the clean-shutdown marker. Blocking; later appends fail.
pub fn shutdown_logs(logs: &LogManager) -> Result<()> {
    logs.shutdown()?;
    let offline = logs.offline_log_dirs();
    if offline.is_empty() {
        info!("logs flushed; clean shutdown marker written");
    } else {
        warn!(dirs = ?offline, "logs flushed; offline log dirs were not marked clean and are recovered at the next start");
    }
    Ok(())
}

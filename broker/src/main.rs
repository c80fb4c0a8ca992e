//! The `strata` binary: `strata [--config server.properties] [--override key=value]...` runs the broker;
//! `strata remote ls --topic T` and `strata remote verify` inspect tiered storage while the broker is stopped
//! (`ls` asks the running broker's `/api/v1/` when one serves the log dirs). `strata --ephemeral` keeps every byte
//! (log dirs, the filesystem remote tier, metadata) in a temporary dir removed at exit.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand};
use strata_broker::http::client;
use strata_broker::tiered::{self, ops::OfflineTier, TIERING_KEYS};
use strata_broker::{BrokerConfig, Server};
use strata_storage::progress::Progress;
use tracing::info;

fn after_help() -> String {
    let mut s = String::from(
        "Properties (Kafka names) come from the --config file, then KAFKA_* environment variables, then --override \
         (a later source wins). Environment as the apache/kafka image maps it: drop KAFKA_, lower-case, _ -> ., \
         ___ -> -, __ -> _ (KAFKA_LOG_DIRS -> log.dirs; KAFKA_HEAP_OPTS, KAFKA_OPTS, KAFKA_JMX_*, KAFKA_LOG4J_* and \
         the image's other own variables excepted; bitnami's KAFKA_CFG_* map the same after KAFKA_CFG_). An unknown key is a warning, a typo near a strata-only key (*) or \
         under rsm.config./rlmm.config. stops start-up. CLUSTER_ID (as the image reads it) is the cluster id written \
         to new log dirs. Every key with its type, valid values and what strata does with it: docs/CONFIG.md.\n\n\
         Broker properties (name=default  meaning):\n",
    );
    s.push_str(&strata_broker::config::help());
    s.push_str(
        "\nTiered storage (Kafka names; remote.log.*, remote.fetch.*, rsm.config.*, rlmm.config.* are all accepted):\n",
    );
    for (name, default, doc) in TIERING_KEYS {
        s.push_str(&format!("  {name:<52} default {default:<22} {doc}\n"));
    }
    s.push_str("\nTopic configs accepted by CreateTopics/AlterConfigs: ");
    let names: Vec<&str> = strata_broker::config::topic::TOPIC_KEYS
        .iter()
        .map(|k| k.name)
        .collect();
    s.push_str(&names.join(", "));
    s.push_str("\n\nLogs: RUST_LOG (default info).");
    s
}

/// A single-node Kafka-compatible broker.
#[derive(Parser, Debug)]
#[command(name = "strata", version, about = "strata: a single-node Kafka-compatible broker with tiered storage", after_help = after_help())]
struct Args {
    /// A Kafka `server.properties` file.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Sets one property, overriding the file (repeatable): --override log.dirs=/tmp/data
    #[arg(long = "override", value_name = "KEY=VALUE", global = true)]
    overrides: Vec<String>,
    /// Keeps all data (log dirs, the filesystem remote tier, metadata) in a temporary dir, printed at start and
    /// removed at exit (SIGTERM, SIGINT): for CI service containers and experiments. Not with log.dirs/log.dir.
    #[arg(long)]
    ephemeral: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Inspects tiered storage (reads the log dirs and the remote store; `ls` asks a broker running on these log
    /// dirs through its http.listener API, `verify` needs the broker stopped: it holds their .lock).
    Remote {
        #[command(subcommand)]
        command: RemoteCommand,
    },
}

#[derive(Subcommand, Debug)]
enum RemoteCommand {
    /// Lists a topic's remote segments: partition, offsets, size, state, segment id and object keys.
    Ls {
        /// The topic.
        #[arg(long)]
        topic: String,
        /// Also prints every record of __remote_log_metadata.
        #[arg(long)]
        records: bool,
    },
    /// Checks that every COPY_SEGMENT_FINISHED segment has its objects; lists orphan objects and abandoned
    /// multipart uploads. Exit status 1 when problems are found.
    Verify {
        /// Only this topic (default: every tiered topic and every partition the metadata knows).
        #[arg(long)]
        topic: Option<String>,
    },
}

/// Properties from the file, then the `KAFKA_*` environment (`env`), then `--override`s: a later source wins.
/// The configs, and the temporary data dir of an `--ephemeral` run (removed when dropped).
type Loaded = (
    BrokerConfig,
    tiered::TieringConfig,
    Option<tempfile::TempDir>,
);

fn load(args: &Args, env: impl IntoIterator<Item = (String, String)>) -> anyhow::Result<Loaded> {
    let mut props: BTreeMap<String, String> = BTreeMap::new();
    if let Some(path) = &args.config {
        let f = std::fs::File::open(path)
            .with_context(|| format!("opening config file {}", path.display()))?;
        let map = java_properties::read(std::io::BufReader::new(f))
            .with_context(|| format!("reading config file {}", path.display()))?;
        props.extend(map);
    }
    let env: Vec<(String, String)> = env.into_iter().collect();
    let cluster_id = strata_broker::config::cluster_id_from_env(&env)?;
    let from_env = strata_broker::config::properties_from_env(env);
    if !from_env.is_empty() {
        let names: Vec<&str> = from_env.iter().map(|(k, _)| k.as_str()).collect();
        info!(
            "properties from KAFKA_* environment variables: {}",
            names.join(", ")
        );
    }
    props.extend(from_env);
    for o in &args.overrides {
        let (k, v) = o
            .split_once('=')
            .with_context(|| format!("--override {o:?}: expected key=value"))?;
        props.insert(k.trim().to_string(), v.trim().to_string());
    }
    let temp = if args.ephemeral {
        if let Some(k) = ["log.dirs", "log.dir"]
            .into_iter()
            .find(|k| props.contains_key(*k))
        {
            anyhow::bail!(
                "--ephemeral keeps all data in a temporary dir removed at exit: it cannot be combined with {k}={} \
                 (drop --ephemeral to keep data there, or drop {k})",
                props[k]
            );
        }
        let t = tempfile::Builder::new()
            .prefix("strata-ephemeral-")
            .tempdir()
            .context("creating the --ephemeral data dir")?;
        props.insert("log.dirs".into(), t.path().display().to_string());
        Some(t)
    } else {
        None
    };
    let (mut broker, tiering) = tiered::configs_from_properties(&props)?;
    broker.cluster_id = cluster_id;
    Ok((broker, tiering, temp))
}

/// SIGTERM or SIGINT. Both handlers are installed when this is called, not when the future is first polled: it is
/// called before the ready line, so a SIGTERM sent right after that line (a test harness, a supervisor) is always
/// a clean shutdown, never the default disposition that kills the process.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => info!("SIGINT received"),
            _ = term.recv() => info!("SIGTERM received"),
        }
    })
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(16)
        .enable_all()
        .build()
        .context("starting the tokio runtime")
}

fn print_ls(topic: &str, rows: &[String]) {
    println!("{}", strata_tiering::rlm::ops::RemoteSegmentListing::HEADER);
    for r in rows {
        println!("{r}");
    }
    println!("{} remote segment(s) of {topic}", rows.len());
}

/// `strata remote ...`: opens the data dir and the remote store, prints, closes (`ls` asks a running broker's
/// API when one serves these log dirs). Exit code 1 on problems.
async fn remote(
    broker: BrokerConfig,
    tiering: tiered::TieringConfig,
    cmd: RemoteCommand,
) -> anyhow::Result<i32> {
    let dirs: Vec<String> = broker
        .log_dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    // A broker running on these log dirs holds them locked: `ls` asks its API instead.
    if let (RemoteCommand::Ls { topic, records }, Some(addr)) = (
        &cmd,
        broker
            .log_dirs
            .first()
            .and_then(|d| client::recorded_addr(d)),
    ) {
        match client::remote_ls_rows(addr, topic) {
            Ok(rows) => {
                print_ls(topic, &rows);
                if *records {
                    client::metadata_record_lines(addr)?
                        .iter()
                        .for_each(|l| println!("{l}"));
                }
                return Ok(0);
            }
            // The broker answered (an unknown topic, a store error): its answer, not the offline fallback's
            // "log dir locked".
            Err(e) if e.kind() == std::io::ErrorKind::Other => {
                eprintln!(
                    "strata remote ls: the broker serving {} answered: {e}",
                    dirs.join(",")
                );
                return Ok(1);
            }
            // Nothing answers at the recorded address (a broker that stopped): read the dirs offline.
            Err(_) => {}
        }
    }
    let tier = OfflineTier::open(&broker, tiering)
        .await
        .with_context(|| format!("opening log.dirs={}", dirs.join(",")))?;
    let result = async {
        match cmd {
            RemoteCommand::Ls { topic, records } => {
                let rows: Vec<String> = tier.ls(&topic)?.iter().map(|r| r.to_string()).collect();
                print_ls(&topic, &rows);
                if records {
                    for line in tier.metadata_records()? {
                        println!("{line}");
                    }
                }
                anyhow::Ok(0)
            }
            RemoteCommand::Verify { topic } => {
                let bar = VerifyProgress::new();
                let report = tier
                    .verify_with_progress(topic.as_deref(), &|done, total| bar.show(done, total))
                    .await;
                bar.finish();
                let report = report?;
                println!("{report}");
                Ok(if report.is_clean() { 0 } else { 1 })
            }
        }
    }
    .await;
    tier.close().await?;
    result
}

/// `strata remote verify`'s progress on stderr: a bar on a terminal, otherwise a plain line at most every
/// [`Progress::INTERVAL`] (and none for a run shorter than that).
struct VerifyProgress {
    bar: Option<indicatif::ProgressBar>,
    plain: parking_lot::Mutex<Option<Progress>>,
}

impl VerifyProgress {
    fn new() -> Self {
        let bar = std::io::IsTerminal::is_terminal(&std::io::stderr()).then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "verifying {bar:40} {pos}/{len} partitions ({elapsed})",
                )
                .expect("a valid template"),
            );
            bar
        });
        Self {
            bar,
            plain: parking_lot::Mutex::new(None),
        }
    }

    fn show(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            return;
        }
        let mut plain = self.plain.lock();
        let p = plain.get_or_insert_with(|| Progress::new("verifying partitions", total as u64));
        if let Some(line) = p.advance((done as u64).saturating_sub(p.done())) {
            eprintln!("{line}");
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        } else if let Some(line) = self.plain.lock().as_ref().and_then(Progress::finish) {
            eprintln!("{line}");
        }
    }
}

fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    // Crash points named in FAILPOINTS (a `--features failpoints` build only; the crash loop).
    let _crash_points = strata_storage::failpoint::arm_from_env();
    let args = Args::parse();
    // The inspection commands print their results on stdout; their logs default to warnings only.
    let default_level = if args.command.is_some() {
        "warn"
    } else {
        "info"
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_level.into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // A log line that cannot be written (the reader of stderr went away, e.g. a supervisor that closed its
        // pipe) is dropped: the default reports it with eprintln!, which panics on the same closed stderr and
        // kills the broker mid-shutdown (no clean-shutdown marker).
        .log_internal_errors(false)
        .init();
    let (config, tiering, ephemeral) = match load(&args, std::env::vars()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("strata: {e:#}");
            std::process::exit(2);
        }
    };
    if let Some(t) = &ephemeral {
        if args.command.is_some() {
            eprintln!(
                "strata: --ephemeral runs the broker; the remote commands read existing data"
            );
            std::process::exit(2);
        }
        eprintln!(
            "strata: ephemeral run: all data in {} (removed at exit)",
            t.path().display()
        );
    }
    config.log_startup_notes();
    let rt = runtime()?;
    if let Some(Command::Remote { command }) = args.command {
        let code = rt.block_on(remote(config, tiering, command))?;
        std::process::exit(code);
    }
    rt.block_on(async move {
        let dirs: Vec<String> = config
            .log_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let server = match Server::start(config, tiering).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("strata: {e}");
                drop(ephemeral);
                std::process::exit(1);
            }
        };
        let signals = shutdown_signal()?;
        let (host, port) = server.broker().advertised();
        let listeners: Vec<String> = server
            .broker()
            .listeners()
            .iter()
            .map(|l| format!("{}://{}", l.name, l.bound))
            .collect();
        info!(
            listeners = %listeners.join(","),
            advertised = %format!("{host}:{port}"),
            log_dirs = %dirs.join(","),
            metrics = ?server.http_addr(),
            console = ?server.http_addr().map(|a| format!("http://{a}/")),
            startup_ms = started.elapsed().as_millis() as u64,
            "strata ready: bootstrap.servers={host}:{port}"
        );
        let stopped = server.run_until(signals).await;
        if let Some(t) = ephemeral {
            let dir = t.path().display().to_string();
            match t.close() {
                Ok(()) => info!(dir = %dir, "ephemeral data dir removed"),
                Err(e) => eprintln!("strata: removing the ephemeral data dir {dir}: {e}"),
            }
        }
        stopped?;
        info!("strata stopped cleanly");
        anyhow::Ok(())
    })
}

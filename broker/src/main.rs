//! The `strata` binary: `strata [--config server.properties] [--override key=value]...`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use strata_broker::config::KEYS;
use strata_broker::{Broker, BrokerConfig};
use tracing::info;

fn after_help() -> String {
    let mut s = String::from("Properties (Kafka names; set in --config or with --override):\n");
    for k in KEYS {
        s.push_str(&format!(
            "  {:<42} default {:<28} {}\n",
            k.name, k.default, k.doc
        ));
    }
    s.push_str("\nTopic configs accepted by CreateTopics/AlterConfigs: ");
    let names: Vec<&str> = strata_broker::topic_config::TOPIC_KEYS
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
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Sets one property, overriding the file (repeatable): --override log.dirs=/tmp/data
    #[arg(long = "override", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
}

fn load(args: &Args) -> anyhow::Result<BrokerConfig> {
    let mut props: BTreeMap<String, String> = BTreeMap::new();
    if let Some(path) = &args.config {
        let f = std::fs::File::open(path)
            .with_context(|| format!("opening config file {}", path.display()))?;
        let map = java_properties::read(std::io::BufReader::new(f))
            .with_context(|| format!("reading config file {}", path.display()))?;
        props.extend(map);
    }
    for o in &args.overrides {
        let (k, v) = o
            .split_once('=')
            .with_context(|| format!("--override {o:?}: expected key=value"))?;
        props.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(BrokerConfig::from_properties(&props)?)
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => info!("SIGINT received"),
        _ = term.recv() => info!("SIGTERM received"),
    }
}

fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let args = Args::parse();
    let config = match load(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("strata: {e:#}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(16)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listener)
            .await
            .with_context(|| format!("binding listeners={}", config.listener))?;
        let addr = listener.local_addr()?;
        let dirs: Vec<String> = config
            .log_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let broker = tokio::task::spawn_blocking(move || Broker::open(config, addr)).await??;
        let (host, port) = broker.advertised();
        info!(
            listener = %addr,
            advertised = %format!("{host}:{port}"),
            log_dirs = %dirs.join(","),
            startup_ms = started.elapsed().as_millis() as u64,
            "strata ready: bootstrap.servers={host}:{port}"
        );
        strata_broker::run(listener, broker.clone(), shutdown_signal()).await;
        tokio::task::spawn_blocking(move || broker.shutdown()).await??;
        info!("strata stopped cleanly");
        anyhow::Ok(())
    })
}

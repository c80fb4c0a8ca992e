//! Tiered storage end to end through the broker, in a few seconds: start a `strata` broker in-process (the
//! `strata` binary's defaults: tiering on, filesystem backend), create a tiered topic with a Kafka admin client,
//! produce with librdkafka, let segments roll and upload (RLMM COPY_SEGMENT_STARTED → RSM copy →
//! COPY_SEGMENT_FINISHED), let local retention drop the local copies, consume from offset 0 (served from the
//! remote tier), and print the `__remote_log_metadata` records (read by an ordinary consumer) and the object keys.
//!
//! Run: `cargo run --example tiering_demo` (data in a temp dir, deleted at the end; `--keep` keeps it and prints
//! where). The RSM (data plane) writes `.log`, `.indexes` and `.rsm-manifest` objects; the RLMM (metadata plane)
//! writes one record per state change into `__remote_log_metadata`.
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset, TopicPartitionList};
use strata_broker::Server;
use strata_metadata::RemoteLogMetadataRecord;
use strata_storage::TopicPartition;
use strata_tiering::rlm::ops;

const TOPIC: &str = "demo";
const MESSAGES: usize = 1200;

fn value_of(i: usize) -> Vec<u8> {
    format!("demo record {i:05} {}", "x".repeat(200)).into_bytes()
}

fn client(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap).set("log_level", "3");
    c
}

/// Polls `f` every 50 ms until it holds, for at most `limit`.
async fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    while !f() {
        if Instant::now() > deadline {
            bail!("timed out after {limit:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// Reads `count` messages of `topic` (`partitions` partitions) from the beginning: (partition, offset, value).
fn consume(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    count: usize,
) -> anyhow::Result<Vec<(i32, i64, Vec<u8>)>> {
    let c: BaseConsumer = client(bootstrap)
        .set("group.id", format!("demo-{topic}"))
        .set("enable.auto.commit", "false")
        .create()?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)?;
    }
    c.assign(&tpl)?;
    let mut out = Vec::with_capacity(count);
    let deadline = Instant::now() + Duration::from_secs(20);
    while out.len() < count {
        if Instant::now() > deadline {
            bail!(
                "consumed {} of {count} messages of {topic} in 20 s",
                out.len()
            );
        }
        if let Some(m) = c.poll(Duration::from_millis(200)) {
            let m = m?;
            out.push((
                m.partition(),
                m.offset(),
                m.payload().unwrap_or_default().to_vec(),
            ));
        }
    }
    Ok(out)
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(dir) {
                out.push(rel.display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let started = Instant::now();
    let keep = std::env::args().any(|a| a == "--keep");
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("strata-data");
    let remote = data.join("remote");

    // The broker as `strata --override ...` would start it: tiering is on by default and the RSM writes to
    // <first log dir>/remote with the filesystem backend. Short intervals so the demo is quick.
    let props: BTreeMap<String, String> = [
        ("listeners", "PLAINTEXT://127.0.0.1:0".to_string()),
        ("log.dirs", data.display().to_string()),
        ("log.retention.check.interval.ms", "200".into()),
        ("remote.log.manager.task.interval.ms", "200".into()),
        (
            "rlmm.config.remote.log.metadata.topic.num.partitions",
            "1".into(),
        ),
        ("http.listener", "127.0.0.1:0".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let server = Server::start_from_properties(&props).await?;
    let bs = server.local_addr().to_string();
    let tiering = server
        .tiering()
        .context("tiering is on by default")?
        .clone();
    println!(
        "[{:>5.1} s] broker on {bs}, data in {}",
        started.elapsed().as_secs_f64(),
        data.display()
    );
    if let Some(m) = server.http_addr() {
        println!("          console on http://{m}/ (metrics on http://{m}/metrics)");
    }

    // 1. A tiered topic: 64 KiB segments, keep (almost) nothing locally once a segment is remote.
    let admin: AdminClient<DefaultClientContext> = client(&bs).create()?;
    let topic = NewTopic::new(TOPIC, 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "65536")
        .set("local.retention.bytes", "1")
        .set("retention.ms", "-1");
    for r in admin.create_topics(&[topic], &AdminOptions::new()).await? {
        r.map_err(|(t, e)| anyhow::anyhow!("create topic {t}: {e}"))?;
    }
    println!(
        "[{:>5.1} s] created topic {TOPIC}: remote.storage.enable=true segment.bytes=65536 local.retention.bytes=1",
        started.elapsed().as_secs_f64()
    );

    // 2. Produce about 260 KB: the log rolls every 64 KiB.
    let producer: FutureProducer = client(&bs)
        .set("linger.ms", "5")
        .set("batch.size", "16384")
        .set("acks", "all")
        .create()?;
    let mut deliveries = Vec::with_capacity(MESSAGES);
    for i in 0..MESSAGES {
        let key = format!("k{i}");
        let value = value_of(i);
        deliveries.push(
            producer
                .send_result(
                    FutureRecord::to(TOPIC)
                        .key(&key)
                        .payload(&value)
                        .partition(0),
                )
                .map_err(|(e, _)| e)?,
        );
    }
    for d in deliveries {
        d.await?.map_err(|(e, _)| e)?;
    }
    let log = server
        .broker()
        .log_manager()
        .get_log(&TopicPartition::new(TOPIC, 0))
        .context("the topic's log")?;
    println!(
        "[{:>5.1} s] produced {MESSAGES} messages: offsets 0..{}, {} segments rolled",
        started.elapsed().as_secs_f64(),
        log.log_end_offset() - 1,
        log.rolled_segments().len()
    );

    // 3. The RemoteLogManager uploads every rolled segment; local retention then deletes the local copies.
    let last_rolled = log
        .rolled_segments()
        .last()
        .context("nothing rolled")?
        .next_offset
        - 1;
    wait_for(
        "the upload of every rolled segment",
        Duration::from_secs(20),
        || log.highest_offset_in_remote_storage() >= last_rolled,
    )
    .await?;
    println!(
        "[{:>5.1} s] uploaded: highest offset in remote storage = {last_rolled}",
        started.elapsed().as_secs_f64()
    );
    wait_for(
        "local retention to drop the uploaded segments",
        Duration::from_secs(20),
        || log.local_log_start_offset() > last_rolled,
    )
    .await?;
    println!(
        "[{:>5.1} s] local retention ran: log start offset {}, local log start offset {} — offsets 0..{} are \
         only in the remote tier; {} local segment(s) left",
        started.elapsed().as_secs_f64(),
        log.log_start_offset(),
        log.local_log_start_offset(),
        log.local_log_start_offset() - 1,
        log.rolled_segments().len() + 1
    );

    // 4. Consume from offset 0 with librdkafka: the broker serves everything below the local start remotely.
    let rlm = tiering.rlm();
    let fetched_before = rlm
        .metrics()
        .meter_total("RemoteFetchBytesPerSec", Some(TOPIC))
        .unwrap_or(0);
    let bs2 = bs.clone();
    let got = tokio::task::spawn_blocking(move || consume(&bs2, TOPIC, 1, MESSAGES)).await??;
    for (i, (_, offset, value)) in got.iter().enumerate() {
        if *offset != i as i64 || *value != value_of(i) {
            bail!("message {i}: offset {offset} or value differs from what was produced");
        }
    }
    let fetched = rlm
        .metrics()
        .meter_total("RemoteFetchBytesPerSec", Some(TOPIC))
        .unwrap_or(0)
        - fetched_before;
    if fetched == 0 {
        bail!("the consume was not served from the remote tier");
    }
    println!(
        "[{:>5.1} s] consumed offsets 0..{} from offset 0, identical to what was produced; {fetched} bytes came \
         from the remote tier (RemoteFetchBytesPerSec)",
        started.elapsed().as_secs_f64(),
        MESSAGES - 1
    );

    // 5. The metadata plane: __remote_log_metadata, read by an ordinary consumer (Kafka's serialization).
    let records = ops::metadata_records(server.broker().log_manager())?;
    let n = records.len();
    let bs3 = bs.clone();
    let meta =
        tokio::task::spawn_blocking(move || consume(&bs3, "__remote_log_metadata", 1, n)).await??;
    println!(
        "\n__remote_log_metadata ({} records, consumed with librdkafka):",
        meta.len()
    );
    for (p, offset, value) in &meta {
        // Values are in Kafka's RemoteLogMetadataSerde format; printed as their JSON rendering.
        let r = RemoteLogMetadataRecord::from_bytes(value, || format!("{p}@{offset}"))?;
        println!("  {p}@{offset}: {}", String::from_utf8_lossy(&r.to_json()));
    }

    // 6. The data plane: the RSM's objects, per segment and on disk.
    println!("\nremote segments (what `strata remote ls --topic {TOPIC}` prints):");
    println!("  {}", ops::RemoteSegmentListing::HEADER);
    let partitions = rlm.partitions_of(TOPIC);
    for row in ops::remote_ls(tiering.rlmm().as_ref(), tiering.rsm(), &partitions)? {
        println!("  {row}");
    }
    println!("\nobjects under {}:", remote.display());
    for f in files_under(&remote) {
        println!("  {f}");
    }
    let report = ops::remote_verify(
        tiering.rlmm().as_ref(),
        tiering.rsm(),
        &partitions,
        &|_, _| {},
    )
    .await?;
    println!("\nstrata remote verify: {report}");
    if !report.is_clean() {
        bail!("remote verify found problems");
    }

    drop(producer);
    drop(admin);
    drop(tiering);
    server.shutdown().await?;
    println!("\ndone in {:.1} s", started.elapsed().as_secs_f64());
    if keep {
        let kept = dir.keep();
        println!("kept {}", kept.display());
    }
    Ok(())
}

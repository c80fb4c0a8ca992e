//! Tiered storage end to end through the broker, with librdkafka (rdkafka crate) and the filesystem backend:
//! create a tiered topic → produce → expect segments offloaded and local copies deleted → consume from offset 0
//! (served from the remote tier) byte-identical → ListOffsets -4 / -5 / timestamp → `/metrics` →
//! `__remote_log_metadata` readable → restart → consume again → `strata remote ls/verify` on the stopped broker.
use crate::common;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use common::tiered::*;
use common::{admin, assign_from_beginning, consume_n, producer};
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::FutureRecord;
use strata_broker::tiered::{configs_from_properties, ops::OfflineTier};
use strata_broker::Server;

const TOPIC: &str = "tiered";
const MESSAGES: usize = 1500;

fn consume_all_from_zero(bootstrap: &str, group: &str) {
    let c: BaseConsumer = common::consumer(
        bootstrap,
        group,
        &[("fetch.max.bytes", "65536"), ("message.max.bytes", "65536")],
    );
    assign_from_beginning(&c, TOPIC, 1);
    let got = consume_n(&c, MESSAGES, Duration::from_secs(20));
    for (i, (part, offset, key, value)) in got.iter().enumerate() {
        assert_eq!((*part, *offset), (0, i as i64), "message {i} position");
        assert_eq!(
            key.as_deref(),
            Some(format!("k{i}").as_bytes()),
            "key of {i}"
        );
        assert_eq!(value.as_deref(), Some(&value_of(i)[..]), "value of {i}");
    }
}

fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect /metrics");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read http response");
    out
}

#[test]
fn offloaded_segments_are_served_remotely_before_and_after_a_restart() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let addr = server.local_addr();

    // create topic: tiered, small segments, almost nothing kept locally.
    let topic = NewTopic::new(TOPIC, 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "16384")
        .set("local.retention.bytes", "1")
        .set("retention.bytes", "-1")
        .set("retention.ms", "-1");
    let res = rt
        .block_on(admin(&bs).create_topics(&[topic], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(n)] if n == TOPIC), "{res:?}");

    // produce: one batch per message, increasing timestamps.
    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    let futures: Vec<_> = (0..MESSAGES)
        .map(|i| {
            let key = format!("k{i}");
            let value = value_of(i);
            p.send_result(
                FutureRecord::to(TOPIC)
                    .key(&key)
                    .payload(&value)
                    .partition(0)
                    .timestamp(BASE_TS + i as i64 * 1000),
            )
            .map_err(|(e, _)| e)
            .expect("enqueue")
        })
        .collect();
    rt.block_on(async {
        for f in futures {
            f.await.expect("delivery").expect("delivered");
        }
    });

    // expect offloaded and expect local start: the local log now starts well above 0.
    let log = server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new(TOPIC, 0))
        .expect("log");
    wait_for(
        "segments offloaded and local copies deleted",
        Duration::from_secs(15),
        || {
            log.highest_offset_in_remote_storage() > (MESSAGES as i64) / 2
                && log.local_log_start_offset() > (MESSAGES as i64) / 2
        },
    );
    assert_eq!(log.log_start_offset(), 0, "nothing expired remotely");

    // ListOffsets: -2 = 0, -4 = local start, -5 = highest tiered offset, timestamps inside remote data.
    let (earliest, _) = rt.block_on(list_offset(addr, TOPIC, -2));
    // Local retention may still be deleting segments: -4 lies between the local starts before and after.
    let local_before = log.local_log_start_offset();
    let (earliest_local, _) = rt.block_on(list_offset(addr, TOPIC, -4));
    let local_after = log.local_log_start_offset();
    let (latest_tiered, _) = rt.block_on(list_offset(addr, TOPIC, -5));
    assert_eq!(earliest, 0);
    assert!(
        (local_before..=local_after).contains(&earliest_local),
        "-4 = {earliest_local}, local start {local_before}..={local_after}"
    );
    assert!(earliest_local > 0, "-4 = {earliest_local}");
    assert!(
        latest_tiered >= earliest_local - 1 && latest_tiered < MESSAGES as i64,
        "-5 = {latest_tiered}, -4 = {earliest_local}"
    );
    // By timestamp: message 100 lies in a remote segment (below the local log start); the lookup answers its
    // offset and timestamp from the remote segment's time index, as for a time between two records.
    assert!(earliest_local > 101, "message 100 is remote");
    let t100 = BASE_TS + 100 * 1000;
    assert_eq!(rt.block_on(list_offset(addr, TOPIC, t100)), (100, t100));
    assert_eq!(rt.block_on(list_offset(addr, TOPIC, t100 - 1)), (100, t100));
    assert_eq!(
        rt.block_on(list_offset(addr, TOPIC, BASE_TS - 5)),
        (0, BASE_TS)
    );
    let last = BASE_TS + (MESSAGES as i64 - 1) * 1000;
    assert_eq!(
        rt.block_on(list_offset(addr, TOPIC, last)),
        (MESSAGES as i64 - 1, last),
        "a local record after the remote ones"
    );
    assert_eq!(rt.block_on(list_offset(addr, TOPIC, last + 1)), (-1, -1));
    // consume from 0: served remotely, byte-identical.
    consume_all_from_zero(&bs, "first");
    let rlm = server.tiering().expect("tiering on").rlm();
    assert!(
        rlm.metrics()
            .meter_total("RemoteFetchBytesPerSec", Some(TOPIC))
            .unwrap_or(0)
            > 0,
        "the consume was not served from the remote tier"
    );
    let metrics_addr = server.http_addr().expect("/metrics bound");
    let text = http_get(metrics_addr, "/metrics");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    for name in [
        "kafka_server_brokertopicmetrics_remotecopybytes_total",
        "kafka_server_brokertopicmetrics_remotefetchbytes_total",
        "kafka_server_brokertopicmetrics_remotelogsizebytes",
    ] {
        assert!(text.contains(name), "/metrics lacks {name}");
    }
    assert!(http_get(metrics_addr, "/nope").starts_with("HTTP/1.1 404"));

    // __remote_log_metadata: readable by a client, records of the copies in Kafka's serialization (null key).
    let c: BaseConsumer = common::consumer(&bs, "meta-reader", &[]);
    assign_from_beginning(&c, "__remote_log_metadata", 2);
    let records = consume_n(&c, 4, Duration::from_secs(10));
    for r in &records {
        let value = r.3.as_deref().expect("record value");
        assert_eq!(r.2, None, "a null key, as Kafka's RLMM writes");
        assert_eq!(
            strata_metadata::ValueFormat::of(value),
            strata_metadata::ValueFormat::Kafka
        );
        let decoded = strata_metadata::RemoteLogMetadataRecord::from_bytes(value, || {
            format!("offset {}", r.1)
        })
        .expect("Kafka's RemoteLogMetadataSerde format");
        assert!(
            matches!(
                decoded,
                strata_metadata::RemoteLogMetadataRecord::Segment(_)
                    | strata_metadata::RemoteLogMetadataRecord::SegmentUpdate(_)
            ),
            "{decoded:?}"
        );
        assert_eq!(decoded.topic_id_partition().topic_partition.topic, TOPIC);
    }
    drop(c);

    // restart → consume again from 0.
    rt.block_on(server.shutdown()).expect("clean shutdown");
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let log = server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new(TOPIC, 0))
        .expect("log after restart");
    assert!(
        log.local_log_start_offset() > 0,
        "local copies stay deleted"
    );
    assert_eq!(log.log_start_offset(), 0, "log start survives the restart");
    consume_all_from_zero(&bs, "second");
    rt.block_on(server.shutdown()).expect("clean shutdown");

    // strata remote ls / verify on the stopped broker's data.
    rt.block_on(async {
        let (b, t) = configs_from_properties(&props(dir.path())).unwrap();
        let tier = OfflineTier::open(&b, t).await.expect("open offline");
        let rows = tier.ls(TOPIC).expect("ls");
        assert!(rows.len() >= 2, "{} remote segments", rows.len());
        assert!(rows.iter().all(|r| r.state == "COPY_SEGMENT_FINISHED"));
        assert_eq!(rows[0].start_offset, 0);
        assert!(rows
            .iter()
            .all(|r| r.object_keys.len() == 3 && r.size_bytes > 0));
        let report = tier.verify(None).await.expect("verify");
        assert!(report.is_clean(), "{report}");
        assert_eq!(report.segments_checked, rows.len());
        tier.close().await.expect("close");
    });
}

#[test]
fn unreachable_remote_storage_refuses_start_with_the_probe_error() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind, note, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut p = props(dir.path());
    for (k, v) in [
        ("rsm.config.storage.backend", "s3".to_string()),
        ("rsm.config.storage.s3.bucket.name", "tier".into()),
        ("rsm.config.storage.s3.region", "us-east-1".into()),
        (
            "rsm.config.storage.s3.endpoint.url",
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "rsm.config.storage.s3.path.style.access.enabled",
            "true".into(),
        ),
        ("rsm.config.storage.aws.access.key.id", "test".into()),
        ("rsm.config.storage.aws.secret.access.key", "test".into()),
        ("rsm.config.storage.s3.api.call.timeout", "1500".into()),
        (
            "rsm.config.storage.s3.api.call.attempt.timeout",
            "500".into(),
        ),
    ] {
        p.insert(k.to_string(), v);
    }
    let started = Instant::now();
    let err = rt
        .block_on(Server::start_from_properties(&p))
        .expect_err("start-up must fail");
    let msg = err.to_string();
    assert!(
        msg.contains("tier") && msg.contains(&port.to_string()) && msg.contains("put"),
        "the error names the bucket, endpoint and failing call: {msg}"
    );
    // The broker's own error, naming the subsystem that failed (not the subsystem's error type).
    assert!(
        matches!(&err, strata_broker::Error::Tiering { context, .. } if context == "starting tiered storage"),
        "{err:?}"
    );
    assert!(msg.starts_with("starting tiered storage: "), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The log dirs were released: a broker with the filesystem backend starts on the same dir.
    let server = rt.block_on(start(dir.path()));
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

#[test]
fn strata_remote_ls_and_verify_print_segments_of_a_stopped_broker() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let topic = NewTopic::new("cli", 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "4096");
    let res = rt
        .block_on(admin(&bs).create_topics(&[topic], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..200 {
            let v = value_of(i);
            p.send(
                FutureRecord::<str, _>::to("cli").payload(&v).partition(0),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    let log = server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new("cli", 0))
        .expect("log");
    wait_for("a segment offloaded", Duration::from_secs(15), || {
        log.highest_offset_in_remote_storage() >= 0
    });
    drop(log);
    let mut args: Vec<String> = Vec::new();
    for (k, v) in props(dir.path()) {
        args.push("--override".into());
        args.push(format!("{k}={v}"));
    }
    // While the broker runs its dir is locked: verify is refused, saying why; ls asks the broker's API.
    let busy = strata_remote(&["remote", "verify"], &args);
    let err = String::from_utf8_lossy(&busy.stderr);
    assert!(!busy.status.success(), "{err}");
    assert!(err.contains("another broker"), "{err}");
    wait_for(
        "every rolled segment copied",
        Duration::from_secs(15),
        || {
            server
                .tiering()
                .map(|t| {
                    t.rlm()
                        .metrics()
                        .partition_gauges(&strata_storage::TopicPartition::new("cli", 0))
                })
                .is_some_and(|g| g.copy_lag_segments == 0)
        },
    );
    let online = strata_remote(&["remote", "ls", "--topic", "cli"], &args);
    let online_out = String::from_utf8_lossy(&online.stdout).into_owned();
    assert!(
        online.status.success(),
        "{online_out} {}",
        String::from_utf8_lossy(&online.stderr)
    );
    let online_records = strata_remote(&["remote", "ls", "--topic", "cli", "--records"], &args);
    let online_records = String::from_utf8_lossy(&online_records.stdout).into_owned();
    // An unknown topic while the broker runs: the broker's answer, not the locked dir of an offline fallback.
    let unknown = strata_remote(&["remote", "ls", "--topic", "nosuch"], &args);
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success(), "{err}");
    assert!(err.contains("nosuch") && !err.contains("lock"), "{err}");
    rt.block_on(server.shutdown()).expect("clean shutdown");

    let ls = strata_remote(&["remote", "ls", "--topic", "cli"], &args);
    let out = String::from_utf8_lossy(&ls.stdout);
    assert!(
        ls.status.success(),
        "{out} {}",
        String::from_utf8_lossy(&ls.stderr)
    );
    assert!(out.contains("COPY_SEGMENT_FINISHED"), "{out}");
    assert!(out.contains(".rsm-manifest"), "{out}");
    // The running broker's API listed exactly what the data dir holds once it stopped.
    assert_eq!(
        online_out, out,
        "strata remote ls through the API differs from the offline listing"
    );
    // --records: the metadata records (stored in Kafka's RemoteLogMetadataSerde format) rendered as JSON.
    let records = strata_remote(&["remote", "ls", "--topic", "cli", "--records"], &args);
    let records = String::from_utf8_lossy(&records.stdout).into_owned();
    for want in [
        "__remote_log_metadata-",
        r#"{"version":1,"type":"segment","#,
        r#""type":"segment_update""#,
        r#""state":"COPY_SEGMENT_FINISHED""#,
        r#""topic":"cli""#,
    ] {
        assert!(records.contains(want), "{want} in {records}");
    }
    assert!(!records.contains("undecodable"), "{records}");
    assert_eq!(online_records, records, "--records online and offline");

    let verify = strata_remote(&["remote", "verify"], &args);
    let out = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{out}");
    assert!(
        out.contains("orphan objects: 0") && out.trim_end().ends_with("OK"),
        "{out}"
    );

    // An orphan object under the partition's folder is reported, with exit status 1.
    let remote = dir.path().join("remote");
    let seg_dir = std::fs::read_dir(&remote)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("cli-"))
        .expect("topic folder")
        .path()
        .join("0");
    std::fs::write(seg_dir.join("stray.log"), b"x").unwrap();
    let verify = strata_remote(&["remote", "verify", "--topic", "cli"], &args);
    let out = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(1), "{out}");
    assert!(out.contains("stray.log"), "{out}");

    // An unknown topic, or a log dir the broker never formatted (a typo), is an error and creates nothing.
    let ls = strata_remote(&["remote", "ls", "--topic", "no-such-topic"], &args);
    assert_ne!(ls.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&ls.stderr).contains("no-such-topic"),
        "{}",
        String::from_utf8_lossy(&ls.stderr)
    );
    let typo = dir.path().join("typo");
    let verify = std::process::Command::new(common::strata_bin())
        .args(["remote", "verify"])
        .args(&args)
        .args(["--override", &format!("log.dirs={}", typo.display())])
        .output()
        .expect("run strata remote verify");
    let err = String::from_utf8_lossy(&verify.stderr);
    assert_ne!(verify.status.code(), Some(0), "{err}");
    assert!(err.contains("meta.properties"), "{err}");
    assert!(!typo.exists(), "the inspection created {}", typo.display());
}

#[test]
fn one_fetch_reads_several_remote_partitions_byte_identical() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    tiered_topic(&rt, &bs, "multi", 3, 300, &[]);
    let logs: Vec<_> = (0..3).map(|p| log_of(&server, "multi", p)).collect();
    wait_for(
        "all three partitions offloaded",
        Duration::from_secs(15),
        || logs.iter().all(|l| l.local_log_start_offset() > 150),
    );
    let c: BaseConsumer = common::consumer(&bs, "multi-reader", &[]);
    assign_from_beginning(&c, "multi", 3);
    let got = consume_n(&c, 900, Duration::from_secs(20));
    let mut next = [0i64; 3];
    for (part, offset, key, value) in got {
        let i = offset as usize;
        assert_eq!(offset, next[part as usize], "partition {part} in order");
        next[part as usize] += 1;
        assert_eq!(key.as_deref(), Some(format!("k{i}").as_bytes()));
        assert_eq!(value.as_deref(), Some(&value_of(i)[..]), "{part}@{offset}");
    }
    assert_eq!(next, [300, 300, 300]);
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

#[test]
fn retention_and_delete_records_expire_remote_segments() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let remote = dir.path().join("remote");

    // retention.bytes over local + remote: old remote segments are deleted, the log start advances.
    tiered_topic(&rt, &bs, "expiring", 1, 400, &[("retention.bytes", "8192")]);
    let log = log_of(&server, "expiring", 0);
    wait_for(
        "remote segments expired by retention.bytes",
        Duration::from_secs(15),
        || log.log_start_offset() > 0 && log.highest_offset_in_remote_storage() > 0,
    );
    let finished = || {
        strata_tiering::rlm::ops::metadata_records(server.broker().log_manager())
            .expect("metadata records")
            .iter()
            .filter(|r| r.json.contains("DELETE_SEGMENT_FINISHED"))
            .count()
    };
    wait_for(
        "DELETE_SEGMENT_FINISHED recorded",
        Duration::from_secs(15),
        || finished() > 0,
    );
    // Remote retention may still be advancing the log start: -2 lies between its values before and after.
    let before = log.log_start_offset();
    let (earliest, _) = rt.block_on(list_offset(server.local_addr(), "expiring", -2));
    let after = log.log_start_offset();
    assert!(
        (before..=after).contains(&earliest),
        "-2 = {earliest}, log start {before}..={after}"
    );

    // DeleteRecords below the local log start: the remote segments below it go too.
    tiered_topic(&rt, &bs, "trimmed", 1, 400, &[]);
    let log = log_of(&server, "trimmed", 0);
    wait_for("trimmed offloaded", Duration::from_secs(15), || {
        log.local_log_start_offset() > 300
    });
    let files_before = remote_files(&remote, "trimmed");
    let mut tpl = rdkafka::TopicPartitionList::new();
    tpl.add_partition_offset("trimmed", 0, rdkafka::Offset::Offset(200))
        .unwrap();
    let res = rt
        .block_on(admin(&bs).delete_records(&tpl, &AdminOptions::new()))
        .expect("delete_records");
    assert_eq!(res.elements()[0].error(), Ok(()), "{:?}", res.elements()[0]);
    assert_eq!(log.log_start_offset(), 200);
    wait_for(
        "remote segments below 200 deleted",
        Duration::from_secs(15),
        || remote_files(&remote, "trimmed") < files_before,
    );
    let c: BaseConsumer = common::consumer(&bs, "trimmed-reader", &[]);
    assign_from_beginning(&c, "trimmed", 1);
    let got = consume_n(&c, 200, Duration::from_secs(20));
    assert_eq!(got[0].1, 200, "consumption starts at the new log start");
    assert_eq!(got[199].1, 399);
    assert_eq!(got[0].3.as_deref(), Some(&value_of(200)[..]));
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// ListOffsets -3 (MAX_TIMESTAMP) sees the remote tier: the record with the partition's largest timestamp lies
/// in a segment that only exists remotely, and the answer is still that record (it was the largest local one
/// before the fix, so the answer changed when data was tiered).
#[test]
fn max_timestamp_lookup_includes_remote_segments() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let addr = server.local_addr();
    let t = NewTopic::new("maxts", 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "4096")
        .set("local.retention.bytes", "1")
        .set("retention.ms", "-1");
    let res = rt
        .block_on(admin(&bs).create_topics(&[t], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    const PEAK: usize = 50;
    let peak_ts = BASE_TS + 1_000_000_000;
    let ts_of = |i: usize| {
        if i == PEAK {
            peak_ts
        } else {
            BASE_TS + i as i64
        }
    };
    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..400 {
            let v = value_of(i);
            p.send(
                FutureRecord::<(), _>::to("maxts")
                    .payload(&v)
                    .partition(0)
                    .timestamp(ts_of(i)),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    let log = log_of(&server, "maxts", 0);
    wait_for(
        "the peak record's segment offloaded and deleted locally",
        Duration::from_secs(15),
        || log.local_log_start_offset() > PEAK as i64 + 1,
    );
    assert_eq!(log.log_start_offset(), 0, "nothing expired");
    let local_max = log.max_timestamp_and_offset().expect("local data");
    assert!(
        local_max.0 < peak_ts,
        "the peak is not local: {local_max:?}"
    );
    assert_eq!(
        rt.block_on(list_offset(addr, "maxts", -3)),
        (PEAK as i64, peak_ts)
    );

    // Once the peak is below the log start (DeleteRecords), the answer is the largest remaining timestamp.
    let mut tpl = rdkafka::TopicPartitionList::new();
    tpl.add_partition_offset("maxts", 0, rdkafka::Offset::Offset(PEAK as i64 + 1))
        .unwrap();
    rt.block_on(admin(&bs).delete_records(&tpl, &AdminOptions::new()))
        .expect("delete_records");
    assert_eq!(
        rt.block_on(list_offset(addr, "maxts", -3)),
        (399, ts_of(399))
    );
    drop(p);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// Runs `strata <cmd> <overrides>` to completion.
fn strata_remote(cmd: &[&str], overrides: &[String]) -> std::process::Output {
    std::process::Command::new(common::strata_bin())
        .args(cmd)
        .args(overrides)
        .output()
        .unwrap_or_else(|e| panic!("run strata {cmd:?}: {e}"))
}

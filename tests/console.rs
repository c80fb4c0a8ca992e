//! The HTTP listener (console, JSON API under /api/v1/, /metrics) against what the test itself produced and
//! consumed with librdkafka: a tiered topic rolls, uploads and deletes locally; the API's segments, offsets, RLMM
//! records and group lag, and the Strimzi-named metrics (`kafka_server_brokertopicmetrics_messagesin_total`, ...)
//! must match; a deleted topic's series disappear. Also: served without tiering, a taken port is only a warning,
//! the page is embedded (no CDN), bad API input gets a clear error.
use crate::common;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use common::tiered::*;
use common::{admin, consume_n, local_props};
use rdkafka::admin::AdminOptions;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use serde_json::Value;
use strata_broker::Server;

const TOPIC: &str = "watched";
const MESSAGES: usize = 300;

/// (status line, body) of one HTTP/1.1 request.
fn http(addr: SocketAddr, method: &str, path: &str, ctype: &str, body: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect http.listener");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read http response");
    let (head, body) = out.split_once("\r\n\r\n").expect("http response");
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

fn get(addr: SocketAddr, path: &str) -> String {
    let (status, body) = http(addr, "GET", path, "text/plain", "");
    assert!(status.contains(" 200 "), "GET {path}: {status} {body}");
    body
}

fn api(addr: SocketAddr, path: &str) -> Value {
    serde_json::from_str(&get(addr, &format!("/api/v1/{path}"))).expect("JSON")
}

/// The value of the series `name{labels}` (labels as written, e.g. `topic="t"`), if present.
fn metric(text: &str, name: &str, labels: &str) -> Option<f64> {
    let series = if labels.is_empty() {
        format!("{name} ")
    } else {
        format!("{name}{{{labels}}} ")
    };
    text.lines()
        .find_map(|l| l.strip_prefix(series.as_str()))
        .map(|v| v.trim().parse().expect("a number"))
}

/// A tiered topic of small segments is produced, consumed by a group and partly produced again from the API;
/// every figure the console shows is checked against what happened.
#[test]
fn api_and_metrics_follow_a_tiered_topic_through_roll_upload_and_local_delete() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let addr = server.http_addr().expect("http.listener bound");

    tiered_topic(&rt, &bs, TOPIC, 1, MESSAGES, &[]);
    let log = log_of(&server, TOPIC, 0);
    // Rolls, uploads and local deletes: a segment that is only remote, and the local log starts above 0.
    wait_for("a remote-only segment", Duration::from_secs(20), || {
        let s = api(addr, &format!("topics/{TOPIC}/partitions/0/segments"));
        s["segments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["state"] == "remote")
            && s["local_log_start_offset"].as_i64().unwrap() > 0
    });
    // Settled: every rolled segment copied and its local copy deleted (nothing changes after that).
    wait_for(
        "every rolled segment remote only",
        Duration::from_secs(30),
        || {
            let s = api(addr, &format!("topics/{TOPIC}/partitions/0/segments"));
            let p = api(addr, &format!("topics/{TOPIC}/partitions"));
            p["partitions"][0]["copy_lag_segments"] == 0
                && s["segments"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|g| g["state"] == "remote" || g["state"] == "active")
        },
    );

    // Segments: offsets contiguous from 0 to the log end, the active one last, remote ones named by the RLMM.
    let s = api(addr, &format!("topics/{TOPIC}/partitions/0/segments"));
    let segs = s["segments"].as_array().unwrap();
    assert_eq!(segs[0]["base_offset"], 0, "{s}");
    for w in segs.windows(2) {
        assert_eq!(
            w[0]["end_offset"].as_i64().unwrap() + 1,
            w[1]["base_offset"].as_i64().unwrap(),
            "gap or overlap between segments: {s}"
        );
    }
    let last = segs.last().unwrap();
    assert_eq!(last["state"], "active");
    assert_eq!(last["end_offset"], MESSAGES as i64 - 1);
    assert_eq!(s["high_watermark"], MESSAGES as i64);
    assert_eq!(s["log_start_offset"], 0);
    assert_eq!(
        s["local_log_start_offset"].as_i64().unwrap(),
        log.local_log_start_offset()
    );
    let remote: Vec<&Value> = segs.iter().filter(|g| g["remote"].is_object()).collect();
    let highest = remote
        .iter()
        .map(|g| g["end_offset"].as_i64().unwrap())
        .max()
        .unwrap();
    assert_eq!(s["highest_remote_offset"], highest, "{s}");
    assert_eq!(log.highest_offset_in_remote_storage(), highest);
    for g in &remote {
        assert_eq!(g["remote"]["state"], "COPY_SEGMENT_FINISHED", "{g}");
    }

    // The topic's remote segments as `strata remote ls` lists them: the same offsets and sizes.
    let ls = api(addr, &format!("topics/{TOPIC}/remote-segments"));
    let listed = ls["segments"].as_array().unwrap();
    assert_eq!(listed.len(), remote.len(), "{ls}");
    for (l, g) in listed.iter().zip(&remote) {
        assert_eq!(l["start_offset"], g["base_offset"]);
        assert_eq!(l["end_offset"], g["end_offset"]);
        assert_eq!(l["size_bytes"], g["size_bytes"]);
        assert_eq!(l["state"], "COPY_SEGMENT_FINISHED");
        assert!(l["object_keys"].as_array().unwrap().len() >= 2, "{l}");
    }
    let remote_bytes: u64 = listed
        .iter()
        .map(|l| l["size_bytes"].as_u64().unwrap())
        .sum();

    // RLMM records of the partition: every remote segment was started and finished, with times.
    let r = api(addr, &format!("rlmm?topic={TOPIC}&partition=0&limit=1000"));
    let records = r["records"].as_array().unwrap();
    let count = |state: &str| records.iter().filter(|x| x["state"] == state).count();
    assert!(count("COPY_SEGMENT_STARTED") >= remote.len(), "{r}");
    assert!(count("COPY_SEGMENT_FINISHED") >= remote.len(), "{r}");
    assert!(records
        .iter()
        .all(|x| x["event_timestamp_ms"].as_i64().unwrap() > 0 && x["topic"] == TOPIC));

    // A group consumes everything (the first segments from remote storage) and commits.
    let c: BaseConsumer = common::consumer(&bs, "watchers", &[]);
    c.subscribe(&[TOPIC]).expect("subscribe");
    let got = consume_n(&c, MESSAGES, Duration::from_secs(30));
    assert_eq!(got.len(), MESSAGES);
    c.commit_consumer_state(CommitMode::Sync).expect("commit");
    let consumed_bytes: usize = got.iter().map(|m| m.3.as_ref().map_or(0, Vec::len)).sum();

    // Five more records through the console's produce endpoint: the group lags by five.
    for i in 0..5 {
        let (status, body) = http(
            addr,
            "POST",
            &format!("/api/v1/topics/{TOPIC}/produce"),
            "application/json",
            &format!(r#"{{"partition":0,"key":"api-{i}","value":"from the console {i}"}}"#),
        );
        assert!(status.contains(" 200 "), "{status} {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["offset"], MESSAGES as i64 + i);
    }
    let groups = api(addr, "groups");
    let g = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "watchers")
        .unwrap_or_else(|| panic!("group missing: {groups}"));
    assert_eq!(g["members"].as_array().unwrap().len(), 1, "{g}");
    assert_eq!(g["partitions"][0]["committed"], MESSAGES as i64, "{g}");
    assert_eq!(g["partitions"][0]["lag"], 5, "{g}");
    assert_eq!(g["total_lag"], 5);
    // The tail shows the records written from the page.
    let tail = api(
        addr,
        &format!("topics/{TOPIC}/partitions/0/records?limit=5"),
    );
    assert_eq!(tail["records"][4]["value"], "from the console 4", "{tail}");
    assert_eq!(tail["records"][0]["key"], "api-0");

    // Metrics against what was produced and consumed.
    let text = get(addr, "/metrics");
    let t = format!("topic=\"{TOPIC}\"");
    assert_eq!(
        metric(
            &text,
            "kafka_server_brokertopicmetrics_messagesin_total",
            &t
        ),
        Some((MESSAGES + 5) as f64),
        "{text}"
    );
    let bytes_in = metric(&text, "kafka_server_brokertopicmetrics_bytesin_total", &t).unwrap();
    assert!(bytes_in > 0.0 && bytes_in <= log.log_end_offset() as f64 * 1024.0);
    let bytes_out = metric(&text, "kafka_server_brokertopicmetrics_bytesout_total", &t).unwrap();
    assert!(
        bytes_out >= consumed_bytes as f64,
        "bytes out {bytes_out} < consumed payload {consumed_bytes}"
    );
    let produces = metric(
        &text,
        "kafka_network_requestmetrics_requests_total",
        "request=\"Produce\"",
    )
    .unwrap();
    assert!(produces >= MESSAGES as f64, "{produces} Produce requests");
    assert!(text.contains("kafka_network_requestmetrics_totaltime_seconds_bucket{"));
    assert_eq!(
        metric(
            &text,
            "kafka_server_brokertopicmetrics_remotecopybytes_total",
            &t
        ),
        Some(remote_bytes as f64),
        "RemoteCopyBytes = the sizes of the remote segments"
    );
    assert_eq!(
        metric(
            &text,
            "kafka_consumergroup_lag",
            &format!("consumergroup=\"watchers\",{t},partition=\"0\"")
        ),
        Some(5.0)
    );
    assert!(
        metric(
            &text,
            "kafka_server_socketservermetrics_connection_count",
            "listener=\"PLAINTEXT\""
        )
        .unwrap()
            >= 1.0
    );
    let size = metric(&text, "kafka_log_log_size", &format!("{t},partition=\"0\"")).unwrap();
    assert!(
        size > 0.0 && size < bytes_in,
        "local size {size}: most of the log is remote"
    );
    assert!(metric(&text, "kafka_server_replicamanager_partitioncount", "").unwrap() >= 1.0);
    assert!(
        text.lines()
            .all(|l| l.starts_with('#') || !l.contains("PerSec")),
        "old names left"
    );
    drop(c);

    // A deleted topic's series disappear.
    drop(log);
    rt.block_on(admin(&bs).delete_topics(&[TOPIC], &AdminOptions::new()))
        .expect("delete_topics");
    wait_for("the topic's series gone", Duration::from_secs(10), || {
        !get(addr, "/metrics").contains(&t)
    });
    let topics = api(addr, "topics");
    assert!(topics["topics"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["name"] != TOPIC));
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// `/metrics` and the API are served with tiering off; a second broker asking for the same port starts without
/// its listener (a warning), and `http.listener=` (empty) turns it off.
#[test]
fn http_listener_serves_without_tiering_and_a_taken_port_only_disables_it() {
    let rt = runtime();
    let (d1, d2, d3) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let start = |dir: &std::path::Path, listener: &str| -> Server {
        rt.block_on(Server::start_from_properties(&local_props(
            dir,
            &[("http.listener", listener)],
        )))
        .expect("broker starts")
    };
    let first = start(d1.path(), "127.0.0.1:0");
    let addr = first.http_addr().expect("bound");
    let text = get(addr, "/metrics");
    assert!(
        metric(&text, "kafka_server_replicamanager_partitioncount", "").is_some(),
        "{text}"
    );
    assert!(
        !text.contains("remotecopybytes"),
        "no tiering metrics when tiering is off"
    );
    assert_eq!(api(addr, "overview")["tiering"], Value::Null);

    let second = start(d2.path(), &addr.to_string());
    assert_eq!(second.http_addr(), None, "the port is taken: no listener");
    let off = start(d3.path(), "");
    assert_eq!(off.http_addr(), None);
    for s in [first, second, off] {
        rt.block_on(s.shutdown()).expect("clean shutdown");
    }
}

/// The page, script and style come from the binary and load nothing from elsewhere; bad API input is a 4xx
/// with a message naming the bad value.
#[test]
fn console_is_embedded_and_bad_api_input_is_named() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt
        .block_on(Server::start_from_properties(&local_props(
            dir.path(),
            &[("http.listener", "127.0.0.1:0")],
        )))
        .expect("broker starts");
    let addr = server.http_addr().expect("bound");
    let page = get(addr, "/");
    assert!(page.contains("<title>strata console</title>"));
    for asset in ["/console.js", "/console.css"] {
        let body = get(addr, asset);
        assert!(
            !body.contains("http://") && !body.contains("https://"),
            "{asset} loads from elsewhere"
        );
    }
    assert!(!page.contains("http://") && !page.contains("https://"));

    let (status, body) = http(
        addr,
        "GET",
        "/api/v1/topics/nope/partitions",
        "text/plain",
        "",
    );
    assert!(
        status.contains(" 404 ") && body.contains("nope"),
        "{status} {body}"
    );
    let (status, body) = http(addr, "GET", "/api/v1/topics?limit=many", "text/plain", "");
    assert!(
        status.contains(" 400 ") && body.contains("many"),
        "{status} {body}"
    );
    // A cross-site form cannot post JSON without a preflight: other content types are refused.
    let (status, _) = http(addr, "POST", "/api/v1/topics/t/produce", "text/plain", "{}");
    assert!(status.contains(" 415 "), "{status}");
    rt.block_on(common::create_topic(
        &server.local_addr().to_string(),
        "t",
        2,
    ));
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/topics/t/produce",
        "application/json",
        r#"{"partition":7,"value":"x"}"#,
    );
    assert!(
        status.contains(" 400 ") && body.contains("partition 7"),
        "{status} {body}"
    );
    let (status, _) = http(addr, "DELETE", "/metrics", "text/plain", "");
    assert!(status.contains(" 405 "), "{status}");
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// The records page used by the console's tail: a page cut by its limit in the middle of a batch ends at the last
/// record listed, so asking again from `next_offset` misses nothing (found by a black-box test: the tail skipped
/// the rest of any batch larger than the limit).
#[test]
fn record_pages_continue_where_the_limit_cut_a_batch() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt
        .block_on(Server::start_from_properties(&local_props(
            dir.path(),
            &[("http.listener", "127.0.0.1:0")],
        )))
        .expect("broker starts");
    let addr = server.http_addr().expect("bound");
    let log = server
        .broker()
        .topics()
        .create_topic("paged", 1, Default::default())
        .map(|_| server.broker().topics().log("paged", 0).unwrap())
        .unwrap();
    let mut b = strata_storage::RecordBatchBuilder::new();
    for i in 0..100 {
        b.append(1, None, Some(format!("v{i}").as_bytes()), &[]);
    }
    log.append_as_leader(b.build(), 0).unwrap();
    let mut seen = Vec::new();
    let mut from = 0;
    for _ in 0..30 {
        let page = api(
            addr,
            &format!("topics/paged/partitions/0/records?offset={from}&limit=7"),
        );
        let offsets: Vec<i64> = page["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["offset"].as_i64().unwrap())
            .collect();
        if offsets.is_empty() {
            break;
        }
        assert_eq!(page["next_offset"].as_i64(), offsets.last().map(|o| o + 1));
        seen.extend(offsets);
        from = page["next_offset"].as_i64().unwrap();
    }
    assert_eq!(
        seen,
        (0..100).collect::<Vec<i64>>(),
        "every record once, in order"
    );
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

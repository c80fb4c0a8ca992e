//! End-to-end with the built `strata` binary as a child process: start-up, SIGTERM, SIGKILL under load.

use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use rdkafka::consumer::Consumer;
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext, ThreadedProducer};
use rdkafka::{ClientContext, Message};

#[test]
fn sigterm_shuts_down_cleanly_and_writes_the_clean_shutdown_marker() {
    let dir = tempfile::tempdir().unwrap();
    let broker = ChildBroker::spawn(dir.path(), 0);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(create_topic(&broker.bootstrap, "t", 1));
    assert!(
        broker.terminate(),
        "strata exited with an error after SIGTERM"
    );
    assert!(
        dir.path().join(".kafka_cleanshutdown").exists(),
        "no clean-shutdown marker after SIGTERM"
    );
}

/// The reader of strata's stderr goes away (Java's `Process.destroy()` closes it right after sending SIGTERM):
/// the log lines that follow are lost, the shutdown is not — exit 0 and the clean-shutdown marker.
#[test]
fn sigterm_with_stderr_closed_still_shuts_down_cleanly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(strata_bin())
        .args(["--override", "listeners=PLAINTEXT://127.0.0.1:0"])
        .args(["--override", &format!("log.dirs={}", dir.path().display())])
        .args(["--override", "http.listener="])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn strata");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        assert!(std::time::Instant::now() < deadline, "no ready line");
        let line = lines.next().expect("a line").expect("readable");
        if line.contains("strata ready: bootstrap.servers=") {
            break;
        }
    }
    drop(lines); // closes the read end of strata's stderr
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no exit within 20 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        exit.success(),
        "strata exited with {exit} after SIGTERM with stderr closed"
    );
    assert!(
        dir.path().join(".kafka_cleanshutdown").exists(),
        "no clean-shutdown marker"
    );
}

/// Acknowledged (partition, offset) → payload.
type Acked = Arc<Mutex<HashMap<(i32, i64), Vec<u8>>>>;

/// Records every acknowledged (partition, offset) → payload.
struct AckRecorder {
    acked: Acked,
}

impl ClientContext for AckRecorder {}

impl ProducerContext for AckRecorder {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Ok(m) = result {
            let payload = m.payload().unwrap_or_default().to_vec();
            self.acked
                .lock()
                .unwrap()
                .insert((m.partition(), m.offset()), payload);
        }
    }
}

#[test]
fn sigkill_under_acks_all_load_loses_no_acknowledged_message() {
    let dir = tempfile::tempdir().unwrap();
    let broker = ChildBroker::spawn(dir.path(), 0);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(create_topic(&broker.bootstrap, "crash", 2));

    let acked = Arc::new(Mutex::new(HashMap::new()));
    let mut cfg = client_config(&broker.bootstrap);
    cfg.set("acks", "all")
        .set("linger.ms", "1")
        .set("message.timeout.ms", "5000")
        .set("retries", "0");
    let producer: ThreadedProducer<AckRecorder> = cfg
        .create_with_context(AckRecorder {
            acked: acked.clone(),
        })
        .expect("producer");
    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) && i < 2_000_000 {
                let v = format!("crash-{i:09}");
                let rec = BaseRecord::<(), _>::to("crash")
                    .payload(&v)
                    .partition((i % 2) as i32);
                if producer.send(rec).is_err() {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                i += 1;
                if i.is_multiple_of(1000) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            producer
        })
    };
    wait_until(
        "5000 acknowledged messages",
        Duration::from_secs(60),
        || acked.lock().unwrap().len() >= 5000,
    );
    let port = broker.port();
    broker.kill9();
    stop.store(true, Ordering::SeqCst);
    let producer = load.join().unwrap();
    drop(producer); // outstanding messages fail; only acknowledged ones count
    let acked = acked.lock().unwrap().clone();

    let broker = ChildBroker::spawn(dir.path(), port);
    let c = consumer(&broker.bootstrap, "crash-check", &[]);
    let hw: i64 = (0..2)
        .map(|p| {
            c.fetch_watermarks("crash", p, Duration::from_secs(10))
                .unwrap()
                .1
        })
        .sum();
    assert!(
        hw as usize >= acked.len(),
        "log has {hw} messages but {} were acknowledged",
        acked.len()
    );
    assign_from_beginning(&c, "crash", 2);
    let got = consume_n(&c, hw as usize, Duration::from_secs(60));
    let stored: HashMap<(i32, i64), Vec<u8>> = got
        .into_iter()
        .map(|(p, o, _, v)| ((p, o), v.unwrap_or_default()))
        .collect();
    for (pos, payload) in &acked {
        assert_eq!(
            stored.get(pos),
            Some(payload),
            "acknowledged message at {pos:?} lost or changed"
        );
    }
    drop(c);
    assert!(broker.terminate());
}

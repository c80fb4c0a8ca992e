//! The embeddable broker (`strata::Broker::builder()`), used only through its public builder, with librdkafka:
//! two brokers in one process each serve produce and consume; a dropped one closes its port and removes its
//! temporary data dir; a broker with `data_dir` keeps its records across a restart; a bad property is refused
//! naming it.

use crate::common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use rdkafka::producer::FutureRecord;

async fn produce_and_consume(bootstrap: &str, topic: &str, values: &[&str]) {
    create_topic(bootstrap, topic, 1).await;
    let p = producer(bootstrap, &[]);
    for v in values {
        p.send(
            FutureRecord::<(), _>::to(topic).payload(*v),
            Duration::from_secs(10),
        )
        .await
        .expect("produce");
    }
    let bootstrap = bootstrap.to_string();
    let topic = topic.to_string();
    let n = values.len();
    let got = tokio::task::spawn_blocking(move || {
        let c = consumer(&bootstrap, "g", &[]);
        assign_from_beginning(&c, &topic, 1);
        consume_n(&c, n, Duration::from_secs(30))
    })
    .await
    .unwrap();
    let got: Vec<Vec<u8>> = got.iter().map(|m| m.3.clone().unwrap()).collect();
    let want: Vec<Vec<u8>> = values.iter().map(|v| v.as_bytes().to_vec()).collect();
    assert_eq!(got, want);
}

fn port_closed(bootstrap: &str) -> bool {
    TcpStream::connect_timeout(&bootstrap.parse().unwrap(), Duration::from_millis(200)).is_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_brokers_in_one_process_serve_and_a_dropped_one_is_gone() {
    let a = strata::Broker::builder()
        .property("num.partitions", "2")
        .start()
        .await
        .expect("start a");
    let b = strata::Broker::builder().start().await.expect("start b");
    assert_ne!(a.bootstrap_servers(), b.bootstrap_servers());
    assert!(a.bootstrap_servers().starts_with("127.0.0.1:"));
    produce_and_consume(&a.bootstrap_servers(), "on-a", &["a0", "a1"]).await;
    produce_and_consume(&b.bootstrap_servers(), "on-b", &["b0"]).await;

    let (bootstrap, dir) = (b.bootstrap_servers(), b.data_dir().expect("data dir"));
    assert!(dir.is_dir());
    drop(b);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !port_closed(&bootstrap) || dir.exists() {
        assert!(
            Instant::now() < deadline,
            "dropped broker still listening on {bootstrap} or its dir {} still there",
            dir.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The other broker is untouched.
    produce_and_consume(&a.bootstrap_servers(), "still-on-a", &["x"]).await;
    let dir_a = a.data_dir().expect("data dir");
    a.shutdown().await.expect("graceful shutdown");
    assert!(
        !dir_a.exists(),
        "a temporary data dir is removed at shutdown"
    );
}

#[test]
fn start_blocking_with_a_data_dir_keeps_records_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let first = strata::Broker::builder()
        .data_dir(dir.path())
        .start_blocking()
        .expect("start");
    rt.block_on(produce_and_consume(
        &first.bootstrap_servers(),
        "kept",
        &["k0", "k1"],
    ));
    first.shutdown_blocking().expect("shutdown");
    assert!(
        dir.path().join("kept-0").is_dir(),
        "data kept in the given dir"
    );

    let second = strata::Broker::builder()
        .data_dir(dir.path())
        .start_blocking()
        .expect("restart");
    let bootstrap = second.bootstrap_servers();
    let c = consumer(&bootstrap, "g2", &[]);
    assign_from_beginning(&c, "kept", 1);
    let got = consume_n(&c, 2, Duration::from_secs(30));
    let values: Vec<Vec<u8>> = got.iter().map(|m| m.3.clone().unwrap()).collect();
    assert_eq!(values, vec![b"k0".to_vec(), b"k1".to_vec()]);
    drop(c);
    second.shutdown_blocking().expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_property_is_refused_naming_it() {
    let err = strata::Broker::builder()
        .property("num.partitions", "many")
        .start()
        .await
        .expect_err("bad value");
    let msg = err.to_string();
    assert!(
        msg.contains("num.partitions") && msg.contains("many"),
        "{msg}"
    );
}

/// A plain `#[tokio::test]` runs on a current-thread runtime, dropped as soon as the test returns: a broker
/// dropped there (not shut down) must not leave a blocking thread the runtime waits for forever (the log
/// cleaner's threads were stopped by a task such a runtime never polls again).
#[test]
fn a_broker_dropped_in_a_current_thread_runtime_lets_the_runtime_end() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = rt.block_on(async {
            let broker = strata::Broker::builder().start().await.expect("start");
            create_topic(&broker.bootstrap_servers(), "t", 1).await;
            let dir = broker.data_dir().expect("data dir");
            drop(broker);
            dir
        });
        drop(rt);
        let _ = done_tx.send(dir);
    });
    let dir = done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the runtime did not end within 60 s of the broker's drop");
    assert!(!dir.exists(), "temporary data dir kept: {dir:?}");
}

/// `start_blocking` blocks its thread, which inside a runtime would stall it: refused with an error naming the
/// async alternative, not tokio's panic.
#[tokio::test]
async fn start_blocking_inside_a_runtime_is_an_error_naming_start() {
    let err = strata::Broker::builder()
        .start_blocking()
        .expect_err("start_blocking inside a runtime");
    assert!(err.to_string().contains("start().await"), "{err}");
}

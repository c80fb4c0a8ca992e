//! Several client listeners, as Kafka serves them: every listener of `listeners` that is not a controller's is
//! served, and a client is told the broker's endpoint of the listener its request arrived on (Kafka's
//! `MetadataResponse` lists the brokers' endpoints for the request's listener name; `advertised.listeners` gives
//! that endpoint per listener name).

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use common::raw::{connect, request};
use common::runtime;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::producer::FutureRecord;

/// Two PLAINTEXT listeners, both on 127.0.0.1:0, with `extra` properties.
fn two_listeners(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut props = vec![
        (
            "listeners".to_string(),
            "PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0".to_string(),
        ),
        (
            "listener.security.protocol.map".to_string(),
            "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT".to_string(),
        ),
    ];
    props.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    props
}

async fn start(dir: &std::path::Path, extra: &[(&str, &str)]) -> strata_broker::Server {
    let props = two_listeners(extra);
    let props: Vec<(&str, &str)> = props
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    common::start_broker_with(dir, &props).await
}

/// (host, port) of the only broker in a Metadata answer, and of the coordinator FindCoordinator names, asked on
/// a connection to `addr`.
async fn endpoints_seen_on(addr: SocketAddr) -> ((String, i32), (String, i32)) {
    let mut s = connect(addr).await;
    let m: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &MetadataRequest::default())
        .await
        .expect("Metadata answered");
    assert_eq!(m.brokers.len(), 1, "{m:?}");
    let b = &m.brokers[0];
    let fc = FindCoordinatorRequest::default()
        .with_key(StrBytes::from_static_str("g"))
        .with_key_type(0);
    let c: FindCoordinatorResponse = request(&mut s, ApiKey::FindCoordinator, 3, &fc)
        .await
        .expect("FindCoordinator answered");
    assert_eq!(c.error_code, 0, "{c:?}");
    ((b.host.to_string(), b.port), (c.host.to_string(), c.port))
}

/// Each listener serves produce and consume through librdkafka (bootstrapped on that listener only), and a
/// Metadata or FindCoordinator request names the port of the listener it arrived on.
#[test]
fn every_plaintext_listener_serves_clients_and_metadata_names_its_own_port() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path(), &[]));
    let addrs = server.local_addrs().to_vec();
    assert_eq!(addrs.len(), 2, "both listeners are bound");
    assert_ne!(addrs[0].port(), addrs[1].port());
    for addr in &addrs {
        let (broker, coordinator) = rt.block_on(endpoints_seen_on(*addr));
        let own = ("127.0.0.1".to_string(), i32::from(addr.port()));
        assert_eq!(broker, own, "Metadata on {addr}");
        assert_eq!(coordinator, own, "FindCoordinator on {addr}");
    }

    rt.block_on(common::create_topic(&addrs[0].to_string(), "both", 1));
    for (i, addr) in addrs.iter().enumerate() {
        let bootstrap = addr.to_string();
        let producer = common::producer(&bootstrap, &[]);
        let value = format!("via-{i}");
        rt.block_on(producer.send(
            FutureRecord::<(), _>::to("both").payload(&value),
            Duration::from_secs(30),
        ))
        .unwrap_or_else(|(e, _)| panic!("produce through {addr}: {e}"));
        let consumer = common::consumer(&bootstrap, &format!("g{i}"), &[]);
        common::assign_from_beginning(&consumer, "both", 1);
        let got = common::consume_n(&consumer, i + 1, Duration::from_secs(30));
        let values: Vec<Vec<u8>> = got.into_iter().filter_map(|m| m.3).collect();
        let want: Vec<Vec<u8>> = (0..=i).map(|j| format!("via-{j}").into_bytes()).collect();
        assert_eq!(values, want, "consumed through {addr}");
    }
    rt.block_on(server.shutdown()).unwrap();
}

/// `advertised.listeners` is read per listener name: each listener tells its own advertised host (an advertised
/// port 0 being the bound port), and a listener it does not name advertises its bound address.
#[test]
fn each_listener_advertises_its_own_advertised_listeners_entry() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(
        dir.path(),
        &[("advertised.listeners", "EXTERNAL://ext.example:0")],
    ));
    let addrs = server.local_addrs().to_vec();
    let (plain, _) = rt.block_on(endpoints_seen_on(addrs[0]));
    assert_eq!(plain, ("127.0.0.1".to_string(), i32::from(addrs[0].port())));
    let (external, coordinator) = rt.block_on(endpoints_seen_on(addrs[1]));
    let want = ("ext.example".to_string(), i32::from(addrs[1].port()));
    assert_eq!(external, want);
    assert_eq!(coordinator, want);
    rt.block_on(server.shutdown()).unwrap();
}

//! Topic `compression.type` other than `producer` (Kafka's `LogValidator`): a batch in another codec is re-encoded
//! with the topic's codec and level on append, whatever the producer sent, keeping its producer fields (idempotent
//! sequences still checked); `producer` stores batches as sent. Real producers (librdkafka) write, stored batch
//! attributes are read back with a raw Fetch, and every record is read back (zstd batches decoded with
//! kafka-protocol's decoder: the librdkafka these tests link has no libzstd).

use crate::common;

use std::time::Duration;

use common::raw::{connect, request};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, AlterConfig, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::producer::FutureRecord;
use strata_storage::record::Compression;
use strata_storage::RecordBatch;

/// The stored records of partition 0.
async fn fetched(addr: std::net::SocketAddr, topic: &str) -> bytes::Bytes {
    let (code, recs) = fetched_at(addr, topic, 12).await;
    assert_eq!(code, 0);
    recs
}

/// Partition 0's error code and records in a Fetch of `version`.
async fn fetched_at(addr: std::net::SocketAddr, topic: &str, version: i16) -> (i16, bytes::Bytes) {
    let mut s = connect(addr).await;
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(16 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(StrBytes::from_string(topic.into())))
            .with_partitions(vec![
                FetchPartition::default().with_partition_max_bytes(16 << 20)
            ])]);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, version, &req).await.unwrap();
    let p = &r.responses[0].partitions[0];
    (p.error_code, p.records.clone().unwrap_or_default())
}

/// Codec and record count of every stored batch of partition 0.
async fn stored(addr: std::net::SocketAddr, topic: &str) -> Vec<(Compression, i32)> {
    let recs = fetched(addr, topic).await;
    RecordBatch::iter(&recs)
        .map(|b| b.unwrap())
        .map(|b| (b.compression(), b.records_count()))
        .collect()
}

async fn produce(bootstrap: &str, topic: &str, codec: &str, n: usize, extra: &[(&str, &str)]) {
    let mut cfg = vec![("compression.type", codec), ("linger.ms", "20")];
    cfg.extend_from_slice(extra);
    let p = common::producer(bootstrap, &cfg);
    let sends: Vec<_> = (0..n)
        .map(|i| {
            let v = format!("{codec} record {i} with some repetitive text text text text");
            let p = p.clone();
            let topic = topic.to_string();
            async move {
                p.send(
                    FutureRecord::to(&topic).key("k").payload(&v),
                    Duration::from_secs(20),
                )
                .await
                .expect("delivered")
            }
        })
        .collect();
    futures::future::join_all(sends).await;
}

fn values(c: &rdkafka::consumer::BaseConsumer, n: usize) -> Vec<String> {
    common::consume_n(c, n, Duration::from_secs(30))
        .into_iter()
        .map(|m| String::from_utf8(m.3.unwrap()).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zstd_topic_stores_zstd_whatever_the_producer_sent() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let bootstrap = addr.to_string();
    let admin = common::admin(&bootstrap);
    let topics = [
        NewTopic::new("z", 1, TopicReplication::Fixed(1))
            .set("compression.type", "zstd")
            .set("compression.zstd.level", "19"),
        NewTopic::new("asis", 1, TopicReplication::Fixed(1)),
    ];
    let res = admin
        .create_topics(&topics, &AdminOptions::new())
        .await
        .unwrap();
    assert!(res.iter().all(|r| r.is_ok()), "{res:?}");

    for codec in ["none", "gzip", "snappy", "lz4"] {
        produce(&bootstrap, "z", codec, 20, &[]).await;
        produce(&bootstrap, "asis", codec, 20, &[]).await;
    }
    // An idempotent producer's batches keep their producer id and sequences through the re-encoding.
    produce(
        &bootstrap,
        "z",
        "gzip",
        20,
        &[("enable.idempotence", "true")],
    )
    .await;
    produce(
        &bootstrap,
        "z",
        "gzip",
        20,
        &[("enable.idempotence", "true")],
    )
    .await;

    let z = stored(addr, "z").await;
    assert!(z.iter().all(|(c, _)| *c == Compression::Zstd), "{z:?}");
    assert_eq!(z.iter().map(|(_, n)| n).sum::<i32>(), 120);
    let asis = stored(addr, "asis").await;
    let codecs: std::collections::BTreeSet<String> =
        asis.iter().map(|(c, _)| format!("{c:?}")).collect();
    assert_eq!(
        codecs.len(),
        4,
        "producer keeps every codec as sent: {codecs:?}"
    );

    let mut recs = fetched(addr, "z").await;
    let got: Vec<String> = kafka_protocol::records::RecordBatchDecoder::decode_all(&mut recs)
        .unwrap()
        .into_iter()
        .flat_map(|set| set.records)
        .map(|r| String::from_utf8(r.value.unwrap().to_vec()).unwrap())
        .collect();
    assert_eq!(got.len(), 120);
    // Fetch v9 and older cannot carry zstd: Kafka's KafkaApis answers a compression.type=zstd topic with
    // UNSUPPORTED_COMPRESSION_TYPE (76) there, and nothing else (the "producer" topic's batches are served).
    for version in [4, 9] {
        let (code, recs) = fetched_at(addr, "z", version).await;
        assert_eq!((code, recs.len()), (76, 0), "Fetch v{version}");
        let (code, recs) = fetched_at(addr, "asis", version).await;
        assert_eq!(code, 0, "Fetch v{version}");
        assert!(!recs.is_empty());
    }
    assert_eq!(fetched_at(addr, "z", 10).await.0, 0);
    for codec in ["none", "gzip", "snappy", "lz4"] {
        assert_eq!(
            got.iter()
                .filter(|v| v.starts_with(&format!("{codec} ")))
                .count(),
            if codec == "gzip" { 60 } else { 20 },
            "{codec} (gzip: the idempotent producers' 40 too)"
        );
    }
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_default_and_an_altered_topic_codec_apply_to_new_batches() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("compression.type", "gzip")]).await;
    let addr = broker.local_addr();
    let bootstrap = addr.to_string();
    common::create_topic(&bootstrap, "dflt", 1).await;
    produce(&bootstrap, "dflt", "none", 5, &[]).await;
    assert!(stored(addr, "dflt")
        .await
        .iter()
        .all(|(c, _)| *c == Compression::Gzip));

    // uncompressed: batches are stored without a codec.
    let admin = common::admin(&bootstrap);
    let alter =
        AlterConfig::new(ResourceSpecifier::Topic("dflt")).set("compression.type", "uncompressed");
    let r = admin
        .alter_configs(&[alter], &AdminOptions::new())
        .await
        .unwrap();
    assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    produce(&bootstrap, "dflt", "lz4", 5, &[]).await;
    let s = stored(addr, "dflt").await;
    assert_eq!(
        s.first().unwrap().0,
        Compression::Gzip,
        "stored batches are not rewritten"
    );
    assert_eq!(s.last().unwrap().0, Compression::None, "{s:?}");
    let c = common::consumer(&bootstrap, "reader", &[]);
    common::assign_from_beginning(&c, "dflt", 1);
    assert_eq!(values(&c, 10).len(), 10);
    broker.shutdown().await.unwrap();
}

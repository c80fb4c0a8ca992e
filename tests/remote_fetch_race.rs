//! Issue 11 item 6: a Fetch served from the remote tier that races remote retention. The fetch handler checks
//! `log start <= offset < local log start` and then reads remote storage; if retention moves the log start past the
//! offset in between, the read finds no remote segment ("offset 0 is not in remote storage (remote segments cover
//! 3..)"). Kafka answers a fetch below the log start with OFFSET_OUT_OF_RANGE (the consumer resets by
//! `auto.offset.reset`); KAFKA_STORAGE_ERROR would make it retry the same offset forever. An offset inside the log
//! that no remote segment holds is OFFSET_OUT_OF_RANGE too (Kafka's RemoteLogManager.read throws
//! OffsetOutOfRangeException "... which does not exist in remote tier"); a store that fails the read (unavailable)
//! keeps KAFKA_STORAGE_ERROR, which clients retry.
//!
//! The race is made deterministic by a remote reader that runs the retention step itself (raising the log start,
//! as remote retention does) between the handler's range check and its answer, then fails as the tier does.

use crate::common;

use std::sync::{Arc, Mutex};

use common::raw::{batch, connect, request};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use strata_broker::remote::{BoxFuture, RemoteLogReader, RemoteReadError};
use strata_storage::UnifiedLog;
use tokio::net::TcpStream;

const TOPIC: &str = "raced";
const OFFSET_OUT_OF_RANGE: i16 = 1;
const KAFKA_STORAGE_ERROR: i16 = 56;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

/// Fails every read as the tier does when no remote segment holds the offset (or as an unavailable store when
/// `unavailable` is set); first raises the log start to `retention_to` when set (the retention step that races
/// the read).
#[derive(Default)]
struct RetentionRacesRead {
    unavailable: Mutex<bool>,
    retention_to: Mutex<Option<i64>>,
    asked: Mutex<Vec<i64>>,
}

impl RemoteLogReader for RetentionRacesRead {
    fn read(
        &self,
        log: Arc<UnifiedLog>,
        offset: i64,
        _max_bytes: usize,
    ) -> BoxFuture<Result<bytes::Bytes, RemoteReadError>> {
        self.asked.lock().unwrap().push(offset);
        let retention_to = *self.retention_to.lock().unwrap();
        let unavailable = *self.unavailable.lock().unwrap();
        Box::pin(async move {
            if unavailable {
                return Err(RemoteReadError::Unavailable(
                    "the object store is unavailable".into(),
                ));
            }
            if let Some(to) = retention_to {
                log.maybe_increment_log_start_offset(to)
                    .expect("retention moves the log start");
            }
            let e = strata_tiering::Error::OffsetOutOfRange {
                tp: log.topic_partition().clone(),
                offset,
                range: format!("{}..", log.log_start_offset()),
            };
            Err(RemoteReadError::OffsetOutOfRange(Box::new(e)))
        })
    }
}

async fn produce(s: &mut TcpStream, value: &[u8]) -> i16 {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(TOPIC))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(batch(&[value])))])]);
    let r: ProduceResponse = request(s, ApiKey::Produce, 9, &req).await.unwrap();
    r.responses[0].partition_responses[0].error_code
}

async fn fetch(s: &mut TcpStream, offset: i64) -> (i16, i64, Option<bytes::Bytes>) {
    let req = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name(TOPIC))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])]);
    let r: FetchResponse = request(s, ApiKey::Fetch, 12, &req)
        .await
        .expect("Fetch response");
    let p = &r.responses[0].partitions[0];
    (p.error_code, p.log_start_offset, p.records.clone())
}

async fn earliest(s: &mut TcpStream) -> i64 {
    let req = ListOffsetsRequest::default()
        .with_replica_id((-1).into())
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(name(TOPIC))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(-2)])]);
    let r: ListOffsetsResponse = request(s, ApiKey::ListOffsets, 7, &req)
        .await
        .expect("ListOffsets response");
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_code, 0);
    p.offset
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_read_racing_retention_is_offset_out_of_range_not_a_storage_error() {
    let dir = tempfile::tempdir().unwrap();
    // The remote reader is handed to the broker when it starts; Fetch consults it only below the local log start.
    let reader = Arc::new(RetentionRacesRead::default());
    let (config, tiering) =
        strata_broker::tiered::configs_from_properties(&common::local_props(dir.path(), &[]))
            .unwrap();
    let options = strata_broker::ServerOptions {
        remote_reader: Some(reader.clone()),
        ..Default::default()
    };
    let broker = strata_broker::Server::start_with(config, tiering, options)
        .await
        .expect("broker starts");
    let b = broker.broker().clone();
    tokio::task::spawn_blocking(move || {
        let configs = [("segment.bytes", "1024"), ("local.retention.bytes", "1")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        b.topics().create_topic(TOPIC, 1, configs).map(|_| ())
    })
    .await
    .unwrap()
    .expect("topic created");
    let mut s = connect(broker.local_addr()).await;
    let payload = vec![b'x'; 300];
    for _ in 0..12 {
        assert_eq!(produce(&mut s, &payload).await, 0);
    }
    // This broker runs without tiered storage: tier the log directly, pretend everything was copied, and let local
    // retention drop the local copies, so offsets below the local log start are served by the remote reader.
    let log = broker.broker().topics().log(TOPIC, 0).unwrap();
    let mut tiered = log.config();
    tiered.remote_storage_enable = true;
    log.update_config(tiered).unwrap();
    log.roll().unwrap();
    log.update_highest_offset_in_remote_storage(log.log_end_offset() - 1);
    broker
        .broker()
        .log_manager()
        .run_retention(strata_storage::time::now_ms())
        .unwrap();
    let local_start = log.local_log_start_offset();
    assert!(
        local_start > 4,
        "local retention removed too little: {local_start}"
    );
    assert_eq!(log.log_start_offset(), 0);

    // The store fails the read of an offset inside the log range: the tier's failure, KAFKA_STORAGE_ERROR.
    *reader.unavailable.lock().unwrap() = true;
    let (code, log_start, _) = fetch(&mut s, 0).await;
    assert_eq!((code, log_start), (KAFKA_STORAGE_ERROR, 0));
    *reader.unavailable.lock().unwrap() = false;

    // No remote segment holds an offset inside the log range: OFFSET_OUT_OF_RANGE, as Kafka.
    let (code, log_start, _) = fetch(&mut s, 0).await;
    assert_eq!((code, log_start), (OFFSET_OUT_OF_RANGE, 0));

    // Retention moves the log start to 3 while the read of offset 0 runs: OFFSET_OUT_OF_RANGE with the new start.
    *reader.retention_to.lock().unwrap() = Some(3);
    let (code, log_start, _) = fetch(&mut s, 0).await;
    assert_eq!(
        (code, log_start),
        (OFFSET_OUT_OF_RANGE, 3),
        "a fetch below the moved log start must be OFFSET_OUT_OF_RANGE"
    );
    assert_eq!(
        reader.asked.lock().unwrap().as_slice(),
        &[0, 0, 0],
        "every fetch went to the remote reader"
    );

    // The broker keeps serving: the new log start is listed, and new local data is written and read.
    assert_eq!(earliest(&mut s).await, 3);
    assert_eq!(produce(&mut s, b"after").await, 0);
    let (code, _, records) = fetch(&mut s, local_start).await;
    assert_eq!(code, 0);
    assert!(
        records.is_some_and(|r| !r.is_empty()),
        "local records at {local_start}"
    );
    broker.shutdown().await.unwrap();
}

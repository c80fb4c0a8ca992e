use super::*;

fn store_failed(append_code: i16) -> GroupError {
    GroupError::StoreFailed {
        group: String::new(),
        append_code,
        reason: String::new(),
    }
}

/// A failed group write answers KAFKA_STORAGE_ERROR's mapping for a log dir gone offline, and
/// COORDINATOR_NOT_AVAILABLE without a `__consumer_offsets` partition, as Kafka's coordinator.
#[test]
fn a_failed_group_write_is_answered_with_kafkas_mapping_of_the_append_error() {
    let offline = group_store_failed("g", &Error::LogDirOffline("/x".into()));
    assert_eq!(group_code(&offline), 16);
    let missing = group_store_failed("g", &Error::UnknownTopicOrPartition("t".into()));
    assert_eq!(group_code(&missing), 15);
}

fn io(kind: std::io::ErrorKind) -> std::io::Error {
    std::io::Error::new(kind, "test")
}

/// Every typed error against the number Kafka's `Errors` enum gives its code (numbers, not this module's
/// constants, so a wrong constant fails too).
#[test]
fn every_typed_error_maps_to_its_kafka_code() {
    let s = String::new;
    let group_errors: Vec<(GroupError, i16)> = vec![
        (GroupError::InvalidGroupId(s()), 24),
        (
            GroupError::InvalidSessionTimeout {
                timeout_ms: 1,
                min_ms: 6000,
                max_ms: 1_800_000,
            },
            26,
        ),
        (
            GroupError::InconsistentGroupProtocol {
                member: s(),
                protocol_type: s(),
            },
            23,
        ),
        (GroupError::FencedInstanceId { member: s() }, 82),
        (GroupError::GroupMaxSizeReached { max: 1 }, 81),
        (GroupError::UnknownMemberId { member: s() }, 25),
        (
            GroupError::IllegalGeneration {
                generation: 1,
                current: 2,
            },
            22,
        ),
        (GroupError::RebalanceInProgress, 27),
        (GroupError::MemberIdRequired { member: s() }, 79),
        (
            GroupError::FencedMemberEpoch {
                member: s(),
                epoch: 1,
                current: 2,
            },
            110,
        ),
        (
            GroupError::StaleMemberEpoch {
                member: s(),
                epoch: 1,
                current: 2,
            },
            113,
        ),
        (GroupError::UnreleasedInstanceId { instance: s() }, 111),
        (
            GroupError::UnsupportedAssignor {
                name: s(),
                known: vec![],
            },
            112,
        ),
        (GroupError::InvalidHeartbeat(s()), 42),
        (GroupError::ConsumerProtocolDisabled, 35),
        (
            GroupError::WrongGroupType {
                group: s(),
                wanted: "consumer",
            },
            69,
        ),
        (
            GroupError::WrongGroupType {
                group: s(),
                wanted: "classic",
            },
            23,
        ),
        (GroupError::GroupNotEmpty { group: s() }, 68),
        (GroupError::GroupIdNotFound { group: s() }, 69),
        (
            GroupError::GroupSubscribedToTopic {
                group: s(),
                topic: s(),
            },
            86,
        ),
        // Kafka's appendGroupMetadataErrorToResponseError: (append error) -> answer.
        (store_failed(3), 15),
        (store_failed(19), 15),
        (store_failed(7), 15),
        (store_failed(6), 16),
        (store_failed(56), 16),
        (store_failed(10), -1),
        (store_failed(18), -1),
        (store_failed(4), -1),
        (store_failed(87), 87),
    ];
    let txn_errors: Vec<(TxnError, i16)> = vec![
        (
            TxnError::ProducerFenced {
                transactional_id: s(),
                epoch: 0,
                current: 1,
            },
            90,
        ),
        (
            TxnError::InvalidProducerIdMapping {
                transactional_id: s(),
                producer_id: 1,
                current: 2,
            },
            49,
        ),
        (
            TxnError::InvalidTxnState {
                transactional_id: s(),
                state: "Empty",
                action: "commit",
            },
            48,
        ),
        (
            TxnError::ConcurrentTransactions {
                transactional_id: s(),
                state: "PrepareCommit",
            },
            51,
        ),
        (
            TxnError::TransactionalIdNotFound {
                transactional_id: s(),
            },
            105,
        ),
        (
            TxnError::InvalidTransactionTimeout {
                timeout_ms: 1,
                max_ms: 0,
            },
            50,
        ),
        (
            TxnError::PartitionNotInTransaction {
                transactional_id: s(),
                topic: s(),
                partition: 0,
            },
            48,
        ),
        (TxnError::MissingTransactionalId, 53),
        (TxnError::CorruptStateRecord { reason: s() }, -1),
    ];
    for (e, want) in &txn_errors {
        assert_eq!(code(&Error::Txn(e.clone())), *want, "{e:?}");
    }
    // KIP-588: older request versions are answered INVALID_PRODUCER_EPOCH (47) for a fenced producer.
    assert_eq!(txn_code(&txn_errors[0].0, false), 47);
    for (e, want) in &group_errors {
        assert_eq!(group_code(e), *want, "{e:?}");
        assert_eq!(code(&Error::Group(e.clone())), *want, "{e:?}");
        assert_eq!(of::<(), _>(&Err(e.clone())), *want, "{e:?}");
    }
    let errors: Vec<(Error, i16)> = vec![
        (Error::config(s(), s(), s()), 40),
        (
            Error::Protocol {
                api: s(),
                message: s(),
            },
            42,
        ),
        (
            Error::Storage(StorageError::OffsetOutOfRange {
                tp: strata_storage::TopicPartition::new("t", 0),
                offset: 9,
                log_start: 0,
                log_end: 5,
            }),
            1,
        ),
        (
            Error::Storage(StorageError::RecordValidation {
                timestamp: true,
                message: s(),
                record_errors: Vec::new(),
            }),
            32,
        ),
        (
            Error::Storage(StorageError::RecordValidation {
                timestamp: false,
                message: s(),
                record_errors: Vec::new(),
            }),
            87,
        ),
        (
            Error::Storage(StorageError::UnknownTopicOrPartition {
                tp: strata_storage::TopicPartition::new("t", 0),
            }),
            3,
        ),
        (Error::io("x", io(std::io::ErrorKind::Other)), 56),
        (Error::UnknownTopicOrPartition(s()), 3),
        (Error::TopicExists(s()), 36),
        (Error::InvalidTopic(s(), "bad"), 17),
        (
            Error::TopicCollision {
                name: s(),
                existing: s(),
            },
            17,
        ),
        (Error::config_rule(s(), s()), 40),
        (
            Error::tiering(
                "starting tiered storage",
                crate::tiered::TieringError::Tiering(strata_tiering::Error::Cancelled),
            ),
            56,
        ),
        (Error::InvalidPartitions(s()), 37),
        (Error::PartitionLimit(s()), 44),
        (Error::InvalidReplicaAssignment(s()), 39),
        (Error::InvalidReplicationFactor(3), 38),
        (Error::InternalTopic(s()), 17),
        (Error::ShuttingDown, -1),
        (Error::UnknownTopic(s()), 3),
        (Error::UnknownTopicId(uuid::Uuid::nil()), 100),
        (Error::ProduceWithoutRecords, 87),
        (
            Error::InvalidProduceRecords {
                topic: s(),
                reason: s(),
            },
            87,
        ),
        (Error::InvalidRequiredAcks(2), 21),
        (
            Error::NotEnoughReplicas {
                topic: s(),
                partition: 0,
                min_isr: 2,
            },
            19,
        ),
        (
            Error::OffsetMetadataTooLarge {
                topic: s(),
                partition: 0,
                size: 2,
                max: 1,
            },
            12,
        ),
        (
            Error::UnknownOffsetSpec {
                timestamp: -9,
                version: 10,
            },
            35,
        ),
        (Error::NotThisBroker { node_id: 1 }, 42),
        (Error::NoConfigs(7), 42),
        (Error::NotDynamicConfigs(vec!["listeners".into()]), 42),
        (Error::PerBrokerConfigs(vec!["ssl.protocol".into()]), 42),
        (Error::UnknownCoordinatorType(2), 42),
        (Error::OperationNotAttempted, 55),
        (
            Error::UnstableOffsetCommit {
                group: s(),
                topic: s(),
                partition: 0,
            },
            88,
        ),
        (
            Error::ControlBatchFromClient {
                topic: s(),
                partition: 0,
            },
            87,
        ),
        (
            Error::FetchSessionIdNotFound {
                session_id: 1,
                epoch: 1,
            },
            70,
        ),
        (
            Error::UnsupportedVersion {
                api: s(),
                version: 99,
            },
            35,
        ),
        (
            Error::ZstdBeforeFetchV10 {
                topic: s(),
                version: 9,
            },
            76,
        ),
        (Error::LogDirOffline("/x".into()), 56),
        (Error::SaslAuthenticationFailed(s()), 58),
        (
            Error::UnsupportedSaslMechanism {
                mechanism: s(),
                enabled: s(),
            },
            33,
        ),
        (Error::IllegalSaslState(s()), 34),
        (Error::ScramUserNotFound(s()), 91),
        (Error::DuplicateScramUser(s()), 92),
        (Error::UnacceptableCredential(s()), 93),
        // A remote read: below the log start now, out of the remote range, missing, unreadable, unavailable
        // (cases of `remote_read_code`).
        (remote_read(1, 5, unavailable()), 1),
        (
            remote_read(5, 0, RemoteReadError::OffsetOutOfRange("none".into())),
            1,
        ),
        (
            remote_read(5, 5, RemoteReadError::Missing("no such object".into())),
            -1,
        ),
        (
            remote_read(5, 5, RemoteReadError::Unreadable("bad tag".into())),
            -1,
        ),
        (remote_read(5, 5, unavailable()), 56),
        (Error::Internal(s()), -1),
        (Error::SecurityDisabled, 54),
        (Error::TopicAuthorizationFailed(s()), 29),
        (Error::GroupAuthorizationFailed(s()), 30),
        (Error::ClusterAuthorizationFailed(s()), 31),
        (Error::TransactionalIdAuthorizationFailed(s()), 53),
        (Error::InvalidAcl(s()), 42),
        (Error::ElectionNotNeeded, 84),
        (Error::NoReassignmentInProgress(s()), 85),
        (Error::UnknownElectionType(5), 42),
        (Error::EmptyGroupName, 42),
        (Error::DefaultGroupResource, 42),
        (Error::InvalidGroupConfig(s()), 40),
    ];
    for (e, want) in &errors {
        assert_eq!(code(e), *want, "{e:?}");
        assert_eq!(e.is_offset_out_of_range(), *want == 1, "{e:?}");
    }
    assert_eq!(of::<(), Error>(&Ok(())), 0);
    assert_eq!(of_error::<Error>(None), 0);
}

/// Faults name codes as Kafka does (`NOT_LEADER_OR_FOLLOWER`), or by number; 0 and unknown ones are refused.
#[test]
fn codes_are_found_by_kafka_name_or_number() {
    assert_eq!(
        by_name_or_number("NOT_LEADER_OR_FOLLOWER"),
        Some((6, "NOT_LEADER_OR_FOLLOWER".to_string()))
    );
    assert_eq!(
        by_name_or_number("topic_authorization_failed").map(|c| c.0),
        Some(29)
    );
    assert_eq!(
        by_name_or_number("-1").map(|c| c.1),
        Some("UNKNOWN_SERVER_ERROR".to_string())
    );
    assert_eq!(by_name_or_number("0"), None);
    assert_eq!(by_name_or_number("NOT_A_KAFKA_ERROR"), None);
    assert!(defined().all(|(c, n)| name(c) == n || name(c) == "UNKNOWN"));
}

/// Metric labels carry Kafka's error names (`kafka.network:type=RequestMetrics,name=ErrorsPerSec,error=…`).
#[test]
fn names_are_kafkas_constant_names() {
    assert_eq!(name(NONE), "NONE");
    assert_eq!(
        name(UNKNOWN_TOPIC_OR_PARTITION),
        "UNKNOWN_TOPIC_OR_PARTITION"
    );
    assert_eq!(name(UNKNOWN_SERVER_ERROR), "UNKNOWN_SERVER_ERROR");
    assert_eq!(name(i16::MAX), "UNKNOWN");
}

/// No code is chosen outside this module: elsewhere only `error_code::NONE` (success) is named, every error
/// code comes from a typed error through [`code`] / [`of`].
#[test]
fn no_code_is_chosen_outside_this_module() {
    fn rs_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read broker/src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                rs_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    assert!(files.len() > 20, "found only {files:?}");
    let mut chosen = Vec::new();
    // error_code.rs and its own tests (error_code/tests.rs).
    let own_tests = std::path::Path::new("error_code").join("tests.rs");
    for f in files
        .iter()
        .filter(|f| !f.ends_with("error_code.rs") && !f.ends_with(&own_tests))
    {
        let rel = f.strip_prefix(&src).expect("under src").to_string_lossy();
        let text = std::fs::read_to_string(f).expect("read source");
        for (i, _) in text.match_indices("error_code::") {
            let name: String = text[i + "error_code::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let is_const = name.starts_with(|c: char| c.is_ascii_uppercase());
            if is_const && name != "NONE" {
                chosen.push(format!("{rel}: error_code::{name}"));
            }
        }
    }
    assert!(
        chosen.is_empty(),
        "codes chosen outside error_code.rs: {chosen:#?}"
    );
}

/// The messages sent where a response has an error message field name the bad value and stay as clients
/// have seen them.
#[test]
fn error_messages_name_the_refused_value() {
    assert_eq!(
        message(&Error::ControlBatchFromClient {
            topic: "t".into(),
            partition: 2
        }),
        "clients are not allowed to write control records (t-2)"
    );
    assert_eq!(
        message(&Error::UnknownTopic("t1".into())),
        "unknown topic t1"
    );
    assert_eq!(
        message(&Error::NotThisBroker { node_id: 3 }),
        "this is broker 3"
    );
    assert_eq!(
        message(&Error::NoConfigs(7)),
        "resource type 7 has no configs here"
    );
    assert_eq!(
        message(&Error::NotEnoughReplicas {
            topic: "t".into(),
            partition: 0,
            min_isr: 2
        }),
        "t-0 has 1 in-sync replica (a single broker) and min.insync.replicas=2"
    );
}

fn remote_read(offset: i64, log_start: i64, source: RemoteReadError) -> Error {
    Error::RemoteRead {
        offset,
        log_start,
        source,
    }
}

fn unavailable() -> RemoteReadError {
    RemoteReadError::Unavailable("connection refused".into())
}

#[test]
fn a_remote_read_below_the_moved_log_start_is_offset_out_of_range() {
    let gone = || {
        RemoteReadError::OffsetOutOfRange(
            "offset 450 is not in remote storage (remote segments cover 600..)".into(),
        )
    };
    let missing = || RemoteReadError::Missing("no such object".into());
    assert_eq!(remote_read_code(&gone(), 450, 600), OFFSET_OUT_OF_RANGE);
    assert_eq!(remote_read_code(&missing(), 450, 600), OFFSET_OUT_OF_RANGE);
    assert_eq!(
        remote_read_code(&unavailable(), 450, 600),
        OFFSET_OUT_OF_RANGE
    );
    // Inside the log range the tier's own failure stands.
    assert_eq!(remote_read_code(&gone(), 650, 600), OFFSET_OUT_OF_RANGE);
    assert_eq!(remote_read_code(&missing(), 650, 600), UNKNOWN_SERVER_ERROR);
    assert_eq!(
        remote_read_code(&unavailable(), 650, 600),
        KAFKA_STORAGE_ERROR
    );
}

#[test]
fn a_remote_read_error_names_the_offset_and_the_cause_chain() {
    let e = remote_read(7, 0, RemoteReadError::Missing("object t/0/abc.log".into()));
    assert_eq!(
        e.to_string(),
        "remote read at offset 7 failed (log start now 0): remote data is missing: object t/0/abc.log"
    );
}

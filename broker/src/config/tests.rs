//! Unit tests of the config module.
use super::*;

fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn defaults_listen_on_loopback_9092() {
    let c = BrokerConfig::from_properties(&BTreeMap::new()).unwrap();
    assert_eq!(c.listener, SocketAddr::from(([127, 0, 0, 1], 9092)));
    assert_eq!(c.log_dirs, vec![PathBuf::from("./strata-data")]);
}

#[test]
fn bad_value_names_key_and_value() {
    let err = BrokerConfig::from_properties(&props(&[("num.partitions", "many")])).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("num.partitions") && msg.contains("many"),
        "{msg}"
    );
}

#[test]
fn unknown_kafka_style_key_is_kept_with_a_suggestion() {
    let c = BrokerConfig::from_properties(&props(&[("num.partitons", "3"), ("no.such.key", "1")]))
        .unwrap();
    assert_eq!(
        c.unknown,
        vec![
            ("no.such.key".to_string(), None),
            ("num.partitons".to_string(), Some("num.partitions")),
        ]
    );
    assert_eq!(c.num_partitions, 1);
}

#[test]
fn typo_near_a_strata_only_key_stops_naming_it() {
    for key in [
        "log.max.open.file",
        "rsm.confg.storage.backend",
        "http.listenr",
    ] {
        let err = BrokerConfig::from_properties(&props(&[(key, "1")])).unwrap_err();
        assert!(err.to_string().contains(key), "{err}");
    }
}

#[test]
fn kafka_keys_without_effect_are_accepted_and_listed() {
    let c = BrokerConfig::from_properties(&props(&[
        ("process.roles", "broker,controller"),
        ("controller.quorum.bootstrap.servers", "localhost:9093"),
        ("num.network.threads", "3"),
        ("offsets.topic.replication.factor", "1"),
        ("listener.name.internal.ssl.cipher.suites", "x"),
        // A listener-prefixed key strata reads (crate::security) is not listed.
        ("listener.name.internal.ssl.keystore.location", "/x"),
    ]))
    .unwrap();
    assert_eq!(c.ignored.len(), 5, "{:?}", c.ignored);
    assert!(c.unknown.is_empty());
}

#[test]
fn synonyms_fill_the_key_and_the_key_wins() {
    let c =
        BrokerConfig::from_properties(&props(&[("log.retention.hours", "2"), ("broker.id", "7")]))
            .unwrap();
    assert_eq!(c.log.retention_ms, 7_200_000);
    assert_eq!(c.node_id, 7);
    assert!(c.is_explicit("log.retention.ms"));
    let c = BrokerConfig::from_properties(&props(&[
        ("log.retention.hours", "2"),
        ("log.retention.ms", "5"),
    ]))
    .unwrap();
    assert_eq!(c.log.retention_ms, 5);
}

#[test]
fn help_lists_every_used_key_and_synonym() {
    let h = help();
    for k in BROKER_KEYS {
        assert!(h.contains(&format!("  {}", k.name)), "{} missing", k.name);
    }
    assert!(
        h.contains("log.retention.hours = log.retention.ms / 3600000"),
        "{h}"
    );
    assert!(h.contains("broker.id = node.id"), "{h}");
}

#[test]
fn table_is_consistent() {
    BROKER_DEF.check_table().unwrap();
}

#[test]
fn queued_request_bytes_must_fit_one_largest_frame() {
    let c = BrokerConfig::from_properties(&props(&[("socket.request.max.bytes", "400000000")]))
        .unwrap();
    assert_eq!(c.queued_max_request_bytes, 400_000_000);
    let err =
        BrokerConfig::from_properties(&props(&[("queued.max.request.bytes", "1000")])).unwrap_err();
    assert!(
        err.to_string().contains("queued.max.request.bytes"),
        "{err}"
    );
}

#[test]
fn listener_parses_kafka_form() {
    let c =
        BrokerConfig::from_properties(&props(&[("listeners", "PLAINTEXT://127.0.0.1:0")])).unwrap();
    assert_eq!(c.listener.port(), 0);
    let c = BrokerConfig::from_properties(&props(&[("listeners", "SSL://127.0.0.1:1")])).unwrap();
    assert_eq!(c.listener_protocol, "SSL");
    let err =
        BrokerConfig::from_properties(&props(&[("listeners", "TLS://127.0.0.1:1")])).unwrap_err();
    assert!(err.to_string().contains("TLS"), "{err}");
}

/// Kafka's `log.cleaner.*` keys: its defaults, the topic defaults they supply, and a bad value (Kafka's
/// validators; threads 0 and a dedupe buffer under 1 MiB per thread as its cleaner refuses) stops start-up
/// naming key and value.
#[test]
fn cleaner_keys_have_kafkas_defaults_and_bad_values_name_key_and_value() {
    let d = BrokerConfig::default();
    assert_eq!(d.cleaner, CleanerConfig::default());
    assert_eq!(d.log.cleanup_policy, strata_storage::CleanupPolicy::Delete);
    let c = BrokerConfig::from_properties(&props(&[
        ("log.cleanup.policy", "compact,delete"),
        ("log.cleaner.threads", "2"),
        ("log.cleaner.backoff.ms", "50"),
        ("log.cleaner.min.cleanable.ratio", "0.01"),
        ("log.cleaner.delete.retention.ms", "10"),
    ]))
    .unwrap();
    assert_eq!((c.cleaner.threads, c.cleaner.backoff_ms), (2, 50));
    assert_eq!(
        c.log.cleanup_policy,
        strata_storage::CleanupPolicy::CompactDelete
    );
    assert_eq!(
        (c.log.min_cleanable_dirty_ratio, c.log.delete_retention_ms),
        (0.01, 10)
    );
    for (key, value) in [
        ("log.cleaner.threads", "0"),
        ("log.cleaner.dedupe.buffer.size", "1000"),
        ("log.cleaner.io.buffer.load.factor", "0"),
        ("log.cleaner.min.cleanable.ratio", "1.5"),
        ("log.cleaner.backoff.ms", "-1"),
        ("log.cleaner.max.compaction.lag.ms", "0"),
        ("log.cleanup.policy", "shred"),
    ] {
        let err = BrokerConfig::from_properties(&props(&[(key, value)])).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(key) && msg.contains(value), "{key}: {msg}");
    }
}

/// The broker's topic defaults come through the topic table: each topic key reads the first of its broker
/// properties strata uses, which has the topic key's type.
#[test]
fn topic_defaults_come_from_the_topic_tables_broker_properties() {
    use strata_storage::config_def::Effect;
    for tk in strata_storage::TOPIC_CONFIG.keys() {
        for s in tk.server_default {
            let used = BROKER_KEYS
                .iter()
                .find(|b| b.name == s.name && b.effect == Effect::Used);
            if let Some(bk) = used {
                assert_eq!(bk.ty, tk.ty, "{} <- {}", tk.name, bk.name);
                // Written once, in the topic table; Kafka's log.flush.interval.ms alone defaults to null.
                if bk.name != "log.flush.interval.ms" {
                    assert_eq!(bk.default, tk.default, "{} <- {}", tk.name, bk.name);
                }
            }
        }
    }
    let c = BrokerConfig::from_properties(&props(&[
        ("log.roll.hours", "2"),
        ("message.max.bytes", "2000"),
        ("log.local.retention.ms", "1000"),
        ("log.remote.storage.enable", "true"),
        ("compression.type", "zstd"),
    ]))
    .unwrap();
    assert_eq!(c.log.segment_ms, 7_200_000);
    assert_eq!(c.log.max_message_bytes, 2000);
    assert_eq!(c.log.local_retention_ms, 1000);
    assert!(c.log.remote_storage_enable);
    assert_eq!(
        c.log.compression,
        Some(strata_storage::record::Compression::Zstd)
    );
    assert_eq!(BrokerConfig::default().log, LogConfig::default());
    // Kafka 4.4's ranges: log.retention.bytes any long (negative = unlimited), message.max.bytes from 0.
    let c = BrokerConfig::from_properties(&props(&[
        ("log.retention.bytes", "-2"),
        ("message.max.bytes", "0"),
    ]))
    .unwrap();
    assert_eq!((c.log.retention_bytes, c.log.max_message_bytes), (-2, 0));
    let err = BrokerConfig::from_properties(&props(&[("log.segment.bytes", "10")])).unwrap_err();
    assert!(err.to_string().contains("log.segment.bytes"), "{err}");
}

/// Keys whose default is computed from others (`default_doc`) hold the value they resolve to, still as
/// defaults, so DescribeConfigs reports what was parsed; `log.flush.interval.ms` stays null as in Kafka.
#[test]
fn computed_defaults_are_resolved_in_the_parsed_values() {
    use strata_storage::config_def::Value;
    let c = BrokerConfig::from_properties(&props(&[("socket.request.max.bytes", "400000000")]))
        .unwrap();
    let v = c.config_values();
    let text = |k: &str| v.get(k).to_text();
    assert_eq!(
        text("queued.max.request.bytes").as_deref(),
        Some("400000000")
    );
    assert!(!v.is_explicit("queued.max.request.bytes"));
    assert_eq!(
        text("advertised.listeners").as_deref(),
        Some("PLAINTEXT://127.0.0.1:9092")
    );
    let open = strata_storage::default_max_open_files().to_string();
    assert_eq!(text("log.max.open.files"), Some(open));
    assert_eq!(v.get("log.flush.interval.ms"), &Value::Null);
    let c = BrokerConfig::from_properties(&props(&[("queued.max.request.bytes", "-1")])).unwrap();
    assert_eq!(
        c.config_values()
            .get("queued.max.request.bytes")
            .to_text()
            .as_deref(),
        Some("-1")
    );
}

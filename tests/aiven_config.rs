//! A Kafka broker's `server.properties` with Aiven's tiered-storage plugin configured (Apache Kafka 4.0's file as
//! shipped, followed by the tiered-storage section of Aiven's README and demo: tests/fixtures/
//! aiven-tiered-storage.properties) loads unchanged through the broker's config loader, and each `rsm.config.`
//! key means in strata what it means in Aiven's plugin. Bad values are refused naming the key and the value.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use strata_broker::tiered::configs_from_properties;
use strata_tiering::BackendKind;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// `key=value` lines of a Java properties file (no continuation lines in these fixtures), later keys win.
fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Kafka 4.0's server.properties + Aiven's section, with the test's directories and Azure endpoint.
fn kafka_with_aiven(dir: &Path, endpoint: &str) -> BTreeMap<String, String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let kafka = std::fs::read_to_string(fixtures.join("kafka-4.0-server.properties")).unwrap();
    let aiven = std::fs::read_to_string(fixtures.join("aiven-tiered-storage.properties"))
        .unwrap()
        .replace("@ENDPOINT@", endpoint)
        .replace("@KEYS@", &dir.join("keys").display().to_string())
        .replace("@CACHE@", &dir.join("cache").display().to_string());
    let mut props = parse(&format!("{kafka}\n{aiven}"));
    props.insert("log.dirs".into(), dir.join("data").display().to_string());
    props
}

#[test]
fn aiven_tiered_storage_section_loads_unchanged_and_means_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let props = kafka_with_aiven(dir.path(), "http://127.0.0.1:10000/devstoreaccount1");
    let (broker, tiering) = configs_from_properties(&props).expect("Kafka + Aiven properties load");
    assert!(tiering.rlm.system_enable);
    let rsm = &tiering.rsm;
    // storage.backend.class=...AzureBlobStorage selects strata's Azure backend, with Aiven's Azure keys.
    assert_eq!(rsm.backend, BackendKind::Azure);
    assert_eq!(rsm.azure.container.as_deref(), Some("test-container"));
    assert_eq!(rsm.azure.account_name.as_deref(), Some("devstoreaccount1"));
    assert!(rsm.azure.account_key.is_some());
    assert_eq!(
        rsm.azure.endpoint.as_deref(),
        Some("http://127.0.0.1:10000/devstoreaccount1")
    );
    assert_eq!(rsm.upload_part_size(), 5 * MIB, "azure.upload.block.size");
    assert_eq!(rsm.key_prefix, "tiered-storage-demo/");
    // Chunking, compression, encryption.
    assert_eq!(rsm.chunk_size, 4 * MIB);
    assert!(rsm.compression_enabled && rsm.compression_heuristic);
    assert!(rsm.encryption_enabled);
    assert_eq!(rsm.encryption_key_pair_id.as_deref(), Some("key1"));
    let pair = &rsm.encryption_key_pairs["key1"];
    assert_eq!(
        pair.private_key_file.as_deref(),
        Some(dir.path().join("keys/private.pem").as_path())
    );
    assert_eq!(
        pair.public_key_file.as_deref(),
        Some(dir.path().join("keys/public.pem").as_path())
    );
    // Caches: sizes and prefetch as Aiven's; -1 = unbounded.
    assert_eq!(rsm.chunk_cache_size, 16 * 1024 * MIB);
    assert_eq!(rsm.chunk_cache_prefetch_max_size, 16 * MIB);
    assert_eq!(rsm.manifest_cache_size, u64::MAX);
    assert_eq!(rsm.indexes_cache_size, 10 * MIB);
    // upload.rate.limit.bytes.per.second caps the copy rate (Kafka's copy quota is unlimited by default).
    assert_eq!(rsm.upload_rate_limit, Some(50 * MIB));
    assert_eq!(tiering.rlm.copy_max_bytes_per_second, 50 * MIB);
    // Kafka's own keys from the same file still apply.
    assert_eq!(broker.log_dirs, vec![dir.path().join("data")]);
    assert_eq!(
        broker.log.retention_ms,
        Duration::from_secs(168 * 3600).as_millis() as i64
    );
}

/// Each Aiven backend class selects its backend with its own keys (Aiven's S3, GCS and filesystem examples).
#[test]
fn aiven_backend_classes_select_s3_gcs_and_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let base = |extra: &[(&str, &str)]| {
        let mut p: BTreeMap<String, String> = [("log.dirs", dir.path().display().to_string())]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        for (k, v) in extra {
            p.insert(k.to_string(), v.to_string());
        }
        configs_from_properties(&p)
    };
    let (_, t) = base(&[
        (
            "rsm.config.storage.backend.class",
            "io.aiven.kafka.tieredstorage.storage.s3.S3Storage",
        ),
        ("rsm.config.storage.s3.bucket.name", "test-bucket"),
        ("rsm.config.storage.s3.region", "us-east-1"),
        ("rsm.config.storage.s3.endpoint.url", "http://minio:9000"),
        ("rsm.config.storage.s3.path.style.access.enabled", "true"),
        ("rsm.config.storage.aws.access.key.id", "minioadmin"),
        ("rsm.config.storage.aws.secret.access.key", "minioadmin"),
        ("rsm.config.storage.aws.checksum.check.enabled", "false"),
        ("rsm.config.storage.s3.storage.class", "STANDARD"),
        (
            "rsm.config.storage.s3.multipart.upload.part.size",
            "8388608",
        ),
    ])
    .expect("Aiven S3 section loads");
    assert_eq!(t.rsm.backend, BackendKind::S3);
    assert_eq!(t.rsm.s3.bucket.as_deref(), Some("test-bucket"));
    assert_eq!(t.rsm.s3.path_style, Some(true));
    assert_eq!(t.rsm.upload_part_size(), 8 * MIB);
    let (_, t) = base(&[
        (
            "rsm.config.storage.backend.class",
            "io.aiven.kafka.tieredstorage.storage.gcs.GcsStorage",
        ),
        ("rsm.config.storage.gcs.bucket.name", "test-bucket"),
        ("rsm.config.storage.gcs.credentials.default", "true"),
        (
            "rsm.config.storage.gcs.resumable.upload.chunk.size",
            "8388608",
        ),
    ])
    .expect("Aiven GCS section loads");
    assert_eq!(t.rsm.backend, BackendKind::Gcs);
    assert_eq!(t.rsm.gcs.bucket.as_deref(), Some("test-bucket"));
    assert_eq!(t.rsm.gcs.credentials_default, Some(true));
    assert_eq!(t.rsm.upload_part_size(), 8 * MIB);
    let root = dir.path().join("tiered").display().to_string();
    let (broker, t) = base(&[
        (
            "rsm.config.storage.backend.class",
            "io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage",
        ),
        ("rsm.config.storage.root", root.as_str()),
        ("rsm.config.storage.overwrite.enabled", "true"),
    ])
    .expect("Aiven filesystem section loads");
    assert_eq!(t.rsm.backend, BackendKind::Filesystem);
    assert_eq!(t.rsm.filesystem_root, PathBuf::from(&root));
    assert!(broker.reserved_dirs.contains(&PathBuf::from(&root)));
}

/// Bad values in an Aiven section are refused naming the key and the value (secrets are not echoed).
#[test]
fn bad_aiven_values_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let good = kafka_with_aiven(dir.path(), "http://127.0.0.1:10000/devstoreaccount1");
    for (key, value, expect) in [
        (
            "rsm.config.storage.backend.class",
            "io.aiven.kafka.tieredstorage.storage.hdfs.HdfsStorage",
            "HdfsStorage",
        ),
        ("rsm.config.chunk.size", "0", "chunk.size"),
        ("rsm.config.storage.azure.upload.block.size", "1024", "1024"),
        (
            "rsm.config.storage.azure.endpoint.url",
            "azurite:10000",
            "azurite:10000",
        ),
        ("rsm.config.compression.enabled", "yes", "yes"),
        ("rsm.config.encryption.key.pair.id", "key2", "key2"),
        (
            "rsm.config.upload.rate.limit.bytes.per.second",
            "1024",
            "1024",
        ),
        (
            "rsm.config.fetch.chunk.cache.class",
            "com.example.RedisChunkCache",
            "RedisChunkCache",
        ),
        ("rsm.config.custom.metadata.fields.include", "SIZE", "SIZE"),
        ("rsm.config.segment.format", "iceberg", "iceberg"),
        (
            "rsm.config.storage.azure.container.nam",
            "x",
            "did you mean",
        ),
    ] {
        let mut p = good.clone();
        p.insert(key.to_string(), value.to_string());
        let e = configs_from_properties(&p)
            .err()
            .unwrap_or_else(|| panic!("{key}={value} accepted"));
        let msg = e.to_string();
        let name = key.trim_start_matches("rsm.config.");
        assert!(
            msg.contains(name) || msg.contains("encryption.key.pair.id"),
            "{key}={value}: {msg}"
        );
        assert!(msg.contains(expect), "{key}={value}: {msg} lacks {expect}");
        assert!(!msg.contains("Eby8vdM02x"), "secret in {msg}");
    }
}

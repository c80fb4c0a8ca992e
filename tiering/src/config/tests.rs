//! RsmConfig parsing and validation.
use super::*;

#[test]
fn defaults_validate_and_match_documented_values() {
    let c = RsmConfig::default();
    c.validate().unwrap();
    assert_eq!(c.chunk_size, 4 * MIB);
    assert_eq!(c.multipart_part_size, 26_214_400);
    assert_eq!(c.backend, BackendKind::Filesystem);
    assert_eq!(c.chunk_cache_prefetch_max_size, 16 * MIB);
}

#[test]
fn default_read_ahead_goes_with_the_chunk_cache_and_an_explicit_one_needs_it() {
    let c = RsmConfig::from_props([("fetch.chunk.cache.size", "0")]).unwrap();
    assert_eq!(
        c.chunk_cache_prefetch_max_size, 0,
        "no cache, no read-ahead"
    );
    let c = RsmConfig::from_props([("fetch.chunk.cache.size", "1048576")]).unwrap();
    assert_eq!(c.chunk_cache_prefetch_max_size, 16 * MIB);
    let c = RsmConfig::from_props([("fetch.chunk.cache.prefetch.max.size", "0")]).unwrap();
    assert_eq!(c.chunk_cache_prefetch_max_size, 0);
    let e = RsmConfig::from_props([
        ("fetch.chunk.cache.size", "0"),
        ("fetch.chunk.cache.prefetch.max.size", "1048576"),
    ])
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("fetch.chunk.cache.prefetch.max.size"),
        "{e}"
    );
}

#[test]
fn from_props_reads_aiven_keys() {
    let c = RsmConfig::from_props([
        ("storage.backend", "s3"),
        ("storage.s3.bucket.name", "tier"),
        ("storage.s3.region", "eu-west-1"),
        ("storage.s3.endpoint.url", "http://127.0.0.1:9000"),
        ("storage.s3.path.style.access.enabled", "true"),
        ("chunk.size", "1048576"),
        ("compression.enabled", "true"),
        ("compression.heuristic.enabled", "true"),
        ("key.prefix", "cluster-a/"),
    ])
    .unwrap();
    assert_eq!(c.backend, BackendKind::S3);
    assert_eq!(c.s3.bucket.as_deref(), Some("tier"));
    assert_eq!(c.s3.path_style, Some(true));
    assert_eq!(c.chunk_size, MIB);
    assert!(c.compression_heuristic);
    assert_eq!(c.key_prefix, "cluster-a/");
}

#[test]
fn table_is_consistent_and_its_defaults_are_the_structs() {
    RSM_CONFIG.check_table().unwrap();
    let mut c = RsmConfig::default();
    for k in RSM_CONFIG.keys() {
        if let Some(d) = k.default {
            c.set(k.name, d).unwrap();
        }
    }
    assert_eq!(c, RsmConfig::default());
}

#[test]
fn unknown_key_is_rejected_by_name() {
    let e = RsmConfig::from_props([("chunk.sise", "1")]).unwrap_err();
    assert!(
        matches!(&e, Error::Config { key, .. } if key == "rsm.config.chunk.sise"),
        "{e}"
    );
    assert!(e.to_string().contains("rsm.config.chunk.sise"));
    assert!(
        e.to_string().contains("did you mean rsm.config.chunk.size"),
        "{e}"
    );
}

#[test]
fn bad_values_name_the_key_and_value() {
    let e = RsmConfig::from_props([("chunk.size", "big")]).unwrap_err();
    assert!(
        e.to_string().contains("rsm.config.chunk.size") && e.to_string().contains("big"),
        "{e}"
    );
    let e = RsmConfig::from_props([("storage.backend", "tape")]).unwrap_err();
    assert!(
        e.to_string().contains("storage.backend") && e.to_string().contains("tape"),
        "{e}"
    );
    let e = RsmConfig::from_props([("chunk.size", "0")]).unwrap_err();
    assert!(e.to_string().contains("chunk.size"), "{e}");
    let e = RsmConfig::from_props([("storage.s3.multipart.upload.part.size", "1024")]).unwrap_err();
    assert!(e.to_string().contains("multipart.upload.part.size"), "{e}");
    let e = RsmConfig::from_props([("compression.enabled", "yes")]).unwrap_err();
    assert!(e.to_string().contains("compression.enabled"), "{e}");
    let e = RsmConfig::from_props([("key.prefix", "/abs")]).unwrap_err();
    assert!(e.to_string().contains("key.prefix"), "{e}");
}

#[test]
fn cross_field_rules_are_checked() {
    let e = RsmConfig::from_props([("storage.backend", "s3")]).unwrap_err();
    assert!(e.to_string().contains("storage.s3.bucket.name"), "{e}");
    let e = RsmConfig::from_props([("encryption.enabled", "true")]).unwrap_err();
    assert!(e.to_string().contains("encryption.key.file"), "{e}");
    let e =
        RsmConfig::from_props([("compression.heuristic.detection.enabled", "true")]).unwrap_err();
    assert!(e.to_string().contains("compression.enabled"), "{e}");
    let e = RsmConfig::from_props([
        ("storage.backend", "s3"),
        ("storage.s3.bucket.name", "b"),
        ("storage.aws.access.key.id", "AKIA"),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("secret.access.key"), "{e}");
    let e = RsmConfig::from_props([
        ("storage.backend", "s3"),
        ("storage.s3.bucket.name", "b"),
        ("storage.s3.endpoint.url", "localhost:9000"),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("endpoint.url"), "{e}");
}

#[test]
fn debug_redacts_static_credentials() {
    let c = RsmConfig::from_props([
        ("storage.backend", "s3"),
        ("storage.s3.bucket.name", "b"),
        ("storage.aws.access.key.id", "AKIAEXAMPLEID"),
        ("storage.aws.secret.access.key", "supersecretvalue"),
    ])
    .unwrap();
    let dbg = format!("{c:?}");
    assert!(
        !dbg.contains("AKIAEXAMPLEID") && !dbg.contains("supersecretvalue"),
        "{dbg}"
    );
    assert!(dbg.contains("<redacted>"));
    let described = format!("{:?}", c.describe());
    assert!(!described.contains("AKIAEXAMPLEID") && !described.contains("supersecretvalue"));
}

#[test]
fn gcs_and_azure_backends_need_their_bucket_or_container() {
    let e = RsmConfig::from_props([("storage.backend", "gcs")]).unwrap_err();
    assert!(e.to_string().contains("storage.gcs.bucket.name"), "{e}");
    let e = RsmConfig::from_props([("storage.backend", "azure")]).unwrap_err();
    assert!(
        e.to_string().contains("storage.azure.container.name"),
        "{e}"
    );
    let e = RsmConfig::from_props([
        ("storage.backend", "azure"),
        ("storage.azure.container.name", "c"),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("storage.azure.account.name"), "{e}");
    let c = RsmConfig::from_props([
        ("storage.backend", "gcs"),
        ("storage.gcs.bucket.name", "b"),
        ("storage.gcs.resumable.upload.chunk.size", "262144"),
    ])
    .unwrap();
    assert_eq!(c.backend, BackendKind::Gcs);
    assert_eq!(
        c.upload_part_size(),
        5 * MIB,
        "GCS parts are at least 5 MiB"
    );
}

/// Aiven's rules: `gcs.credentials.{default,json,path}` exclude each other; `azure.connection.string` excludes
/// the account name, key and endpoint; the resumable chunk size is a multiple of 256 KiB.
#[test]
fn aiven_exclusive_credentials_are_refused_by_name() {
    let gcs = |extra: &[(&'static str, &'static str)]| {
        let mut p = vec![("storage.backend", "gcs"), ("storage.gcs.bucket.name", "b")];
        p.extend_from_slice(extra);
        RsmConfig::from_props(p)
    };
    let e = gcs(&[
        ("storage.gcs.credentials.default", "true"),
        ("storage.gcs.credentials.path", "/k.json"),
    ])
    .unwrap_err();
    assert!(
        e.to_string().contains("storage.gcs.credentials.path"),
        "{e}"
    );
    let e = gcs(&[("storage.gcs.resumable.upload.chunk.size", "300000")]).unwrap_err();
    assert!(
        e.to_string().contains("resumable.upload.chunk.size") && e.to_string().contains("300000"),
        "{e}"
    );
    let e = RsmConfig::from_props([
        ("storage.backend", "azure"),
        ("storage.azure.container.name", "c"),
        ("storage.azure.account.name", "a"),
        (
            "storage.azure.connection.string",
            "AccountName=a;AccountKey=a2V5",
        ),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("storage.azure.account.name"), "{e}");
    let e = RsmConfig::from_props([
        ("storage.backend", "azure"),
        ("storage.azure.container.name", "c"),
        ("storage.azure.connection.string", "AccountKey=a2V5"),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("connection.string"), "{e}");
    assert!(!e.to_string().contains("a2V5"), "secret in {e}");
}

#[test]
fn azure_connection_string_names_account_key_and_endpoint() {
    let c = RsmConfig::from_props([
        ("storage.backend", "azure"),
        ("storage.azure.container.name", "c"),
        (
            "storage.azure.connection.string",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net",
        ),
    ])
    .unwrap();
    let r = c.azure.resolved().unwrap();
    assert_eq!(r.account_name.as_deref(), Some("acct"));
    assert_eq!(r.account_key.as_deref(), Some("a2V5"));
    assert_eq!(
        r.endpoint.as_deref(),
        Some("https://acct.blob.core.windows.net")
    );
    assert!(!format!("{c:?}").contains("a2V5"));
}

#[test]
fn backend_class_selects_the_backend_and_must_agree_with_storage_backend() {
    let c = RsmConfig::from_props([
        (
            "storage.backend.class",
            "io.aiven.kafka.tieredstorage.storage.azure.AzureBlobStorage",
        ),
        ("storage.azure.container.name", "c"),
        ("storage.azure.account.name", "a"),
    ])
    .unwrap();
    assert_eq!(c.backend, BackendKind::Azure);
    let e = RsmConfig::from_props([
        ("storage.backend", "s3"),
        (
            "storage.backend.class",
            "io.aiven.kafka.tieredstorage.storage.gcs.GcsStorage",
        ),
    ])
    .unwrap_err();
    assert!(
        e.to_string().contains("storage.backend.class") && e.to_string().contains("gcs"),
        "{e}"
    );
    let e = RsmConfig::from_props([(
        "storage.backend.class",
        "io.aiven.kafka.tieredstorage.storage.oci.OciStorage",
    )])
    .unwrap_err();
    assert!(
        e.to_string().contains("storage.backend.class") && e.to_string().contains("OciStorage"),
        "{e}"
    );
}

#[test]
fn aiven_cache_sizes_of_minus_one_are_unbounded_and_jvm_keys_have_no_effect() {
    let c = RsmConfig::from_props([
        ("fetch.chunk.cache.size", "-1"),
        ("fetch.manifest.cache.size", "-1"),
        (
            "fetch.chunk.cache.class",
            "io.aiven.kafka.tieredstorage.fetch.cache.MemoryChunkCache",
        ),
        ("fetch.chunk.cache.retention.ms", "600000"),
        ("metrics.recording.level", "DEBUG"),
        ("custom.metadata.fields.include", "REMOTE_SIZE,OBJECT_KEY"),
        ("storage.root", "/tmp/aiven-fs"),
    ])
    .unwrap();
    assert_eq!(c.chunk_cache_size, u64::MAX);
    assert_eq!(c.manifest_cache_size, u64::MAX);
    assert_eq!(c.filesystem_root, PathBuf::from("/tmp/aiven-fs"));
    let e = RsmConfig::from_props([("segment.format", "iceberg")]).unwrap_err();
    assert!(e.to_string().contains("segment.format"), "{e}");
    let e = RsmConfig::from_props([("upload.rate.limit.bytes.per.second", "1000")]).unwrap_err();
    assert!(
        e.to_string().contains("upload.rate.limit.bytes.per.second")
            && e.to_string().contains("1000"),
        "{e}"
    );
}

fn pem(dir: &std::path::Path, name: &str, label: &str, seed: u8) -> String {
    use base64::Engine as _;
    let der: Vec<u8> = (0..300u32).map(|i| (i as u8).wrapping_mul(seed)).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let body: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            body.join("\n")
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// Aiven's `encryption.key.pairs.<id>.*.key.file`: the active pair's private key yields strata's key-encryption
/// key (the same files, the same key; another private key, another key); a missing or wrong file is named.
#[test]
fn aiven_key_pairs_derive_the_key_encryption_key() {
    let dir = std::env::temp_dir().join(format!("strata-kp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let public = pem(&dir, "pub.pem", "PUBLIC KEY", 3);
    let private = pem(&dir, "priv.pem", "PRIVATE KEY", 5);
    let other = pem(&dir, "other.pem", "PRIVATE KEY", 7);
    let load = |private: &str| {
        RsmConfig::from_props([
            ("encryption.enabled", "true"),
            ("encryption.key.pair.id", "k1"),
            ("encryption.key.pairs", "k1"),
            ("encryption.key.pairs.k1.public.key.file", public.as_str()),
            ("encryption.key.pairs.k1.private.key.file", private),
        ])
        .unwrap()
    };
    let c = load(&private);
    assert_eq!(
        c.encryption_key_pairs["k1"].private_key_file.as_deref(),
        Some(std::path::Path::new(&private))
    );
    let a = c.key_encryption_key().unwrap().expect("a key");
    let b = load(&private).key_encryption_key().unwrap().expect("a key");
    let o = load(&other).key_encryption_key().unwrap().expect("a key");
    assert_eq!(a.id(), b.id());
    assert_ne!(a.id(), o.id());
    // The public key in place of the private one is refused by name.
    let e = load(&public).key_encryption_key().unwrap_err();
    assert!(
        e.to_string()
            .contains("encryption.key.pairs.k1.private.key.file"),
        "{e}"
    );
    // The active pair must be listed with both files.
    let e = RsmConfig::from_props([
        ("encryption.enabled", "true"),
        ("encryption.key.pair.id", "k2"),
        ("encryption.key.pairs", "k1"),
        ("encryption.key.pairs.k1.public.key.file", public.as_str()),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("encryption.key.pair.id"), "{e}");
    let e = RsmConfig::from_props([
        ("encryption.enabled", "true"),
        ("encryption.key.pair.id", "k1"),
        ("encryption.key.pairs.k1.public.key.file", public.as_str()),
    ])
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("encryption.key.pairs.k1.private.key.file"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

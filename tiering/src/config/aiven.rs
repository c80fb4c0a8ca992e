//! Aiven's tiered-storage-for-Apache-Kafka keys that are not strata's own: the storage backend class, the RSA key
//! pairs of its encryption, and the keys that only make sense in the JVM plugin (accepted, listed as having no
//! effect), so that a broker's `rsm.config.` section written for Kafka + Aiven's plugin starts strata unchanged.
//!
//! Encryption: Aiven wraps each segment's data key with the active pair's RSA public key. strata keeps its own
//! envelope (AES-256-GCM chunks, a per-segment data key wrapped by AES-256-GCM, see [`crate::crypto`]) and
//! derives that key-encryption key from the active pair's private key file: SHA-256 of a fixed label and the
//! key's DER bytes. So the same files protect the data, and nobody without the private key can read it; but
//! objects written by Aiven's plugin are not readable by strata (nor the reverse: the object layouts differ
//! anyway), and after switching `encryption.key.pair.id` segments written under the previous pair are refused
//! (the manifest records the key id), as with strata's `encryption.key.file`.
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use strata_storage::config_def::{ConfigKey, Effect, Type, Validator, Value};

use super::keys::{key, not_blank};
use super::{BackendKind, RsmConfig};
use crate::crypto::KeyEncryptionKey;
use crate::error::{Error, Result};

/// Aiven's storage backend classes and the strata backend each selects.
pub const BACKEND_CLASSES: &[(&str, BackendKind)] = &[
    (
        "io.aiven.kafka.tieredstorage.storage.s3.S3Storage",
        BackendKind::S3,
    ),
    (
        "io.aiven.kafka.tieredstorage.storage.gcs.GcsStorage",
        BackendKind::Gcs,
    ),
    (
        "io.aiven.kafka.tieredstorage.storage.azure.AzureBlobStorage",
        BackendKind::Azure,
    ),
    (
        "io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage",
        BackendKind::Filesystem,
    ),
];

const CHUNK_CACHE_CLASSES: &[&str] = &[
    "io.aiven.kafka.tieredstorage.fetch.cache.MemoryChunkCache",
    "io.aiven.kafka.tieredstorage.fetch.cache.DiskChunkCache",
];

fn backend_class(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::String(s) if BACKEND_CLASSES.iter().any(|(c, _)| c == s) => Ok(()),
        _ => Err(format!(
            "strata stores segments with Aiven's S3, GCS, Azure or filesystem storage; expected one of {}",
            BACKEND_CLASSES
                .iter()
                .map(|(c, _)| *c)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The backend an accepted `storage.backend.class` selects.
pub(super) fn backend_of_class(class: &str) -> BackendKind {
    BACKEND_CLASSES
        .iter()
        .find(|(c, _)| *c == class)
        .map_or(BackendKind::Filesystem, |(_, b)| *b)
}

const fn no_effect(
    name: &'static str,
    ty: Type,
    doc: &'static str,
    why: &'static str,
) -> ConfigKey {
    key(name, ty, doc).effect(Effect::NoEffect(why))
}

const JVM_POOL: &str = "JVM thread pool; strata's reads are async tasks";
const SIZE_EVICTION: &str = "strata's caches evict by size only";
const JVM_METRICS: &str = "JVM metrics; strata exports its own at /metrics";

/// Aiven's keys beyond strata's own table ([`super::RSM_KEYS`]).
pub const AIVEN_KEYS: &[ConfigKey] = &[
    key(
        "storage.backend.class",
        Type::Class,
        "Aiven's storage class: S3Storage, GcsStorage, AzureBlobStorage, FileSystemStorage (selects the backend)",
    )
    .default_doc("storage.backend")
    .validator(Validator::Custom(backend_class)),
    key(
        "encryption.key.pair.id",
        Type::String,
        "the active RSA key pair; strata derives its key-encryption key from its private key file",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "encryption.key.pairs",
        Type::List,
        "ids of the RSA key pairs",
    )
    .default(""),
    key(
        "encryption.key.pairs.<id>.public.key.file",
        Type::String,
        "a pair's PEM public key file (checked to exist)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "encryption.key.pairs.<id>.private.key.file",
        Type::String,
        "a pair's PEM private key file (the key-encryption key is derived from it)",
    )
    .validator(Validator::Custom(not_blank)),
    no_effect(
        "fetch.chunk.cache.class",
        Type::Class,
        "Aiven's MemoryChunkCache or DiskChunkCache",
        "strata's chunk cache is in memory, sized by fetch.chunk.cache.size",
    )
    .validator(Validator::OneOf(CHUNK_CACHE_CLASSES)),
    no_effect(
        "fetch.chunk.cache.path",
        Type::String,
        "DiskChunkCache's directory",
        "strata's chunk cache is in memory",
    ),
    no_effect(
        "fetch.chunk.cache.retention.ms",
        Type::Long,
        "chunk cache entry lifetime",
        SIZE_EVICTION,
    )
    .default("600000"),
    no_effect(
        "fetch.chunk.cache.get.timeout.ms",
        Type::Long,
        "chunk cache wait",
        JVM_POOL,
    )
    .default("10000"),
    no_effect(
        "fetch.chunk.cache.thread.pool.size",
        Type::Int,
        "chunk cache threads",
        JVM_POOL,
    )
    .default("0"),
    no_effect(
        "fetch.manifest.cache.retention.ms",
        Type::Long,
        "manifest cache entry lifetime",
        SIZE_EVICTION,
    )
    .default("3600000"),
    no_effect(
        "fetch.manifest.cache.get.timeout.ms",
        Type::Long,
        "manifest cache wait",
        JVM_POOL,
    )
    .default("10000"),
    no_effect(
        "fetch.manifest.cache.thread.pool.size",
        Type::Int,
        "manifest cache threads",
        JVM_POOL,
    )
    .default("0"),
    no_effect(
        "fetch.indexes.cache.retention.ms",
        Type::Long,
        "index cache entry lifetime",
        SIZE_EVICTION,
    )
    .default("600000"),
    no_effect(
        "fetch.indexes.cache.get.timeout.ms",
        Type::Long,
        "index cache wait",
        JVM_POOL,
    )
    .default("10000"),
    no_effect(
        "fetch.indexes.cache.thread.pool.size",
        Type::Int,
        "index cache threads",
        JVM_POOL,
    )
    .default("0"),
    no_effect(
        "custom.metadata.fields.include",
        Type::List,
        "REMOTE_SIZE, OBJECT_PREFIX, OBJECT_KEY",
        "strata always records the remote size, object prefix and key layout (its reads need them)",
    )
    .default("")
    .validator(Validator::ListOf(&["REMOTE_SIZE", "OBJECT_PREFIX", "OBJECT_KEY"])),
    no_effect(
        "key.prefix.mask",
        Type::Boolean,
        "mask the prefix in logs",
        "strata logs object keys in full",
    )
    .default("false"),
    no_effect(
        "segment.format",
        Type::String,
        "kafka (iceberg is refused)",
        "strata stores Kafka segments",
    )
    .default("kafka")
    .validator(Validator::OneOf(&["kafka"])),
    no_effect(
        "structure.provider.class",
        Type::Class,
        "Iceberg structure provider",
        "Iceberg only",
    ),
    no_effect(
        "iceberg.catalog.class",
        Type::Class,
        "Iceberg catalog",
        "Iceberg only",
    ),
    no_effect(
        "iceberg.namespace",
        Type::String,
        "Iceberg namespace",
        "Iceberg only",
    ),
    no_effect(
        "metrics.num.samples",
        Type::Int,
        "metric samples",
        JVM_METRICS,
    )
    .default("2"),
    no_effect(
        "metrics.recording.level",
        Type::String,
        "INFO, DEBUG or TRACE",
        JVM_METRICS,
    )
    .default("INFO")
    .validator(Validator::OneOf(&["INFO", "DEBUG", "TRACE"])),
    no_effect(
        "metrics.sample.window.ms",
        Type::Long,
        "metric sample window",
        JVM_METRICS,
    )
    .default("30000"),
    no_effect(
        "storage.overwrite.enabled",
        Type::Boolean,
        "FileSystemStorage overwrites",
        "strata always overwrites a segment copied again",
    )
    .default("false"),
    no_effect(
        "storage.s3.storage.class",
        Type::String,
        "S3 storage class of new objects",
        "objects get the bucket's default storage class",
    )
    .default("STANDARD"),
    no_effect(
        "storage.s3.legacy.md5.plugin.enabled",
        Type::Boolean,
        "AWS SDK's legacy MD5 checksums",
        "strata's S3 client sends no SDK-2.30 checksums",
    )
    .default("false"),
    no_effect(
        "storage.aws.checksum.check.enabled",
        Type::Boolean,
        "AWS SDK checksum validation",
        "chunks are checked by their sizes (and GCM tags when encrypted)",
    )
    .default("false"),
    no_effect(
        "storage.aws.credentials.provider.class",
        Type::Class,
        "AWS SDK credentials provider",
        "JVM class; strata uses the default AWS chain or the static keys",
    ),
];

/// Files of one Aiven RSA key pair.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KeyPairFiles {
    /// `encryption.key.pairs.<id>.public.key.file`.
    pub public_key_file: Option<PathBuf>,
    /// `encryption.key.pairs.<id>.private.key.file`.
    pub private_key_file: Option<PathBuf>,
}

/// `encryption.key.pairs.<id>.(public|private).key.file` → (id, the table's `<id>` name, is private).
pub(super) fn key_pair_key(name: &str) -> Option<(&str, &'static str, bool)> {
    let rest = name.strip_prefix("encryption.key.pairs.")?;
    let (id, private, generic) = if let Some(id) = rest.strip_suffix(".private.key.file") {
        (id, true, "encryption.key.pairs.<id>.private.key.file")
    } else {
        let id = rest.strip_suffix(".public.key.file")?;
        (id, false, "encryption.key.pairs.<id>.public.key.file")
    };
    (!id.is_empty()).then_some((id, generic, private))
}

/// With encryption on and a pair id: the pair exists with both files, and no `encryption.key.file` competes.
pub(super) fn validate_key_pairs(c: &RsmConfig) -> Result<()> {
    let Some(id) = &c.encryption_key_pair_id else {
        return Ok(());
    };
    if !c.encryption_enabled {
        return Ok(());
    }
    if c.encryption_key_file.is_some() {
        return Err(Error::invalid(
            "encryption.key.file",
            "cannot be set together with rsm.config.encryption.key.pair.id (one key source)",
        ));
    }
    let pair = c.encryption_key_pairs.get(id).ok_or_else(|| {
        Error::invalid(
            "encryption.key.pair.id",
            format!("{id:?} is not among rsm.config.encryption.key.pairs"),
        )
    })?;
    for (file, which) in [
        (&pair.public_key_file, "public"),
        (&pair.private_key_file, "private"),
    ] {
        if file.is_none() {
            return Err(Error::invalid(
                &format!("encryption.key.pairs.{id}.{which}.key.file"),
                "required for the active key pair",
            ));
        }
    }
    Ok(())
}

/// The key-encryption key derived from the active pair's private key file, when encryption uses a key pair.
pub(super) fn key_encryption_key(c: &RsmConfig) -> Result<Option<KeyEncryptionKey>> {
    let Some(id) = &c.encryption_key_pair_id else {
        return Ok(None);
    };
    let Some(pair) = c.encryption_key_pairs.get(id) else {
        return Ok(None);
    };
    let (Some(public), Some(private)) = (&pair.public_key_file, &pair.private_key_file) else {
        return Ok(None);
    };
    pem_der(
        &format!("encryption.key.pairs.{id}.public.key.file"),
        public,
        "PUBLIC KEY",
    )?;
    let der = pem_der(
        &format!("encryption.key.pairs.{id}.private.key.file"),
        private,
        "PRIVATE KEY",
    )?;
    let mut h = sha2::Sha256::new();
    h.update(b"strata key-encryption key from an RSA private key, v1\0");
    h.update(&der);
    Ok(Some(KeyEncryptionKey::from_bytes(&h.finalize().into())))
}

/// The DER bytes of a PEM file whose label ends with `label` (`PUBLIC KEY`, `PRIVATE KEY`, `RSA PRIVATE KEY`).
fn pem_der(key: &str, path: &Path, label: &str) -> Result<Vec<u8>> {
    let err =
        |reason: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| Error::Config {
            key: format!("rsm.config.{key}"),
            value: Some(path.display().to_string()),
            reason,
            source,
        };
    let text = std::fs::read_to_string(path)
        .map_err(|e| err("cannot read the key file".into(), Some(Box::new(e))))?;
    let begin = text
        .lines()
        .find(|l| l.starts_with("-----BEGIN "))
        .ok_or_else(|| err("not a PEM file (no -----BEGIN line)".into(), None))?;
    if !begin.trim_end_matches('-').ends_with(label) {
        return Err(err(format!("expected a PEM {label}, found {begin}"), None));
    }
    let body: String = text
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN "))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END "))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| err("the PEM body is not base64".into(), Some(Box::new(e))))?;
    if der.len() < 64 {
        return Err(err(format!("a {}-byte key is too short", der.len()), None));
    }
    Ok(der)
}

//! The `rsm.config.` key table: strata's keys under Aiven's names, and the GCS and Azure backends' keys.
use strata_storage::config_def::{ConfigKey, Synonym, Type, Validator, Value};

use super::{GIB, MIB};

/// A string that is not blank (Aiven's keys refuse empty names, paths and credentials).
pub(super) fn not_blank(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::String(s) | Value::Password(s) if !s.trim().is_empty() => Ok(()),
        _ => Err("must not be empty".into()),
    }
}

pub(super) const fn key(name: &'static str, ty: Type, doc: &'static str) -> ConfigKey {
    ConfigKey::new(name, ty, doc)
}

/// Every `rsm.config.` key, prefix stripped (Aiven's tiered-storage-for-Apache-Kafka names; strata-only keys
/// are marked). Typos are errors naming the closest key: a silent typo here would send data elsewhere.
pub const RSM_KEYS: &[ConfigKey] = &[
    key(
        "storage.backend",
        Type::String,
        "where segments are stored: filesystem, s3, gcs, azure (memory: tests)",
    )
    .default("filesystem")
    .validator(Validator::OneOf(&["s3", "gcs", "azure", "filesystem", "memory"]))
    .strata_only(),
    key(
        "storage.filesystem.root",
        Type::String,
        "directory of the filesystem backend",
    )
    .default("remote-storage")
    .default_doc("<log dir>/remote")
    .validator(Validator::Custom(not_blank))
    .synonyms(&[Synonym {
        name: "storage.root",
        scale: 1,
    }]),
    key(
        "storage.s3.bucket.name",
        Type::String,
        "S3 bucket (required for backend s3)",
    )
    .validator(Validator::Custom(not_blank)),
    key("storage.s3.region", Type::String, "S3 region")
        .default_doc("AWS_REGION, else us-east-1")
        .validator(Validator::Custom(not_blank)),
    key(
        "storage.s3.endpoint.url",
        Type::String,
        "S3-compatible endpoint, e.g. http://127.0.0.1:9000",
    )
    .default_doc("AWS")
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.s3.path.style.access.enabled",
        Type::Boolean,
        "path-style URLs (most S3-compatible stores)",
    )
    .default_doc("path style"),
    key(
        "storage.aws.access.key.id",
        Type::Password,
        "static credentials; else the AWS credential chain",
    )
    .default_doc("environment")
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.aws.secret.access.key",
        Type::Password,
        "static credentials",
    )
    .default_doc("environment")
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.aws.session.token",
        Type::Password,
        "session token of temporary credentials",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.s3.api.call.timeout",
        Type::Long,
        "budget of one object-store call, retries included (ms; every backend)",
    )
    .default("60000")
    .validator(Validator::AtLeast(0)),
    key(
        "storage.s3.api.call.attempt.timeout",
        Type::Long,
        "budget of one HTTP attempt (ms; every backend)",
    )
    .default("30000")
    .validator(Validator::AtLeast(0)),
    key(
        "storage.s3.multipart.upload.part.size",
        Type::Long,
        "multipart upload part size (bytes)",
    )
    .default("26214400")
    .validator(Validator::Between(5 * MIB as i64, 2 * GIB as i64 - 1)),
    key(
        "storage.aws.certificate.check.enabled",
        Type::Boolean,
        "check the S3 endpoint's TLS certificate (false: tests only, warned)",
    )
    .default("true"),
    key(
        "storage.gcs.bucket.name",
        Type::String,
        "GCS bucket (required for backend gcs)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.gcs.endpoint.url",
        Type::String,
        "GCS-compatible endpoint or emulator, e.g. http://127.0.0.1:9023",
    )
    .default_doc("https://storage.googleapis.com")
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.gcs.credentials.default",
        Type::Boolean,
        "true: the platform's default chain; false with no key: unsigned requests (emulators)",
    )
    .default_doc("default chain unless a key is given"),
    key(
        "storage.gcs.credentials.json",
        Type::Password,
        "service account key as JSON text (static: warned)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.gcs.credentials.path",
        Type::String,
        "service account key file (static: warned)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.gcs.resumable.upload.chunk.size",
        Type::Int,
        "GCS upload part size (bytes, multiple of 256 KiB; parts are at least 5 MiB)",
    )
    .default("26214400")
    .validator(Validator::AtLeast(256 * 1024)),
    key(
        "storage.azure.container.name",
        Type::String,
        "Azure container (required for backend azure)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.azure.account.name",
        Type::String,
        "Azure storage account (required unless in the connection string)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.azure.account.key",
        Type::Password,
        "shared key (static: warned); else the Azure credential chain",
    )
    .default_doc("environment, workload or managed identity")
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.azure.sas.token",
        Type::Password,
        "shared access signature (static: warned)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.azure.connection.string",
        Type::Password,
        "AccountName=..;AccountKey=..;BlobEndpoint=.. (not with account.name, account.key, endpoint.url)",
    )
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.azure.endpoint.url",
        Type::String,
        "Blob endpoint, e.g. Azurite's http://127.0.0.1:10000/devstoreaccount1",
    )
    .default_doc("https://<account>.blob.core.windows.net")
    .validator(Validator::Custom(not_blank)),
    key(
        "storage.azure.upload.block.size",
        Type::Int,
        "Azure upload block (part) size (bytes)",
    )
    .default("26214400")
    .validator(Validator::AtLeast(102_400)),
    key(
        "upload.concurrency",
        Type::Int,
        "parts in flight per upload",
    )
    .default("2")
    .validator(Validator::Between(1, 64))
    .strata_only(),
    key(
        "upload.rate.limit.bytes.per.second",
        Type::Int,
        "segment copy rate cap (bytes/s; the lower of this and remote.log.manager.copy.max.bytes.per.second)",
    )
    .default_doc("no limit")
    .validator(Validator::AtLeast(1_048_576)),
    key(
        "key.prefix",
        Type::String,
        "prepended verbatim to every object key",
    )
    .default(""),
    key(
        "chunk.size",
        Type::Long,
        "unit of compression, encryption and ranged reads (bytes)",
    )
    .default("4194304")
    .validator(Validator::Between(1, GIB as i64 - 1)),
    key("compression.enabled", Type::Boolean, "zstd per chunk").default("false"),
    key(
        "compression.heuristic.detection.enabled",
        Type::Boolean,
        "skip compression of already compressed segments",
    )
    .default("false")
    .synonyms(&[Synonym {
        name: "compression.heuristic.enabled",
        scale: 1,
    }]),
    key("encryption.enabled", Type::Boolean, "AES-256-GCM per chunk").default("false"),
    key(
        "encryption.key.file",
        Type::String,
        "file holding the 256-bit key-encryption key (raw, hex or base64); or Aiven's key pairs",
    )
    .validator(Validator::Custom(not_blank))
    .strata_only(),
    key(
        "fetch.chunk.cache.size",
        Type::Long,
        "chunk cache (bytes; 0 = off, -1 = unbounded)",
    )
    .default("67108864")
    .validator(Validator::AtLeast(-1)),
    key(
        "fetch.chunk.cache.prefetch.max.size",
        Type::Long,
        "chunks read ahead after a read, into the next segment at its end (bytes; 0 = off; off when the \
         chunk cache is)",
    )
    .default("16777216")
    .validator(Validator::AtLeast(0)),
    key(
        "fetch.manifest.cache.size",
        Type::Long,
        "segment manifests cached (entries; 0 = off, -1 = unbounded)",
    )
    .default("1000")
    .validator(Validator::AtLeast(-1)),
    key(
        "fetch.indexes.cache.size",
        Type::Long,
        "remote indexes cached (bytes; 0 = off, -1 = unbounded)",
    )
    .default("10485760")
    .validator(Validator::AtLeast(-1)),
    key(
        "fetch.concurrency",
        Type::Int,
        "ranged GETs in flight per fetch",
    )
    .default("4")
    .validator(Validator::Between(1, 64))
    .strata_only(),
];

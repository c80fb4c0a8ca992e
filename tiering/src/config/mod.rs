//! `RsmConfig`: every `rsm.config.` property the RSM accepts (Aiven's names where Aiven has one; strata-only keys
//! are marked *), with defaults, parsing from the broker's prefix-stripped properties, and one `validate()`.
//! The table is in `keys` (strata's keys) and `aiven` (Aiven's other keys: the backend class, RSA key pairs,
//! and the JVM-only keys accepted with no effect); the object stores' settings in `stores`.
mod aiven;
mod keys;
mod stores;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use strata_storage::config_def::{ConfigDef, ConfigError, Effect, Value};

use crate::crypto::KeyEncryptionKey;
use crate::error::{Error, Result};

pub use aiven::{KeyPairFiles, AIVEN_KEYS};
pub use keys::RSM_KEYS;
pub use stores::{AzureConfig, GcsConfig, S3Config};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;
/// `fetch.chunk.cache.prefetch.max.size` by default (see [`RsmConfig::chunk_cache_prefetch_max_size`]).
const DEFAULT_PREFETCH: u64 = 16 * MIB;

/// Where segments are stored. Keys: `rsm.config.storage.backend`, or Aiven's `rsm.config.storage.backend.class`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum BackendKind {
    /// Amazon S3 or an S3-compatible store (MinIO, Ceph, Garage, ...).
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage.
    Azure,
    /// A local directory (the embedded default).
    #[default]
    Filesystem,
    /// Process memory; for tests only, lost on exit.
    Memory,
}

impl BackendKind {
    /// The property value: `s3`, `gcs`, `azure`, `filesystem` or `memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::S3 => "s3",
            BackendKind::Gcs => "gcs",
            BackendKind::Azure => "azure",
            BackendKind::Filesystem => "filesystem",
            BackendKind::Memory => "memory",
        }
    }

    /// The backend a `storage.backend` value names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "s3" => BackendKind::S3,
            "gcs" => BackendKind::Gcs,
            "azure" => BackendKind::Azure,
            "filesystem" => BackendKind::Filesystem,
            "memory" => BackendKind::Memory,
            _ => return None,
        })
    }
}

/// Everything the RSM reads from `rsm.config.*` (Kafka's `remote.log.storage.manager.impl.prefix`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RsmConfig {
    /// Key: `storage.backend` (`s3` | `gcs` | `azure` | `filesystem` | `memory`), or Aiven's
    /// `storage.backend.class`. Default: `filesystem`.
    pub backend: BackendKind,
    /// Key: `storage.filesystem.root` (alias: Aiven's `storage.root`). Default: `remote-storage` (relative to the
    /// working directory; brokers set `<log dir>/remote`).
    pub filesystem_root: PathBuf,
    /// S3 settings.
    pub s3: S3Config,
    /// Google Cloud Storage settings.
    pub gcs: GcsConfig,
    /// Azure Blob Storage settings.
    pub azure: AzureConfig,
    /// Key: `storage.s3.multipart.upload.part.size` (bytes, 5 MiB ..= 2 GiB - 1). Default: 26 214 400 (25 MiB).
    /// Upload memory per segment is bounded by `part size x upload.concurrency`. The S3 backend's part size;
    /// see [`RsmConfig::upload_part_size`].
    pub multipart_part_size: u64,
    /// Key: `upload.concurrency`* (parts in flight per upload, >= 1). Default: 2.
    pub upload_concurrency: usize,
    /// Key: `upload.rate.limit.bytes.per.second` (>= 1 MiB/s). Default: none. Caps the broker's segment copy
    /// rate (as `remote.log.manager.copy.max.bytes.per.second`; the lower of the two applies).
    pub upload_rate_limit: Option<u64>,
    /// Key: `key.prefix`. Default: empty. Prepended verbatim to every object key (end it with `/` for a folder).
    pub key_prefix: String,
    /// Key: `chunk.size` (bytes, 1 ..= 1 GiB - 1). Default: 4 194 304 (4 MiB). The unit of compression, encryption
    /// and ranged reads.
    pub chunk_size: u64,
    /// Key: `compression.enabled`. Default: false. zstd per chunk.
    pub compression_enabled: bool,
    /// Key: `compression.heuristic.detection.enabled` (alias: Aiven's `compression.heuristic.enabled`).
    /// Default: false. Skip compression when the segment's first batch is already compressed. Needs
    /// `compression.enabled`.
    pub compression_heuristic: bool,
    /// Key: `encryption.enabled`. Default: false. AES-256-GCM per chunk with a per-segment data key.
    pub encryption_enabled: bool,
    /// Key: `encryption.key.file`*. Default: none. A file holding the 256-bit key-encryption key as 32 raw bytes,
    /// 64 hex digits or base64. Encryption needs this or Aiven's key pair ([`RsmConfig::encryption_key_pair_id`]).
    pub encryption_key_file: Option<PathBuf>,
    /// Key: `encryption.key.pair.id` (Aiven). Default: none. The active pair of `encryption.key.pairs`; strata's
    /// key-encryption key is derived from its private key file (see [`RsmConfig::key_encryption_key`]).
    pub encryption_key_pair_id: Option<String>,
    /// Keys: `encryption.key.pairs` (the ids) and `encryption.key.pairs.<id>.public.key.file` /
    /// `.private.key.file` (Aiven). Default: none.
    pub encryption_key_pairs: BTreeMap<String, KeyPairFiles>,
    /// Key: `fetch.chunk.cache.size` (bytes; -1 = unbounded). Default: 67 108 864 (64 MiB). 0 disables the chunk
    /// cache.
    pub chunk_cache_size: u64,
    /// Key: `fetch.chunk.cache.prefetch.max.size` (bytes). Default: 16 777 216 (16 MiB; Aiven's is 0). After a
    /// read, the following chunks up to this many bytes (into the next segment at a segment's end) are loaded
    /// into the cache in the background, `fetch.concurrency` GETs at a time: a consumer catching up from the
    /// remote tier then waits on one GET's latency per 16 MiB instead of one per chunk. Needs a chunk cache: with
    /// `fetch.chunk.cache.size=0` the default is 0, and a value set explicitly is an error.
    pub chunk_cache_prefetch_max_size: u64,
    /// Key: `fetch.manifest.cache.size` (entries; -1 = unbounded). Default: 1000. 0 disables it.
    pub manifest_cache_size: u64,
    /// Key: `fetch.indexes.cache.size` (bytes; -1 = unbounded). Default: 10 485 760 (10 MiB). 0 disables it.
    pub indexes_cache_size: u64,
    /// Key: `fetch.concurrency`* (ranged GETs in flight per fetch, >= 1). Default: 4.
    pub fetch_concurrency: usize,
}

impl Default for RsmConfig {
    fn default() -> Self {
        Self {
            backend: BackendKind::Filesystem,
            filesystem_root: PathBuf::from("remote-storage"),
            s3: S3Config::default(),
            gcs: GcsConfig::default(),
            azure: AzureConfig::default(),
            multipart_part_size: 25 * MIB,
            upload_concurrency: 2,
            upload_rate_limit: None,
            key_prefix: String::new(),
            chunk_size: 4 * MIB,
            compression_enabled: false,
            compression_heuristic: false,
            encryption_enabled: false,
            encryption_key_file: None,
            encryption_key_pair_id: None,
            encryption_key_pairs: BTreeMap::new(),
            chunk_cache_size: 64 * MIB,
            chunk_cache_prefetch_max_size: DEFAULT_PREFETCH,
            manifest_cache_size: 1000,
            indexes_cache_size: 10 * MIB,
            fetch_concurrency: 4,
        }
    }
}

/// The `rsm.config.` table (names without the prefix): strata's keys, then Aiven's other keys.
pub const RSM_CONFIG: ConfigDef = ConfigDef::new("rsm.config.", RSM_KEYS).with(&[AIVEN_KEYS]);

fn text(v: &Value) -> String {
    match v {
        Value::String(s) | Value::Password(s) => s.trim().to_string(),
        other => other.to_text().unwrap_or_default(),
    }
}

fn number(v: &Value) -> u64 {
    match v {
        Value::Long(n) => (*n).max(0) as u64,
        Value::Int(n) => (*n).max(0) as u64,
        _ => 0,
    }
}

/// A cache size where Aiven's -1 means unbounded.
fn cache_size(v: &Value) -> u64 {
    match v {
        Value::Long(-1) | Value::Int(-1) => u64::MAX,
        other => number(other),
    }
}

impl RsmConfig {
    /// Builds a config from the broker's `rsm.config.*` properties with the prefix already stripped
    /// (`storage.backend=s3`, `chunk.size=4194304`, ...), then validates it. Unknown keys and bad values are
    /// errors that name the key; so are `storage.backend` and `storage.backend.class` naming different backends.
    pub fn from_props<K: AsRef<str>, V: AsRef<str>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self> {
        let mut c = RsmConfig::default();
        let mut named = None;
        let mut class = None;
        let mut prefetch_set = false;
        for (k, v) in props {
            let (k, v) = (k.as_ref(), v.as_ref());
            c.set(k, v)?;
            match k {
                "storage.backend" => named = Some(c.backend),
                "storage.backend.class" => class = Some((c.backend, v.trim().to_string())),
                "fetch.chunk.cache.prefetch.max.size" => prefetch_set = true,
                _ => {}
            }
        }
        // The default read-ahead goes with the chunk cache it fills; only an explicit one without it is an error.
        if c.chunk_cache_size == 0 && !prefetch_set {
            c.chunk_cache_prefetch_max_size = 0;
        }
        if let (Some(named), Some((from_class, name))) = (named, class) {
            if named != from_class {
                return Err(Error::invalid(
                    "storage.backend.class",
                    format!(
                        "{name} is the {} backend but rsm.config.storage.backend={}",
                        from_class.as_str(),
                        named.as_str()
                    ),
                ));
            }
            c.backend = named;
        }
        c.validate()?;
        Ok(c)
    }

    /// Sets one property (prefix stripped), parsed and checked by its key in [`RSM_CONFIG`]. Does not validate
    /// cross-field rules; call [`RsmConfig::validate`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        // Aiven's per-pair keys carry the pair id in their names: checked as the table's `<id>` key.
        let pair = aiven::key_pair_key(key);
        let lookup = pair.as_ref().map_or(key, |(_, generic, _)| *generic);
        let k = RSM_CONFIG.key(lookup).ok_or_else(|| {
            Error::invalid(
                key,
                format!(
                    "unknown remote storage property{}",
                    RSM_CONFIG
                        .closest(key)
                        .map(|s| format!(" (did you mean rsm.config.{s}?)"))
                        .unwrap_or_default()
                ),
            )
        })?;
        let v = k.parse_value(value).map_err(|e| match e {
            ConfigError::BadValue { value, reason, .. } => {
                Error::invalid(key, format!("{reason}, got {value:?}"))
            }
            other => Error::invalid(key, other.to_string()),
        })?;
        if let Some((id, _, private)) = pair {
            let files = self.encryption_key_pairs.entry(id.to_string()).or_default();
            let path = Some(PathBuf::from(text(&v)));
            if private {
                files.private_key_file = path;
            } else {
                files.public_key_file = path;
            }
            return Ok(());
        }
        let flag = matches!(v, Value::Bool(true));
        match k.name {
            "storage.backend" => self.backend = BackendKind::parse(&text(&v)).unwrap_or_default(),
            "storage.filesystem.root" => self.filesystem_root = PathBuf::from(text(&v)),
            "storage.s3.bucket.name" => self.s3.bucket = Some(text(&v)),
            "storage.s3.region" => self.s3.region = Some(text(&v)),
            "storage.s3.endpoint.url" => self.s3.endpoint = Some(text(&v)),
            "storage.s3.path.style.access.enabled" => self.s3.path_style = Some(flag),
            "storage.aws.access.key.id" => self.s3.access_key_id = Some(text(&v)),
            "storage.aws.secret.access.key" => self.s3.secret_access_key = Some(text(&v)),
            "storage.aws.session.token" => self.s3.session_token = Some(text(&v)),
            "storage.aws.certificate.check.enabled" => self.s3.certificate_check = flag,
            "storage.s3.api.call.timeout" => {
                self.s3.api_call_timeout = Duration::from_millis(number(&v))
            }
            "storage.s3.api.call.attempt.timeout" => {
                self.s3.api_call_attempt_timeout = Duration::from_millis(number(&v))
            }
            "storage.s3.multipart.upload.part.size" => self.multipart_part_size = number(&v),
            "storage.gcs.bucket.name" => self.gcs.bucket = Some(text(&v)),
            "storage.gcs.endpoint.url" => self.gcs.endpoint = Some(text(&v)),
            "storage.gcs.credentials.default" => self.gcs.credentials_default = Some(flag),
            "storage.gcs.credentials.json" => self.gcs.credentials_json = Some(text(&v)),
            "storage.gcs.credentials.path" => {
                self.gcs.credentials_path = Some(PathBuf::from(text(&v)))
            }
            "storage.gcs.resumable.upload.chunk.size" => self.gcs.upload_chunk_size = number(&v),
            "storage.azure.container.name" => self.azure.container = Some(text(&v)),
            "storage.azure.account.name" => self.azure.account_name = Some(text(&v)),
            "storage.azure.account.key" => self.azure.account_key = Some(text(&v)),
            "storage.azure.sas.token" => self.azure.sas_token = Some(text(&v)),
            "storage.azure.connection.string" => self.azure.connection_string = Some(text(&v)),
            "storage.azure.endpoint.url" => self.azure.endpoint = Some(text(&v)),
            "storage.azure.upload.block.size" => self.azure.upload_block_size = number(&v),
            "upload.concurrency" => self.upload_concurrency = number(&v) as usize,
            "upload.rate.limit.bytes.per.second" => self.upload_rate_limit = Some(number(&v)),
            "key.prefix" => self.key_prefix = text(&v),
            "chunk.size" => self.chunk_size = number(&v),
            "compression.enabled" => self.compression_enabled = flag,
            "compression.heuristic.detection.enabled" => self.compression_heuristic = flag,
            "encryption.enabled" => self.encryption_enabled = flag,
            "encryption.key.file" => self.encryption_key_file = Some(PathBuf::from(text(&v))),
            "encryption.key.pair.id" => self.encryption_key_pair_id = Some(text(&v)),
            "encryption.key.pairs" => {
                if let Value::List(ids) = &v {
                    for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
                        self.encryption_key_pairs.entry(id.to_string()).or_default();
                    }
                }
            }
            "storage.backend.class" => self.backend = aiven::backend_of_class(&text(&v)),
            "fetch.chunk.cache.size" => self.chunk_cache_size = cache_size(&v),
            "fetch.chunk.cache.prefetch.max.size" => {
                self.chunk_cache_prefetch_max_size = number(&v)
            }
            "fetch.manifest.cache.size" => self.manifest_cache_size = cache_size(&v),
            "fetch.indexes.cache.size" => self.indexes_cache_size = cache_size(&v),
            "fetch.concurrency" => self.fetch_concurrency = number(&v) as usize,
            _ if k.effect != Effect::Used => {} // accepted, listed as having no effect
            other => unreachable!("rsm.config.{other} is declared but not applied"),
        }
        Ok(())
    }

    /// The upload part size of the configured backend: `storage.s3.multipart.upload.part.size` (S3, filesystem,
    /// memory), `storage.gcs.resumable.upload.chunk.size` (GCS, at least 5 MiB: GCS's multipart minimum) or
    /// `storage.azure.upload.block.size` (Azure).
    pub fn upload_part_size(&self) -> u64 {
        match self.backend {
            BackendKind::Gcs => self.gcs.upload_chunk_size.max(5 * MIB),
            BackendKind::Azure => self.azure.upload_block_size,
            _ => self.multipart_part_size,
        }
    }

    /// The key-encryption key: from `encryption.key.file`, else derived from the active Aiven key pair's
    /// private key file; `None` when neither is configured.
    pub fn key_encryption_key(&self) -> Result<Option<KeyEncryptionKey>> {
        if let Some(path) = &self.encryption_key_file {
            return KeyEncryptionKey::from_file(path).map(Some);
        }
        aiven::key_encryption_key(self)
    }

    /// Checks every field and the rules between fields; the error names the offending key.
    pub fn validate(&self) -> Result<()> {
        if !(1..GIB).contains(&self.chunk_size) {
            return Err(Error::invalid(
                "chunk.size",
                format!("{} is outside [1, 1073741823]", self.chunk_size),
            ));
        }
        if !(5 * MIB..2 * GIB).contains(&self.multipart_part_size) {
            return Err(Error::invalid(
                "storage.s3.multipart.upload.part.size",
                format!(
                    "{} is outside [5242880, 2147483647]",
                    self.multipart_part_size
                ),
            ));
        }
        if self.upload_concurrency == 0 || self.upload_concurrency > 64 {
            return Err(Error::invalid(
                "upload.concurrency",
                format!("{} is outside [1, 64]", self.upload_concurrency),
            ));
        }
        if self.fetch_concurrency == 0 || self.fetch_concurrency > 64 {
            return Err(Error::invalid(
                "fetch.concurrency",
                format!("{} is outside [1, 64]", self.fetch_concurrency),
            ));
        }
        if !self.key_prefix.is_empty() {
            let p = &self.key_prefix;
            if p.starts_with('/') || p.contains("//") || p.split('/').any(|s| s == "." || s == "..")
            {
                return Err(Error::invalid(
                    "key.prefix",
                    format!("{p:?} must not start with '/', contain '//', '.' or '..' segments"),
                ));
            }
            if p.chars().any(|c| c.is_control() || c == '\\') {
                return Err(Error::invalid(
                    "key.prefix",
                    format!("{p:?} contains a control character or '\\'"),
                ));
            }
        }
        if self.compression_heuristic && !self.compression_enabled {
            return Err(Error::invalid(
                "compression.heuristic.detection.enabled",
                "requires rsm.config.compression.enabled=true",
            ));
        }
        if self.encryption_enabled
            && self.encryption_key_file.is_none()
            && self.encryption_key_pair_id.is_none()
        {
            return Err(Error::invalid(
                "encryption.key.file",
                "required when rsm.config.encryption.enabled=true (or Aiven's rsm.config.encryption.key.pair.id)",
            ));
        }
        aiven::validate_key_pairs(self)?;
        if self.chunk_cache_prefetch_max_size > 0 && self.chunk_cache_size == 0 {
            return Err(Error::invalid(
                "fetch.chunk.cache.prefetch.max.size",
                "prefetch needs a chunk cache (rsm.config.fetch.chunk.cache.size > 0)",
            ));
        }
        if self.s3.api_call_timeout.is_zero() || self.s3.api_call_attempt_timeout.is_zero() {
            return Err(Error::invalid(
                "storage.s3.api.call.timeout",
                "timeouts must be positive",
            ));
        }
        match self.backend {
            BackendKind::S3 => self.s3.validate(),
            BackendKind::Gcs => self.gcs.validate(),
            BackendKind::Azure => self.azure.validate(),
            BackendKind::Filesystem | BackendKind::Memory => Ok(()),
        }
    }

    /// The config as `rsm.config.`-stripped key/value pairs, credentials redacted; for start-up logs.
    pub fn describe(&self) -> BTreeMap<&'static str, String> {
        let mut m = BTreeMap::new();
        let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "default".into());
        m.insert("storage.backend", self.backend.as_str().to_string());
        match self.backend {
            BackendKind::Filesystem => {
                m.insert(
                    "storage.filesystem.root",
                    self.filesystem_root.display().to_string(),
                );
            }
            BackendKind::S3 => {
                m.insert("storage.s3.bucket.name", o(&self.s3.bucket));
                m.insert("storage.s3.region", o(&self.s3.region));
                m.insert("storage.s3.endpoint.url", o(&self.s3.endpoint));
                if self.s3.access_key_id.is_some() {
                    m.insert("storage.aws.access.key.id", "<redacted>".into());
                }
            }
            BackendKind::Gcs => {
                m.insert("storage.gcs.bucket.name", o(&self.gcs.bucket));
                m.insert("storage.gcs.endpoint.url", o(&self.gcs.endpoint));
            }
            BackendKind::Azure => {
                m.insert("storage.azure.container.name", o(&self.azure.container));
                m.insert("storage.azure.account.name", o(&self.azure.account_name));
                m.insert("storage.azure.endpoint.url", o(&self.azure.endpoint));
            }
            BackendKind::Memory => {}
        }
        m.insert("key.prefix", self.key_prefix.clone());
        m.insert("chunk.size", self.chunk_size.to_string());
        m.insert("upload.part.size", self.upload_part_size().to_string());
        m.insert("upload.concurrency", self.upload_concurrency.to_string());
        m.insert("compression.enabled", self.compression_enabled.to_string());
        m.insert("encryption.enabled", self.encryption_enabled.to_string());
        m.insert("fetch.chunk.cache.size", self.chunk_cache_size.to_string());
        m.insert(
            "fetch.chunk.cache.prefetch.max.size",
            self.chunk_cache_prefetch_max_size.to_string(),
        );
        m
    }
}

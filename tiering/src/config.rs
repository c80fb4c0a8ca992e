//! `RsmConfig`: every `rsm.config.` property the RSM accepts (Aiven's names where Aiven has one; strata-only keys
//! are marked *), with defaults, parsing from the broker's prefix-stripped properties, and one `validate()`.
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use strata_storage::config_def::{
    ConfigDef, ConfigError, ConfigKey, Synonym, Type, Validator, Value,
};

use crate::error::{Error, Result};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// Where segments are stored. Key: `rsm.config.storage.backend`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum BackendKind {
    /// Amazon S3 or an S3-compatible store (MinIO, Ceph, ...).
    S3,
    /// A local directory (the embedded default).
    #[default]
    Filesystem,
    /// Process memory; for tests only, lost on exit.
    Memory,
}

impl BackendKind {
    /// The property value: `s3`, `filesystem` or `memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::S3 => "s3",
            BackendKind::Filesystem => "filesystem",
            BackendKind::Memory => "memory",
        }
    }
}

/// S3 settings (`rsm.config.storage.s3.*`, `rsm.config.storage.aws.*`). `Debug` never shows credentials.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct S3Config {
    /// Key: `storage.s3.bucket.name`. Default: none; required for the `s3` backend.
    pub bucket: Option<String>,
    /// Key: `storage.s3.region`. Default: none (then `AWS_REGION`/`AWS_DEFAULT_REGION` as object_store reads
    /// them, else `us-east-1`).
    pub region: Option<String>,
    /// Key: `storage.s3.endpoint.url`. Default: none (AWS). Plain HTTP is allowed only when this starts with
    /// `http://`.
    pub endpoint: Option<String>,
    /// Key: `storage.s3.path.style.access.enabled`. Default: none (object_store's default, path style).
    /// `true` for most S3-compatible stores.
    pub path_style: Option<bool>,
    /// Key: `storage.aws.access.key.id`. Default: none (the default credential chain: environment, web identity
    /// token, container and instance metadata). Static keys are accepted with a warning.
    pub access_key_id: Option<String>,
    /// Key: `storage.aws.secret.access.key`. Default: none. Required together with the access key id.
    pub secret_access_key: Option<String>,
    /// Key: `storage.aws.session.token`. Default: none.
    pub session_token: Option<String>,
    /// Key: `storage.s3.api.call.timeout` (milliseconds). Default: 60 000. Budget for one call, retries included.
    pub api_call_timeout: Duration,
    /// Key: `storage.s3.api.call.attempt.timeout` (milliseconds). Default: 30 000. Budget for one HTTP attempt.
    pub api_call_attempt_timeout: Duration,
}

impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redact = |o: &Option<String>| o.as_ref().map(|_| "<redacted>");
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field("path_style", &self.path_style)
            .field("access_key_id", &redact(&self.access_key_id))
            .field("secret_access_key", &redact(&self.secret_access_key))
            .field("session_token", &redact(&self.session_token))
            .field("api_call_timeout", &self.api_call_timeout)
            .field("api_call_attempt_timeout", &self.api_call_attempt_timeout)
            .finish()
    }
}

/// Everything the RSM reads from `rsm.config.*` (Kafka's `remote.log.storage.manager.impl.prefix`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RsmConfig {
    /// Key: `storage.backend` (`s3` | `filesystem` | `memory`). Default: `filesystem`.
    pub backend: BackendKind,
    /// Key: `storage.filesystem.root`. Default: `remote-storage` (relative to the working directory; brokers
    /// should set it).
    pub filesystem_root: PathBuf,
    /// S3 settings.
    pub s3: S3Config,
    /// Key: `storage.s3.multipart.upload.part.size` (bytes, 5 MiB ..= 2 GiB - 1). Default: 26 214 400 (25 MiB).
    /// Upload memory per segment is bounded by `part size x upload.concurrency`.
    pub multipart_part_size: u64,
    /// Key: `upload.concurrency`* (parts in flight per upload, >= 1). Default: 2.
    pub upload_concurrency: usize,
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
    /// Key: `encryption.key.file`*. Default: none; required when encryption is enabled. A file holding the
    /// 256-bit key-encryption key as 32 raw bytes, 64 hex digits or base64.
    pub encryption_key_file: Option<PathBuf>,
    /// Key: `fetch.chunk.cache.size` (bytes). Default: 67 108 864 (64 MiB). 0 disables the chunk cache.
    pub chunk_cache_size: u64,
    /// Key: `fetch.chunk.cache.prefetch.max.size` (bytes). Default: 0 (no prefetch). After a read, the
    /// following chunks of the same segment up to this many bytes are loaded into the cache in the background.
    /// Needs a chunk cache.
    pub chunk_cache_prefetch_max_size: u64,
    /// Key: `fetch.manifest.cache.size` (entries). Default: 1000. 0 disables it.
    pub manifest_cache_size: u64,
    /// Key: `fetch.indexes.cache.size` (bytes). Default: 10 485 760 (10 MiB). 0 disables it.
    pub indexes_cache_size: u64,
    /// Key: `fetch.concurrency`* (ranged GETs in flight per fetch, >= 1). Default: 4.
    pub fetch_concurrency: usize,
}

impl Default for RsmConfig {
    fn default() -> Self {
        Self {
            backend: BackendKind::Filesystem,
            filesystem_root: PathBuf::from("remote-storage"),
            s3: S3Config {
                api_call_timeout: Duration::from_secs(60),
                api_call_attempt_timeout: Duration::from_secs(30),
                ..S3Config::default()
            },
            multipart_part_size: 25 * MIB,
            upload_concurrency: 2,
            key_prefix: String::new(),
            chunk_size: 4 * MIB,
            compression_enabled: false,
            compression_heuristic: false,
            encryption_enabled: false,
            encryption_key_file: None,
            chunk_cache_size: 64 * MIB,
            chunk_cache_prefetch_max_size: 0,
            manifest_cache_size: 1000,
            indexes_cache_size: 10 * MIB,
            fetch_concurrency: 4,
        }
    }
}

/// A string that is not blank (Aiven's keys refuse empty names, paths and credentials).
fn not_blank(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::String(s) | Value::Password(s) if !s.trim().is_empty() => Ok(()),
        _ => Err("must not be empty".into()),
    }
}

const fn key(name: &'static str, ty: Type, doc: &'static str) -> ConfigKey {
    ConfigKey::new(name, ty, doc)
}

/// Every `rsm.config.` key, prefix stripped (Aiven's tiered-storage-for-Apache-Kafka names; strata-only keys
/// are marked). Typos are errors naming the closest key: a silent typo here would send data elsewhere.
pub const RSM_KEYS: &[ConfigKey] = &[
    key(
        "storage.backend",
        Type::String,
        "where segments are stored: filesystem, s3 (memory: tests)",
    )
    .default("filesystem")
    .validator(Validator::OneOf(&["s3", "filesystem", "memory"])),
    key(
        "storage.filesystem.root",
        Type::String,
        "directory of the filesystem backend",
    )
    .default("remote-storage")
    .default_doc("<log dir>/remote")
    .validator(Validator::Custom(not_blank)),
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
        "budget of one S3 call, retries included (ms)",
    )
    .default("60000")
    .validator(Validator::AtLeast(0)),
    key(
        "storage.s3.api.call.attempt.timeout",
        Type::Long,
        "budget of one HTTP attempt (ms)",
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
        "upload.concurrency",
        Type::Int,
        "parts in flight per upload",
    )
    .default("2")
    .validator(Validator::Between(1, 64))
    .strata_only(),
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
        "file holding the 256-bit key-encryption key (raw, hex or base64)",
    )
    .validator(Validator::Custom(not_blank))
    .strata_only(),
    key(
        "fetch.chunk.cache.size",
        Type::Long,
        "chunk cache (bytes; 0 = off)",
    )
    .default("67108864")
    .validator(Validator::AtLeast(0)),
    key(
        "fetch.chunk.cache.prefetch.max.size",
        Type::Long,
        "chunks read ahead after a read (bytes)",
    )
    .default("0")
    .validator(Validator::AtLeast(0)),
    key(
        "fetch.manifest.cache.size",
        Type::Long,
        "segment manifests cached (entries; 0 = off)",
    )
    .default("1000")
    .validator(Validator::AtLeast(0)),
    key(
        "fetch.indexes.cache.size",
        Type::Long,
        "remote indexes cached (bytes; 0 = off)",
    )
    .default("10485760")
    .validator(Validator::AtLeast(0)),
    key(
        "fetch.concurrency",
        Type::Int,
        "ranged GETs in flight per fetch",
    )
    .default("4")
    .validator(Validator::Between(1, 64))
    .strata_only(),
];

/// The `rsm.config.` table (names without the prefix).
pub const RSM_CONFIG: ConfigDef = ConfigDef::new("rsm.config.", RSM_KEYS);

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

impl RsmConfig {
    /// Builds a config from the broker's `rsm.config.*` properties with the prefix already stripped
    /// (`storage.backend=s3`, `chunk.size=4194304`, ...), then validates it. Unknown keys and bad values are
    /// errors that name the key.
    pub fn from_props<K: AsRef<str>, V: AsRef<str>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self> {
        let mut c = RsmConfig::default();
        for (k, v) in props {
            c.set(k.as_ref(), v.as_ref())?;
        }
        c.validate()?;
        Ok(c)
    }

    /// Sets one property (prefix stripped), parsed and checked by its key in [`RSM_CONFIG`]. Does not validate
    /// cross-field rules; call [`RsmConfig::validate`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let k = RSM_CONFIG.key(key).ok_or_else(|| {
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
            ConfigError::BadValue { key, value, reason } => {
                Error::invalid(&key, format!("{reason}, got {value:?}"))
            }
            other => Error::invalid(key, other.to_string()),
        })?;
        let flag = matches!(v, Value::Bool(true));
        match k.name {
            "storage.backend" => {
                self.backend = match text(&v).as_str() {
                    "s3" => BackendKind::S3,
                    "memory" => BackendKind::Memory,
                    _ => BackendKind::Filesystem,
                }
            }
            "storage.filesystem.root" => self.filesystem_root = PathBuf::from(text(&v)),
            "storage.s3.bucket.name" => self.s3.bucket = Some(text(&v)),
            "storage.s3.region" => self.s3.region = Some(text(&v)),
            "storage.s3.endpoint.url" => self.s3.endpoint = Some(text(&v)),
            "storage.s3.path.style.access.enabled" => self.s3.path_style = Some(flag),
            "storage.aws.access.key.id" => self.s3.access_key_id = Some(text(&v)),
            "storage.aws.secret.access.key" => self.s3.secret_access_key = Some(text(&v)),
            "storage.aws.session.token" => self.s3.session_token = Some(text(&v)),
            "storage.s3.api.call.timeout" => {
                self.s3.api_call_timeout = Duration::from_millis(number(&v))
            }
            "storage.s3.api.call.attempt.timeout" => {
                self.s3.api_call_attempt_timeout = Duration::from_millis(number(&v))
            }
            "storage.s3.multipart.upload.part.size" => self.multipart_part_size = number(&v),
            "upload.concurrency" => self.upload_concurrency = number(&v) as usize,
            "key.prefix" => self.key_prefix = text(&v),
            "chunk.size" => self.chunk_size = number(&v),
            "compression.enabled" => self.compression_enabled = flag,
            "compression.heuristic.detection.enabled" => self.compression_heuristic = flag,
            "encryption.enabled" => self.encryption_enabled = flag,
            "encryption.key.file" => self.encryption_key_file = Some(PathBuf::from(text(&v))),
            "fetch.chunk.cache.size" => self.chunk_cache_size = number(&v),
            "fetch.chunk.cache.prefetch.max.size" => {
                self.chunk_cache_prefetch_max_size = number(&v)
            }
            "fetch.manifest.cache.size" => self.manifest_cache_size = number(&v),
            "fetch.indexes.cache.size" => self.indexes_cache_size = number(&v),
            "fetch.concurrency" => self.fetch_concurrency = number(&v) as usize,
            other => unreachable!("rsm.config.{other} is declared but not applied"),
        }
        Ok(())
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
        if self.encryption_enabled && self.encryption_key_file.is_none() {
            return Err(Error::invalid(
                "encryption.key.file",
                "required when rsm.config.encryption.enabled=true",
            ));
        }
        if self.chunk_cache_prefetch_max_size > 0 && self.chunk_cache_size == 0 {
            return Err(Error::invalid(
                "fetch.chunk.cache.prefetch.max.size",
                "prefetch needs a chunk cache (rsm.config.fetch.chunk.cache.size > 0)",
            ));
        }
        if self.backend == BackendKind::S3 {
            if self.s3.bucket.is_none() {
                return Err(Error::invalid(
                    "storage.s3.bucket.name",
                    "required when rsm.config.storage.backend=s3",
                ));
            }
            if let Some(e) = &self.s3.endpoint {
                if !(e.starts_with("http://") || e.starts_with("https://"))
                    || e.len() <= "https://".len()
                {
                    return Err(Error::invalid(
                        "storage.s3.endpoint.url",
                        format!("{e:?} is not an http:// or https:// URL"),
                    ));
                }
            }
            match (&self.s3.access_key_id, &self.s3.secret_access_key) {
                (Some(_), None) => {
                    return Err(Error::invalid(
                        "storage.aws.secret.access.key",
                        "required together with rsm.config.storage.aws.access.key.id",
                    ));
                }
                (None, Some(_)) => {
                    return Err(Error::invalid(
                        "storage.aws.access.key.id",
                        "required together with rsm.config.storage.aws.secret.access.key",
                    ));
                }
                _ => {}
            }
            if self.s3.session_token.is_some() && self.s3.access_key_id.is_none() {
                return Err(Error::invalid(
                    "storage.aws.session.token",
                    "requires static access keys",
                ));
            }
            if self.s3.api_call_timeout.is_zero() || self.s3.api_call_attempt_timeout.is_zero() {
                return Err(Error::invalid(
                    "storage.s3.api.call.timeout",
                    "timeouts must be positive",
                ));
            }
        }
        Ok(())
    }

    /// The config as `rsm.config.`-stripped key/value pairs, credentials redacted; for start-up logs.
    pub fn describe(&self) -> BTreeMap<&'static str, String> {
        let mut m = BTreeMap::new();
        m.insert("storage.backend", self.backend.as_str().to_string());
        match self.backend {
            BackendKind::Filesystem => {
                m.insert(
                    "storage.filesystem.root",
                    self.filesystem_root.display().to_string(),
                );
            }
            BackendKind::S3 => {
                let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "default".into());
                m.insert("storage.s3.bucket.name", o(&self.s3.bucket));
                m.insert("storage.s3.region", o(&self.s3.region));
                m.insert("storage.s3.endpoint.url", o(&self.s3.endpoint));
                if self.s3.access_key_id.is_some() {
                    m.insert("storage.aws.access.key.id", "<redacted>".into());
                }
            }
            BackendKind::Memory => {}
        }
        m.insert("key.prefix", self.key_prefix.clone());
        m.insert("chunk.size", self.chunk_size.to_string());
        m.insert(
            "storage.s3.multipart.upload.part.size",
            self.multipart_part_size.to_string(),
        );
        m.insert("upload.concurrency", self.upload_concurrency.to_string());
        m.insert("compression.enabled", self.compression_enabled.to_string());
        m.insert("encryption.enabled", self.encryption_enabled.to_string());
        m.insert("fetch.chunk.cache.size", self.chunk_cache_size.to_string());
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_match_documented_values() {
        let c = RsmConfig::default();
        c.validate().unwrap();
        assert_eq!(c.chunk_size, 4 * MIB);
        assert_eq!(c.multipart_part_size, 26_214_400);
        assert_eq!(c.backend, BackendKind::Filesystem);
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
        let e = RsmConfig::from_props([("storage.backend", "gcs")]).unwrap_err();
        assert!(
            e.to_string().contains("storage.backend") && e.to_string().contains("gcs"),
            "{e}"
        );
        let e = RsmConfig::from_props([("chunk.size", "0")]).unwrap_err();
        assert!(e.to_string().contains("chunk.size"), "{e}");
        let e =
            RsmConfig::from_props([("storage.s3.multipart.upload.part.size", "1024")]).unwrap_err();
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
        let e = RsmConfig::from_props([("compression.heuristic.detection.enabled", "true")])
            .unwrap_err();
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
}

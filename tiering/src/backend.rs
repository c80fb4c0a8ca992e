//! Builds the `object_store` backend named by `rsm.config.storage.backend`.
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

use crate::config::{BackendKind, RsmConfig};
use crate::error::{Error, Result};

/// What an error message says about where the data lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendDescription {
    /// `s3`, `filesystem` or `memory`.
    pub backend: &'static str,
    /// The bucket, or the filesystem root.
    pub bucket: String,
    /// The endpoint URL, or `default`.
    pub endpoint: String,
    /// The region, or `default`.
    pub region: String,
}

impl BackendDescription {
    /// Describes the backend configured in `config`.
    pub fn of(config: &RsmConfig) -> Self {
        let none = || "default".to_string();
        match config.backend {
            BackendKind::S3 => Self {
                backend: "s3",
                bucket: config.s3.bucket.clone().unwrap_or_else(none),
                endpoint: config.s3.endpoint.clone().unwrap_or_else(none),
                region: config.s3.region.clone().unwrap_or_else(none),
            },
            BackendKind::Filesystem => Self {
                backend: "filesystem",
                bucket: config.filesystem_root.display().to_string(),
                endpoint: "local".into(),
                region: "local".into(),
            },
            BackendKind::Memory => Self {
                backend: "memory",
                bucket: "memory".into(),
                endpoint: "memory".into(),
                region: "memory".into(),
            },
        }
    }
}

/// Builds the store for `config` (which must be valid). S3 credentials come from static keys when configured
/// (with a warning), else from object_store's default chain: environment, web identity token, ECS/EKS container
/// credentials, EC2 instance metadata.
pub fn build_store(config: &RsmConfig) -> Result<Arc<dyn ObjectStore>> {
    match config.backend {
        BackendKind::Memory => Ok(Arc::new(InMemory::new())),
        BackendKind::Filesystem => {
            let root = &config.filesystem_root;
            std::fs::create_dir_all(root).map_err(|e| Error::Config {
                key: "rsm.config.storage.filesystem.root".into(),
                value: Some(root.display().to_string()),
                reason: "cannot create the directory".into(),
                source: Some(Box::new(e)),
            })?;
            let fs = LocalFileSystem::new_with_prefix(root)
                .map_err(|source| backend_error("filesystem", source))?
                .with_automatic_cleanup(true);
            Ok(Arc::new(fs))
        }
        BackendKind::S3 => {
            let s3 = &config.s3;
            // Client options first: they carry allow_http, which the endpoint decides below.
            let mut b = AmazonS3Builder::from_env().with_client_options(
                ClientOptions::new().with_timeout(s3.api_call_attempt_timeout),
            );
            if let Some(bucket) = &s3.bucket {
                b = b.with_bucket_name(bucket);
            }
            if let Some(region) = &s3.region {
                b = b.with_region(region);
            }
            if let Some(endpoint) = &s3.endpoint {
                b = b
                    .with_endpoint(endpoint)
                    .with_allow_http(endpoint.starts_with("http://"));
            } else {
                b = b.with_allow_http(false);
            }
            if let Some(path_style) = s3.path_style {
                b = b.with_virtual_hosted_style_request(!path_style);
            }
            if let (Some(id), Some(secret)) = (&s3.access_key_id, &s3.secret_access_key) {
                tracing::warn!(
                    "static S3 credentials configured in rsm.config.storage.aws.*; prefer the default credential chain"
                );
                b = b.with_access_key_id(id).with_secret_access_key(secret);
                if let Some(token) = &s3.session_token {
                    b = b.with_token(token);
                }
            }
            b = b.with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 10,
                retry_timeout: s3.api_call_timeout,
            });
            let store = b.build().map_err(|source| backend_error("s3", source))?;
            Ok(Arc::new(store))
        }
    }
}

fn backend_error(backend: &str, source: object_store::Error) -> Error {
    Error::Config {
        key: "rsm.config.storage.backend".into(),
        value: Some(backend.into()),
        reason: format!("cannot build the {backend} object store"),
        source: Some(Box::new(source)),
    }
}

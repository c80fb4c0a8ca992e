//! Builds the `object_store` backend named by `rsm.config.storage.backend`.
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GcpCredential, GoogleCloudStorageBuilder};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, RetryConfig, StaticCredentialProvider,
};

use crate::config::{BackendKind, RsmConfig};
use crate::error::{Error, Result};

/// What an error message says about where the data lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendDescription {
    /// `s3`, `gcs`, `azure`, `filesystem` or `memory`.
    pub backend: &'static str,
    /// The bucket (Azure: `account/container`), or the filesystem root.
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
            BackendKind::Gcs => Self {
                backend: "gcs",
                bucket: config.gcs.bucket.clone().unwrap_or_else(none),
                endpoint: config.gcs.endpoint.clone().unwrap_or_else(none),
                region: "default".into(),
            },
            BackendKind::Azure => {
                let resolved = config.azure.resolved().unwrap_or_default();
                Self {
                    backend: "azure",
                    bucket: format!(
                        "{}/{}",
                        resolved.account_name.unwrap_or_else(none),
                        config.azure.container.clone().unwrap_or_else(none)
                    ),
                    endpoint: resolved.endpoint.unwrap_or_else(none),
                    region: "default".into(),
                }
            }
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

/// Builds the store for `config` (which must be valid). Credentials come from the platform's default chain first
/// (object_store's `from_env` builders: S3's environment, web identity token, ECS/EKS container credentials, EC2
/// instance metadata; GCS's `GOOGLE_APPLICATION_CREDENTIALS`, application default credentials, metadata server;
/// Azure's `AZURE_*` environment, workload identity, managed identity); static keys in the config are used with
/// a warning.
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
            let mut b = AmazonS3Builder::from_env().with_client_options(client_options(config));
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
            b = b.with_retry(retry(config));
            let store = b.build().map_err(|source| backend_error("s3", source))?;
            Ok(Arc::new(store))
        }
        BackendKind::Gcs => build_gcs(config),
        BackendKind::Azure => build_azure(config),
    }
}

/// One HTTP attempt's budget; invalid certificates only where `storage.aws.certificate.check.enabled=false`.
fn client_options(config: &RsmConfig) -> ClientOptions {
    let mut o = ClientOptions::new().with_timeout(config.s3.api_call_attempt_timeout);
    if !config.s3.certificate_check {
        tracing::warn!(
            "rsm.config.storage.aws.certificate.check.enabled=false: TLS certificates of the object store are not checked"
        );
        o = o.with_allow_invalid_certificates(true);
    }
    o
}

/// Retries within `storage.s3.api.call.timeout`, for every backend.
fn retry(config: &RsmConfig) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: 10,
        retry_timeout: config.s3.api_call_timeout,
    }
}

fn build_gcs(config: &RsmConfig) -> Result<Arc<dyn ObjectStore>> {
    let gcs = &config.gcs;
    let mut b = GoogleCloudStorageBuilder::from_env().with_retry(retry(config));
    let mut options = client_options(config);
    if let Some(bucket) = &gcs.bucket {
        b = b.with_bucket_name(bucket);
    }
    if let Some(endpoint) = &gcs.endpoint {
        b = b.with_base_url(endpoint.trim_end_matches('/'));
        options = options.with_allow_http(endpoint.starts_with("http://"));
    }
    b = b.with_client_options(options);
    if let Some(json) = &gcs.credentials_json {
        tracing::warn!(
            "static GCS credentials configured in rsm.config.storage.gcs.credentials.json; prefer the default credential chain"
        );
        b = b.with_service_account_key(json);
    } else if let Some(path) = &gcs.credentials_path {
        tracing::warn!(
            path = %path.display(),
            "static GCS credentials configured in rsm.config.storage.gcs.credentials.path; prefer the default credential chain"
        );
        b = b.with_service_account_path(path.display().to_string());
    } else if gcs.credentials_default == Some(false) {
        // Aiven's "no credentials": unsigned requests (emulators, public test buckets), no token fetched.
        b = b
            .with_credentials(Arc::new(StaticCredentialProvider::new(GcpCredential {
                bearer: String::new(),
            })))
            .with_skip_signature(true);
    }
    let store = b.build().map_err(|source| backend_error("gcs", source))?;
    Ok(Arc::new(store))
}

fn build_azure(config: &RsmConfig) -> Result<Arc<dyn ObjectStore>> {
    let az = config.azure.resolved()?;
    let mut b = MicrosoftAzureBuilder::from_env().with_retry(retry(config));
    let mut options = client_options(config);
    if let Some(container) = &config.azure.container {
        b = b.with_container_name(container);
    }
    if let Some(account) = &az.account_name {
        b = b.with_account(account);
    }
    if let Some(endpoint) = &az.endpoint {
        b = b.with_endpoint(endpoint.trim_end_matches('/').to_string());
        options = options.with_allow_http(endpoint.starts_with("http://"));
    }
    b = b.with_client_options(options);
    if config.azure.connection_string.is_some() {
        tracing::warn!(
            "static Azure credentials configured in rsm.config.storage.azure.connection.string; prefer the default credential chain"
        );
    }
    if let Some(key) = &az.account_key {
        if config.azure.connection_string.is_none() {
            tracing::warn!(
                "static Azure credentials configured in rsm.config.storage.azure.account.key; prefer the default credential chain"
            );
        }
        b = b.with_access_key(key);
    } else if let Some(sas) = &az.sas_token {
        if config.azure.connection_string.is_none() {
            tracing::warn!(
                "static Azure credentials configured in rsm.config.storage.azure.sas.token; prefer the default credential chain"
            );
        }
        b = b.with_config(AzureConfigKey::SasKey, sas.trim_start_matches('?'));
    }
    let store = b.build().map_err(|source| backend_error("azure", source))?;
    Ok(Arc::new(store))
}

fn backend_error(backend: &str, source: object_store::Error) -> Error {
    Error::Config {
        key: "rsm.config.storage.backend".into(),
        value: Some(backend.into()),
        reason: format!("cannot build the {backend} object store"),
        source: Some(Box::new(source)),
    }
}

//! The object stores' own settings: S3 (`storage.s3.*`, `storage.aws.*`), Google Cloud Storage (`storage.gcs.*`)
//! and Azure Blob Storage (`storage.azure.*`), with Aiven's names. `Debug` never shows credentials.
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::MIB;
use crate::error::{Error, Result};

fn redact(o: &Option<String>) -> Option<&'static str> {
    o.as_ref().map(|_| "<redacted>")
}

/// S3 settings (`rsm.config.storage.s3.*`, `rsm.config.storage.aws.*`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Key: `storage.aws.certificate.check.enabled`. Default: true. `false` accepts any TLS certificate (tests
    /// only; warned at start-up).
    pub certificate_check: bool,
    /// Key: `storage.s3.api.call.timeout` (milliseconds). Default: 60 000. Budget for one call, retries included
    /// (every backend's calls: S3, GCS and Azure).
    pub api_call_timeout: Duration,
    /// Key: `storage.s3.api.call.attempt.timeout` (milliseconds). Default: 30 000. Budget for one HTTP attempt
    /// (every backend).
    pub api_call_attempt_timeout: Duration,
}

impl Default for S3Config {
    fn default() -> Self {
        Self {
            bucket: None,
            region: None,
            endpoint: None,
            path_style: None,
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            certificate_check: true,
            api_call_timeout: Duration::from_secs(60),
            api_call_attempt_timeout: Duration::from_secs(30),
        }
    }
}

impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field("path_style", &self.path_style)
            .field("access_key_id", &redact(&self.access_key_id))
            .field("secret_access_key", &redact(&self.secret_access_key))
            .field("session_token", &redact(&self.session_token))
            .field("certificate_check", &self.certificate_check)
            .field("api_call_timeout", &self.api_call_timeout)
            .field("api_call_attempt_timeout", &self.api_call_attempt_timeout)
            .finish()
    }
}

/// Google Cloud Storage settings (`rsm.config.storage.gcs.*`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct GcsConfig {
    /// Key: `storage.gcs.bucket.name`. Default: none; required for the `gcs` backend.
    pub bucket: Option<String>,
    /// Key: `storage.gcs.endpoint.url`. Default: none (`https://storage.googleapis.com`). An emulator or a
    /// GCS-compatible store; plain HTTP only when it starts with `http://`.
    pub endpoint: Option<String>,
    /// Key: `storage.gcs.credentials.default`. Default: none. `true`: the platform's default chain
    /// (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's application default credentials, the metadata server);
    /// `false` with no key: no credentials at all (unsigned requests, for emulators); unset with no key: the
    /// default chain.
    pub credentials_default: Option<bool>,
    /// Key: `storage.gcs.credentials.json`. Default: none. A service account key as JSON text (warned).
    pub credentials_json: Option<String>,
    /// Key: `storage.gcs.credentials.path`. Default: none. A service account key file (warned).
    pub credentials_path: Option<PathBuf>,
    /// Key: `storage.gcs.resumable.upload.chunk.size` (bytes, a multiple of 256 KiB). Default: 26 214 400. The
    /// upload part size of this backend (GCS multipart parts are at least 5 MiB: smaller values upload 5 MiB
    /// parts).
    pub upload_chunk_size: u64,
}

impl Default for GcsConfig {
    fn default() -> Self {
        Self {
            bucket: None,
            endpoint: None,
            credentials_default: None,
            credentials_json: None,
            credentials_path: None,
            upload_chunk_size: 25 * MIB,
        }
    }
}

impl fmt::Debug for GcsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcsConfig")
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("credentials_default", &self.credentials_default)
            .field("credentials_json", &redact(&self.credentials_json))
            .field("credentials_path", &self.credentials_path)
            .field("upload_chunk_size", &self.upload_chunk_size)
            .finish()
    }
}

/// Azure Blob Storage settings (`rsm.config.storage.azure.*`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct AzureConfig {
    /// Key: `storage.azure.container.name`. Default: none; required for the `azure` backend.
    pub container: Option<String>,
    /// Key: `storage.azure.account.name`. Default: none; required unless a connection string names it.
    pub account_name: Option<String>,
    /// Key: `storage.azure.account.key`. Default: none (the default chain: `AZURE_*` environment, workload
    /// identity, managed identity). A static shared key (warned).
    pub account_key: Option<String>,
    /// Key: `storage.azure.sas.token`. Default: none. A shared access signature (warned).
    pub sas_token: Option<String>,
    /// Key: `storage.azure.connection.string`. Default: none. `AccountName=..;AccountKey=..;BlobEndpoint=..`
    /// (or `SharedAccessSignature=..`, or `UseDevelopmentStorage=true`); not together with the account name,
    /// key or endpoint.
    pub connection_string: Option<String>,
    /// Key: `storage.azure.endpoint.url`. Default: none (`https://<account>.blob.core.windows.net`). For
    /// Azurite: `http://127.0.0.1:10000/devstoreaccount1`.
    pub endpoint: Option<String>,
    /// Key: `storage.azure.upload.block.size` (bytes, >= 102 400). Default: 26 214 400. The upload part
    /// (block) size of this backend.
    pub upload_block_size: u64,
}

impl Default for AzureConfig {
    fn default() -> Self {
        Self {
            container: None,
            account_name: None,
            account_key: None,
            sas_token: None,
            connection_string: None,
            endpoint: None,
            upload_block_size: 25 * MIB,
        }
    }
}

impl fmt::Debug for AzureConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureConfig")
            .field("container", &self.container)
            .field("account_name", &self.account_name)
            .field("account_key", &redact(&self.account_key))
            .field("sas_token", &redact(&self.sas_token))
            .field("connection_string", &redact(&self.connection_string))
            .field("endpoint", &self.endpoint)
            .field("upload_block_size", &self.upload_block_size)
            .finish()
    }
}

/// What an Azure connection string says (`Key=Value;...`, keys case-insensitive).
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct AzureConnection {
    pub account_name: Option<String>,
    pub account_key: Option<String>,
    pub sas_token: Option<String>,
    pub endpoint: Option<String>,
}

/// Azurite's well-known development account (`UseDevelopmentStorage=true`).
pub(crate) const AZURITE_ACCOUNT: &str = "devstoreaccount1";
/// Azurite's well-known development account key (public, documented by Microsoft).
pub(crate) const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

impl AzureConnection {
    /// Parses a connection string; the error names what is wrong, never the secret parts.
    pub(crate) fn parse(s: &str) -> Result<Self> {
        let key = "storage.azure.connection.string";
        let mut c = AzureConnection::default();
        let mut protocol = "https".to_string();
        let mut suffix = None;
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| Error::invalid(key, "expected Key=Value pairs separated by ';'"))?;
            let v = v.trim().to_string();
            match k.trim().to_ascii_lowercase().as_str() {
                "accountname" => c.account_name = Some(v),
                "accountkey" => c.account_key = Some(v),
                "sharedaccesssignature" => c.sas_token = Some(v),
                "blobendpoint" => c.endpoint = Some(v),
                "defaultendpointsprotocol" => protocol = v,
                "endpointsuffix" => suffix = Some(v),
                "usedevelopmentstorage" if v.eq_ignore_ascii_case("true") => {
                    c.account_name = Some(AZURITE_ACCOUNT.into());
                    c.account_key = Some(AZURITE_KEY.into());
                    c.endpoint = Some(format!("http://127.0.0.1:10000/{AZURITE_ACCOUNT}"));
                }
                _ => {} // queue/table/file endpoints and the like: not used
            }
        }
        if c.endpoint.is_none() {
            if let (Some(account), Some(suffix)) = (&c.account_name, suffix) {
                c.endpoint = Some(format!("{protocol}://{account}.blob.{suffix}"));
            }
        }
        if c.account_name.is_none() {
            return Err(Error::invalid(key, "names no AccountName"));
        }
        Ok(c)
    }
}

/// `Some(url)` must be an http:// or https:// URL with a host.
pub(crate) fn check_url(key: &str, url: &Option<String>) -> Result<()> {
    if let Some(e) = url {
        if !(e.starts_with("http://") || e.starts_with("https://")) || e.len() <= "https://".len() {
            return Err(Error::invalid(
                key,
                format!("{e:?} is not an http:// or https:// URL"),
            ));
        }
    }
    Ok(())
}

impl S3Config {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.bucket.is_none() {
            return Err(Error::invalid(
                "storage.s3.bucket.name",
                "required when the backend is s3",
            ));
        }
        check_url("storage.s3.endpoint.url", &self.endpoint)?;
        match (&self.access_key_id, &self.secret_access_key) {
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
        if self.session_token.is_some() && self.access_key_id.is_none() {
            return Err(Error::invalid(
                "storage.aws.session.token",
                "requires static access keys",
            ));
        }
        Ok(())
    }
}

impl GcsConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.bucket.is_none() {
            return Err(Error::invalid(
                "storage.gcs.bucket.name",
                "required when the backend is gcs",
            ));
        }
        check_url("storage.gcs.endpoint.url", &self.endpoint)?;
        let given = [
            (
                "storage.gcs.credentials.default",
                self.credentials_default == Some(true),
            ),
            (
                "storage.gcs.credentials.json",
                self.credentials_json.is_some(),
            ),
            (
                "storage.gcs.credentials.path",
                self.credentials_path.is_some(),
            ),
        ];
        let set: Vec<&str> = given.iter().filter(|(_, s)| *s).map(|(k, _)| *k).collect();
        if set.len() > 1 {
            return Err(Error::invalid(
                set[1],
                format!("cannot be set together with rsm.config.{}", set[0]),
            ));
        }
        if !self.upload_chunk_size.is_multiple_of(256 * 1024) {
            return Err(Error::invalid(
                "storage.gcs.resumable.upload.chunk.size",
                format!(
                    "{} is not a multiple of 262144 (256 KiB)",
                    self.upload_chunk_size
                ),
            ));
        }
        Ok(())
    }
}

impl AzureConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.container.is_none() {
            return Err(Error::invalid(
                "storage.azure.container.name",
                "required when the backend is azure",
            ));
        }
        check_url("storage.azure.endpoint.url", &self.endpoint)?;
        if let Some(cs) = &self.connection_string {
            for (k, set) in [
                ("storage.azure.account.name", self.account_name.is_some()),
                ("storage.azure.account.key", self.account_key.is_some()),
                ("storage.azure.endpoint.url", self.endpoint.is_some()),
            ] {
                if set {
                    return Err(Error::invalid(
                        k,
                        "cannot be set together with rsm.config.storage.azure.connection.string",
                    ));
                }
            }
            let c = AzureConnection::parse(cs)?;
            check_url("storage.azure.connection.string", &c.endpoint)?;
        } else if self.account_name.is_none() {
            return Err(Error::invalid(
                "storage.azure.account.name",
                "required when the backend is azure (or give rsm.config.storage.azure.connection.string)",
            ));
        }
        if self.account_key.is_some() && self.sas_token.is_some() {
            return Err(Error::invalid(
                "storage.azure.sas.token",
                "cannot be set together with rsm.config.storage.azure.account.key",
            ));
        }
        Ok(())
    }

    /// Account, key, SAS token and endpoint, from the connection string when one is given.
    pub(crate) fn resolved(&self) -> Result<AzureConnection> {
        match &self.connection_string {
            Some(cs) => AzureConnection::parse(cs),
            None => Ok(AzureConnection {
                account_name: self.account_name.clone(),
                account_key: self.account_key.clone(),
                sas_token: self.sas_token.clone(),
                endpoint: self.endpoint.clone(),
            }),
        }
    }
}

//! The remote storage quotas as dynamic broker configs (Kafka's `DynamicRemoteLogConfig`):
//! `remote.log.manager.copy.max.bytes.per.second` and `remote.log.manager.fetch.max.bytes.per.second` set by
//! AlterConfigs / IncrementalAlterConfigs on BROKER are applied to the running RemoteLogManager at once (a copy
//! or read waiting on a quota recomputes its wait) and again at start (they are kept with the other dynamic
//! broker configs).

use std::collections::BTreeMap;

use strata_tiering::rlm::RemoteLogManagerConfig;
use strata_tiering::RemoteLogManager;
use tracing::info;

use crate::error::{Error, Result};
use crate::topics::dynamic::Reconfigurable;

/// The dynamic keys of the remote storage quotas.
pub const QUOTA_KEYS: &[&str] = &[
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.fetch.max.bytes.per.second",
];

/// The running RemoteLogManager with the static quotas it started with.
#[derive(Debug)]
pub struct RemoteQuotas {
    rlm: RemoteLogManager,
    statics: RemoteLogManagerConfig,
    /// Aiven's `rsm.config.upload.rate.limit.bytes.per.second`, which caps the copy quota whatever it is set to.
    upload_limit: Option<u64>,
}

impl RemoteQuotas {
    /// `statics`: the RemoteLogManager's config as started (its copy quota already capped by `upload_limit`).
    pub fn new(
        rlm: RemoteLogManager,
        statics: RemoteLogManagerConfig,
        upload_limit: Option<u64>,
    ) -> Self {
        Self {
            rlm,
            statics,
            upload_limit,
        }
    }

    /// (copy, fetch) bytes per second that `values` make of the static config; a bad value is INVALID_CONFIG
    /// naming the key (the RemoteLogManager table's rule: positive, or -1 = no quota).
    fn quotas_of(&self, values: &BTreeMap<String, String>) -> Result<(u64, u64)> {
        let mut c = self.statics.clone();
        for (key, value) in values {
            let bad = |reason: String| Error::config(key.clone(), value.clone(), reason);
            match c.set(key, value) {
                Ok(true) => {}
                Ok(false) => return Err(bad("not a remote storage quota".into())),
                Err(e) => return Err(bad(e.to_string())),
            }
        }
        let copy = match self.upload_limit {
            Some(limit) => c.copy_max_bytes_per_second.min(limit),
            None => c.copy_max_bytes_per_second,
        };
        Ok((copy, c.fetch_max_bytes_per_second))
    }
}

impl Reconfigurable for RemoteQuotas {
    fn keys(&self) -> &'static [&'static str] {
        QUOTA_KEYS
    }

    fn validate(&self, values: &BTreeMap<String, String>) -> Result<()> {
        self.quotas_of(values).map(|_| ())
    }

    /// Applies at once; a key no longer set returns to its static value.
    fn reconfigure(&self, values: &BTreeMap<String, String>) -> Result<()> {
        let (copy, fetch) = self.quotas_of(values)?;
        self.rlm.set_quotas(copy, fetch);
        info!(
            copy_bytes_per_second = copy,
            fetch_bytes_per_second = fetch,
            "remote storage quotas reconfigured"
        );
        Ok(())
    }
}

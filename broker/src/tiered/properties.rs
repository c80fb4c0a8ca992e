//! Broker and tiering configs from one Kafka property map, as the `strata` binary reads them.

use std::collections::BTreeMap;

use super::{split_properties, TieringConfig, TieringError};
use crate::config::BrokerConfig;

/// Broker and tiering configs from one Kafka property map (a properties file, then `--override`s).
pub fn configs_from_properties(
    props: &BTreeMap<String, String>,
) -> Result<(BrokerConfig, TieringConfig), TieringError> {
    let (broker_props, tiering_props) = split_properties(props);
    let mut broker = BrokerConfig::from_properties(&broker_props)?;
    // The library also takes `memory` (tests); the broker names only what it accepts.
    let prefix = props
        .get(super::config::RSM_PREFIX_KEY)
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or(super::config::DEFAULT_RSM_PREFIX);
    let backend_key = format!("{prefix}storage.backend");
    if let Some(v) = props.get(&backend_key) {
        if !matches!(v.trim(), "s3" | "gcs" | "azure" | "filesystem" | "memory") {
            return Err(TieringError::Config {
                key: backend_key,
                value: v.clone(),
                reason: "expected s3, gcs, azure or filesystem".into(),
            });
        }
    }
    let tiering = TieringConfig::from_properties(&tiering_props, &broker.log_dirs)?;
    broker.tiering_props = tiering_props;
    if broker.log.remote_storage_enable && !tiering.rlm.system_enable {
        return Err(TieringError::Config {
            key: "log.remote.storage.enable".into(),
            value: "true".into(),
            reason: "new topics cannot be tiered with remote.log.storage.system.enable=false"
                .into(),
        });
    }
    if tiering.rlm.system_enable && tiering.rsm.backend == strata_tiering::BackendKind::Memory {
        return Err(TieringError::Config {
            key: "rsm.config.storage.backend".into(),
            value: "memory".into(),
            reason: "the memory backend (for tests) loses every remote segment at a restart, after their local \
                     copies were deleted; use filesystem, s3, gcs or azure"
                .into(),
        });
    }
    if tiering.rlm.system_enable && tiering.rsm.backend == strata_tiering::BackendKind::Filesystem {
        broker
            .reserved_dirs
            .push(tiering.rsm.filesystem_root.clone());
    }
    Ok((broker, tiering))
}

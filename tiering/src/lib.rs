//! The KIP-405 data plane: Kafka's [`RemoteStorageManager`] and [`ObjectStoreRsm`], its implementation over
//! `object_store` (S3, a local directory, memory).
//!
//! # Use from the broker
//! ```no_run
//! # async fn demo(props: std::collections::HashMap<String, String>,
//! #               meta: strata_metadata::RemoteLogSegmentMetadata,
//! #               data: strata_tiering::LogSegmentData) -> strata_tiering::Result<()> {
//! use std::sync::Arc;
//! use strata_tiering::{IndexType, ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt};
//!
//! // Every broker property starting with `rsm.config.`, prefix stripped: `storage.backend=s3`, ...
//! let rsm_props = props.iter().filter_map(|(k, v)| Some((k.strip_prefix("rsm.config.")?, v.as_str())));
//! let rsm = ObjectStoreRsm::from_props(rsm_props)?; // unknown keys / bad values: error naming the key
//! rsm.validate_connectivity().await?;                // start-up probe: put, ranged get, list, delete
//! let rsm: Arc<dyn RemoteStorageManager> = Arc::new(rsm);
//!
//! // RemoteLogManager: after RLMM COPY_SEGMENT_STARTED is durable.
//! let custom = rsm.copy_log_segment_data(&meta, data).await?; // then COPY_SEGMENT_FINISHED with `custom`
//! // Remote fetch: the offset index, then bytes [start, end] (inclusive) streamed chunk by chunk.
//! let offset_index = rsm.fetch_index(&meta, IndexType::Offset).await?;
//! let bytes = rsm.fetch_log_segment_bytes(&meta, 0, Some(1024 * 1024 - 1)).await?;
//! // Expiry: after DELETE_SEGMENT_STARTED.
//! rsm.delete_log_segment_data(&meta).await?;
//! # let _ = (custom, offset_index, bytes); Ok(()) }
//! ```
//!
//! Configuration keys, defaults and checks: [`RsmConfig`]. Object layout: [`key`] (keys) and [`manifest`]
//! (the `.rsm-manifest`, `.log` and `.indexes` layouts); chunk encryption: [`crypto`]. Test support
//! (conformance suite, `InFlightStore`, re-exports of [`faults`]): `testing`, behind the `testing` feature (tests and
//! benchmarks only, never in the broker's binary).
#![warn(missing_docs)]

mod backend;
mod config;
pub mod crypto;
mod custom;
mod error;
pub mod faults;
pub mod key;
pub mod manifest;
pub mod rlm;
mod rsm;
mod rsm_impl;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod transform;
mod validate;

pub use backend::{build_store, BackendDescription};
pub use config::{
    AzureConfig, BackendKind, GcsConfig, KeyPairFiles, RsmConfig, S3Config, AIVEN_KEYS, RSM_CONFIG,
    RSM_KEYS,
};
pub use custom::SegmentCustomMetadata;
pub use error::{BoxError, Deferral, Error, ErrorClass, Report, Result};
pub use rlm::{RemoteLogManager, RemoteLogManagerConfig};
pub use rsm::{
    IndexType, LogSegmentData, RemoteStorageManager, RemoteStorageManagerExt, SegmentStream,
};
pub use rsm_impl::ObjectStoreRsm;

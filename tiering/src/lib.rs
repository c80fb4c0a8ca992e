//! The KIP-405 data plane: Kafka's [`RemoteStorageManager`] and [`ObjectStoreRsm`], its implementation over
//! `object_store` (S3, a local directory, memory).
//!
//! Build one from the broker's `rsm.config.*` properties (prefix stripped) with
//! [`ObjectStoreRsm::from_props`], check it with [`ObjectStoreRsm::validate_connectivity`] at start-up, and
//! share it as `Arc<dyn RemoteStorageManager>`.
//!
//! Object layout: see [`key`] (keys) and [`manifest`] (the `.rsm-manifest` and how `.log`/`.indexes` are laid
//! out); chunk encryption in [`crypto`].
#![warn(missing_docs)]

mod backend;
mod config;
pub mod crypto;
mod error;
pub mod key;
pub mod manifest;
mod rsm;
mod rsm_impl;
pub mod testing;
mod transform;
mod validate;

pub use backend::{build_store, BackendDescription};
pub use config::{BackendKind, RsmConfig, S3Config};
pub use error::{Error, Result};
pub use rsm::{
    IndexType, LogSegmentData, RemoteStorageManager, RemoteStorageManagerExt, SegmentStream,
};
pub use rsm_impl::ObjectStoreRsm;

//! The Kafka wire-protocol broker: server, handlers, group coordinator, config.
//!
//! Layers, one per file: [`server`] (accept loop, connection bound, shutdown) → `connection` (framing, in-order
//! responses) → `dispatch` (header, version table, one `match`) → `handler::*` (one file per API) →
//! [`broker::Broker`] (logs, topic registry, groups). Errors become Kafka codes only in [`error_code`].
//!
//! Wiring other components (the coordinator's job): open with [`ServerHandle::start_with`] (or
//! [`Broker::open`] + [`run`]) and, before serving, use [`Broker::log_manager`] (shared `LogManager`: roll
//! listeners, the metadata plane's `__remote_log_metadata` logs), [`Broker::register_internal_topic`] (list an
//! internal topic whose logs now exist), [`Broker::set_remote_log_reader`] (serve fetches below the local log
//! start from the remote tier) and [`Broker::topics`] (topic ids and configs such as `remote.log.copy.disable`).
#![warn(missing_docs)]

pub mod broker;
pub mod config;
mod connection;
mod connection_limits;
mod dispatch;
pub mod error;
pub mod error_code;
pub mod group;
pub mod handler;
pub mod producer_ids;
pub mod remote;
pub mod server;
pub mod tiered;
pub mod topic_config;
pub mod topic_create;
pub mod topics;
pub mod versions;

pub use broker::Broker;
pub use config::BrokerConfig;
pub use error::{Error, Result};
pub use server::{run, ServerHandle};

/// Decodes one request frame (without the length prefix) exactly as the server does, without executing it.
/// For the fuzz target: must never panic. Returns whether the header and body decoded.
pub fn decode_request_for_fuzzing(frame: bytes::Bytes) -> bool {
    dispatch::decode_only(frame)
}

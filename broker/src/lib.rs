//! The Kafka wire-protocol broker: server, handlers, group coordinator, config.
//!
//! Layers, one per file: [`server`] (start-up, accept loops, connection bound, the shutdown tree) → `connection`
//! (framing, in-order responses) → `dispatch` (header, version table, one `match`) → `handler::*` (one file per
//! API) → [`broker::Broker`] (the context handlers get). Errors become Kafka codes only in [`error_code`].
//!
//! Components, built bottom-up, each handed what it uses (no module imports one that imports it back; check with
//! `broker/scripts/module_cycles.py`): the `LogManager` (storage) → [`topics`] (registry, [`topics::TopicManager`])
//! → [`group`] (coordinator and its offset store over `__consumer_offsets`) → [`tiered`] (started on the logs and
//! registry, reached through [`hooks::TieringHooks`]) → [`server::Server`], which starts them in that order.
//! Tests and embedding start a broker with [`Server`] exactly as the binary does; [`ServerOptions`] adds a
//! remote log reader or a setup step before serving.
#![warn(missing_docs)]

pub mod broker;
pub mod cleaner;
pub mod config;
pub mod config_reference;
mod connection;
mod connection_limits;
mod dispatch;
pub mod error;
pub mod error_code;
pub mod faults;
pub mod group;
pub mod handler;
pub mod hooks;
pub mod http;
#[allow(unsafe_code)] // setsockopt(SO_RCVLOWAT), its only use in this crate
mod low_water;
pub mod metrics;
pub mod producer_ids;
pub mod remote;
mod request;
pub mod scram;
pub mod security;
pub mod server;
pub mod tiered;
pub mod topic_config;
pub mod topics;
pub mod txn;
pub mod versions;

pub use broker::Broker;
pub use config::BrokerConfig;
pub use error::{Error, Result};
pub use server::{Server, ServerOptions};

/// Decodes one request frame (without the length prefix) exactly as the server does, without executing it.
/// For the fuzz target: must never panic. Returns whether the header and body decoded.
pub fn decode_request_for_fuzzing(frame: bytes::Bytes) -> bool {
    dispatch::decode_only(frame)
}

//! The Kafka wire-protocol broker: server, handlers, group coordinator, config.
//!
//! Layers: [`server`] (the composition root: start-up, accept loops, connection bound, the shutdown tree) →
//! `network` (framing, the request budget, in-order responses, connection limits) → `dispatch` (header, version
//! check, one `match`) over [`codec`] (the frame codec and the version table) → `handler::*` (one file per API) →
//! [`broker::Broker`] (the context handlers get). Errors become Kafka codes only in [`error_code`].
//!
//! One folder per concern: `network`: connections and the frame budget; [`security`] TLS, SASL, SCRAM
//! credentials; [`authz`] ACLs (the authorizer, its store, principals) and `guard` what each API checks with it; [`txn`] transactions and producer ids; [`topics`] the registry, dynamic configs and the cleaner;
//! [`config`] the broker and topic config tables; [`group`] the group coordinator; [`remote`] the tiering seam (what
//! the broker asks of the tier) and [`tiered`] its implementation over `strata-tiering`; [`http`] the console,
//! JSON API and `/metrics`; [`faults`] injected faults. Left at the top: the composition root ([`server`],
//! [`broker`]), dispatch, the codec, the error mapping ([`error`], [`error_code`]), the counters every layer
//! updates ([`metrics`], a leaf), returning freed heap pages to the OS ([`heap`], a leaf). The config reference ([`config::reference`]) is rendered from every table in
//! [`config`], the tiering keys included.
//!
//! Components, built bottom-up, each handed what it uses (no module imports one that imports it back; CI checks
//! it with `.ci/guards.py`): the `LogManager` (storage) → [`topics`] (registry, [`topics::TopicManager`])
//! → [`group`] (coordinator and its offset store over `__consumer_offsets`) → [`tiered`] (started on the logs and
//! registry, reached through [`remote::hooks::TieringHooks`]) → [`server::Server`], which starts them in that
//! order. Tests and embedding start a broker with [`Server`] exactly as the binary does; [`ServerOptions`] adds a
//! remote log reader or a setup step before serving.
#![warn(missing_docs)]

pub mod authz;
pub mod broker;
pub mod codec;
pub mod config;
mod dispatch;
pub mod error;
pub mod error_code;
pub mod faults;
pub mod features;
pub mod group;
mod guard;
pub mod handler;
pub mod heap;
pub mod http;
pub mod metrics;
mod network;
pub mod remote;
pub mod security;
pub mod server;
pub mod tiered;
pub mod topics;
pub mod txn;

pub use broker::Broker;
pub use config::BrokerConfig;
pub use error::{Error, Result};
pub use server::{Server, ServerOptions};

/// Decodes one request frame (without the length prefix) exactly as the server does, without executing it.
/// For the fuzz target: must never panic. Returns whether the header and body decoded.
pub fn decode_request_for_fuzzing(frame: bytes::Bytes) -> bool {
    dispatch::decode_only(frame)
}

pub use network::replay::Replay;

/// Serves `input` as one PLAINTEXT connection's byte stream (4-byte length, request header, body; any number of
/// frames) through the connection's frame reader and the request dispatch, each request bounded by `per_request`;
/// for the fuzz targets in `fuzz/` and their smoke test. Never panics, whatever `input` holds.
pub async fn serve_bytes_for_fuzzing(
    broker: &std::sync::Arc<Broker>,
    input: &[u8],
    per_request: std::time::Duration,
) -> Replay {
    network::replay::serve_bytes(broker, input, per_request).await
}

//! strata: a single-node, Kafka-compatible broker with tiered storage. This root crate embeds it
//! ([`Broker::builder`], for Rust integration tests and applications) and re-exports the member crates; it also
//! owns the end-to-end tests in `tests/` and the runnable examples in `examples/`.
pub use strata_broker as broker;
pub use strata_metadata as metadata;
pub use strata_storage as storage;
pub use strata_tiering as tiering;

/// Faults on demand ([`Broker::faults`]): typed faults to set on a running broker.
pub mod faults {
    pub use strata_broker::faults::{
        ApiKey, Fault, FaultError, FaultKind, FaultTarget, Faults, RemoteOp, ResponseError,
        SetFault,
    };
}

mod embedded;
pub use embedded::{Broker, Builder, Error};

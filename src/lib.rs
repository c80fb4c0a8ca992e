//! Root package of the strata workspace. It owns the end-to-end tests in `tests/` and the runnable
//! examples in `examples/`; the product lives in the member crates, re-exported here for them.
pub use strata_broker as broker;
pub use strata_metadata as metadata;
pub use strata_storage as storage;
pub use strata_tiering as tiering;

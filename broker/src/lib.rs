//! The Kafka wire-protocol broker: server, handlers, group coordinator, config.
#![warn(missing_docs)]

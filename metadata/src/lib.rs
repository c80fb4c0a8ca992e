//! The KIP-405 metadata plane: remote segment metadata, its state machine and the RemoteLogMetadataManager.
#![warn(missing_docs)]

//! The KIP-405 data plane (RemoteStorageManager over object_store) and the RemoteLogManager.
#![warn(missing_docs)]

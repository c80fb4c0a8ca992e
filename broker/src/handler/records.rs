//! Record conversions on the produce and fetch paths, kept out of the handlers: magic v0/v1 message sets of
//! Produce v0-2 up-converted to v2 ([`strata_storage::record::legacy`]), batches re-encoded in the topic's
//! `compression.type` when it names a codec ([`strata_storage::record::recompress_records`]), and v2 batches
//! down-converted for Fetch v0-3. `compression.type=producer` with v2 batches leaves the bytes untouched.

use bytes::Bytes;
use strata_storage::record::legacy;
use strata_storage::LogConfig;

use crate::error::{Error, Result};

/// Produce v0-2 may carry message format v0/v1; v3+ carries only v2 batches (Kafka refuses older magic there
/// with INVALID_RECORD, which the log's batch check answers).
const LAST_LEGACY_PRODUCE_VERSION: i16 = 2;

/// The bytes to append for one partition of a Produce request of `version`.
pub(crate) fn for_append(cfg: &LogConfig, records: Bytes, version: i16) -> Result<Bytes> {
    let target = cfg.target_codec();
    if version <= LAST_LEGACY_PRODUCE_VERSION && legacy::magic_of(&records).is_some_and(|m| m < 2) {
        let up = legacy::up_convert(&records)?;
        let target = legacy::up_converted_target(&up, target);
        return Ok(strata_storage::record::recompress_records(
            up.batch, target,
        )?);
    }
    match target {
        None => Ok(records),
        Some(t) => Ok(strata_storage::record::recompress_records(records, t)?),
    }
}

/// The message format a Fetch of `version` can carry, when it is older than v2: v0 for Fetch v0-1, v1 for
/// Fetch v2-3 (Kafka's `FetchRequest` magic table).
pub(crate) fn fetch_magic(version: i16) -> Option<i8> {
    match version {
        0 | 1 => Some(0),
        2 | 3 => Some(1),
        _ => None,
    }
}

/// The fetched bytes of one partition as a Fetch of `version` can carry them: down-converted for v0-3
/// (refused with UNSUPPORTED_VERSION when the topic's `message.downconversion.enable` is false, as Kafka 3.x).
pub(crate) fn for_fetch(cfg: &LogConfig, records: Bytes, version: i16) -> Result<Bytes> {
    let Some(magic) = fetch_magic(version) else {
        return Ok(records);
    };
    if records.is_empty() {
        return Ok(records);
    }
    if !cfg.message_downconversion_enable {
        return Err(Error::UnsupportedVersion {
            api: "Fetch (message.downconversion.enable=false)".into(),
            version,
        });
    }
    Ok(legacy::down_convert(&records, magic)?)
}

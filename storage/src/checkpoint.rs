//! Text checkpoint files, written atomically (tmp, fsync, rename, fsync dir):
//!
//! * per log dir, `recovery-point-offset-checkpoint` and `log-start-offset-checkpoint`
//!   (Kafka's `OffsetCheckpointFile`): line 1 version `0`, line 2 entry count, then `topic partition offset`;
//! * per partition, `leader-epoch-checkpoint` (`LeaderEpochCheckpointFile`): version `0`, count, then
//!   `epoch startOffset`;
//! * per partition, `partition.metadata` (`PartitionMetadataFile`): `version: 0` and `topic_id: <id>` where the id
//!   is Kafka's form (URL-safe base64 of the 16 bytes, no padding). Reading also accepts the hyphenated UUID form.
use std::collections::BTreeMap;
use std::path::Path;

use uuid::Uuid;

use crate::error::io_err;
use crate::{fsio, Error, Result, TopicPartition};

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::CorruptFile {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Parses `version`, `count` and returns the remaining lines (exactly `count`).
fn parse_header<'a>(path: &Path, text: &'a str) -> Result<Vec<&'a str>> {
    let mut lines = text.lines();
    let version = lines
        .next()
        .ok_or_else(|| corrupt(path, "missing version line"))?;
    if version.trim() != "0" {
        return Err(corrupt(path, format!("unsupported version {version}")));
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| corrupt(path, "missing or bad entry count"))?;
    let rest: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    if rest.len() != count {
        return Err(corrupt(
            path,
            format!("header says {count} entries but {} follow", rest.len()),
        ));
    }
    Ok(rest)
}

/// Reads an offset checkpoint; an absent file is empty.
pub(crate) fn read_offsets(path: &Path) -> Result<BTreeMap<TopicPartition, i64>> {
    let Some(text) = read_optional(path)? else {
        return Ok(BTreeMap::new());
    };
    let mut out = BTreeMap::new();
    for line in parse_header(path, &text)? {
        let mut parts = line.split(' ');
        let (Some(topic), Some(p), Some(o), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(corrupt(path, format!("bad entry line {line:?}")));
        };
        let partition = p
            .parse()
            .map_err(|_| corrupt(path, format!("bad partition in {line:?}")))?;
        let offset = o
            .parse()
            .map_err(|_| corrupt(path, format!("bad offset in {line:?}")))?;
        out.insert(TopicPartition::new(topic, partition), offset);
    }
    Ok(out)
}

/// Writes an offset checkpoint atomically.
pub(crate) fn write_offsets(path: &Path, offsets: &BTreeMap<TopicPartition, i64>) -> Result<()> {
    let mut text = format!("0\n{}\n", offsets.len());
    for (tp, off) in offsets {
        text.push_str(&format!("{} {} {}\n", tp.topic, tp.partition, off));
    }
    fsio::atomic_write(path, text.as_bytes())
}

/// Reads a leader-epoch checkpoint; an absent file is empty.
pub(crate) fn read_leader_epochs(path: &Path) -> Result<Vec<(i32, i64)>> {
    let Some(text) = read_optional(path)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for line in parse_header(path, &text)? {
        let mut parts = line.split(' ');
        let (Some(e), Some(o), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(corrupt(path, format!("bad entry line {line:?}")));
        };
        let epoch = e
            .parse()
            .map_err(|_| corrupt(path, format!("bad epoch in {line:?}")))?;
        let offset = o
            .parse()
            .map_err(|_| corrupt(path, format!("bad offset in {line:?}")))?;
        out.push((epoch, offset));
    }
    Ok(out)
}

/// Writes a leader-epoch checkpoint atomically.
pub(crate) fn write_leader_epochs(path: &Path, entries: &[(i32, i64)]) -> Result<()> {
    let mut text = format!("0\n{}\n", entries.len());
    for (epoch, offset) in entries {
        text.push_str(&format!("{epoch} {offset}\n"));
    }
    fsio::atomic_write(path, text.as_bytes())
}

/// Kafka's textual topic id: URL-safe base64 of the 16 bytes without padding (22 characters).
pub fn kafka_uuid_string(id: Uuid) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// Parses Kafka's textual topic id (or a hyphenated UUID).
pub fn parse_kafka_uuid(s: &str) -> Option<Uuid> {
    use base64::Engine as _;
    if let Ok(u) = Uuid::parse_str(s) {
        return Some(u);
    }
    // As Java's Base64 URL decoder (Kafka's Uuid.fromString): the unused low bits of the last character are not
    // checked, so ids such as the apache/kafka image docs' `MkU3OEVBNTcwNTJENDM2Qk` are accepted.
    const LENIENT: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_encode_padding(false)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone)
            .with_decode_allow_trailing_bits(true),
    );
    let bytes = LENIENT.decode(s).ok()?;
    Uuid::from_slice(&bytes).ok()
}

#[cfg(test)]
mod kafka_uuid_tests {
    use super::*;

    #[test]
    fn trailing_bits_of_the_last_character_are_ignored_as_java_does() {
        let u =
            parse_kafka_uuid("MkU3OEVBNTcwNTJENDM2Qk").expect("the apache/kafka docs' cluster id");
        assert_eq!(parse_kafka_uuid("MkU3OEVBNTcwNTJENDM2Qg"), Some(u));
        assert_eq!(parse_kafka_uuid("my-cluster"), None);
        assert_eq!(
            parse_kafka_uuid("MkU3OEVBNTcwNTJENDM2Q"),
            None,
            "21 characters"
        );
    }

    #[test]
    fn kafka_uuid_text_round_trips_every_bit() {
        for id in [
            Uuid::nil(),
            Uuid::from_u128(u128::MAX - 5),
            Uuid::from_u128(0x999c_499a << 96),
            Uuid::new_v4(),
        ] {
            let text = kafka_uuid_string(id);
            assert_eq!(text.len(), 22, "{text}");
            assert_eq!(parse_kafka_uuid(&text), Some(id), "{text}");
        }
        assert_eq!(parse_kafka_uuid("not-a-topic-id"), None);
    }
}

/// The contents of a `partition.metadata` naming `topic_id`.
pub(crate) fn partition_metadata_text(topic_id: Uuid) -> String {
    format!("version: 0\ntopic_id: {}\n", kafka_uuid_string(topic_id))
}

/// Reads `partition.metadata`; None if absent.
pub(crate) fn read_partition_metadata(path: &Path) -> Result<Option<Uuid>> {
    let Some(text) = read_optional(path)? else {
        return Ok(None);
    };
    let mut topic_id = None;
    for line in text.lines() {
        match line.split_once(':') {
            Some(("version", v)) if v.trim() != "0" => {
                return Err(corrupt(path, format!("unsupported version {}", v.trim())))
            }
            Some(("topic_id", v)) => {
                topic_id = Some(
                    parse_kafka_uuid(v.trim())
                        .ok_or_else(|| corrupt(path, format!("bad topic id {v:?}")))?,
                )
            }
            _ => {}
        }
    }
    topic_id
        .map(Some)
        .ok_or_else(|| corrupt(path, "missing topic_id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_checkpoint_round_trips_in_kafka_text_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recovery-point-offset-checkpoint");
        let mut m = BTreeMap::new();
        m.insert(TopicPartition::new("a-b", 0), 42);
        m.insert(TopicPartition::new("c", 3), 7);
        write_offsets(&path, &m).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "0\n2\na-b 0 42\nc 3 7\n"
        );
        assert_eq!(read_offsets(&path).unwrap(), m);
        std::fs::write(&path, "0\n3\na 0 1\n").unwrap();
        assert!(matches!(
            read_offsets(&path),
            Err(Error::CorruptFile { .. })
        ));
    }

    #[test]
    fn topic_ids_use_kafka_base64_form() {
        let id = Uuid::from_u128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        let s = kafka_uuid_string(id);
        assert_eq!(s, "ASNFZ4mrze_-3LqYdlQyEA");
        assert_eq!(parse_kafka_uuid(&s), Some(id));
        assert_eq!(parse_kafka_uuid(&id.to_string()), Some(id));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("partition.metadata");
        fsio::atomic_write(&path, partition_metadata_text(id).as_bytes()).unwrap();
        assert_eq!(read_partition_metadata(&path).unwrap(), Some(id));
    }

    #[test]
    fn leader_epoch_checkpoint_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leader-epoch-checkpoint");
        write_leader_epochs(&path, &[(0, 0), (3, 120)]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "0\n2\n0 0\n3 120\n"
        );
        assert_eq!(read_leader_epochs(&path).unwrap(), vec![(0, 0), (3, 120)]);
    }
}

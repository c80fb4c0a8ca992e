//! What a case is: topics and records to set up, then the requests whose answers are compared.

use std::collections::HashMap;

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::{ApiKey, TopicName};
use kafka_protocol::protocol::{Encodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use uuid::Uuid;

/// One case: set-up (not compared), then steps (compared answer by answer).
pub struct Case {
    /// Unique; also the prefix of the case's topic names (see [`Ctx::topic`]).
    pub name: String,
    /// Topics created first.
    pub topics: Vec<TopicSpec>,
    /// Records produced after the topics exist: (topic suffix, partition, count).
    pub produce: Vec<(&'static str, i32, usize)>,
    pub steps: Vec<Step>,
}

/// A topic of a case's set-up: (suffix, partitions, configs).
pub type TopicSpec = (&'static str, i32, Vec<(&'static str, &'static str)>);

/// One request of a case.
pub struct Step {
    pub api: ApiKey,
    pub version: i16,
    pub body: Body,
}

type Build = Box<dyn Fn(&Ctx, i16) -> Option<Bytes>>;

/// A request body: built per broker (topic ids and member ids differ), raw bytes after a standard header, or a whole
/// frame sent as it is.
pub enum Body {
    Build(Build),
    Raw(Vec<u8>),
    Frame(Vec<u8>),
}

/// What a case knows on one broker: its topic ids and the ids the broker handed out in earlier steps.
#[derive(Default)]
pub struct Ctx {
    pub prefix: String,
    pub topic_ids: HashMap<String, Uuid>,
    pub vars: HashMap<&'static str, String>,
}

impl Ctx {
    /// The full name of the case's topic `suffix`.
    pub fn topic(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.prefix)
    }
    /// The same, as a protocol [`TopicName`].
    pub fn name(&self, suffix: &str) -> TopicName {
        TopicName(StrBytes::from_string(self.topic(suffix)))
    }
    /// The broker's id of the case's topic `suffix` (nil if it has none).
    pub fn id(&self, suffix: &str) -> Uuid {
        self.topic_ids
            .get(&self.topic(suffix))
            .copied()
            .unwrap_or_default()
    }
    /// The last `member_id` the broker handed out in this case ("" if none).
    pub fn member(&self) -> StrBytes {
        StrBytes::from_string(self.vars.get("member_id").cloned().unwrap_or_default())
    }
    /// The last value of a numeric field (`producer_id`, `producer_epoch`, `generation_id`, `member_epoch`), or
    /// `default`.
    pub fn num(&self, key: &str, default: i64) -> i64 {
        self.vars
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}

/// A step whose body is the typed request `f` builds on each broker.
pub fn step<R: Encodable + 'static>(
    api: ApiKey,
    version: i16,
    f: impl Fn(&Ctx) -> R + 'static,
) -> Step {
    Step {
        api,
        version,
        body: Body::Build(Box::new(move |ctx, v| {
            let mut b = BytesMut::new();
            f(ctx).encode(&mut b, v).ok().map(|_| b.freeze())
        })),
    }
}

/// A step with a raw body after a standard header.
pub fn raw(api: ApiKey, version: i16, body: &[u8]) -> Step {
    Step {
        api,
        version,
        body: Body::Raw(body.to_vec()),
    }
}

impl Case {
    pub fn new(name: impl Into<String>) -> Self {
        Case {
            name: name.into(),
            topics: Vec::new(),
            produce: Vec::new(),
            steps: Vec::new(),
        }
    }
    /// Adds a topic with `partitions` and `configs`.
    pub fn topic(
        mut self,
        suffix: &'static str,
        partitions: i32,
        configs: &[(&'static str, &'static str)],
    ) -> Self {
        self.topics.push((suffix, partitions, configs.to_vec()));
        self
    }
    /// Produces `count` records to `suffix`/`partition` during set-up.
    pub fn records(mut self, suffix: &'static str, partition: i32, count: usize) -> Self {
        self.produce.push((suffix, partition, count));
        self
    }
    pub fn then(mut self, s: Step) -> Self {
        self.steps.push(s);
        self
    }
    /// The case's topic prefix: its name with everything but letters and digits as '-'.
    pub fn prefix(&self) -> String {
        self.name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    }
}

/// One uncompressed v2 batch of `values` (timestamps `ts0, ts0+1, ...`), not idempotent, with `compression`.
///
/// kafka-protocol's encoder starts a new batch wherever `offset - sequence` changes, so the records carry
/// sequences `-1, 0, 1, ...`: one batch whose base sequence is -1, as a producer without idempotence writes it.
pub fn batch_with(values: &[&[u8]], ts0: i64, compression: Compression) -> Bytes {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: ts0 + i as i64,
            key: None,
            value: Some(Bytes::copy_from_slice(v)),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &opts).expect("batch encodes");
    buf.freeze()
}

/// [`batch_with`] uncompressed.
pub fn batch(values: &[&[u8]], ts0: i64) -> Bytes {
    batch_with(values, ts0, Compression::None)
}

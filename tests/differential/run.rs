//! Replays every case on both brokers, compares the normalised answers and writes the report.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::case::{Body, Case, Ctx};
use super::tree::{Node, Normaliser};
use super::wire::{Conn, Outcome};

/// One difference: where (`step:ApiVvN.path`), strata's value, Kafka's value.
pub struct Diff {
    pub path: String,
    pub strata: String,
    pub kafka: String,
}

/// A case's result.
pub struct Result {
    pub name: String,
    pub diffs: Vec<Diff>,
    /// For each difference: the allow-list line that explains it, if any.
    pub allowed: Vec<Option<usize>>,
}

/// Runs `case` on one broker: set-up, then every step; the answers normalised.
pub async fn run_on(addr: SocketAddr, case: &Case) -> Vec<Node> {
    let mut conn = Conn::new(addr);
    let mut ctx = Ctx {
        prefix: case.prefix(),
        ..Ctx::default()
    };
    let mut norm = Normaliser::default();
    // The set-up's outcome is the first answer compared (error codes only: a set-up both brokers refuse alike
    // still compares).
    let mut out = vec![Node::Leaf(setup(&mut conn, &mut ctx, case).await)];
    for s in &case.steps {
        let outcome = match &s.body {
            Body::Build(f) => match f(&ctx, s.version) {
                Some(b) => conn.exchange(s.api, s.version, &b).await,
                None => Outcome::Undecodable("kafka-protocol cannot encode this request".into()),
            },
            Body::Raw(b) => conn.exchange(s.api, s.version, b).await,
            Body::Frame(f) => conn.exchange_raw(f).await,
        };
        let mut node = match outcome {
            Outcome::Answer(n) => n,
            Outcome::Closed => Node::Leaf("<connection closed>".into()),
            Outcome::Undecodable(e) => Node::Leaf(format!("<undecodable: {e}>")),
            Outcome::Silent => Node::Leaf("<no answer>".into()),
        };
        capture(&node, &mut ctx);
        norm.apply(&mut node);
        out.push(node);
    }
    out
}

/// Remembers the ids the broker handed out (first occurrence of each field in the answer).
fn capture(n: &Node, ctx: &mut Ctx) {
    let mut seen = BTreeSet::new();
    capture_into(n, ctx, &mut seen);
}

fn capture_into(n: &Node, ctx: &mut Ctx, seen: &mut BTreeSet<&'static str>) {
    const KEYS: &[&str] = &[
        "member_id",
        "producer_id",
        "producer_epoch",
        "generation_id",
        "member_epoch",
    ];
    match n {
        Node::Leaf(_) => {}
        Node::Seq(items) => items.iter().for_each(|c| capture_into(c, ctx, seen)),
        Node::Rec(fields) => {
            for (k, c) in fields {
                if let (Some(key), Node::Leaf(v)) = (KEYS.iter().find(|x| **x == k), c) {
                    let v = v.trim_matches('"');
                    if !v.is_empty() && v != "-1" && v != "None" && seen.insert(key) {
                        ctx.vars.insert(key, v.to_string());
                    }
                }
                capture_into(c, ctx, seen);
            }
        }
    }
}

/// Creates the case's topics and produces its records; "ok", or the error codes of what failed.
async fn setup(conn: &mut Conn, ctx: &mut Ctx, case: &Case) -> String {
    if case.topics.is_empty() {
        return "ok".into();
    }
    let topics = case
        .topics
        .iter()
        .map(|(suffix, partitions, configs)| {
            CreatableTopic::default()
                .with_name(ctx.name(suffix))
                .with_num_partitions(*partitions)
                .with_replication_factor(1)
                .with_configs(
                    configs
                        .iter()
                        .map(|(k, v)| {
                            CreatableTopicConfig::default()
                                .with_name(StrBytes::from_static_str(k))
                                .with_value(Some(StrBytes::from_static_str(v)))
                        })
                        .collect(),
                )
        })
        .collect();
    let req = CreateTopicsRequest::default()
        .with_topics(topics)
        .with_timeout_ms(10_000);
    let r: CreateTopicsResponse = typed(conn, ApiKey::CreateTopics, 7, &req).await;
    if let Some(t) = r.topics.iter().find(|t| t.error_code != 0) {
        return format!("set-up CreateTopics error {}", t.error_code);
    }
    // Kafka answers CreateTopics once the controller committed; the broker serves the topic a little later.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let req = MetadataRequest::default().with_topics(Some(
            case.topics
                .iter()
                .map(|(s, _, _)| MetadataRequestTopic::default().with_name(Some(ctx.name(s))))
                .collect(),
        ));
        let m: MetadataResponse = typed(conn, ApiKey::Metadata, 12, &req).await;
        let ready = m.topics.iter().all(|t| {
            t.error_code == 0
                && !t.partitions.is_empty()
                && t.partitions.iter().all(|p| p.leader_id.0 >= 0)
        });
        // The metadata cache can name the leader a moment before the partition serves as one: ListOffsets
        // (answered by the partition's leader) must answer too.
        if ready && partitions_serve(conn, ctx, case).await {
            for t in &m.topics {
                let name = t.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default();
                ctx.topic_ids.insert(name, t.topic_id);
            }
            break;
        }
        if Instant::now() > deadline {
            return "set-up topics not served within 15 s".into();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (suffix, partition, count) in &case.produce {
        let values: Vec<Vec<u8>> = (0..*count).map(|i| format!("v{i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
        let req = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(10_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(ctx.name(suffix))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(*partition)
                    .with_records(Some(super::case::batch(&refs, 1_700_000_000_000)))])]);
        let r: ProduceResponse = typed(conn, ApiKey::Produce, 9, &req).await;
        let code = r.responses[0].partition_responses[0].error_code;
        if code != 0 {
            return format!("set-up Produce error {code}");
        }
    }
    "ok".into()
}

/// Whether every partition of the case's topics answers ListOffsets without an error.
async fn partitions_serve(conn: &mut Conn, ctx: &Ctx, case: &Case) -> bool {
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    let req = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(
            case.topics
                .iter()
                .map(|(s, n, _)| {
                    ListOffsetsTopic::default()
                        .with_name(ctx.name(s))
                        .with_partitions(
                            (0..*n)
                                .map(|p| {
                                    ListOffsetsPartition::default()
                                        .with_partition_index(p)
                                        .with_timestamp(-1)
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    let r: ListOffsetsResponse = typed(conn, ApiKey::ListOffsets, 7, &req).await;
    r.topics
        .iter()
        .all(|t| t.partitions.iter().all(|p| p.error_code == 0))
}

/// A typed request for set-up (panics on anything but an answer).
pub async fn typed<Req, Resp>(conn: &mut Conn, api: ApiKey, version: i16, req: &Req) -> Resp
where
    Req: kafka_protocol::protocol::Encodable,
    Resp: kafka_protocol::protocol::Decodable,
{
    let mut b = bytes::BytesMut::new();
    req.encode(&mut b, version).expect("encodes");
    let bytes: Bytes = b.freeze();
    conn.request_typed(api, version, &bytes)
        .await
        .unwrap_or_else(|| panic!("{api:?} v{version} not answered"))
}

/// Compares the two brokers' answers to one case.
pub fn compare(case: &Case, strata: &[Node], kafka: &[Node]) -> Vec<Diff> {
    let mut diffs = Vec::new();
    for (i, (s, k)) in strata.iter().zip(kafka).enumerate() {
        let (fs, fk) = (s.flatten(), k.flatten());
        let keys: BTreeSet<&String> = fs.keys().chain(fk.keys()).collect();
        for key in keys {
            let (a, b) = (fs.get(key), fk.get(key));
            if a != b {
                diffs.push(Diff {
                    path: match i.checked_sub(1).map(|j| &case.steps[j]) {
                        None => "setup".to_string(),
                        Some(step) => format!("{i}:{:?}v{}.{key}", step.api, step.version),
                    },
                    strata: a.cloned().unwrap_or_else(|| "<absent>".into()),
                    kafka: b.cloned().unwrap_or_else(|| "<absent>".into()),
                });
            }
        }
    }
    diffs
}

/// The allow-list: `case-glob | diff-glob | why` lines, `*` matching anything. A `why` starting with `OPEN` marks a
/// difference found and not yet fixed (counted apart from the deliberate ones).
pub struct Allow {
    pub entries: Vec<(String, String, String)>,
}

impl Allow {
    pub fn parse(text: &str) -> Allow {
        let entries = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let parts: Vec<&str> = l.splitn(3, '|').map(str::trim).collect();
                assert!(
                    parts.len() == 3 && !parts[2].is_empty(),
                    "allow.txt: '{l}' needs case | diff | why"
                );
                (
                    parts[0].to_string(),
                    parts[1].to_string(),
                    parts[2].to_string(),
                )
            })
            .collect();
        Allow { entries }
    }

    /// The first entry explaining `diff` of `case`.
    pub fn explain(&self, case: &str, diff: &Diff) -> Option<usize> {
        self.entries
            .iter()
            .position(|(c, d, _)| glob(c, case) && glob(d, &diff.path))
    }
}

/// `*`-only glob match.
pub fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(p) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(at) => rest = &rest[at + p.len()..],
                None => return false,
            }
        }
    }
    true
}

/// The report's text and whether every difference is explained.
pub fn report(results: &[Result], allow: &Allow) -> (String, bool) {
    use std::fmt::Write;
    let identical = results.iter().filter(|r| r.diffs.is_empty()).count();
    let explained = |r: &&Result| !r.diffs.is_empty() && r.allowed.iter().all(Option::is_some);
    let is_open = |i: &Option<usize>| i.is_some_and(|i| allow.entries[i].2.starts_with("OPEN"));
    let open = results
        .iter()
        .filter(explained)
        .filter(|r| r.allowed.iter().any(is_open))
        .count();
    let documented = results.iter().filter(explained).count() - open;
    let differing = results.len() - identical - documented - open;
    let mut used = BTreeSet::new();
    let mut per_reason: BTreeMap<usize, usize> = BTreeMap::new();
    let mut text = String::new();
    for r in results {
        for (d, a) in r.diffs.iter().zip(&r.allowed) {
            match a {
                Some(i) => {
                    used.insert(*i);
                    *per_reason.entry(*i).or_default() += 1;
                }
                None => {
                    let _ = writeln!(
                        text,
                        "DIFF {} {}\n     strata: {}\n     kafka:  {}",
                        r.name, d.path, d.strata, d.kafka
                    );
                }
            }
        }
    }
    let mut head = format!(
        "differential: {} cases, {identical} identical, {differing} differing, {documented} documented-as-deliberate, \
         {open} known and open (allow.txt lines marked OPEN)\n",
        results.len()
    );
    for (i, n) in &per_reason {
        let (c, d, why) = &allow.entries[*i];
        let _ = writeln!(head, "  allowed x{n}: {c} | {d} | {why}");
    }
    for (i, (c, d, _)) in allow.entries.iter().enumerate() {
        if !used.contains(&i) {
            let _ = writeln!(head, "  unused allow-list entry: {c} | {d}");
        }
    }
    (head + &text, differing == 0)
}

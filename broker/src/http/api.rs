//! The JSON API under `/api/v1/` (what the console polls; `strata remote ls` uses it while the broker runs):
//!
//! | method, path | answer |
//! |---|---|
//! | `GET overview` | broker id, tiering on/off, counts, running totals the console turns into rates |
//! | `GET topics?offset=&limit=&q=` | a page of topics (name filter `q`) with partitions, sizes, bytes in/out |
//! | `GET topics/{t}/partitions?offset=&limit=` | a page of partitions: log start, local log start, HW, LEO, highest offset in remote storage, sizes, copy lag |
//! | `GET topics/{t}/partitions/{p}/segments` | the partition's segments, local and remote merged, with states |
//! | `GET topics/{t}/remote-segments` | the topic's remote segments as `strata remote ls` lists them |
//! | `GET rlmm?topic=&partition=&limit=&order=` | the latest `__remote_log_metadata` records (of one partition, or all), oldest first by event time (`order=offset`: as stored) |
//! | `GET groups` | consumer groups with members and lag per partition |
//! | `GET topics/{t}/partitions/{p}/records?offset=&limit=` | records (tail: the last `limit` when no offset) |
//! | `POST topics/{t}/produce` `{"partition":0,"key":"k","value":"v"}` | appends one record: its offset |
//! | `GET`/`POST`/`DELETE faults`, `DELETE faults/{id}` | faults on demand ([`super::faults`]) |
//!
//! Segment states: `active` (the segment being written), `local` (rolled, not in remote storage), `copying`
//! (`COPY_SEGMENT_STARTED`), `local+remote` (copied, still local), `remote` (copied, local copy deleted),
//! `deleting` (`DELETE_SEGMENT_STARTED`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::{json, Value};
use strata_metadata::{RemoteLogMetadataManager, TopicIdPartition};
use strata_storage::{RecordBatch, RecordBatchBuilder, UnifiedLog};
use strata_tiering::rlm::ops;

use super::metrics::group_lags;
use super::{HttpContext, Reply};

/// Largest page of topics or partitions.
const MAX_PAGE: usize = 1000;

fn params(query: &str) -> HashMap<String, String> {
    query
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Percent-decoding of a query component (`+` is a space).
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn num<T: std::str::FromStr>(
    p: &HashMap<String, String>,
    key: &str,
    default: T,
) -> Result<T, Reply> {
    match p.get(key).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| {
            Reply::error(
                StatusCode::BAD_REQUEST,
                format!("bad {key}={v:?}: expected a number"),
            )
        }),
    }
}

/// Routes `path` (below `/api/v1/`).
pub fn route(ctx: &HttpContext, method: &Method, path: &str, query: &str, body: &[u8]) -> Reply {
    let p = params(query);
    let segs: Vec<String> = path.trim_end_matches('/').split('/').map(decode).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let get = method == Method::GET || method == Method::HEAD;
    let result = match (get, method == Method::POST, segs.as_slice()) {
        (_, _, ["faults", rest @ ..]) => super::faults::route(ctx, method, rest, body),
        (true, _, ["overview"]) => Ok(overview(ctx)),
        (true, _, ["topics"]) => topics(ctx, &p),
        (true, _, ["topics", t, "partitions"]) => partitions(ctx, t, &p),
        (true, _, ["topics", t, "partitions", part, "segments"]) => {
            partition_arg(part).and_then(|part| segments(ctx, t, part))
        }
        (true, _, ["topics", t, "partitions", part, "records"]) => {
            partition_arg(part).and_then(|part| records(ctx, t, part, &p))
        }
        (true, _, ["topics", t, "remote-segments"]) => remote_segments(ctx, t),
        (true, _, ["rlmm"]) => rlmm_records(ctx, &p),
        (true, _, ["groups"]) => Ok(groups(ctx)),
        (_, true, ["topics", t, "produce"]) => produce(ctx, t, body),
        _ => Err(Reply::error(
            StatusCode::NOT_FOUND,
            format!("no such API: {method} /api/v1/{path}"),
        )),
    };
    match result {
        Ok(v) => Reply::json(&v),
        Err(r) => r,
    }
}

fn partition_arg(s: &str) -> Result<i32, Reply> {
    s.parse().map_err(|_| {
        Reply::error(
            StatusCode::BAD_REQUEST,
            format!("bad partition {s:?}: expected a number"),
        )
    })
}

fn unknown_topic(t: &str) -> Reply {
    Reply::error(StatusCode::NOT_FOUND, format!("unknown topic {t:?}"))
}

fn log_of(ctx: &HttpContext, t: &str, part: i32) -> Result<Arc<UnifiedLog>, Reply> {
    ctx.broker().topics().log(t, part).map_err(|e| {
        Reply::error(
            StatusCode::NOT_FOUND,
            format!("no partition {t}-{part}: {e}"),
        )
    })
}

fn overview(ctx: &HttpContext) -> Value {
    let b = ctx.broker();
    let topics = b.registry().all();
    let live: std::collections::HashSet<&str> = topics.iter().map(|(n, _)| n.as_str()).collect();
    let totals = b.metrics().topic_totals(|t| live.contains(t));
    let sum = |f: fn(&crate::metrics::TopicCounters) -> u64| -> u64 {
        totals.iter().map(|(_, c)| f(c)).sum()
    };
    let lags = group_lags(b);
    let tiering = ctx.tiering().map(|t| {
        let s = t.rlm().metrics().snapshot();
        let meter = |name: &str| -> u64 {
            s.meters
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |(_, m)| m.values().sum())
        };
        let ops = |m: &BTreeMap<&'static str, strata_tiering::rlm::OpTotals>| -> Value {
            m.iter()
                .map(|(k, o)| {
                    (
                        k.to_string(),
                        json!({"requests": o.requests, "errors": o.errors, "seconds": o.seconds}),
                    )
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        json!({
            "copy_bytes": meter("RemoteCopyBytesPerSec"),
            "copy_errors": meter("RemoteCopyErrorsPerSec"),
            "fetch_bytes": meter("RemoteFetchBytesPerSec"),
            "fetch_requests": meter("RemoteFetchRequestsPerSec"),
            "fetch_errors": meter("RemoteFetchErrorsPerSec"),
            "delete_requests": meter("RemoteDeleteRequestsPerSec"),
            "copy_lag_bytes": s.partitions.values().map(|g| g.copy_lag_bytes).sum::<u64>(),
            "copy_lag_segments": s.partitions.values().map(|g| g.copy_lag_segments).sum::<u64>(),
            "remote_size_bytes": s.partitions.values().map(|g| g.log_size_bytes).sum::<u64>(),
            "local_bytes_held": s.local_bytes_held,
            "object_store": ops(&s.store_ops),
            "rsm": ops(&s.storage_ops),
            "backend": t.rsm().backend().backend,
            "location": t.rsm().backend().bucket.to_string(),
        })
    });
    json!({
        "broker_id": b.config().node_id,
        "now_ms": strata_storage::time::now_ms(),
        "started_ms": ctx.started_ms,
        "topics": topics.iter().filter(|(_, m)| !m.internal).count(),
        "partitions": b.log_manager().all_logs().len(),
        "messages_in": sum(|c| c.messages_in),
        "bytes_in": sum(|c| c.bytes_in),
        "bytes_out": sum(|c| c.bytes_out),
        "produce_requests": b.metrics().requests_total("Produce"),
        "fetch_requests": b.metrics().requests_total("Fetch"),
        "groups": b.groups().list().len(),
        "consumer_lag": lags.iter().map(|l| l.lag).sum::<i64>(),
        "tiering": tiering,
    })
}

fn page(p: &HashMap<String, String>) -> Result<(usize, usize), Reply> {
    Ok((
        num(p, "offset", 0usize)?,
        num(p, "limit", 100usize)?.min(MAX_PAGE),
    ))
}

fn topics(ctx: &HttpContext, p: &HashMap<String, String>) -> Result<Value, Reply> {
    let (offset, limit) = page(p)?;
    let q = p.get("q").map(|s| s.to_lowercase()).unwrap_or_default();
    let b = ctx.broker();
    let mut all = b.registry().all();
    all.retain(|(n, _)| q.is_empty() || n.to_lowercase().contains(&q));
    all.sort_by(|a, b| (a.1.internal, &a.0).cmp(&(b.1.internal, &b.0)));
    let names: std::collections::HashSet<String> = all.iter().map(|(n, _)| n.clone()).collect();
    let totals: HashMap<String, crate::metrics::TopicCounters> = b
        .metrics()
        .topic_totals(|t| b.registry().get(t).is_some())
        .into_iter()
        .filter(|(t, _)| names.contains(t))
        .collect();
    let gauges = ctx
        .tiering()
        .map(|t| t.rlm().metrics().snapshot().partitions);
    let total = all.len();
    let rows: Vec<Value> = all
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(name, meta)| {
            let mut size = 0u64;
            let mut end = 0i64;
            for part in 0..meta.partitions {
                if let Ok(l) = b.topics().log(&name, part) {
                    size += l.size_in_bytes();
                    end += l.log_end_offset() - l.log_start_offset();
                }
            }
            let (mut remote, mut lag) = (0u64, 0u64);
            if let Some(g) = &gauges {
                for (tp, v) in g.range(strata_storage::TopicPartition::new(name.clone(), 0)..) {
                    if tp.topic != name {
                        break;
                    }
                    remote += v.log_size_bytes;
                    lag += v.copy_lag_bytes;
                }
            }
            let c = totals.get(&name).copied().unwrap_or_default();
            json!({
                "name": name,
                "topic_id": meta.id.to_string(),
                "partitions": meta.partitions,
                "internal": meta.internal,
                "remote_storage_enable": remote_storage_enable(&meta.configs, b.config().log.remote_storage_enable),
                "configs": meta.configs,
                "local_size_bytes": size,
                "remote_size_bytes": remote,
                "copy_lag_bytes": lag,
                "records": end,
                "messages_in": c.messages_in,
                "bytes_in": c.bytes_in,
                "bytes_out": c.bytes_out,
            })
        })
        .collect();
    Ok(json!({ "total": total, "offset": offset, "topics": rows }))
}

/// Whether a topic tiers: its `remote.storage.enable` override parsed as the topic table parses it (`TRUE`
/// counts, as in Kafka), else the broker's default (`log.remote.storage.enable`).
fn remote_storage_enable(configs: &BTreeMap<String, String>, broker_default: bool) -> bool {
    let key = strata_storage::topic_keys::REMOTE_STORAGE_ENABLE;
    match configs.get(key.name()) {
        Some(raw) => key.parse(raw).unwrap_or(false),
        None => broker_default,
    }
}

fn tip(log: &UnifiedLog) -> TopicIdPartition {
    TopicIdPartition::new(log.topic_id(), log.topic_partition().clone())
}

fn partition_json(ctx: &HttpContext, log: &UnifiedLog) -> Value {
    let tp = log.topic_partition();
    let g = ctx
        .tiering()
        .map(|t| t.rlm().metrics().partition_gauges(tp))
        .unwrap_or_default();
    json!({
        "partition": tp.partition,
        "log_start_offset": log.log_start_offset(),
        "local_log_start_offset": log.local_log_start_offset(),
        "high_watermark": log.high_watermark(),
        "log_end_offset": log.log_end_offset(),
        "highest_remote_offset": log.highest_offset_in_remote_storage(),
        "local_size_bytes": log.size_in_bytes(),
        "local_segments": log.number_of_segments(),
        "remote_size_bytes": g.log_size_bytes,
        "remote_segments": g.metadata_count,
        "copy_lag_bytes": g.copy_lag_bytes,
        "copy_lag_segments": g.copy_lag_segments,
        "delete_lag_segments": g.delete_lag_segments,
    })
}

fn partitions(ctx: &HttpContext, t: &str, p: &HashMap<String, String>) -> Result<Value, Reply> {
    let (offset, limit) = page(p)?;
    let meta = ctx
        .broker()
        .registry()
        .get(t)
        .ok_or_else(|| unknown_topic(t))?;
    let rows: Vec<Value> = (0..meta.partitions)
        .skip(offset)
        .take(limit)
        .filter_map(|part| ctx.broker().topics().log(t, part).ok())
        .map(|l| partition_json(ctx, &l))
        .collect();
    Ok(json!({ "topic": t, "total": meta.partitions, "offset": offset, "partitions": rows }))
}

fn segments(ctx: &HttpContext, t: &str, part: i32) -> Result<Value, Reply> {
    let log = log_of(ctx, t, part)?;
    let rolled = log.rolled_segments();
    let mut local: BTreeMap<i64, Value> = BTreeMap::new();
    let mut rolled_bytes = 0u64;
    for s in &rolled {
        rolled_bytes += s.size_bytes;
        local.insert(
            s.base_offset,
            json!({
                "base_offset": s.base_offset,
                "end_offset": s.next_offset - 1,
                "size_bytes": s.size_bytes,
                "max_timestamp_ms": s.max_timestamp_ms,
                "state": "local",
                "local": true,
            }),
        );
    }
    let active_base = rolled
        .last()
        .map_or(log.local_log_start_offset(), |s| s.next_offset);
    let mut out: Vec<Value> = Vec::new();
    if let Some(tiering) = ctx.tiering() {
        let remote = tiering
            .rlmm()
            .list_remote_log_segments(&tip(&log))
            .map_err(|e| Reply::error(StatusCode::INTERNAL_SERVER_ERROR, e))?;
        for r in remote {
            let here = local.remove(&r.start_offset).is_some();
            let state = match (r.state.name(), here) {
                ("COPY_SEGMENT_STARTED", _) => "copying",
                ("DELETE_SEGMENT_STARTED", _) => "deleting",
                (_, true) => "local+remote",
                (_, false) => "remote",
            };
            out.push(json!({
                "base_offset": r.start_offset,
                "end_offset": r.end_offset,
                "size_bytes": r.segment_size_in_bytes,
                "max_timestamp_ms": r.max_timestamp_ms,
                "state": state,
                "local": here,
                "remote": {
                    "segment_id": r.remote_log_segment_id.id.to_string(),
                    "state": r.state.name(),
                    "event_timestamp_ms": r.event_timestamp_ms,
                    "leader_epochs": r.segment_leader_epochs,
                },
            }));
        }
    }
    out.extend(local.into_values());
    out.push(json!({
        "base_offset": active_base,
        "end_offset": log.log_end_offset() - 1,
        "size_bytes": log.size_in_bytes().saturating_sub(rolled_bytes),
        "max_timestamp_ms": log.max_timestamp_and_offset().map_or(-1, |(ts, _)| ts),
        "state": "active",
        "local": true,
    }));
    out.sort_by_key(|v| v["base_offset"].as_i64().unwrap_or(0));
    let mut info = partition_json(ctx, &log);
    info["topic"] = json!(t);
    info["segments"] = Value::Array(out);
    Ok(info)
}

fn remote_segments(ctx: &HttpContext, t: &str) -> Result<Value, Reply> {
    let meta = ctx
        .broker()
        .registry()
        .get(t)
        .ok_or_else(|| unknown_topic(t))?;
    let Some(tiering) = ctx.tiering() else {
        return Ok(json!({ "topic": t, "segments": [] }));
    };
    let parts: Vec<TopicIdPartition> = (0..meta.partitions)
        .map(|p| TopicIdPartition::new(meta.id, strata_storage::TopicPartition::new(t, p)))
        .collect();
    let listing = ops::remote_ls(tiering.rlmm().as_ref(), tiering.rsm(), &parts)
        .map_err(|e| Reply::error(StatusCode::INTERNAL_SERVER_ERROR, e))?;
    let rows: Vec<Value> = listing
        .iter()
        .map(|s| {
            json!({
                "partition": s.partition,
                "segment_id": s.segment_id,
                "state": s.state,
                "start_offset": s.start_offset,
                "end_offset": s.end_offset,
                "size_bytes": s.size_bytes,
                "txn_index": s.txn_index,
                "max_timestamp_ms": s.max_timestamp_ms,
                "object_keys": s.object_keys,
                "line": s.to_string(),
            })
        })
        .collect();
    Ok(json!({ "topic": t, "segments": rows }))
}

fn rlmm_records(ctx: &HttpContext, p: &HashMap<String, String>) -> Result<Value, Reply> {
    let limit = num(p, "limit", 100usize)?;
    let topic = p.get("topic").filter(|t| !t.is_empty());
    let partition: Option<i32> = match p.get("partition").filter(|v| !v.is_empty()) {
        Some(v) => Some(partition_arg(v)?),
        None => None,
    };
    if ctx.tiering().is_none() {
        return Ok(json!({ "records": [] }));
    }
    let all = ops::metadata_records(ctx.broker().log_manager())
        .map_err(|e| Reply::error(StatusCode::INTERNAL_SERVER_ERROR, e))?;
    let mut rows: Vec<Value> = Vec::new();
    for r in all.iter() {
        let v: Value = serde_json::from_str(&r.json).unwrap_or(Value::String(r.json.clone()));
        let id = v
            .get("remote_log_segment_id")
            .or_else(|| v.get("topic_id_partition"));
        let (rt, rp) = (
            id.and_then(|i| i.get("topic")).and_then(Value::as_str),
            id.and_then(|i| i.get("partition")).and_then(Value::as_i64),
        );
        if topic.is_some_and(|t| rt != Some(t.as_str()))
            || partition.is_some_and(|want| rp != Some(i64::from(want)))
        {
            continue;
        }
        rows.push(json!({
            "metadata_partition": r.partition,
            "offset": r.offset,
            "type": v.get("type"),
            "state": v.get("state"),
            "topic": rt,
            "partition": rp,
            "segment_id": id.and_then(|i| i.get("id")),
            "start_offset": v.get("start_offset"),
            "end_offset": v.get("end_offset"),
            "event_timestamp_ms": v.get("event_timestamp_ms"),
            "record": v,
            "raw": r.json,
            "format": r.format,
        }));
    }
    // Oldest first: by event time (the console's feed), or as stored (`order=offset`, `strata remote ls`).
    if p.get("order").is_none_or(|o| o != "offset") {
        rows.sort_by_key(|r| r["event_timestamp_ms"].as_i64().unwrap_or(0));
    }
    let skip = rows.len().saturating_sub(limit);
    Ok(json!({ "total": rows.len(), "records": rows.split_off(skip) }))
}

fn groups(ctx: &HttpContext) -> Value {
    let b = ctx.broker();
    let lags = group_lags(b);
    let rows: Vec<Value> = b
        .groups()
        .list()
        .into_iter()
        .map(|g| {
            let (id, protocol_type, state) = (g.group_id, g.protocol_type, g.state);
            let d = b.groups().describe(&id);
            let members: Vec<Value> = d
                .members
                .iter()
                .map(|(member, instance, client, host, _, _)| {
                    json!({"member_id": member, "instance_id": instance, "client_id": client, "host": host})
                })
                .collect();
            let lag: Vec<Value> = lags
                .iter()
                .filter(|l| l.group == id)
                .map(|l| {
                    json!({"topic": l.topic, "partition": l.partition, "committed": l.committed,
                        "high_watermark": l.high_watermark, "lag": l.lag})
                })
                .collect();
            json!({
                "group": id,
                "protocol_type": protocol_type,
                "state": state,
                "type": g.group_type,
                "protocol": d.protocol,
                "members": members,
                "total_lag": lags.iter().filter(|l| l.group == id).map(|l| l.lag).sum::<i64>(),
                "partitions": lag,
            })
        })
        .collect();
    json!({ "groups": rows })
}

fn text(b: Option<Bytes>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => match std::str::from_utf8(&b) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => Value::String(format!("({} bytes, not UTF-8)", b.len())),
        },
    }
}

fn records(
    ctx: &HttpContext,
    t: &str,
    part: i32,
    p: &HashMap<String, String>,
) -> Result<Value, Reply> {
    let log = log_of(ctx, t, part)?;
    let limit = num(p, "limit", 20usize)?.clamp(1, 500);
    let hw = log.high_watermark();
    let first_local = log.local_log_start_offset();
    let from: i64 = match p.get("offset").filter(|v| !v.is_empty()) {
        Some(_) => num(p, "offset", 0i64)?,
        None => (hw - limit as i64).max(0),
    }
    .max(first_local);
    let mut rows = Vec::new();
    // `next_offset` is where the page stops: right after the last record listed when the limit cut a batch, so
    // a tail asking from there misses nothing.
    let mut next = from;
    'pages: while next < hw && rows.len() < limit {
        let data = log
            .read(next, 1 << 20, true, None)
            .map_err(|e| Reply::error(StatusCode::INTERNAL_SERVER_ERROR, e))?;
        if data.records.is_empty() {
            break;
        }
        for batch in RecordBatch::iter(&data.records) {
            let Ok(batch) = batch else { break 'pages };
            if rows.len() >= limit {
                break 'pages;
            }
            if !batch.is_control() {
                match batch.records() {
                    Ok(recs) => {
                        for r in recs.flatten().filter(|r| r.offset >= from) {
                            if r.offset >= hw || rows.len() >= limit {
                                break 'pages;
                            }
                            rows.push(json!({"offset": r.offset, "timestamp": r.timestamp,
                                "key": text(r.key), "value": text(r.value)}));
                            next = r.offset + 1;
                        }
                    }
                    Err(_) => rows.push(json!({"offset": batch.base_offset(), "timestamp": batch.max_timestamp(),
                        "key": null, "value": format!("(compressed batch of {} records)", batch.records_count())})),
                }
            }
            next = batch.last_offset() + 1;
        }
    }
    Ok(
        json!({ "topic": t, "partition": part, "from": from, "next_offset": next,
        "high_watermark": hw, "local_log_start_offset": first_local, "records": rows }),
    )
}

fn produce(ctx: &HttpContext, t: &str, body: &[u8]) -> Result<Value, Reply> {
    let req: Value = serde_json::from_slice(body)
        .map_err(|e| Reply::error(StatusCode::BAD_REQUEST, format!("body is not JSON: {e}")))?;
    let meta = ctx
        .broker()
        .registry()
        .get(t)
        .ok_or_else(|| unknown_topic(t))?;
    if meta.internal {
        return Err(Reply::error(
            StatusCode::FORBIDDEN,
            format!("{t} is an internal topic"),
        ));
    }
    let part = req.get("partition").and_then(Value::as_i64).unwrap_or(0);
    if part < 0 || part >= i64::from(meta.partitions) {
        return Err(Reply::error(
            StatusCode::BAD_REQUEST,
            format!(
                "bad partition {part}: {t} has {} partitions",
                meta.partitions
            ),
        ));
    }
    let part = part as i32;
    let key = req
        .get("key")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty());
    let value = req.get("value").and_then(Value::as_str).unwrap_or_default();
    let mut builder = RecordBatchBuilder::new();
    builder.append(
        strata_storage::time::now_ms(),
        key.map(str::as_bytes),
        Some(value.as_bytes()),
        &[],
    );
    let batch = builder.build();
    let size = crate::metrics::BrokerMetrics::measure(&batch);
    let log = log_of(ctx, t, part)?;
    let info = log
        .append_as_leader(batch, 0)
        .map_err(|e| Reply::error(StatusCode::BAD_REQUEST, format!("append refused: {e}")))?;
    ctx.broker().notify_appended();
    ctx.broker().metrics().produced(
        t,
        size,
        kafka_protocol::messages::produce_response::PartitionProduceResponse::default(),
    );
    Ok(json!({ "topic": t, "partition": part, "offset": info.first_offset }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_percent_decoded() {
        let p = params("q=a%2Fb+c&limit=5&x");
        assert_eq!(p["q"], "a/b c");
        assert_eq!(p["limit"], "5");
        assert_eq!(p["x"], "");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
    }

    /// `remote.storage.enable` is a boolean in any case, as Kafka parses it; without an override the broker's
    /// default applies.
    #[test]
    fn remote_storage_enable_is_parsed_as_the_topic_table_parses_it() {
        let configs =
            |v: &str| BTreeMap::from([("remote.storage.enable".to_string(), v.to_string())]);
        for (raw, tiered) in [
            ("true", true),
            ("TRUE", true),
            (" True ", true),
            ("false", false),
            ("x", false),
        ] {
            assert_eq!(
                remote_storage_enable(&configs(raw), false),
                tiered,
                "{raw:?}"
            );
        }
        assert!(remote_storage_enable(&BTreeMap::new(), true));
        assert!(!remote_storage_enable(&configs("FALSE"), true));
    }
}

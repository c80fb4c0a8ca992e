//! `/api/v1/faults`: faults on demand ([`crate::faults`]).
//!
//! | method, path | answer |
//! |---|---|
//! | `POST faults` `{"api":"Produce","kind":"error","error":"NOT_LEADER_OR_FOLLOWER","count":3}` | sets a fault: `{"id":1,"fault":{…}}`; a bad one is 400 naming the bad value |
//! | `GET faults` | `{"faults":[{"id":1,"api":"Produce","kind":"error",…,"count":2}]}` (`count`: what remains; `null`: until cleared) |
//! | `DELETE faults` | clears every fault: `{"cleared":n}` |
//! | `DELETE faults/{id}` | clears one (404 when not set) |
//!
//! Fields: `api` (a Kafka API name) or `remote` (`copy`, `fetch`, `delete`); `kind`: `error` (`error`: a Kafka
//! error name or number), `latency` (`latency_ms`), `close_connection`, `throttle` (`throttle_ms`), and for remote
//! faults `latency`, `error`, `outage`; optional `count` (the next N requests or store calls), `topic` and
//! `partition` (Produce, Fetch, ListOffsets; `topic` also Metadata).

use hyper::{Method, StatusCode};
use serde_json::{json, Value};

use super::{HttpContext, Reply};
use crate::faults::{Fault, FaultError};

/// Routes `faults[/…]` (`rest`: the segments after `faults`).
pub fn route(
    ctx: &HttpContext,
    method: &Method,
    rest: &[&str],
    body: &[u8],
) -> Result<Value, Reply> {
    let faults = ctx.broker().faults();
    match (method.as_str(), rest) {
        ("GET" | "HEAD", []) => Ok(json!({
            "faults": faults
                .list()
                .into_iter()
                .map(|f| {
                    let mut v = f.fault.to_json();
                    v["id"] = json!(f.id);
                    v
                })
                .collect::<Vec<_>>()
        })),
        ("POST", []) => {
            let v: Value = serde_json::from_slice(body).map_err(|e| {
                Reply::error(StatusCode::BAD_REQUEST, format!("fault: not JSON: {e}"))
            })?;
            let fault = Fault::from_json(&v).map_err(bad)?;
            let id = faults.add(fault.clone()).map_err(bad)?;
            Ok(json!({ "id": id, "fault": fault.to_json() }))
        }
        ("DELETE", []) => {
            let n = faults.list().len();
            faults.clear();
            Ok(json!({ "cleared": n }))
        }
        ("DELETE", [id]) => {
            let id: u64 = id.parse().map_err(|_| {
                Reply::error(
                    StatusCode::BAD_REQUEST,
                    format!("bad fault id {id:?}: expected a number"),
                )
            })?;
            if faults.remove(id) {
                Ok(json!({ "cleared": 1 }))
            } else {
                Err(Reply::error(
                    StatusCode::NOT_FOUND,
                    format!("no fault {id} is set"),
                ))
            }
        }
        _ => Err(Reply::error(
            StatusCode::NOT_FOUND,
            format!(
                "no such API: {method} /api/v1/faults/{} (GET, POST, DELETE faults; DELETE faults/{{id}})",
                rest.join("/")
            ),
        )),
    }
}

fn bad(e: FaultError) -> Reply {
    Reply::error(StatusCode::BAD_REQUEST, e)
}

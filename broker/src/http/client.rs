//! Reaching a running broker's API from the `strata` commands: the server writes its bound `http.listener`
//! address to [`ADDR_FILE`] in the first log dir while it serves (removed at shutdown), and `strata remote ls`
//! asks `/api/v1/` there instead of opening the log dirs the broker holds locked.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// The file in the first log dir naming the running broker's `http.listener` address.
pub const ADDR_FILE: &str = ".strata-http-listener";

/// Records `addr` in `dir` (best effort: a failure only means the commands read the log dirs).
pub fn write_addr(dir: &Path, addr: SocketAddr) {
    if let Err(e) = std::fs::write(dir.join(ADDR_FILE), addr.to_string()) {
        tracing::debug!(dir = %dir.display(), error = %e, "cannot record the http.listener address");
    }
}

/// Forgets the address (the broker stopped).
pub fn remove_addr(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(ADDR_FILE));
}

/// The address a broker serving `dir` recorded, if any.
pub fn recorded_addr(dir: &Path) -> Option<SocketAddr> {
    std::fs::read_to_string(dir.join(ADDR_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `GET path` on `addr`: the JSON body of a 200, or an error naming the status and the API's message.
pub fn get_json(addr: SocketAddr, path: &str) -> std::io::Result<Value> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: application/json\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no HTTP response from {addr}")))?;
    let status = head.lines().next().unwrap_or_default();
    let json: Value = serde_json::from_str(body).map_err(|e| {
        std::io::Error::other(format!("GET http://{addr}{path}: {status}: not JSON ({e})"))
    })?;
    if !status.contains(" 200 ") {
        return Err(std::io::Error::other(format!(
            "GET http://{addr}{path}: {status}: {}",
            json["error"].as_str().unwrap_or_default()
        )));
    }
    Ok(json)
}

/// `strata remote ls --topic T` from a running broker: the rows as the offline listing prints them (the API
/// sends each segment's `RemoteSegmentListing` `Display` line).
pub fn remote_ls_rows(addr: SocketAddr, topic: &str) -> std::io::Result<Vec<String>> {
    let path = format!(
        "/api/v1/topics/{}/remote-segments",
        topic
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    );
    let v = get_json(addr, &path)?;
    Ok(v["segments"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|s| s["line"].as_str().unwrap_or_default().to_string())
        .collect())
}

/// `strata remote ls --records` from a running broker: every `__remote_log_metadata` record, as the offline
/// listing prints them.
pub fn metadata_record_lines(addr: SocketAddr) -> std::io::Result<Vec<String>> {
    let v = get_json(addr, "/api/v1/rlmm?limit=1000000&order=offset")?;
    Ok(v["records"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "{}-{}@{}: {}",
                strata_metadata::REMOTE_LOG_METADATA_TOPIC_NAME,
                r["metadata_partition"],
                r["offset"],
                r["raw"].as_str().unwrap_or_default()
            )
        })
        .collect())
}

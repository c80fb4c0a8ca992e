//! A small HTTP shim in front of `gcp-storage-emulator` serving the calls of GCS's XML API that object_store makes
//! and the emulator lacks. The emulator serves the XML API's object PUT and (ranged) GET only, without `ETag` or
//! `Last-Modified`; it has no XML list, HEAD, DELETE or multipart upload. The shim:
//!
//! - forwards PUT and GET to the emulator, adding `ETag`, `Last-Modified` and `x-goog-generation` from the
//!   emulator's JSON API object metadata (`GET /storage/v1/b/{bucket}/o/{object}`);
//! - serves HEAD from that metadata, DELETE with the JSON API's delete, and ListObjectsV2 (`?list-type=2`) by
//!   rendering the JSON API's object list as XML;
//! - serves empty objects itself (the emulator fails on an empty body: `TypeError: object of type 'NoneType' has
//!   no len()`), listing them with the emulator's;
//! - serves XML multipart uploads (`?uploads`, `?partNumber&uploadId`, complete, abort) itself: parts are held in
//!   memory and the completed object is PUT to the emulator whole.
//!
//! Plain blocking threads on 127.0.0.1, one request per connection (`Connection: close`).
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The running shim; stops accepting on drop.
#[derive(Debug)]
pub struct GcsShim {
    /// The shim's port on 127.0.0.1.
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for GcsShim {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port)); // wake the accept loop
    }
}

#[derive(Default)]
struct State {
    uploads: Mutex<HashMap<String, BTreeMap<u32, Vec<u8>>>>,
    next_upload: AtomicU64,
    /// Empty objects, `bucket/object` → generation (microseconds since the epoch at their PUT).
    empties: Mutex<BTreeMap<String, u64>>,
}

impl State {
    fn empty(&self, bucket: &str, object: &str) -> Option<u64> {
        self.empties
            .lock()
            .get(&format!("{bucket}/{object}"))
            .copied()
    }
}

fn empty_metadata(object: &str, generation: u64) -> serde_json::Value {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_micros(generation);
    serde_json::json!({
        "name": object,
        "size": "0",
        "etag": format!("empty-{generation}"),
        "generation": generation.to_string(),
        "updated": rfc3339(t),
    })
}

/// Starts the shim in front of the emulator listening on 127.0.0.1:`emulator_port`.
pub fn start(emulator_port: u16) -> GcsShim {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local addr").port();
    let stop = Arc::new(AtomicBool::new(false));
    let state = Arc::new(State::default());
    let stopped = stop.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if stopped.load(Ordering::SeqCst) {
                return;
            }
            let Ok(conn) = conn else { continue };
            let state = state.clone();
            std::thread::spawn(move || {
                let _ = serve(conn, emulator_port, &state);
            });
        }
    });
    GcsShim { port, stop }
}

struct Request {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
    fn header(mut self, k: &str, v: impl Into<String>) -> Self {
        self.headers.push((k.to_string(), v.into()));
        self
    }
    fn body(mut self, b: impl Into<Vec<u8>>) -> Self {
        self.body = b.into();
        self
    }
}

fn read_request(r: &mut BufReader<TcpStream>) -> std::io::Result<Request> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    let (path, q) = target.split_once('?').unwrap_or((&target, ""));
    let query = q
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect();
    Ok(Request {
        method,
        path: path.to_string(),
        query,
        headers,
        body,
    })
}

fn serve(conn: TcpStream, emu: u16, state: &State) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let req = read_request(&mut reader)?;
    let resp = route(&req, emu, state);
    let mut out = conn;
    let mut head = format!("HTTP/1.1 {} X\r\n", resp.status);
    for (k, v) in &resp.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !resp.headers.iter().any(|(k, _)| k == "Content-Length") {
        head.push_str(&format!("Content-Length: {}\r\n", resp.body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    out.write_all(head.as_bytes())?;
    if req.method != "HEAD" {
        out.write_all(&resp.body)?;
    }
    out.flush()
}

fn route(req: &Request, emu: u16, state: &State) -> Response {
    let path = req.path.trim_start_matches('/');
    let (bucket, object) = path.split_once('/').unwrap_or((path, ""));
    let (bucket, object) = (decode(bucket), decode(object));
    let bucket = bucket.as_str();
    let q = &req.query;
    match (req.method.as_str(), object.is_empty()) {
        ("GET", true) if q.get("list-type").map(String::as_str) == Some("2") => {
            list(emu, state, bucket, q)
        }
        ("POST", false) if q.contains_key("uploads") => {
            let id = format!(
                "upload-{}",
                state.next_upload.fetch_add(1, Ordering::SeqCst)
            );
            state.uploads.lock().insert(id.clone(), BTreeMap::new());
            Response::new(200).body(format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult><Bucket>{}</Bucket><Key>{}</Key><UploadId>{id}</UploadId></InitiateMultipartUploadResult>",
                xml(bucket),
                xml(&object)
            ))
        }
        ("PUT", false) if q.contains_key("uploadId") => {
            let part: u32 = q
                .get("partNumber")
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let mut uploads = state.uploads.lock();
            match uploads.get_mut(&q["uploadId"]) {
                Some(parts) => {
                    parts.insert(part, req.body.clone());
                    Response::new(200).header("ETag", format!("\"part-{part}\""))
                }
                None => Response::new(404),
            }
        }
        ("POST", false) if q.contains_key("uploadId") => {
            let parts = state.uploads.lock().remove(&q["uploadId"]);
            let Some(parts) = parts else {
                return Response::new(404);
            };
            let whole: Vec<u8> = parts.into_values().flatten().collect();
            let put = put_object(emu, state, bucket, &object, &whole);
            if put.status != 200 {
                return put;
            }
            let etag = put
                .headers
                .iter()
                .find(|(k, _)| k == "ETag")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            let mut r = Response::new(200).body(format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUploadResult><Bucket>{}</Bucket><Key>{}</Key><ETag>{}</ETag></CompleteMultipartUploadResult>",
                xml(bucket),
                xml(&object),
                xml(&etag)
            ));
            r.headers = put.headers;
            r
        }
        ("DELETE", false) if q.contains_key("uploadId") => {
            state.uploads.lock().remove(&q["uploadId"]);
            Response::new(204)
        }
        ("PUT", false) if !req.headers.contains_key("x-goog-copy-source") => {
            put_object(emu, state, bucket, &object, &req.body)
        }
        ("DELETE", false)
            if state
                .empties
                .lock()
                .remove(&format!("{bucket}/{object}"))
                .is_some() =>
        {
            Response::new(204)
        }
        ("DELETE", false) => {
            let r = call(emu, "DELETE", &json_object(bucket, &object), &[], &[]);
            Response::new(match r.status {
                200 | 204 => 204,
                s => s,
            })
        }
        ("GET" | "HEAD", false) => match state.empty(bucket, &object) {
            Some(generation) => {
                with_metadata(Response::new(200), &empty_metadata(&object, generation))
            }
            None => get_object(emu, bucket, &object, req),
        },
        _ => Response::new(501).body(format!("gcs shim: {} {} not served", req.method, req.path)),
    }
}

fn put_object(emu: u16, state: &State, bucket: &str, object: &str, body: &[u8]) -> Response {
    let key = format!("{bucket}/{object}");
    if body.is_empty() {
        let _ = call(emu, "DELETE", &json_object(bucket, object), &[], &[]);
        let generation = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        state.empties.lock().insert(key, generation);
        return with_metadata(Response::new(200), &empty_metadata(object, generation));
    }
    state.empties.lock().remove(&key);
    let r = call(
        emu,
        "PUT",
        &format!("/{bucket}/{}", encode_path(object)),
        &[],
        body,
    );
    if r.status != 200 {
        return r;
    }
    match metadata(emu, bucket, object) {
        Some(m) => with_metadata(Response::new(200), &m),
        None => Response::new(500).body("object not found after PUT"),
    }
}

fn get_object(emu: u16, bucket: &str, object: &str, req: &Request) -> Response {
    let Some(m) = metadata(emu, bucket, object) else {
        return Response::new(404).body("<Error><Code>NoSuchKey</Code></Error>");
    };
    let size = m["size"]
        .as_str()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    if req.method == "HEAD" {
        return with_metadata(Response::new(200), &m).header("Content-Length", size.to_string());
    }
    let range: Vec<(String, String)> = req
        .headers
        .get("range")
        .map(|r| vec![("Range".to_string(), r.clone())])
        .unwrap_or_default();
    let r = call(
        emu,
        "GET",
        &format!("/{bucket}/{}", encode_path(object)),
        &range,
        &[],
    );
    let mut out = with_metadata(Response::new(r.status), &m).body(r.body);
    out.headers.extend(
        r.headers
            .into_iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("content-range")),
    );
    out
}

fn with_metadata(mut r: Response, m: &serde_json::Value) -> Response {
    let s = |k: &str| m[k].as_str().unwrap_or_default().to_string();
    r = r
        .header("ETag", format!("\"{}\"", s("etag")))
        .header("x-goog-generation", s("generation"))
        .header("Last-Modified", rfc1123(&s("updated")));
    r
}

fn metadata(emu: u16, bucket: &str, object: &str) -> Option<serde_json::Value> {
    let r = call(emu, "GET", &json_object(bucket, object), &[], &[]);
    (r.status == 200)
        .then(|| serde_json::from_slice(&r.body).ok())
        .flatten()
}

fn json_object(bucket: &str, object: &str) -> String {
    format!("/storage/v1/b/{bucket}/o/{}", encode_all(object))
}

fn list(emu: u16, state: &State, bucket: &str, q: &BTreeMap<String, String>) -> Response {
    let prefix = q.get("prefix").cloned().unwrap_or_default();
    let delimiter = q.get("delimiter").cloned().unwrap_or_default();
    let start_after = q.get("start-after").cloned().unwrap_or_default();
    let mut target = format!("/storage/v1/b/{bucket}/o?prefix={}", encode_all(&prefix));
    if !delimiter.is_empty() {
        target.push_str(&format!("&delimiter={}", encode_all(&delimiter)));
    }
    let r = call(emu, "GET", &target, &[], &[]);
    if r.status != 200 {
        return r;
    }
    let mut v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
    // Merge the shim's empty objects (or their common prefixes) into the emulator's answer.
    let mut items: Vec<serde_json::Value> = v["items"].as_array().cloned().unwrap_or_default();
    let mut prefixes: Vec<serde_json::Value> =
        v["prefixes"].as_array().cloned().unwrap_or_default();
    for (key, generation) in state.empties.lock().iter() {
        let Some(name) = key.strip_prefix(&format!("{bucket}/")) else {
            continue;
        };
        let Some(rest) = name.strip_prefix(prefix.as_str()) else {
            continue;
        };
        match rest
            .find(delimiter.as_str())
            .filter(|_| !delimiter.is_empty())
        {
            Some(i) => {
                let p =
                    serde_json::Value::from(format!("{prefix}{}", &rest[..i + delimiter.len()]));
                if !prefixes.contains(&p) {
                    prefixes.push(p);
                }
            }
            None => items.push(empty_metadata(name, *generation)),
        }
    }
    items.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    v["items"] = items.into();
    v["prefixes"] = prefixes.into();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>{}</Name><Prefix>{}</Prefix><IsTruncated>false</IsTruncated>",
        xml(bucket),
        xml(&prefix)
    );
    for item in v["items"].as_array().into_iter().flatten() {
        let s = |k: &str| item[k].as_str().unwrap_or_default().to_string();
        let name = s("name");
        if !start_after.is_empty() && name <= start_after {
            continue;
        }
        out.push_str(&format!(
            "<Contents><Key>{}</Key><LastModified>{}</LastModified><ETag>\"{}\"</ETag><Size>{}</Size></Contents>",
            xml(&name),
            xml(&s("updated")),
            xml(&s("etag")),
            s("size")
        ));
    }
    for p in v["prefixes"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "<CommonPrefixes><Prefix>{}</Prefix></CommonPrefixes>",
            xml(p.as_str().unwrap_or_default())
        ));
    }
    out.push_str("</ListBucketResult>");
    Response::new(200)
        .header("Content-Type", "application/xml")
        .body(out)
}

/// One HTTP/1.0 request to the emulator; status 502 when it cannot be reached.
fn call(
    emu: u16,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Response {
    let attempt = || -> std::io::Result<Response> {
        let mut s = TcpStream::connect(("127.0.0.1", emu))?;
        let mut head = format!("{method} {target} HTTP/1.0\r\nHost: 127.0.0.1:{emu}\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        s.write_all(head.as_bytes())?;
        s.write_all(body)?;
        let mut all = Vec::new();
        s.read_to_end(&mut all)?;
        let split = all
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or(all.len());
        let head = String::from_utf8_lossy(&all[..split]).to_string();
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|c| c.parse().ok())
            .unwrap_or(502);
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        Ok(Response {
            status,
            headers,
            body: all.get(split + 4..).unwrap_or_default().to_vec(),
        })
    };
    attempt().unwrap_or_else(|e| Response::new(502).body(e.to_string()))
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(s: &str, keep_slash: bool) -> String {
    s.bytes()
        .map(|c| match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (c as char).to_string()
            }
            b'/' if keep_slash => "/".into(),
            _ => format!("%{c:02X}"),
        })
        .collect()
}

fn encode_all(s: &str) -> String {
    encode(s, false)
}

fn encode_path(s: &str) -> String {
    encode(s, true)
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `t` as `2026-12-03T19:16:04.000000Z`.
fn rfc3339(t: std::time::SystemTime) -> String {
    // From the RFC 1123 form: `Thu, 03 Dec 2026 19:16:04 GMT`.
    let h = httpdate(t);
    let f: Vec<&str> = h.split_whitespace().collect();
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = months.iter().position(|x| *x == f[2]).unwrap_or(0) + 1;
    format!("{}-{m:02}-{}T{}.000000Z", f[3], f[1], f[4])
}

/// `2026-12-03T19:16:04.862086Z` → `Thu, 03 Dec 2026 19:16:04 GMT`.
fn rfc1123(rfc3339: &str) -> String {
    let n = |a: usize, b: usize| {
        rfc3339
            .get(a..b)
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    let (hh, mm, ss) = (n(11, 13), n(14, 16), n(17, 19));
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    httpdate(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0) as u64))
}

/// RFC 1123 date (`Thu, 03 Dec 2026 19:00:00 GMT`).
pub(crate) fn httpdate(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn httpdate_formats_rfc1123() {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(1_796_324_400);
        assert_eq!(httpdate(t), "Thu, 03 Dec 2026 19:00:00 GMT");
        assert_eq!(
            httpdate(std::time::UNIX_EPOCH),
            "Thu, 01 Jan 1970 00:00:00 GMT"
        );
    }

    #[test]
    fn rfc3339_to_rfc1123() {
        assert_eq!(
            rfc1123("2026-12-03T19:16:04.862086Z"),
            "Thu, 03 Dec 2026 19:16:04 GMT"
        );
        assert_eq!(
            rfc1123("1970-01-01T00:00:00Z"),
            "Thu, 01 Jan 1970 00:00:00 GMT"
        );
    }

    #[test]
    fn rfc3339_formats_utc() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_324_400);
        assert_eq!(rfc3339(t), "2026-12-03T19:00:00.000000Z");
    }

    #[test]
    fn percent_coding_round_trips() {
        let name = "cluster-a/_strata probe/ü+%";
        assert_eq!(decode(&encode_all(name)), name);
        assert_eq!(encode_path("a/b c"), "a/b%20c");
    }
}

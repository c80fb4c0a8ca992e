//! The console in headless Chromium (Debian's `chromium`, installed by `.ci/run`), driven over the DevTools
//! protocol: the page is opened before the tiered topic has any data; while librdkafka produces, the topic rolls,
//! uploads and deletes locally, and the same page (never reloaded) shows the topic, its remote segments with their
//! offsets and states, and the `__remote_log_metadata` records. A screenshot is kept as
//! `target/console-screenshot.png`.
use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::tiered::*;
use common::{admin, producer};
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::producer::FutureRecord;
use serde_json::{json, Value};

const TOPIC: &str = "live";

/// A DevTools protocol session on one page, over a minimal WebSocket client (text frames, masked as RFC 6455
/// requires of clients).
struct Cdp {
    s: TcpStream,
    next_id: u64,
    session: Option<String>,
}

impl Cdp {
    fn connect(ws_url: &str) -> Cdp {
        let rest = ws_url.strip_prefix("ws://").expect("ws:// url");
        let (host, path) = rest.split_once('/').expect("ws path");
        let mut s = TcpStream::connect(host).expect("connect devtools");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: c3RyYXRhLWNvbnNvbGUtdGVzdA==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).expect("handshake");
            head.push(b[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(
            head.starts_with("HTTP/1.1 101"),
            "websocket refused: {head}"
        );
        Cdp {
            s,
            next_id: 1,
            session: None,
        }
    }

    fn send(&mut self, text: &str) {
        let payload = text.as_bytes();
        let mask = [0x5a, 0x17, 0xc3, 0x81];
        let mut frame = vec![0x81u8];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= u16::MAX as usize => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.s.write_all(&frame).expect("send frame");
    }

    fn recv(&mut self) -> String {
        let mut message = Vec::new();
        loop {
            let mut h = [0u8; 2];
            self.s.read_exact(&mut h).expect("frame header");
            let (fin, opcode) = (h[0] & 0x80 != 0, h[0] & 0x0f);
            let mut len = u64::from(h[1] & 0x7f);
            if len == 126 {
                let mut l = [0u8; 2];
                self.s.read_exact(&mut l).unwrap();
                len = u64::from(u16::from_be_bytes(l));
            } else if len == 127 {
                let mut l = [0u8; 8];
                self.s.read_exact(&mut l).unwrap();
                len = u64::from_be_bytes(l);
            }
            let mut data = vec![0u8; len as usize];
            self.s.read_exact(&mut data).expect("frame payload");
            match opcode {
                0x0..=0x2 => message.extend_from_slice(&data),
                0x8 => panic!("devtools closed the connection"),
                _ => continue, // ping/pong
            }
            if fin {
                return String::from_utf8(message).expect("utf-8 message");
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            msg["sessionId"] = json!(session);
        }
        self.send(&msg.to_string());
        loop {
            let msg: Value = serde_json::from_str(&self.recv()).expect("JSON message");
            if msg["id"] == id {
                assert!(msg.get("error").is_none(), "{method}: {msg}");
                return msg["result"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page: its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    fn wait(&mut self, what: &str, limit: Duration, expr: &str) {
        let deadline = Instant::now() + limit;
        while self.eval(expr) != json!(true) {
            assert!(Instant::now() < deadline, "the page never showed {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts headless Chromium on `url`: the browser and its DevTools WebSocket URL.
fn chromium(url: &str, profile: &std::path::Path) -> (Browser, String) {
    let bin = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("Debian's chromium is needed (`apt-get install chromium`; .ci/run installs it)");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-port=0",
            "--window-size=1500,1000",
            &format!("--user-data-dir={}", profile.display()),
            url,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let stderr = child.stderr.take().unwrap();
    let browser = Browser(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.split("DevTools listening on ").nth(1) {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let ws = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("chromium printed its DevTools address");
    (browser, ws)
}

/// Attaches to the page showing `url` through the browser's DevTools endpoint `ws`.
fn attach(ws: &str, url: &str) -> Cdp {
    let mut cdp = Cdp::connect(ws);
    let deadline = Instant::now() + Duration::from_secs(20);
    let target = loop {
        let targets = cdp.call("Target.getTargets", json!({}));
        if let Some(t) = targets["targetInfos"].as_array().and_then(|t| {
            t.iter().find(|t| {
                t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(url))
            })
        }) {
            break t["targetId"].clone();
        }
        assert!(Instant::now() < deadline, "no page target: {targets}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let attached = cdp.call(
        "Target.attachToTarget",
        json!({"targetId": target, "flatten": true}),
    );
    cdp.session = attached["sessionId"].as_str().map(str::to_string);
    cdp
}

fn screenshot_path() -> std::path::PathBuf {
    // <target>/debug/deps/console_browser-<hash>
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .expect("target dir")
        .join("console-screenshot.png")
}

#[test]
fn console_shows_a_tiered_topic_upload_and_delete_locally_without_a_reload() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let addr = server.http_addr().expect("http.listener bound");
    let topic = NewTopic::new(TOPIC, 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "4096")
        .set("local.retention.bytes", "1");
    let res = rt
        .block_on(admin(&bs).create_topics(&[topic], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");

    let url = format!("http://{addr}/");
    let (_browser, ws) = chromium(&url, &dir.path().join("chromium"));
    let mut page = attach(&ws, &url);
    page.wait(
        "the topic",
        Duration::from_secs(20),
        &format!("!!document.querySelector('#topics li[data-topic=\"{TOPIC}\"]') && !!document.querySelector('#timeline .seg') && !!document.body.dataset.refreshes"),
    );
    // Empty so far: only the active segment, nothing remote. A marker that a reload would wipe.
    assert_eq!(page.eval("document.querySelectorAll('#timeline .seg.remote, #timeline .seg.local-remote').length"), json!(0));
    page.eval("window.__notReloaded = true; true");
    let refreshes_before: u64 = page
        .eval("Number(document.body.dataset.refreshes || 0)")
        .as_u64()
        .unwrap();

    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..300 {
            let v = value_of(i);
            p.send(
                FutureRecord::<str, _>::to(TOPIC).payload(&v).partition(0),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    // Uploaded and deleted locally: the timeline starts with remote-only segments from offset 0, their
    // __remote_log_metadata records listed, the local log start above 0 — on the same page.
    page.wait(
        "remote-only segments from offset 0",
        Duration::from_secs(30),
        "(() => { const s = document.querySelector('#timeline .seg'); \
          return !!s && s.dataset.state === 'remote' && s.dataset.base === '0'; })()",
    );
    page.wait(
        "COPY_SEGMENT_FINISHED records",
        Duration::from_secs(10),
        "!!document.querySelector('#rlmm li[data-state=\"COPY_SEGMENT_FINISHED\"]')",
    );
    let log = log_of(&server, TOPIC, 0);
    // The broker's local log start (it may still move while local segments are deleted: compared afresh).
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let want = format!("local log start {}", log.local_log_start_offset());
        let shown = page.eval("document.querySelector('#offsets').textContent");
        if shown.as_str().is_some_and(|t| t.contains(&want)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the page shows {shown}, not {want}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let title = page.eval("document.querySelector('#timeline .seg').title");
    assert!(
        title.as_str().unwrap().starts_with("remote: offsets 0–"),
        "{title}"
    );
    let rows =
        page.eval("[...document.querySelectorAll('#segments tbody tr')].map(r => r.dataset.state)");
    assert!(
        rows.as_array().unwrap().iter().any(|s| s == "remote"),
        "{rows}"
    );
    assert_eq!(
        page.eval("window.__notReloaded === true"),
        json!(true),
        "the page was reloaded"
    );
    // The counter is set at the end of a refresh, after it drew the page: the refresh that drew the remote
    // segments may still be finishing.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let refreshes_after = page
            .eval("Number(document.body.dataset.refreshes || 0)")
            .as_u64()
            .unwrap();
        if refreshes_after > refreshes_before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no live update: {refreshes_before} → {refreshes_after}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let shot = page.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("screenshot data"))
        .expect("base64 png");
    assert!(png.starts_with(b"\x89PNG"));
    let path = screenshot_path();
    std::fs::write(&path, png).expect("write screenshot");
    eprintln!("console screenshot: {}", path.display());
    drop(log);
    drop(page);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

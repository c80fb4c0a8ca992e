//! Local object-store emulators for the GCS and Azure backends' tests: Azurite (npm `azurite`) and
//! `gcp-storage-emulator` (PyPI, behind a shim serving the XML API calls it lacks: [`super::gcs_shim`]), spawned
//! as child processes on 127.0.0.1 with a free port, waited for by polling with a deadline, and killed on drop.
//!
//! They are found under `STRATA_EMULATOR_PREFIX` (default `~/.cache/strata-emulators`, where
//! `.ci/install-emulators.sh` puts them), else on `PATH`. A missing emulator fails the test with a message naming
//! the install command, unless `STRATA_SKIP_EMULATORS=1` is set (local runs only; CI installs them), in which case
//! the start functions return `None` and the test returns early.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use sha2::Digest;

/// How long an emulator may take to start (CI runs on 2 shared cores).
const START_DEADLINE: Duration = Duration::from_secs(60);

/// Azurite's well-known development account.
pub const AZURITE_ACCOUNT: &str = "devstoreaccount1";
/// Azurite's well-known development account key (public, documented by Microsoft).
pub const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// A running emulator; killed on drop.
#[derive(Debug)]
pub struct Emulator {
    child: Child,
    /// `http://127.0.0.1:<port>` (Azure: with `/devstoreaccount1`).
    pub endpoint: String,
    /// The bucket (GCS) or container (Azure) created at start.
    pub bucket: String,
    gcs: bool,
    /// GCS: the shim serving what the emulator lacks (its endpoint is `endpoint`).
    shim: Option<super::gcs_shim::GcsShim>,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Emulator {
    /// `rsm.config.` properties (prefix stripped) selecting this emulator's backend, bucket and endpoint, with
    /// the emulator's credentials (none for GCS, Azurite's development key for Azure).
    pub fn props(&self) -> Vec<(String, String)> {
        let p = |k: &str, v: &str| (k.to_string(), v.to_string());
        if self.gcs {
            vec![
                p("storage.backend", "gcs"),
                p("storage.gcs.bucket.name", &self.bucket),
                p("storage.gcs.endpoint.url", &self.endpoint),
                p("storage.gcs.credentials.default", "false"),
            ]
        } else {
            vec![
                p("storage.backend", "azure"),
                p("storage.azure.container.name", &self.bucket),
                p("storage.azure.account.name", AZURITE_ACCOUNT),
                p("storage.azure.account.key", AZURITE_KEY),
                p("storage.azure.endpoint.url", &self.endpoint),
            ]
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

fn prefix() -> PathBuf {
    std::env::var_os("STRATA_EMULATOR_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".cache/strata-emulators")
        })
}

/// The executable: under the prefix, else on PATH; `None` when absent and skipping is allowed.
fn find(under_prefix: &str, name: &str) -> Option<PathBuf> {
    let local = prefix().join(under_prefix);
    if local.is_file() {
        return Some(local);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if on_path.is_some() {
        return on_path;
    }
    if std::env::var("STRATA_SKIP_EMULATORS").as_deref() == Ok("1") {
        eprintln!("{name} not installed and STRATA_SKIP_EMULATORS=1: skipping");
        return None;
    }
    panic!(
        "{name} is not installed (looked in {} and on PATH): run .ci/install-emulators.sh, or set \
         STRATA_SKIP_EMULATORS=1 to skip the emulator tests locally",
        local.display()
    );
}

/// Starts `gcp-storage-emulator` (in memory) with `bucket` created, behind the shim of
/// [`super::gcs_shim`] (which serves the XML API calls the emulator lacks); `None` when it is not installed and
/// `STRATA_SKIP_EMULATORS=1`.
pub fn start_gcs(bucket: &str) -> Option<Emulator> {
    let exe = find("venv/bin/gcp-storage-emulator", "gcp-storage-emulator")?;
    // The emulator does not report a port it picked itself: take a free one, retry if it was taken meanwhile.
    for _ in 0..3 {
        let port = free_port();
        let child = Command::new(&exe)
            .args(["start", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--in-memory", "--quiet", "--default-bucket", bucket])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let mut emu = Emulator {
            child,
            endpoint: String::new(),
            bucket: bucket.to_string(),
            gcs: true,
            shim: None,
        };
        let deadline = Instant::now() + START_DEADLINE;
        while emu.is_running() && Instant::now() < deadline {
            let probe = http(
                port,
                &format!("GET /storage/v1/b/{bucket} HTTP/1.1\r\n"),
                &[],
            );
            if probe.is_some_and(|status| status == 200) {
                let shim = super::gcs_shim::start(port);
                emu.endpoint = format!("http://127.0.0.1:{}", shim.port);
                emu.shim = Some(shim);
                return Some(emu);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(
            !emu.is_running(),
            "gcp-storage-emulator did not serve bucket {bucket} on port {port} within {START_DEADLINE:?}"
        );
    }
    panic!("gcp-storage-emulator exited at start three times (port taken?)");
}

/// Starts Azurite's blob service (in memory) with `container` created; `None` when it is not installed and
/// `STRATA_SKIP_EMULATORS=1`.
pub fn start_azurite(container: &str) -> Option<Emulator> {
    let exe = find("node/node_modules/.bin/azurite-blob", "azurite-blob")?;
    let mut child = Command::new(&exe)
        .args([
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "0",
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--disableTelemetry",
            "--silent",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    // Azurite prints the port it bound: "... successfully listens on http://127.0.0.1:<port>".
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if let Some(port) = line
                .split("listens on http://127.0.0.1:")
                .nth(1)
                .and_then(|p| p.trim().parse::<u16>().ok())
            {
                let _ = tx.send(port);
            }
            // Keep draining so the child never blocks on a full pipe.
        }
    });
    let mut emu = Emulator {
        child,
        endpoint: String::new(),
        bucket: container.to_string(),
        gcs: false,
        shim: None,
    };
    let port = rx
        .recv_timeout(START_DEADLINE)
        .unwrap_or_else(|_| panic!("Azurite did not report its port within {START_DEADLINE:?}"));
    emu.endpoint = format!("http://127.0.0.1:{port}/{AZURITE_ACCOUNT}");
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        match create_container(port, container) {
            Some(201) | Some(409) => return Some(emu),
            other if Instant::now() >= deadline || !emu.is_running() => {
                panic!("Azurite did not create container {container}: {other:?}")
            }
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Sends `request_line` + `headers` (no body) to 127.0.0.1:`port`; the response status, `None` if unreachable.
fn http(port: u16, request_line: &str, headers: &[(String, String)]) -> Option<u16> {
    http_body(port, request_line, headers, &[])
}

/// As [`http`], with a body.
fn http_body(
    port: u16,
    request_line: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut req = format!("{request_line}Host: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// Azure's Create Container, signed with Azurite's development key (Shared Key authorization).
fn create_container(port: u16, container: &str) -> Option<u16> {
    let date = super::gcs_shim::httpdate(std::time::SystemTime::now());
    let version = "2021-08-06";
    // VERB, then 11 empty standard headers (Content-Encoding .. Range), the x-ms-* headers, the resource.
    let to_sign = format!(
        "PUT\n{}x-ms-date:{date}\nx-ms-version:{version}\n/{AZURITE_ACCOUNT}/{AZURITE_ACCOUNT}/{container}\nrestype:container",
        "\n".repeat(11)
    );
    let key = base64::engine::general_purpose::STANDARD
        .decode(AZURITE_KEY)
        .expect("Azurite key is base64");
    let signature =
        base64::engine::general_purpose::STANDARD.encode(hmac_sha256(&key, to_sign.as_bytes()));
    let headers = [
        ("x-ms-date".to_string(), date),
        ("x-ms-version".to_string(), version.to_string()),
        ("Content-Length".to_string(), "0".to_string()),
        (
            "Authorization".to_string(),
            format!("SharedKey {AZURITE_ACCOUNT}:{signature}"),
        ),
    ];
    http(
        port,
        &format!("PUT /{AZURITE_ACCOUNT}/{container}?restype=container HTTP/1.1\r\n"),
        &headers,
    )
}

fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&sha2::Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
    let inner = sha2::Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    sha2::Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231 test case 2.
    #[test]
    fn hmac_matches_rfc4231() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}

//! Tiered storage through the broker on Google Cloud Storage and Azure Blob Storage, against local emulators
//! (`gcp-storage-emulator` behind strata's shim for the XML API calls it lacks, and Azurite; see
//! strata_tiering::testing::emulator): a tiered topic with small segments is produced with librdkafka, its
//! segments are offloaded and their local copies deleted, then it is consumed from offset 0 (served from the
//! remote tier) byte-identical. The Azure run uses the tiered-storage section of a Kafka + Aiven deployment
//! unchanged (tests/fixtures/aiven-tiered-storage.properties: backend class, Azure keys, RSA key pairs for
//! encryption, compression, disk chunk cache settings).
use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::tiered::*;
use common::{assign_from_beginning, consume_n};
use futures::TryStreamExt;
use rdkafka::consumer::BaseConsumer;
use strata_broker::Server;
use strata_tiering::testing::emulator::{start_azurite, start_gcs, Emulator};
use strata_tiering::ObjectStoreRsm;

const TOPIC: &str = "clouds";
const MESSAGES: usize = 400;

/// The broker's properties of tests/common/tiered.rs without its filesystem backend, plus `rsm`.
fn broker_props(dir: &Path, rsm: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut p = props(dir);
    p.retain(|k, _| !k.starts_with("rsm.config."));
    p.extend(rsm);
    p
}

/// Produces, waits for the offload and the local deletion, consumes from 0; the objects are in the bucket.
fn offload_and_read_back(props: BTreeMap<String, String>, emu: &Emulator, prefix: &str) {
    let rt = runtime();
    let server: Server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("tiered broker starts");
    let bs = server.local_addr().to_string();
    tiered_topic(&rt, &bs, TOPIC, 1, MESSAGES, &[]);
    let log = log_of(&server, TOPIC, 0);
    let half = MESSAGES as i64 / 2;
    wait_for(
        "segments offloaded and local copies deleted",
        Duration::from_secs(60),
        || log.highest_offset_in_remote_storage() > half && log.local_log_start_offset() > half,
    );
    let c: BaseConsumer = common::consumer(
        &bs,
        "clouds",
        &[("fetch.max.bytes", "65536"), ("message.max.bytes", "65536")],
    );
    assign_from_beginning(&c, TOPIC, 1);
    let got = consume_n(&c, MESSAGES, Duration::from_secs(60));
    for (i, (part, offset, key, value)) in got.iter().enumerate() {
        assert_eq!((*part, *offset), (0, i as i64), "message {i} position");
        assert_eq!(
            key.as_deref(),
            Some(format!("k{i}").as_bytes()),
            "key of {i}"
        );
        assert_eq!(value.as_deref(), Some(&value_of(i)[..]), "value of {i}");
    }
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    // The segments are in the emulator's bucket, under the key prefix.
    let listing = ObjectStoreRsm::from_props(emu.props()).unwrap();
    let keys: Vec<String> = rt
        .block_on(listing.store().list(None).try_collect::<Vec<_>>())
        .expect("list the bucket")
        .into_iter()
        .map(|o| o.location.to_string())
        .collect();
    assert!(
        keys.iter()
            .filter(|k| k.starts_with(prefix) && k.contains(TOPIC))
            .count()
            >= 2,
        "segments under {prefix}: {keys:?}"
    );
}

#[test]
fn gcs_backend_offloads_segments_and_serves_them_back() {
    let Some(emu) = start_gcs("strata-tier") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rsm: BTreeMap<String, String> = emu
        .props()
        .into_iter()
        .map(|(k, v)| (format!("rsm.config.{k}"), v))
        .collect();
    rsm.insert("rsm.config.chunk.size".into(), "4096".into());
    rsm.insert("rsm.config.key.prefix".into(), "strata/".into());
    rsm.insert("rsm.config.compression.enabled".into(), "true".into());
    offload_and_read_back(broker_props(dir.path(), rsm), &emu, "strata/");
}

fn write_pem(path: &Path, label: &str, seed: u8) {
    use base64::Engine as _;
    let der: Vec<u8> = (0..600u32)
        .map(|i| (i as u8).wrapping_mul(seed) ^ 0x5a)
        .collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    std::fs::write(
        path,
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        ),
    )
    .unwrap();
}

#[test]
fn aiven_azure_section_offloads_segments_to_azurite_and_serves_them_back() {
    let Some(emu) = start_azurite("test-container") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    write_pem(&keys.join("public.pem"), "PUBLIC KEY", 3);
    write_pem(&keys.join("private.pem"), "PRIVATE KEY", 7);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/aiven-tiered-storage.properties");
    let section = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("@ENDPOINT@", &emu.endpoint)
        .replace("@KEYS@", &keys.display().to_string())
        .replace("@CACHE@", &dir.path().join("cache").display().to_string());
    let rsm: BTreeMap<String, String> = section
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    offload_and_read_back(broker_props(dir.path(), rsm), &emu, "tiered-storage-demo/");
}

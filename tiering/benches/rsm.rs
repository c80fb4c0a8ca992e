//! Upload and ranged-read throughput of `ObjectStoreRsm` against the in-process S3 server (s3s-fs over
//! loopback), next to raw `object_store` multipart put / ranged get of the same bytes in the same run, plus the
//! cost of compression and of encryption. `cargo bench -p strata-tiering` prints criterion's figures, then a
//! summary table with MB/s and the RSM/raw ratios.
#[path = "../tests/common/s3.rs"]
mod s3;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use strata_metadata::RemoteLogSegmentMetadata;
use strata_tiering::testing::{segment_bytes, segment_metadata, write_segment_files, SegmentFiles};
use strata_tiering::{ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt};

const MIB: usize = 1024 * 1024;
const SEGMENT: usize = 32 * MIB;
const PART: usize = 8 * MIB;
const CONCURRENCY: usize = 2;
const READ: u64 = 4 * MIB as u64;

struct Env {
    server: s3::S3Server,
    files: SegmentFiles,
    key_file: String,
    raw: Arc<dyn ObjectStore>,
    _dir: tempfile::TempDir,
}

#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    compression: bool,
    encryption: bool,
}

const VARIANTS: [Variant; 4] = [
    Variant {
        name: "plain",
        compression: false,
        encryption: false,
    },
    Variant {
        name: "zstd",
        compression: true,
        encryption: false,
    },
    Variant {
        name: "aes-gcm",
        compression: false,
        encryption: true,
    },
    Variant {
        name: "zstd+aes-gcm",
        compression: true,
        encryption: true,
    },
];

impl Env {
    async fn new() -> Self {
        let server = s3::S3Server::start("bench").await;
        let dir = tempfile::tempdir().unwrap();
        // Record-like, moderately compressible bytes.
        let files = write_segment_files(dir.path(), 0, segment_bytes(SEGMENT, 42, true), false);
        let key_file = dir.path().join("kek");
        std::fs::write(&key_file, [7u8; 32]).unwrap();
        let raw = ObjectStoreRsm::from_props(server.props())
            .unwrap()
            .store()
            .clone();
        Self {
            server,
            files,
            key_file: key_file.display().to_string(),
            raw,
            _dir: dir,
        }
    }

    fn rsm(&self, v: Variant) -> ObjectStoreRsm {
        let mut p = self.server.props();
        let part = PART.to_string();
        let conc = CONCURRENCY.to_string();
        for (k, val) in [
            ("storage.s3.multipart.upload.part.size", part.as_str()),
            ("upload.concurrency", conc.as_str()),
            ("fetch.chunk.cache.size", "0"),
            (
                "compression.enabled",
                if v.compression { "true" } else { "false" },
            ),
            (
                "encryption.enabled",
                if v.encryption { "true" } else { "false" },
            ),
            ("encryption.key.file", self.key_file.as_str()),
            ("key.prefix", v.name),
        ] {
            p.push((k.to_string(), val.to_string()));
        }
        ObjectStoreRsm::from_props(p).unwrap()
    }

    async fn raw_put(&self) {
        let upload = self
            .raw
            .put_multipart(&Path::from("raw/segment.log"))
            .await
            .unwrap();
        let mut w = WriteMultipart::new_with_chunk_size(upload, PART);
        let mut data = self.files.log.clone();
        while !data.is_empty() {
            w.wait_for_capacity(CONCURRENCY).await.unwrap();
            w.put(data.split_to(PART.min(data.len())));
        }
        w.finish().await.unwrap();
    }

    async fn raw_reads(&self) -> usize {
        let mut n = 0;
        let mut start = 0u64;
        while start < SEGMENT as u64 {
            let end = (start + READ).min(SEGMENT as u64);
            n += black_box(
                self.raw
                    .get_range(&Path::from("raw/segment.log"), start..end)
                    .await
                    .unwrap(),
            )
            .len();
            start = end;
        }
        n
    }
}

async fn rsm_reads(rsm: &ObjectStoreRsm, meta: &RemoteLogSegmentMetadata) -> usize {
    let mut n = 0;
    let mut start = 0u64;
    while start < SEGMENT as u64 {
        let end = (start + READ).min(SEGMENT as u64);
        n += black_box(
            rsm.fetch_log_segment_bytes(meta, start, Some(end - 1))
                .await
                .unwrap(),
        )
        .len();
        start = end;
    }
    n
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let env = rt.block_on(Env::new());
    let meta = segment_metadata("bench", 0, 0, SEGMENT as u64);
    let rsms: Vec<(Variant, ObjectStoreRsm)> = VARIANTS.iter().map(|v| (*v, env.rsm(*v))).collect();
    rt.block_on(async {
        env.raw_put().await;
        for (_, rsm) in &rsms {
            rsm.copy_log_segment_data(&meta, env.files.data.clone())
                .await
                .unwrap();
        }
    });

    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("upload_32MiB");
        g.throughput(Throughput::Bytes(SEGMENT as u64));
        g.bench_function("raw_object_store_multipart", |b| {
            b.to_async(&rt).iter(|| env.raw_put())
        });
        for (v, rsm) in &rsms {
            g.bench_function(format!("rsm_copy_{}", v.name), |b| {
                b.to_async(&rt).iter(|| async {
                    rsm.copy_log_segment_data(&meta, env.files.data.clone())
                        .await
                        .unwrap();
                })
            });
        }
        g.finish();
    }
    {
        let mut g = c.benchmark_group("read_32MiB_in_4MiB_ranges");
        g.throughput(Throughput::Bytes(SEGMENT as u64));
        g.bench_function("raw_object_store_get_range", |b| {
            b.to_async(&rt).iter(|| env.raw_reads())
        });
        for (v, rsm) in &rsms {
            g.bench_function(format!("rsm_fetch_{}", v.name), |b| {
                b.to_async(&rt).iter(|| rsm_reads(rsm, &meta))
            });
        }
        g.finish();
    }
    c.final_summary();

    // Same-run summary: median of 5 timed runs each, MB/s and ratio to raw object_store.
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let time = |f: &dyn Fn() -> Duration| median((0..5).map(|_| f()).collect());
    let mbps = |d: Duration| SEGMENT as f64 / d.as_secs_f64() / 1e6;
    let raw_up = time(&|| {
        let t = Instant::now();
        rt.block_on(env.raw_put());
        t.elapsed()
    });
    let raw_read = time(&|| {
        let t = Instant::now();
        rt.block_on(env.raw_reads());
        t.elapsed()
    });
    println!("\nsummary (32 MiB segment, {} MiB parts x {CONCURRENCY}, 4 MiB chunks, 4 MiB ranged reads, in-process s3s-fs)", PART / MIB);
    println!(
        "{:<28} {:>10} {:>8}   {:>10} {:>8}",
        "variant", "upload MB/s", "vs raw", "read MB/s", "vs raw"
    );
    println!(
        "{:<28} {:>10.1} {:>8}   {:>10.1} {:>8}",
        "raw object_store",
        mbps(raw_up),
        "100%",
        mbps(raw_read),
        "100%"
    );
    for (v, rsm) in &rsms {
        let up = time(&|| {
            let t = Instant::now();
            rt.block_on(rsm.copy_log_segment_data(&meta, env.files.data.clone()))
                .unwrap();
            t.elapsed()
        });
        let rd = time(&|| {
            let t = Instant::now();
            rt.block_on(rsm_reads(rsm, &meta));
            t.elapsed()
        });
        println!(
            "{:<28} {:>10.1} {:>7.0}%   {:>10.1} {:>7.0}%",
            format!("rsm {}", v.name),
            mbps(up),
            100.0 * raw_up.as_secs_f64() / up.as_secs_f64(),
            mbps(rd),
            100.0 * raw_read.as_secs_f64() / rd.as_secs_f64()
        );
    }
}

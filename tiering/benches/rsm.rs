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

    fn memory_rsm(&self, v: Variant) -> ObjectStoreRsm {
        let part = PART.to_string();
        let conc = CONCURRENCY.to_string();
        ObjectStoreRsm::from_props([
            ("storage.backend", "memory"),
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
        ])
        .unwrap()
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
        .measurement_time(Duration::from_secs(5))
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
    {
        // CPU cost of the transforms alone: the same copy and read into an in-memory store.
        let mem: Vec<(Variant, ObjectStoreRsm)> =
            VARIANTS.iter().map(|v| (*v, env.memory_rsm(*v))).collect();
        rt.block_on(async {
            for (_, rsm) in &mem {
                rsm.copy_log_segment_data(&meta, env.files.data.clone())
                    .await
                    .unwrap();
            }
        });
        let mut g = c.benchmark_group("transform_cost_memory_store_32MiB");
        g.throughput(Throughput::Bytes(SEGMENT as u64));
        for (v, rsm) in &mem {
            g.bench_function(format!("copy_{}", v.name), |b| {
                b.to_async(&rt).iter(|| async {
                    rsm.copy_log_segment_data(&meta, env.files.data.clone())
                        .await
                        .unwrap();
                })
            });
            g.bench_function(format!("read_{}", v.name), |b| {
                b.to_async(&rt).iter(|| rsm_reads(rsm, &meta))
            });
        }
        g.finish();
    }
    c.final_summary();

    // Same-run summary against S3. Raw and RSM runs are interleaved round by round so that load from other
    // processes hits both alike; each ratio is the median of the per-round ratios.
    const ROUNDS: usize = 7;
    let timed = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let mbps = |secs: f64| SEGMENT as f64 / secs / 1e6;
    println!(
        "\nsummary: 32 MiB segment, {} MiB parts x {CONCURRENCY}, 4 MiB chunks, 4 MiB ranged reads, in-process s3s-fs, \
         median of {ROUNDS} interleaved rounds",
        PART / MIB
    );
    println!(
        "{:<22} {:>12} {:>12} {:>10} {:>12} {:>12} {:>10}",
        "variant",
        "raw up MB/s",
        "rsm up MB/s",
        "up ratio",
        "raw rd MB/s",
        "rsm rd MB/s",
        "rd ratio"
    );
    for (v, rsm) in &rsms {
        let (mut raw_up, mut up, mut up_ratio) = (vec![], vec![], vec![]);
        let (mut raw_rd, mut rd, mut rd_ratio) = (vec![], vec![], vec![]);
        for _ in 0..ROUNDS {
            let a = timed(&mut || rt.block_on(env.raw_put()));
            let b = timed(&mut || {
                rt.block_on(rsm.copy_log_segment_data(&meta, env.files.data.clone()))
                    .map(|_| ())
                    .unwrap()
            });
            raw_up.push(a);
            up.push(b);
            up_ratio.push(a / b);
            let a = timed(&mut || {
                rt.block_on(env.raw_reads());
            });
            let b = timed(&mut || {
                rt.block_on(rsm_reads(rsm, &meta));
            });
            raw_rd.push(a);
            rd.push(b);
            rd_ratio.push(a / b);
        }
        println!(
            "{:<22} {:>12.1} {:>12.1} {:>9.0}% {:>12.1} {:>12.1} {:>9.0}%",
            format!("rsm {}", v.name),
            mbps(median(raw_up)),
            mbps(median(up)),
            100.0 * median(up_ratio),
            mbps(median(raw_rd)),
            mbps(median(rd)),
            100.0 * median(rd_ratio)
        );
    }
}

//! Append and read throughput of the local log next to raw sequential file I/O of the same bytes, in one run.
//!
//! * append: 1 MiB produce payloads made of 64 uncompressed 16 KiB batches through
//!   `UnifiedLog::append_as_leader` (validation, CRC-32C, offset assignment, index entries, pwrite);
//!   raw write: `pwrite` of the same 1 MiB at the end of a plain file.
//! * read: `UnifiedLog::read` of 1 MiB from successive offsets (index lookup, one pread into a new buffer, batch
//!   boundary walk); raw read: `pread` of 1 MiB at successive positions into a new buffer.
//!
//! * append_compressed: produce payloads of 16 compressed batches (zstd, lz4, gzip, snappy), each holding 200
//!   records of ~400 bytes of word-like text (~80 KiB uncompressed per batch), through the same append path (each
//!   batch is decompressed and its records walked, as Kafka's `LogValidator` does). Throughput counts the
//!   uncompressed record bytes.
//!
//! Both sides work on files of the same size (the log and the raw file are emptied, outside the timed section,
//! every 256 MiB), neither fsyncs. After the criterion groups, the ratios are measured again with the log and
//! the raw file interleaved operation by operation (robust to other load on the machine) and printed.
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, Criterion, Throughput};
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatchBuilder, TopicPartition, UnifiedLog,
};

const PAYLOAD: usize = 1 << 20;
const BATCH: usize = 16 << 10;
const WRAP: u64 = 256 << 20;

/// One uncompressed batch of exactly 16 KiB: 15 records of ~1 KiB values.
fn batch_16k() -> Vec<u8> {
    let build = |last: usize| {
        let mut b = RecordBatchBuilder::new();
        for i in 0..15 {
            let len = if i == 14 { last } else { 1070 };
            b.append(
                1_700_000_000_000 + i as i64,
                None,
                Some(&vec![b'x'; len]),
                &[],
            );
        }
        b.build().to_vec()
    };
    let mut last = 1070;
    loop {
        let b = build(last);
        match b.len().cmp(&BATCH) {
            std::cmp::Ordering::Equal => return b,
            std::cmp::Ordering::Less => last += BATCH - b.len(),
            std::cmp::Ordering::Greater => last -= 1,
        }
    }
}

/// 1 MiB made of 64 batches of 16 KiB.
fn payload() -> Vec<u8> {
    let b = batch_16k();
    let out: Vec<u8> = (0..PAYLOAD / BATCH)
        .flat_map(|_| b.iter().copied())
        .collect();
    assert_eq!(out.len(), PAYLOAD);
    out
}

fn open_log(dir: &std::path::Path) -> (LogManager, Arc<UnifiedLog>) {
    let m = LogManager::open(LogManagerConfig::new(vec![dir.to_path_buf()])).unwrap();
    let mut cfg = LogConfig::default();
    cfg.file_delete_delay_ms = 0;
    let log = m
        .get_or_create_log(&TopicPartition::new("bench", 0), uuid::Uuid::nil(), cfg)
        .unwrap();
    (m, log)
}

fn bench_append(c: &mut Criterion) {
    let data = payload();
    let mut g = c.benchmark_group("append_1MiB");
    g.throughput(Throughput::Bytes(PAYLOAD as u64));
    g.measurement_time(Duration::from_secs(6));

    let dir = tempfile::tempdir().unwrap();
    let (_m, log) = open_log(dir.path());
    g.bench_function("unified_log_append", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if log.size_in_bytes() >= WRAP {
                    log.delete_records(-1).unwrap();
                    log.remove_deleted_files_now();
                }
                let bytes = Bytes::from(data.clone());
                let t = Instant::now();
                log.append_as_leader(bytes, 0).unwrap();
                total += t.elapsed();
            }
            total
        })
    });

    let raw_dir = tempfile::tempdir().unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(raw_dir.path().join("raw"))
        .unwrap();
    let mut pos = 0u64;
    g.bench_function("raw_file_write", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if pos >= WRAP {
                    file.set_len(0).unwrap();
                    pos = 0;
                }
                let t = Instant::now();
                file.write_all_at(&data, pos).unwrap();
                total += t.elapsed();
                pos += data.len() as u64;
            }
            total
        })
    });
    g.finish();
}

fn bench_read(c: &mut Criterion) {
    let data = payload();
    let mut g = c.benchmark_group("read_1MiB");
    g.throughput(Throughput::Bytes(PAYLOAD as u64));
    g.measurement_time(Duration::from_secs(6));
    const FILL: usize = 128; // MiB of data to cycle through

    let dir = tempfile::tempdir().unwrap();
    let (_m, log) = open_log(dir.path());
    for _ in 0..FILL {
        log.append_as_leader(Bytes::from(data.clone()), 0).unwrap();
    }
    let end = log.log_end_offset();
    let mut next = 0i64;
    g.bench_function("unified_log_read", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                if next >= end {
                    next = 0;
                }
                let got = log.read(next, PAYLOAD, true, None).unwrap().records;
                assert_eq!(got.len(), PAYLOAD);
                next += (PAYLOAD / BATCH * 15) as i64;
            }
            t.elapsed()
        })
    });

    let raw_dir = tempfile::tempdir().unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(raw_dir.path().join("raw"))
        .unwrap();
    for i in 0..FILL {
        file.write_all_at(&data, (i * PAYLOAD) as u64).unwrap();
    }
    let size = (FILL * PAYLOAD) as u64;
    let mut pos = 0u64;
    g.bench_function("raw_file_read", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                if pos >= size {
                    pos = 0;
                }
                let mut buf = vec![0u8; PAYLOAD];
                file.read_exact_at(&mut buf, pos).unwrap();
                criterion::black_box(Bytes::from(buf));
                pos += PAYLOAD as u64;
            }
            t.elapsed()
        })
    });
    let mut buf = vec![0u8; PAYLOAD];
    g.bench_function("raw_file_read_reused_buffer", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                if pos >= size {
                    pos = 0;
                }
                file.read_exact_at(&mut buf, pos).unwrap();
                criterion::black_box(&buf);
                pos += PAYLOAD as u64;
            }
            t.elapsed()
        })
    });
    g.finish();
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Runs `a` and `b` alternately `n` times and returns the median seconds of each. Interleaving makes the ratio
/// robust to other load on the machine (both sides see the same conditions).
fn paired(
    n: usize,
    mut a: impl FnMut() -> Duration,
    mut b: impl FnMut() -> Duration,
) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        ta.push(a().as_secs_f64());
        tb.push(b().as_secs_f64());
    }
    (median(&mut ta), median(&mut tb))
}

/// The ratios, measured interleaved (1 MiB per operation, medians of 400 pairs).
fn report() {
    let data = payload();
    let mibs = |secs: f64| 1.0 / secs;

    let dir = tempfile::tempdir().unwrap();
    let (_m, log) = open_log(dir.path());
    let raw_dir = tempfile::tempdir().unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(raw_dir.path().join("raw"))
        .unwrap();
    let mut pos = 0u64;
    let (append, raw_write) = paired(
        400,
        || {
            if log.size_in_bytes() >= WRAP {
                log.delete_records(-1).unwrap();
                log.remove_deleted_files_now();
            }
            let bytes = Bytes::from(data.clone());
            let t = Instant::now();
            log.append_as_leader(bytes, 0).unwrap();
            t.elapsed()
        },
        || {
            if pos >= WRAP {
                file.set_len(0).unwrap();
                pos = 0;
            }
            let t = Instant::now();
            file.write_all_at(&data, pos).unwrap();
            pos += data.len() as u64;
            t.elapsed()
        },
    );

    let fill = 128usize;
    log.delete_records(-1).unwrap();
    log.remove_deleted_files_now();
    let start = log.log_end_offset();
    file.set_len(0).unwrap();
    for i in 0..fill {
        log.append_as_leader(Bytes::from(data.clone()), 0).unwrap();
        file.write_all_at(&data, (i * PAYLOAD) as u64).unwrap();
    }
    let (mut next, end, size) = (start, log.log_end_offset(), (fill * PAYLOAD) as u64);
    let mut rpos = 0u64;
    let mut reused = vec![0u8; PAYLOAD];
    let mut rpos2 = 0u64;
    let (read, raw_read) = paired(
        400,
        || {
            if next >= end {
                next = start;
            }
            let t = Instant::now();
            let got = log.read(next, PAYLOAD, true, None).unwrap().records;
            let e = t.elapsed();
            assert_eq!(got.len(), PAYLOAD);
            next += (PAYLOAD / BATCH * 15) as i64;
            e
        },
        || {
            if rpos >= size {
                rpos = 0;
            }
            let t = Instant::now();
            let mut buf = vec![0u8; PAYLOAD];
            file.read_exact_at(&mut buf, rpos).unwrap();
            let b = criterion::black_box(Bytes::from(buf));
            let e = t.elapsed();
            drop(b);
            rpos += PAYLOAD as u64;
            e
        },
    );
    let (_, raw_read_reused) = paired(
        100,
        || Duration::ZERO,
        || {
            if rpos2 >= size {
                rpos2 = 0;
            }
            let t = Instant::now();
            file.read_exact_at(&mut reused, rpos2).unwrap();
            criterion::black_box(&reused);
            rpos2 += PAYLOAD as u64;
            t.elapsed()
        },
    );
    println!("\n=== strata-storage throughput, interleaved pairs (median of 400, 1 MiB per op, no fsync) ===");
    println!(
        "append {:7.0} MiB/s | raw write {:7.0} MiB/s | append/raw = {:5.1}% (target >= 70%)",
        mibs(append),
        mibs(raw_write),
        100.0 * raw_write / append
    );
    println!(
        "read   {:7.0} MiB/s | raw read  {:7.0} MiB/s | read/raw   = {:5.1}% (target >= 80%; raw = pread into a new 1 MiB buffer)",
        mibs(read),
        mibs(raw_read),
        100.0 * raw_read / read
    );
    println!(
        "read vs pread into one reused buffer ({:7.0} MiB/s): {:5.1}%",
        mibs(raw_read_reused),
        100.0 * raw_read_reused / read
    );
}

/// 16 batches of 200 records of ~400 bytes of word-like text each, compressed with `codec`, concatenated; and the
/// uncompressed size of their records.
fn compressed_payload(codec: kafka_protocol::records::Compression) -> (Vec<u8>, u64) {
    use kafka_protocol::records::{
        Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType as Tt,
    };
    const WORDS: [&str; 16] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut out = Vec::new();
    let mut raw = 0u64;
    for _ in 0..16 {
        let records: Vec<Record> = (0..200i64)
            .map(|i| {
                let mut value = String::with_capacity(420);
                while value.len() < 400 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    value.push_str(WORDS[(seed % 16) as usize]);
                    value.push_str(&format!(" {} ", seed % 1000));
                }
                raw += value.len() as u64;
                Record {
                    transactional: false,
                    control: false,
                    delete_horizon: false,
                    partition_leader_epoch: 0,
                    producer_id: -1,
                    producer_epoch: -1,
                    timestamp_type: Tt::Creation,
                    offset: i,
                    sequence: (i - 1) as i32,
                    timestamp: 1_700_000_000_000 + i,
                    key: Some(Bytes::from(format!("key-{i}"))),
                    value: Some(Bytes::from(value)),
                    headers: Default::default(),
                }
            })
            .collect();
        let mut buf = bytes::BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            &records,
            &RecordEncodeOptions {
                version: 2,
                compression: codec,
            },
        )
        .unwrap();
        out.extend_from_slice(&buf);
    }
    (out, raw)
}

fn bench_append_compressed(c: &mut Criterion) {
    use kafka_protocol::records::Compression as C;
    let mut g = c.benchmark_group("append_compressed");
    g.measurement_time(Duration::from_secs(6));
    for (name, codec) in [
        ("zstd", C::Zstd),
        ("lz4", C::Lz4),
        ("gzip", C::Gzip),
        ("snappy", C::Snappy),
    ] {
        let (data, raw) = compressed_payload(codec);
        g.throughput(Throughput::Bytes(raw));
        let dir = tempfile::tempdir().unwrap();
        let (_m, log) = open_log(dir.path());
        g.bench_function(format!("{name}_{}KiB_wire", data.len() >> 10), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    if log.size_in_bytes() >= WRAP {
                        log.delete_records(-1).unwrap();
                        log.remove_deleted_files_now();
                    }
                    let bytes = Bytes::from(data.clone());
                    let t = Instant::now();
                    log.append_as_leader(bytes, 0).unwrap();
                    total += t.elapsed();
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_append, bench_append_compressed, bench_read);

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    // `cargo test --benches` runs each benchmark once without `--bench`; the ratios are for real runs only.
    if std::env::args().any(|a| a == "--bench") {
        report();
    }
}

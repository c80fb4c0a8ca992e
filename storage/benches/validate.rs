//! Per-batch validation on append, without the log: what `UnifiedLog::append_as_leader` spends on a client's
//! batch before it takes the log's lock (issue 30 item 5).
//!
//! * `crc_and_header`: `RecordBatch::new` (header checks and the CRC-32C of the whole batch);
//! * `records`: the record walk of `validate_for_append` (every record's structure, offset deltas, keys,
//!   timestamps);
//!
//! over an uncompressed batch of ~1 MB made of 100-byte values without keys (the shape librdkafka sends with
//! `batch.size=1000000`, about 9,000 records) and one of 16 KiB holding 15 records of ~1 KiB. Throughput counts
//! the batch's bytes.
use std::time::Duration;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use strata_storage::{RecordBatch, RecordBatchBuilder};

/// One uncompressed batch of `count` records with values of `value_len` bytes and no key.
fn batch(count: usize, value_len: usize) -> Bytes {
    let mut b = RecordBatchBuilder::new();
    let value = vec![b'x'; value_len];
    for i in 0..count {
        b.append(1_700_000_000_000 + i as i64, None, Some(&value), &[]);
    }
    b.build()
}

fn bench_validate(c: &mut Criterion) {
    let mut g = c.benchmark_group("validate");
    g.measurement_time(Duration::from_secs(4));
    for (name, bytes) in [
        ("9000x100B", batch(9000, 100)),
        ("15x1KiB", batch(15, 1070)),
    ] {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("crc_and_header", name),
            &bytes,
            |b, bytes| b.iter(|| RecordBatch::new(bytes.clone()).unwrap()),
        );
        let parsed = RecordBatch::new(bytes.clone()).unwrap();
        g.bench_with_input(BenchmarkId::new("records", name), &parsed, |b, batch| {
            b.iter(|| batch.validate_records_for_bench().unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_validate);
criterion_main!(benches);

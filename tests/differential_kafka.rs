//! Differential tests (issue 33): every case of `tests/differential/cases/` is replayed against strata (in-process)
//! and against Apache Kafka 4.4 started by `bench/kafka/kafka.sh`; the answers are compared field by field after
//! the normaliser of `tests/differential/tree.rs`. The test fails on any difference that is not in
//! `tests/differential/allow.txt` (which names each deliberate difference and why). The report goes to stdout and
//! `target/tmp/differential-report.txt`.
//!
//! Kafka comes from Maven Central (`kafka.sh install`, cached under `~/.cache/strata-kafka`); when it cannot be
//! fetched or started the test fails. `STRATA_DIFFERENTIAL=off` skips it, saying so.

use crate::common;
use crate::differential;

use std::time::Instant;

use differential::run::{compare, report, run_on, Allow, Result};

#[test]
fn strata_answers_as_kafka_4_4_does() {
    if std::env::var("STRATA_DIFFERENTIAL").as_deref() == Ok("off") {
        eprintln!("differential tests SKIPPED: STRATA_DIFFERENTIAL=off");
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let t0 = Instant::now();
    // STRATA_DIFFERENTIAL_KAFKA=host:port: a Kafka the developer started (bench/kafka/kafka.sh start, with
    // auto.create.topics.enable=false), for quick iterations; otherwise one is started here.
    let (kafka_addr, _kafka) = match std::env::var("STRATA_DIFFERENTIAL_KAFKA") {
        Ok(a) => (
            a.parse().expect("STRATA_DIFFERENTIAL_KAFKA=host:port"),
            None,
        ),
        Err(_) => {
            let k = differential::Kafka::start(root);
            eprintln!("kafka: serving on {} after {} ms", k.addr, k.start_ms);
            (k.addr, Some(k))
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let rt = common::runtime();
    let (text, ok) = rt.block_on(async {
        let strata = common::start_broker_with(dir.path(), differential::SHARED_PROPS).await;
        let strata_addr = strata.local_addr();
        differential::warm_up(strata_addr).await;
        differential::warm_up(kafka_addr).await;
        let kafka_versions = differential::advertised(kafka_addr).await;
        let strata_versions = differential::advertised(strata_addr).await;
        let only = std::env::var("STRATA_DIFFERENTIAL_ONLY").unwrap_or_else(|_| "*".into());
        let cases: Vec<_> = differential::cases::all(&strata_versions, &kafka_versions)
            .into_iter()
            .filter(|c| differential::run::glob(&only, &c.name))
            .collect();
        let mut names = std::collections::BTreeSet::new();
        for c in &cases {
            assert!(names.insert(c.prefix()), "two cases named {}", c.name);
        }
        let allow = Allow::parse(include_str!("differential/allow.txt"));
        let mut results = Vec::new();
        for case in &cases {
            let (s, k) = tokio::join!(run_on(strata_addr, case), run_on(kafka_addr, case));
            let diffs = compare(case, &s, &k);
            let allowed = diffs.iter().map(|d| allow.explain(&case.name, d)).collect();
            results.push(Result {
                name: case.name.clone(),
                diffs,
                allowed,
            });
        }
        strata.shutdown().await.ok();
        report(&results, &allow)
    });
    let text = format!("{text}(run took {:.1} s)\n", t0.elapsed().as_secs_f64());
    println!("{text}");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-report.txt");
    std::fs::write(&out, &text).ok();
    assert!(
        ok,
        "strata differs from Kafka 4.4 beyond tests/differential/allow.txt (report: {})",
        out.display()
    );
}

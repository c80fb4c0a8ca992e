//! The `strata` binary's command line (this file also makes cargo build the binary for the root e2e tests).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_strata");

#[test]
fn help_lists_every_kafka_property() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for k in strata_broker::config::KEYS {
        assert!(text.contains(k.name), "--help lacks {}", k.name);
    }
}

#[test]
fn bad_config_value_stops_startup_naming_key_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["--override", "max.connections=-3"])
        .args(["--override", &format!("log.dirs={}", dir.path().display())])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("max.connections") && err.contains("-3"),
        "{err}"
    );
}

#[test]
fn config_file_and_overrides_are_both_read() {
    let dir = tempfile::tempdir().unwrap();
    let props = dir.path().join("server.properties");
    // A typo under strata's own namespace stops start-up (an unknown Kafka-style key only warns: see
    // tests/kafka_setups.rs), which shows the file was read; the override's bad value names its key.
    std::fs::write(&props, "num.partitions=3\nrsm.config.storage.bakend=s3\n").unwrap();
    let out = Command::new(BIN)
        .args(["--config", props.to_str().unwrap()])
        .args(["--override", &format!("log.dirs={}", dir.path().display())])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("storage.bakend"));
    std::fs::write(&props, "num.partitions=3\n").unwrap();
    let out = Command::new(BIN)
        .args(["--config", props.to_str().unwrap()])
        .args(["--override", "num.partitions=x"])
        .args(["--override", &format!("log.dirs={}", dir.path().display())])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("num.partitions") && err.contains('x'), "{err}");
}

//! `docs/CONFIG.md` is rendered from the config tables; this test fails when the committed file is stale and
//! prints the command that regenerates it.

use std::path::PathBuf;

fn reference_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/CONFIG.md")
}

#[test]
fn committed_config_reference_matches_the_tables() {
    let path = reference_path();
    let rendered = strata_broker::config::reference::markdown();
    if std::env::var_os("STRATA_BLESS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != rendered {
        let first = committed
            .lines()
            .zip(rendered.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(rendered.lines().count()));
        panic!(
            "{} is stale (first difference at line {}); regenerate it with:\n    {}",
            path.display(),
            first + 1,
            strata_broker::config::reference::REGENERATE
        );
    }
}

#[test]
fn config_reference_lists_every_owner_and_key_once() {
    let md = strata_broker::config::reference::markdown();
    for owner in [
        "## Broker",
        "## Tiered storage: the RemoteLogManager",
        "## Tiered storage: `rsm.config.`",
        "## Tiered storage: `rlmm.config.`",
        "## Topic configs",
        "## Apache Kafka's other broker keys",
    ] {
        assert!(md.contains(owner), "missing section {owner}");
    }
    let section = |title: &str| {
        let start = md.find(title).unwrap();
        let end = md[start + 1..]
            .find("\n## ")
            .map_or(md.len(), |e| start + 1 + e);
        md[start..end].to_string()
    };
    let broker = section("## Broker");
    for k in strata_broker::config::BROKER_KEYS {
        assert_eq!(
            broker.matches(&format!("| `{}`", k.name)).count(),
            1,
            "broker key {}",
            k.name
        );
    }
    let topic = section("## Topic configs");
    for k in strata_broker::config::topic::TOPIC_CONFIG.keys() {
        assert_eq!(
            topic.matches(&format!("| `{}`", k.name)).count(),
            1,
            "topic key {}",
            k.name
        );
    }
    let kafka = section("## Apache Kafka's other broker keys");
    for k in strata_broker::config::KAFKA_ONLY_KEYS {
        assert_eq!(
            kafka.matches(&format!("| `{}`", k.name)).count(),
            1,
            "Kafka key {}",
            k.name
        );
    }
    let rsm = section("## Tiered storage: `rsm.config.`");
    for k in strata_tiering::RSM_CONFIG.keys() {
        let row = format!("| `rsm.config.{}`", k.name);
        assert_eq!(rsm.matches(&row).count(), 1, "rsm key {}", k.name);
    }
    let rlmm = section("## Tiered storage: `rlmm.config.`");
    for k in strata_metadata::RLMM_CONFIG.keys() {
        assert_eq!(
            rlmm.matches(&format!("| `{}`", k.name)).count(),
            1,
            "rlmm key {}",
            k.name
        );
    }
    assert!(md.contains("| `log.retention.ms` | long | `604800000` | at least -1 | used |"));
    assert!(md.contains("config file < environment < `--override`"));
}

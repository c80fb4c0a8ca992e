//! The configuration reference (`docs/CONFIG.md`), rendered from the tables: the broker's keys
//! ([`crate::config::BROKER_KEYS`]), the RemoteLogManager's, `rsm.config.` ([`strata_tiering::RSM_CONFIG`]),
//! `rlmm.config.` ([`strata_metadata::RLMM_CONFIG`]), topic configs ([`crate::config::topic::TOPIC_CONFIG`]) and
//! Apache Kafka's other broker keys ([`crate::config::KAFKA_ONLY_KEYS`]). A test (`broker/tests/config_reference.rs`)
//! fails when the committed file differs from [`markdown`].

use std::fmt::Write;

use strata_storage::config_def::{render, ConfigDef, Effect};

use super::dynamic_keys::{KEPT_NO_EFFECT, NOT_APPLIED};
use super::tiering_keys::{SYSTEM_ENABLE_DEFAULT, TIERING_KEYS};
use super::{BROKER_KEYS, KAFKA_ONLY_KEYS, NO_EFFECT_PREFIXES};
use strata_tiering::rlm::RLM_CONFIG;

/// The command that rewrites `docs/CONFIG.md` from the tables.
pub const REGENERATE: &str = "STRATA_BLESS=1 cargo test -p strata-broker --test config_reference";

/// The whole reference, as Markdown.
pub fn markdown() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# strata configuration reference\n\n\
         <!-- Generated from the config tables; do not edit. Regenerate: {REGENERATE} -->\n\n\
         Properties come from the `--config` file, then `KAFKA_*` environment variables, then `--override key=value`: \
         a later source wins (config file < environment < `--override`). The **strata** column says what strata \
         does with a key: `used`; `no effect` (accepted, listed once at start-up, the reason given); `refused` (the \
         feature does not exist in strata yet). `*` marks strata's own keys (not Kafka's): a typo near one stops \
         start-up. A bad value for a used key stops start-up naming key and value.\n"
    );
    let _ = writeln!(
        out,
        "## Broker\n\n{}",
        render::markdown(&ConfigDef::new("broker", BROKER_KEYS), "")
    );
    let _ = writeln!(
        out,
        "## Tiered storage: the RemoteLogManager\n\n\
         `remote.log.*` and `remote.fetch.*` (Kafka's names). strata's default of \
         `remote.log.storage.system.enable` is `{SYSTEM_ENABLE_DEFAULT}` (the table gives Kafka's).\n\n{}",
        render::markdown(&RLM_CONFIG, "")
    );
    let _ = writeln!(
        out,
        "The prefixes of the two plug-ins' properties, and strata's `/metrics` listener:\n\n\
         | key | default | strata | doc |\n|---|---|---|---|"
    );
    for (name, default, doc) in TIERING_KEYS.iter().filter(|(n, ..)| {
        !n.starts_with("rsm.config.")
            && !n.starts_with("rlmm.config.")
            && RLM_CONFIG.key(n).is_none()
    }) {
        let _ = writeln!(out, "| `{name}` | `{default}` | used | {doc} |");
    }
    let _ = writeln!(
        out,
        "\n## Tiered storage: `rsm.config.` (the RemoteStorageManager)\n\n\
         The prefix is Kafka's `remote.log.storage.manager.impl.prefix`; a typo under it stops start-up.\n\n{}",
        render::markdown(&strata_tiering::RSM_CONFIG, "rsm.config.")
    );
    let _ = writeln!(
        out,
        "## Tiered storage: `rlmm.config.` (the RemoteLogMetadataManager)\n\n\
         The prefix is Kafka's `remote.log.metadata.manager.impl.prefix`; a typo under it stops start-up.\n\n{}",
        render::markdown(&strata_metadata::RLMM_CONFIG, "")
    );
    let _ = writeln!(
        out,
        "## Topic configs\n\n\
         Set by CreateTopics, AlterConfigs and IncrementalAlterConfigs (a bad value is INVALID_CONFIG naming key \
         and value); a topic without an override takes the broker property named as its broker default.\n\n{}",
        render::markdown(&crate::config::topic::TOPIC_CONFIG, "")
    );
    dynamic_section(&mut out);
    kafka_only_section(&mut out);
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The broker keys Kafka changes at run time (AlterConfigs / IncrementalAlterConfigs on BROKER) that strata keeps
/// with no effect, and those it refuses at run time.
fn dynamic_section(out: &mut String) {
    let _ = writeln!(
        out,
        "## Dynamic broker configs kept with no effect\n\n\
         AlterConfigs / IncrementalAlterConfigs on the BROKER resource change the log defaults, the log cleaner's \
         keys, the connection limits and the remote storage quotas at run time (each `used` above). These other \
         keys Kafka takes at run time change nothing on strata (see their reason below, under Apache Kafka's other \
         broker keys): a dynamic value is checked by Kafka's type, kept with the others and described as \
         DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG, with no effect. Per broker only: refused on the \
         cluster-wide default resource (`\"\"`), as Kafka refuses them.\n\n\
         | key | Kafka type | where |\n|---|---|---|"
    );
    for (k, per_broker) in KEPT_NO_EFFECT {
        let scope = match per_broker {
            true => "per broker only",
            false => "per broker or cluster-wide",
        };
        let _ = writeln!(out, "| `{}` | {} | {scope} |", k.name, k.ty.as_str());
    }
    let _ = writeln!(
        out,
        "\nKafka takes these at run time too; strata reads them only at start, so a dynamic change is refused \
         (INVALID_CONFIG with the reason):\n\n| key | why |\n|---|---|"
    );
    for (name, why) in NOT_APPLIED {
        let _ = writeln!(out, "| `{name}` | {why} |");
    }
    out.push('\n');
}

/// Apache Kafka's other broker keys, grouped by the reason they have no effect.
fn kafka_only_section(out: &mut String) {
    let _ = writeln!(
        *out,
        "## Apache Kafka's other broker keys\n\n\
         Every other Apache Kafka 4.x broker key is accepted with no effect on a single node, and so is any key \
         under the prefixes {}. Those given are listed once at start-up in one INFO line.\n",
        NO_EFFECT_PREFIXES
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Grouped by reason, in the order reasons first appear.
    let mut reasons: Vec<&str> = Vec::new();
    for k in KAFKA_ONLY_KEYS {
        let why = match k.effect {
            Effect::NoEffect(why) | Effect::Unsupported(why) => why,
            Effect::Used => "used",
        };
        if !reasons.contains(&why) {
            reasons.push(why);
        }
    }
    for why in reasons {
        let _ = writeln!(
            *out,
            "### No effect: {why}\n\n| key | type | doc |\n|---|---|---|"
        );
        for k in KAFKA_ONLY_KEYS.iter().filter(
            |k| matches!(k.effect, Effect::NoEffect(w) | Effect::Unsupported(w) if w == why),
        ) {
            let _ = writeln!(
                *out,
                "| `{}` | {} | {} |",
                k.name,
                k.ty.as_str(),
                k.doc.replace('|', "\\|")
            );
        }
        out.push('\n');
    }
}

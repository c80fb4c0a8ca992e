//! The tiered-storage keys the broker's properties carry besides its own table, as `strata --help`, the
//! configuration reference and DescribeConfigs list them: the RemoteLogManager's table, the RSM and RLMM
//! prefixes, every key of the `rsm.config.` and `rlmm.config.` tables, and `http.listener`. Kept with the config
//! tables (it depends only on the tables of the other crates) so that [`super::reference`] renders every table
//! from here; [`crate::tiered`] parses them ([`crate::tiered::TieringConfig`]).

use std::sync::LazyLock;

use strata_metadata::RLMM_CONFIG;
use strata_storage::config_def::{render, ConfigKey};
use strata_tiering::rlm::RLM_CONFIG;
use strata_tiering::RSM_CONFIG;

/// Kafka: `remote.log.storage.manager.impl.prefix`.
pub const RSM_PREFIX_KEY: &str = "remote.log.storage.manager.impl.prefix";
/// Kafka: `remote.log.metadata.manager.impl.prefix`.
pub const RLMM_PREFIX_KEY: &str = "remote.log.metadata.manager.impl.prefix";
/// Default of [`RSM_PREFIX_KEY`].
pub const DEFAULT_RSM_PREFIX: &str = "rsm.config.";
/// strata: `http.listener`, the console, the JSON API and `/metrics` ([`crate::http`]).
pub const HTTP_LISTENER_KEY: &str = "http.listener";
/// Default of [`HTTP_LISTENER_KEY`]: on, for a developer's broker (loopback only).
pub const HTTP_LISTENER_DEFAULT: &str = "127.0.0.1:9464";

/// strata's default of `remote.log.storage.system.enable` (Kafka's is false): `strata` with no arguments tiers.
pub const SYSTEM_ENABLE_DEFAULT: &str = "true";

/// The two prefixes, listed after the RemoteLogManager's table ([`RLM_CONFIG`]) in `strata --help`.
const PREFIX_KEYS: &[(&str, &str, &str)] = &[
    (
        RSM_PREFIX_KEY,
        DEFAULT_RSM_PREFIX,
        "prefix of the remote storage manager's properties",
    ),
    (
        RLMM_PREFIX_KEY,
        "rlmm.config.",
        "prefix of the remote log metadata manager's properties",
    ),
];

/// `http.listener`, listed after the RSM and RLMM keys.
const HTTP_LISTENER_HELP: (&str, &str, &str) = (
    "http.listener",
    HTTP_LISTENER_DEFAULT,
    "host:port serving the console (/), its JSON API (/api/v1/) and GET /metrics (Prometheus); empty turns it off; a port in use is a WARN and the broker runs without it",
);

/// The tiering properties `strata --help` lists, with defaults: [`RLM_CONFIG`] and the prefixes, then every key of the
/// `rsm.config.` and `rlmm.config.` tables ([`RSM_CONFIG`], [`RLMM_CONFIG`]), then `http.listener`. Iterate
/// it like a slice of (name, default, doc).
pub const TIERING_KEYS: TieringKeys = TieringKeys;

/// See [`TIERING_KEYS`].
#[derive(Clone, Copy, Debug)]
pub struct TieringKeys;

type HelpLine = (&'static str, &'static str, &'static str);

static TIERING_LIST: LazyLock<Vec<HelpLine>> = LazyLock::new(|| {
    // Built once: the prefixed names and default texts live as long as the process.
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let line = |prefix: &str, k: &'static ConfigKey| -> HelpLine {
        let default = match k.default {
            Some("") if k.default_doc.is_none() => "(empty)".to_string(),
            _ => render::default_text(k),
        };
        (leak(format!("{prefix}{}", k.name)), leak(default), k.doc)
    };
    RLM_CONFIG
        .keys()
        .map(|k| match k.name {
            "remote.log.storage.system.enable" => (k.name, SYSTEM_ENABLE_DEFAULT, k.doc),
            _ => line("", k),
        })
        .chain(PREFIX_KEYS.iter().copied())
        .chain(RSM_CONFIG.keys().map(|k| line(DEFAULT_RSM_PREFIX, k)))
        .chain(RLMM_CONFIG.keys().map(|k| line("", k)))
        .chain([HTTP_LISTENER_HELP])
        .collect()
});

impl TieringKeys {
    /// The (name, default, doc) lines.
    pub fn iter(self) -> std::slice::Iter<'static, HelpLine> {
        TIERING_LIST.iter()
    }
}

impl IntoIterator for TieringKeys {
    type Item = &'static HelpLine;
    type IntoIter = std::slice::Iter<'static, HelpLine>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

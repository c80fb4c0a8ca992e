//! Documentation derived from a [`ConfigDef`]: the `--help` text and the README's Markdown reference.

use std::fmt::Write;

use super::{ConfigDef, ConfigKey, Effect, Validator};

/// A validator as documentation ("at least 1", "one of delete, compact").
pub fn validator_text(v: &Validator) -> String {
    match v {
        Validator::Any => String::new(),
        Validator::AtLeast(m) => format!("at least {m}"),
        Validator::Between(a, b) => format!("{a}..={b}"),
        Validator::BetweenF(a, b) => format!("{a}..={b}"),
        Validator::OneOf(s) | Validator::OneOfIgnoreCase(s) => format!("one of {}", s.join(", ")),
        Validator::ListOf(s) => format!("a list of {}", s.join(", ")),
        Validator::NonEmpty => "not empty".into(),
        Validator::Custom(_) => String::new(),
    }
}

/// The default as documentation.
pub fn default_text(k: &ConfigKey) -> String {
    match (k.default_doc, k.default) {
        (Some(doc), _) => format!("({doc})"),
        (None, Some("")) => "\"\"".into(),
        (None, Some(d)) => d.to_string(),
        (None, None) => "(none)".into(),
    }
}

fn effect_text(k: &ConfigKey) -> String {
    match k.effect {
        Effect::Used => String::new(),
        Effect::NoEffect(why) => format!(" [no effect: {why}]"),
        Effect::Unsupported(why) => format!(" [refused: {why}]"),
    }
}

/// `--help` lines: `  name=default  doc (validator) [effect]`, one per key, used keys first.
pub fn help(def: &ConfigDef) -> String {
    let mut out = String::new();
    let used = def.keys().filter(|k| k.effect == Effect::Used);
    let other = def.keys().filter(|k| k.effect != Effect::Used);
    for k in used.chain(other) {
        let valid = validator_text(&k.validator);
        let valid = if valid.is_empty() {
            String::new()
        } else {
            format!(" ({valid})")
        };
        let star = if k.strata_only { "*" } else { "" };
        let _ = writeln!(
            out,
            "  {}{star}={}  {}{valid}{}",
            k.name,
            default_text(k),
            k.doc,
            effect_text(k)
        );
    }
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// What strata does with a key, for the reference: `used`, `no effect: why`, `refused: why`.
pub fn effect_cell(k: &ConfigKey) -> String {
    match k.effect {
        Effect::Used => "used".into(),
        Effect::NoEffect(why) => format!("no effect: {why}"),
        Effect::Unsupported(why) => format!("refused: {why}"),
    }
}

/// A Markdown table of the keys, names prefixed with `prefix` (`rsm.config.` for a prefixed table): name, type,
/// default, valid values, what strata does with it, documentation. `*` marks strata's own keys.
pub fn markdown(def: &ConfigDef, prefix: &str) -> String {
    let mut out = String::from(
        "| key | type | default | valid values | strata | doc |\n|---|---|---|---|---|---|\n",
    );
    for k in def.keys() {
        let star = if k.strata_only { "*" } else { "" };
        let synonyms: Vec<String> = k.synonyms.iter().map(|s| format!("`{}`", s.name)).collect();
        let synonyms = if synonyms.is_empty() {
            String::new()
        } else {
            format!(" (synonyms: {})", synonyms.join(", "))
        };
        let server: Vec<String> = k
            .server_default
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect();
        let server = if server.is_empty() {
            String::new()
        } else {
            format!(" (broker default: {})", server.join(" > "))
        };
        let _ = writeln!(
            out,
            "| `{prefix}{}`{star} | {} | `{}` | {} | {} | {}{}{} |",
            k.name,
            k.ty.as_str(),
            cell(&default_text(k)),
            cell(&validator_text(&k.validator)),
            cell(&effect_cell(k)),
            cell(k.doc),
            synonyms,
            server
        );
    }
    out
}

//! Configuration as data, in the spirit of Kafka's `ConfigDef`: each owner (broker, topic, `rsm.config.`,
//! `rlmm.config.`) declares one table of [`ConfigKey`]s — name, [`Type`], default, [`Validator`], documentation
//! and what strata does with it ([`Effect`]) — and everything else is derived from that table: parsing and
//! validation ([`ConfigDef::parse`], one parser per type in [`parse`]), `--help` and the README reference
//! ([`render`]), DescribeConfigs (types, defaults, sources, synonyms).
//!
//! The machinery lives in the lowest crate so that every owner (storage's topic config, metadata's RLMM config,
//! tiering's RSM config, the broker's own) can declare its table next to the struct it fills.
//!
//! ```
//! use strata_storage::config_def::{ConfigDef, ConfigKey, Effect, Source, Type, Validator};
//!
//! const KEYS: &[ConfigKey] = &[
//!     ConfigKey::new("num.partitions", Type::Int, "partitions of an auto-created topic")
//!         .default("1")
//!         .validator(Validator::AtLeast(1)),
//!     ConfigKey::new("process.roles", Type::List, "KRaft roles")
//!         .effect(Effect::NoEffect("a single node is both broker and controller")),
//! ];
//! let def = ConfigDef::new("broker", KEYS);
//! let props = [("num.partitions", " 3 ")];
//! let values = def.parse(props.iter().map(|(k, v)| (*k, *v, Source::File))).unwrap();
//! assert_eq!(values.int("num.partitions"), 3);
//! assert!(values.unknown().is_empty());
//! ```

mod key;
pub mod parse;
pub mod render;

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

pub use key::{type_bit, FromValue, Key};
pub use parse::Value;

/// A value's type, as Kafka's `ConfigDef.Type` (DescribeConfigs reports [`Type::kafka_id`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// `true` / `false`, case-insensitive.
    Boolean,
    /// A signed 16-bit integer.
    Short,
    /// A signed 32-bit integer.
    Int,
    /// A signed 64-bit integer (sizes in bytes, durations in milliseconds).
    Long,
    /// A floating-point number.
    Double,
    /// Text, trimmed.
    String,
    /// A comma-separated list, items trimmed; an empty value is an empty list.
    List,
    /// A secret: never printed, reported as null by DescribeConfigs.
    Password,
    /// A Java class name (accepted only where strata has its own implementation or none is needed).
    Class,
}

impl Type {
    /// Kafka's `ConfigType` id in DescribeConfigs responses (v3+).
    pub fn kafka_id(self) -> i8 {
        match self {
            Type::Boolean => 1,
            Type::String => 2,
            Type::Int => 3,
            Type::Short => 4,
            Type::Long => 5,
            Type::Double => 6,
            Type::List => 7,
            Type::Class => 8,
            Type::Password => 9,
        }
    }

    /// Lowercase name, as Kafka's documentation prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Type::Boolean => "boolean",
            Type::Short => "short",
            Type::Int => "int",
            Type::Long => "long",
            Type::Double => "double",
            Type::String => "string",
            Type::List => "list",
            Type::Password => "password",
            Type::Class => "class",
        }
    }
}

/// A check on a parsed value, as Kafka's `ConfigDef.Validator`s.
#[derive(Clone, Copy)]
pub enum Validator {
    /// Anything the type parses.
    Any,
    /// A number at least this.
    AtLeast(i64),
    /// A number in `min..=max`.
    Between(i64, i64),
    /// A double in `min..=max`.
    BetweenF(f64, f64),
    /// One of these strings (case-sensitive, as Kafka's `ValidString`).
    OneOf(&'static [&'static str]),
    /// One of these strings, ignoring case (Kafka's `CaseInsensitiveValidString`).
    OneOfIgnoreCase(&'static [&'static str]),
    /// A list whose every item is one of these (Kafka's `ValidList`).
    ListOf(&'static [&'static str]),
    /// A non-empty string or list.
    NonEmpty,
    /// Any other rule: `Err(reason)` refuses the value.
    Custom(fn(&Value) -> Result<(), String>),
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render::validator_text(self))
    }
}

/// What strata does with a key it knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The value is used.
    Used,
    /// Accepted and ignored: it has no meaning on a single node (the text says why). Listed once at start-up.
    NoEffect(&'static str),
    /// Refused when set: the feature does not exist in strata yet (the text says which).
    Unsupported(&'static str),
}

/// A second name for a key, with the factor that turns its value into the key's unit (Kafka's
/// `log.retention.hours` → `log.retention.ms` × 3 600 000). The key's own name wins over its synonyms, and
/// earlier synonyms over later ones, as in Kafka.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Synonym {
    /// The other name.
    pub name: &'static str,
    /// Multiply a synonym's value by this to get the key's value (1 for a plain alias).
    pub scale: i64,
}

/// One configuration key.
#[derive(Clone, Copy, Debug)]
pub struct ConfigKey {
    /// Kafka's name (or strata's, for [`ConfigKey::strata_only`] keys).
    pub name: &'static str,
    /// The value's type.
    pub ty: Type,
    /// Default value as it would be written in a properties file; `None` = no default (null).
    pub default: Option<&'static str>,
    /// How to describe a computed default in documentation (e.g. "the bound listener"); `None` = `default`.
    pub default_doc: Option<&'static str>,
    /// The check on a value.
    pub validator: Validator,
    /// What it controls.
    pub doc: &'static str,
    /// What strata does with it.
    pub effect: Effect,
    /// Other names of the same setting.
    pub synonyms: &'static [Synonym],
    /// A strata key (not Kafka's): a typo near it stops start-up instead of warning.
    pub strata_only: bool,
    /// Topic keys: the broker properties that supply the default, in Kafka's precedence order
    /// (`retention.ms` ← `log.retention.ms` > `log.retention.minutes` > `log.retention.hours`); empty = the
    /// table's own default (Kafka's `CONFIGS_WITH_NO_SERVER_DEFAULTS`). Not accepted as names of this table.
    pub server_default: &'static [Synonym],
}

impl ConfigKey {
    /// A used key with no default and no validator.
    pub const fn new(name: &'static str, ty: Type, doc: &'static str) -> Self {
        Self {
            name,
            ty,
            default: None,
            default_doc: None,
            validator: Validator::Any,
            doc,
            effect: Effect::Used,
            synonyms: &[],
            strata_only: false,
            server_default: &[],
        }
    }
    /// Sets the default.
    pub const fn default(mut self, default: &'static str) -> Self {
        self.default = Some(default);
        self
    }
    /// Takes the default of `other` (a broker key that supplies a topic key's default has the topic key's, written
    /// once in the topic table).
    pub const fn default_from(mut self, other: ConfigKey) -> Self {
        self.default = other.default;
        self
    }
    /// Describes a computed default in documentation.
    pub const fn default_doc(mut self, doc: &'static str) -> Self {
        self.default_doc = Some(doc);
        self
    }
    /// Sets the validator.
    pub const fn validator(mut self, validator: Validator) -> Self {
        self.validator = validator;
        self
    }
    /// Sets the effect.
    pub const fn effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }
    /// Sets the synonyms.
    pub const fn synonyms(mut self, synonyms: &'static [Synonym]) -> Self {
        self.synonyms = synonyms;
        self
    }
    /// Sets the broker properties that supply a topic key's default.
    pub const fn server_default(mut self, synonyms: &'static [Synonym]) -> Self {
        self.server_default = synonyms;
        self
    }
    /// Marks a strata-only key.
    pub const fn strata_only(mut self) -> Self {
        self.strata_only = true;
        self
    }
    /// Whether the value is a secret.
    pub fn sensitive(&self) -> bool {
        self.ty == Type::Password
    }

    /// Parses and validates one value of this key.
    pub fn parse_value(&self, raw: &str) -> Result<Value, ConfigError> {
        let bad = |reason: String| ConfigError::BadValue {
            key: self.name.to_string(),
            value: if self.sensitive() {
                "[hidden]".into()
            } else {
                raw.to_string()
            },
            reason,
        };
        let value = parse::parse(self.ty, raw).map_err(bad)?;
        parse::check(&self.validator, &value).map_err(bad)?;
        Ok(value)
    }
}

/// Where a value came from (DescribeConfigs' `config_source`, and the precedence file < environment <
/// override).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The table's default.
    Default,
    /// The properties file.
    File,
    /// A `KAFKA_*` environment variable.
    Env,
    /// `--override` on the command line.
    Override,
    /// A topic-level override (topic tables only).
    Topic,
}

/// A configuration problem, naming the key and the value.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value that does not parse or validate.
    #[error("invalid value {value:?} for configuration {key}: {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// The value as given (secrets hidden).
        value: String,
        /// Why.
        reason: String,
    },
    /// A key this table does not know, where unknown keys are errors.
    #[error("unknown configuration {key}{}", .suggestion.as_ref().map(|s| format!(" (did you mean {s}?)")).unwrap_or_default())]
    Unknown {
        /// The key.
        key: String,
        /// The closest known key, if any is close.
        suggestion: Option<String>,
    },
    /// A key for a feature strata does not have.
    #[error("configuration {key}={value} is not supported: {reason}")]
    Unsupported {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// Which feature is missing.
        reason: String,
    },
}

/// One owner's table.
#[derive(Clone, Copy, Debug)]
pub struct ConfigDef {
    /// Who owns it ("broker", "topic", "rsm.config.", ...), for messages.
    pub owner: &'static str,
    /// The owner's own keys.
    pub own: &'static [ConfigKey],
    /// More groups of keys owned elsewhere but parsed with these (e.g. the RemoteLogManager's broker keys,
    /// Kafka's keys with no effect on a single node).
    pub more: &'static [&'static [ConfigKey]],
}

impl ConfigDef {
    /// A table.
    pub const fn new(owner: &'static str, keys: &'static [ConfigKey]) -> Self {
        Self {
            owner,
            own: keys,
            more: &[],
        }
    }

    /// This table with more groups of keys.
    pub const fn with(self, more: &'static [&'static [ConfigKey]]) -> Self {
        Self { more, ..self }
    }

    /// Every key, own ones first.
    pub fn keys(&self) -> impl Iterator<Item = &'static ConfigKey> + Clone {
        self.own
            .iter()
            .chain(self.more.iter().flat_map(|g| g.iter()))
    }

    /// Checks the table itself (each owner's tests call it): every default parses and passes its validator, and
    /// no name or synonym appears twice.
    pub fn check_table(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for k in self.keys() {
            for name in std::iter::once(k.name).chain(k.synonyms.iter().map(|s| s.name)) {
                if !seen.insert(name) {
                    return Err(format!("{} config declares {name} twice", self.owner));
                }
            }
            if let Some(d) = k.default {
                k.parse_value(d)
                    .map_err(|e| format!("default of {}: {e}", k.name))?;
            }
        }
        Ok(())
    }

    /// The key named `name` (or having `name` as a synonym).
    pub fn key(&self, name: &str) -> Option<&'static ConfigKey> {
        self.keys()
            .find(|k| k.name == name || k.synonyms.iter().any(|s| s.name == name))
    }

    /// The known name closest to `name` (edit distance at most a third of its length, at least 2), for "did you
    /// mean".
    pub fn closest(&self, name: &str) -> Option<&'static str> {
        let names = self
            .keys()
            .flat_map(|k| std::iter::once(k.name).chain(k.synonyms.iter().map(|s| s.name)));
        let (best, distance) = names
            .map(|n| (n, edit_distance(n, name)))
            .min_by_key(|(_, d)| *d)?;
        (distance <= (name.len() / 3).max(2)).then_some(best)
    }

    /// The error for a key this table does not know, with the closest known name.
    pub fn unknown_error(&self, key: &str) -> ConfigError {
        ConfigError::Unknown {
            key: key.to_string(),
            suggestion: self.closest(key).map(String::from),
        }
    }

    /// Parses `props` (key, value, source). Later entries of a higher [`Source`] win over earlier ones; a key's
    /// own name wins over its synonyms. Unknown keys are returned in [`Values::unknown`] for the caller's policy
    /// (warn, or refuse); a bad value or a set [`Effect::Unsupported`] key is an error.
    pub fn parse<'a>(
        &self,
        props: impl IntoIterator<Item = (&'a str, &'a str, Source)>,
    ) -> Result<Values, ConfigError> {
        self.parse_over(props, |_| None)
    }

    /// As [`ConfigDef::parse`], but a key not given takes its value from `base` (with the source `base` says)
    /// before the table's default: a topic's keys over the broker's topic defaults. Values from `base` are
    /// trusted (not validated again).
    pub fn parse_over<'a>(
        &self,
        props: impl IntoIterator<Item = (&'a str, &'a str, Source)>,
        base: impl Fn(&ConfigKey) -> Option<(Value, Source)>,
    ) -> Result<Values, ConfigError> {
        // For each key, the winning (source, name rank, raw): a higher source wins; within one source the key's
        // own name (rank 0) beats synonym i (rank i + 1); within both, the later entry wins.
        let mut chosen: BTreeMap<&'static str, (Source, usize, &'a str)> = BTreeMap::new();
        let mut unknown = Vec::new();
        for (k, v, source) in props {
            let Some(key) = self.key(k) else {
                unknown.push(k.to_string());
                continue;
            };
            let rank = key
                .synonyms
                .iter()
                .position(|s| s.name == k)
                .map_or(0, |i| i + 1);
            let beaten = chosen.get(key.name).is_some_and(|(s, r, _)| {
                (*s, std::cmp::Reverse(*r)) > (source, std::cmp::Reverse(rank))
            });
            if !beaten {
                chosen.insert(key.name, (source, rank, v));
            }
        }
        let mut values = BTreeMap::new();
        for key in self.keys() {
            let Some(&(source, rank, raw)) = chosen.get(key.name) else {
                if let Some(given) = base(key) {
                    values.insert(key.name, given);
                    continue;
                }
                let value = key
                    .default
                    .and_then(|d| key.parse_value(d).ok())
                    .unwrap_or(Value::Null);
                values.insert(key.name, (value, Source::Default));
                continue;
            };
            if let Effect::Unsupported(reason) = key.effect {
                return Err(ConfigError::Unsupported {
                    key: key.name.into(),
                    value: raw.into(),
                    reason: reason.into(),
                });
            }
            let value = match rank {
                0 => key.parse_value(raw)?,
                i => {
                    // A synonym: parse under its own name, scale to the key's unit, then validate as the key.
                    let syn = key.synonyms[i - 1];
                    let as_synonym = ConfigKey {
                        name: syn.name,
                        validator: Validator::Any,
                        ..*key
                    };
                    // A negative value stays -1 (Kafka's `logRetentionTimeMillis`: `log.retention.hours=-1` is
                    // "unlimited", not -3600000).
                    let scaled = |v: i64| {
                        if v < 0 {
                            -1
                        } else {
                            v.saturating_mul(syn.scale)
                        }
                    };
                    let value = match as_synonym.parse_value(raw)? {
                        Value::Long(v) => Value::Long(scaled(v)),
                        Value::Int(v) if syn.scale != 1 => Value::Long(scaled(v as i64)),
                        other => other,
                    };
                    let value = match (key.ty, value) {
                        (Type::Int, Value::Long(v)) => {
                            Value::Int(v.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
                        }
                        (_, v) => v,
                    };
                    parse::check(&key.validator, &value).map_err(|reason| {
                        ConfigError::BadValue {
                            key: syn.name.into(),
                            value: raw.into(),
                            reason,
                        }
                    })?;
                    value
                }
            };
            values.insert(key.name, (value, source));
        }
        Ok(Values {
            def: *self,
            values,
            unknown,
        })
    }
}

/// Parsed values of one table: every key has a value (its default or null when not given).
#[derive(Clone, Debug)]
pub struct Values {
    def: ConfigDef,
    values: BTreeMap<&'static str, (Value, Source)>,
    unknown: Vec<String>,
}

impl Values {
    /// Keys given that the table does not know, in the order seen.
    pub fn unknown(&self) -> &[String] {
        &self.unknown
    }
    /// The table.
    pub fn def(&self) -> &ConfigDef {
        &self.def
    }
    /// The value of `name` (panics on a name the table does not declare: a programming error).
    pub fn get(&self, name: &str) -> &Value {
        &self
            .values
            .get(name)
            .unwrap_or_else(|| panic!("{} config has no key {name}", self.def.owner))
            .0
    }
    /// The value of `key`, as its handle's type.
    pub fn value<T: FromValue>(&self, key: &Key<T>) -> T {
        T::from_value(key.def.name, self.get(key.def.name))
    }
    /// Gives a key left at its default (null: a default computed from other keys, as `default_doc` says) the
    /// value it resolves to, still with [`Source::Default`]; a key given explicitly keeps its value.
    pub fn resolve_default<T>(&mut self, key: &Key<T>, value: Value) {
        if let Some(entry) = self.values.get_mut(key.def.name) {
            if entry.1 == Source::Default {
                entry.0 = value;
            }
        }
    }
    /// Where the value of `name` came from.
    pub fn source(&self, name: &str) -> Source {
        self.values
            .get(name)
            .map(|v| v.1)
            .unwrap_or(Source::Default)
    }
    /// Whether `name` was given (by any source but the default).
    pub fn is_explicit(&self, name: &str) -> bool {
        self.source(name) != Source::Default
    }
    /// Keys given explicitly whose [`Effect`] is [`Effect::NoEffect`].
    pub fn ignored(&self) -> Vec<&'static str> {
        self.def
            .keys()
            .filter(|k| matches!(k.effect, Effect::NoEffect(_)) && self.is_explicit(k.name))
            .map(|k| k.name)
            .collect()
    }
    /// A boolean key.
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Value::Bool(true))
    }
    /// An int or short key (panics when null: declare a default).
    pub fn int(&self, name: &str) -> i32 {
        match self.get(name) {
            Value::Int(v) => *v,
            Value::Short(v) => *v as i32,
            other => panic!("{name} is not an int: {other:?}"),
        }
    }
    /// A long key (ints widen).
    pub fn long(&self, name: &str) -> i64 {
        match self.get(name) {
            Value::Long(v) => *v,
            Value::Int(v) => *v as i64,
            Value::Short(v) => *v as i64,
            other => panic!("{name} is not a long: {other:?}"),
        }
    }
    /// A double key.
    pub fn double(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Double(v) => *v,
            other => panic!("{name} is not a double: {other:?}"),
        }
    }
    /// A string, class or password key; `None` when null.
    pub fn string(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Value::String(s) | Value::Password(s) => Some(s),
            Value::Null => None,
            other => panic!("{name} is not a string: {other:?}"),
        }
    }
    /// A list key (null is empty).
    pub fn list(&self, name: &str) -> &[String] {
        match self.get(name) {
            Value::List(v) => v,
            Value::Null => &[],
            other => panic!("{name} is not a list: {other:?}"),
        }
    }
}

/// Levenshtein distance (for "did you mean").
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests;

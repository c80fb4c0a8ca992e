//! Typed handles on a table's keys: [`Key<T>`] holds one [`ConfigKey`] row and the Rust type its value is read
//! as, and [`config_keys!`](crate::config_keys) declares the rows and their handles together, so the table is
//! built from the handles and a handle cannot name a key the table lacks (a misspelt handle does not compile).
//! [`Key::new`] is a `const fn` that refuses, at compile time, a Rust type that does not fit the row's [`Type`]
//! (an `i32` handle on a `long` key) and a non-null type on a row without a default.
//!
//! ```
//! use strata_storage::config_def::{ConfigDef, ConfigKey, Key, Source, Type};
//!
//! strata_storage::config_keys! {
//!     /// The example's table.
//!     pub const KEYS;
//!     /// `num.partitions`.
//!     pub NUM_PARTITIONS: i32 = ConfigKey::new("num.partitions", Type::Int, "partitions").default("1");
//!     /// `log.dirs`.
//!     pub LOG_DIRS: Vec<String> = ConfigKey::new("log.dirs", Type::List, "data directories");
//! }
//! let values = ConfigDef::new("broker", KEYS)
//!     .parse([("num.partitions", "3", Source::File)])
//!     .unwrap();
//! assert_eq!(values.value(&NUM_PARTITIONS), 3);
//! assert!(values.value(&LOG_DIRS).is_empty());
//! ```
//!
//! A handle whose type does not fit its row, or that cannot hold the null of a row without default, does not
//! compile:
//!
//! ```compile_fail
//! use strata_storage::config_def::{ConfigKey, Key, Type};
//! const RETENTION: Key<i32> = Key::new(ConfigKey::new("retention.ms", Type::Long, "").default("1"));
//! ```
//!
//! ```compile_fail
//! use strata_storage::config_def::{ConfigKey, Key, Type};
//! const MAX_OPEN: Key<i32> = Key::new(ConfigKey::new("log.max.open.files", Type::Int, ""));
//! ```
//!
//! ```
//! use strata_storage::config_def::{ConfigKey, Key, Type};
//! const MAX_OPEN: Key<Option<i32>> = Key::new(ConfigKey::new("log.max.open.files", Type::Int, ""));
//! const RETENTION: Key<i64> = Key::new(ConfigKey::new("retention.ms", Type::Long, "").default("1"));
//! ```

use std::marker::PhantomData;

use super::{ConfigKey, Type, Value};

/// The bit of `ty` in a [`FromValue::TYPES`] mask.
pub const fn type_bit(ty: Type) -> u16 {
    1 << (ty as u16)
}

const INTS: u16 = type_bit(Type::Int) | type_bit(Type::Short);
const LONGS: u16 = INTS | type_bit(Type::Long);
const STRINGS: u16 = type_bit(Type::String) | type_bit(Type::Class) | type_bit(Type::Password);

/// A Rust type a key's parsed [`Value`] is read as.
pub trait FromValue: Sized {
    /// The [`Type`]s (as [`type_bit`]s) whose values convert to it.
    const TYPES: u16;
    /// Whether it can hold a null (a key without default that was not given).
    const NULLABLE: bool;
    /// The value; panics on a value of another type (which [`Key::new`] rules out for a handle's own table).
    fn from_value(name: &str, value: &Value) -> Self;
}

fn wrong(name: &str, value: &Value, what: &str) -> ! {
    panic!("config key {name} holds {value:?}, not {what}")
}

impl FromValue for bool {
    const TYPES: u16 = type_bit(Type::Boolean);
    const NULLABLE: bool = true;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::Bool(b) => *b,
            Value::Null => false,
            other => wrong(name, other, "a boolean"),
        }
    }
}

impl FromValue for i32 {
    const TYPES: u16 = INTS;
    const NULLABLE: bool = false;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::Int(v) => *v,
            Value::Short(v) => *v as i32,
            other => wrong(name, other, "an int"),
        }
    }
}

impl FromValue for i64 {
    const TYPES: u16 = LONGS;
    const NULLABLE: bool = false;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::Long(v) => *v,
            Value::Int(v) => *v as i64,
            Value::Short(v) => *v as i64,
            other => wrong(name, other, "a long"),
        }
    }
}

impl FromValue for f64 {
    const TYPES: u16 = type_bit(Type::Double);
    const NULLABLE: bool = false;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::Double(v) => *v,
            other => wrong(name, other, "a double"),
        }
    }
}

impl FromValue for String {
    const TYPES: u16 = STRINGS;
    const NULLABLE: bool = false;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::String(s) | Value::Password(s) => s.clone(),
            other => wrong(name, other, "a string"),
        }
    }
}

impl FromValue for Vec<String> {
    const TYPES: u16 = type_bit(Type::List);
    const NULLABLE: bool = true;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::List(v) => v.clone(),
            Value::Null => Vec::new(),
            other => wrong(name, other, "a list"),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    const TYPES: u16 = T::TYPES;
    const NULLABLE: bool = true;
    fn from_value(name: &str, value: &Value) -> Self {
        match value {
            Value::Null => None,
            v => Some(T::from_value(name, v)),
        }
    }
}

/// A typed handle on one key: its table row and the type its value is read as (see the module doc).
pub struct Key<T> {
    /// The table row.
    pub def: ConfigKey,
    ty: PhantomData<fn() -> T>,
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Key<T> {}

impl<T> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", self.def.name)
    }
}

impl<T: FromValue> Key<T> {
    /// The handle on `def`. In a `const` (as [`config_keys!`](crate::config_keys) declares them) a type that
    /// does not fit the row fails to compile.
    pub const fn new(def: ConfigKey) -> Self {
        assert!(
            T::TYPES & type_bit(def.ty) != 0,
            "the handle's Rust type does not fit the key's config type"
        );
        assert!(
            T::NULLABLE || def.default.is_some(),
            "a key without default can be null: read it as an Option"
        );
        Self {
            def,
            ty: PhantomData,
        }
    }
}

impl<T: FromValue> Key<T> {
    /// Parses and validates `raw` as this key's value (booleans in any case, numbers trimmed, as Kafka).
    pub fn parse(&self, raw: &str) -> Result<T, super::ConfigError> {
        self.def
            .parse_value(raw)
            .map(|v| T::from_value(self.def.name, &v))
    }
}

impl<T> Key<T> {
    /// The key's name.
    pub const fn name(&self) -> &'static str {
        self.def.name
    }
}

/// Declares a table of [`ConfigKey`]s and a typed [`Key`] handle per row, in one place:
///
/// ```text
/// config_keys! {
///     /// docs of the table
///     pub const TABLE;
///     /// docs of the key
///     pub HANDLE: RustType = ConfigKey::new("name", Type::X, "doc")...;
///     ...
/// }
/// ```
///
/// declares `pub const HANDLE: Key<RustType>` per row and `pub const TABLE: &[ConfigKey]` of their rows, in
/// order.
#[macro_export]
macro_rules! config_keys {
    (
        $(#[$table_meta:meta])*
        $table_vis:vis const $table:ident;
        $(
            $(#[$meta:meta])*
            $vis:vis $handle:ident : $ty:ty = $row:expr;
        )*
    ) => {
        $(
            $(#[$meta])*
            $vis const $handle: $crate::config_def::Key<$ty> = $crate::config_def::Key::new($row);
        )*
        $(#[$table_meta])*
        $table_vis const $table: &[$crate::config_def::ConfigKey] = &[$($handle.def),*];
    };
}

//! One parser per [`Type`] and the [`Validator`] checks, as Kafka's `ConfigDef.parseType` and its validators:
//! numbers and strings are trimmed, booleans are `true`/`false` in any case, lists split on commas with the
//! items trimmed (empty items dropped), passwords kept verbatim.

use super::{Type, Validator};

/// A parsed value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// No value (a key without default that was not given).
    Null,
    /// [`Type::Boolean`].
    Bool(bool),
    /// [`Type::Short`].
    Short(i16),
    /// [`Type::Int`].
    Int(i32),
    /// [`Type::Long`].
    Long(i64),
    /// [`Type::Double`].
    Double(f64),
    /// [`Type::String`] and [`Type::Class`].
    String(String),
    /// [`Type::List`].
    List(Vec<String>),
    /// [`Type::Password`] (`Debug` and [`Value::to_text`] hide it).
    Password(String),
}

impl Value {
    /// The value as Kafka prints it in DescribeConfigs (lists comma-joined, null as `None`, secrets as `None`).
    pub fn to_text(&self) -> Option<String> {
        match self {
            Value::Null | Value::Password(_) => None,
            Value::Bool(v) => Some(v.to_string()),
            Value::Short(v) => Some(v.to_string()),
            Value::Int(v) => Some(v.to_string()),
            Value::Long(v) => Some(v.to_string()),
            Value::Double(v) => Some(v.to_string()),
            Value::String(v) => Some(v.clone()),
            Value::List(v) => Some(v.join(",")),
        }
    }
}

fn number<T: std::str::FromStr>(raw: &str, what: &str) -> Result<T, String> {
    raw.trim()
        .parse::<T>()
        .map_err(|_| format!("expected {what}"))
}

/// Parses `raw` as `ty`; the error says what was expected.
pub fn parse(ty: Type, raw: &str) -> Result<Value, String> {
    Ok(match ty {
        Type::Boolean => match raw.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err("expected true or false".into()),
        },
        Type::Short => Value::Short(number(raw, "a 16-bit integer")?),
        Type::Int => Value::Int(number(raw, "a 32-bit integer")?),
        Type::Long => Value::Long(number(raw, "a 64-bit integer")?),
        Type::Double => {
            let v: f64 = number(raw, "a number")?;
            if !v.is_finite() {
                return Err("expected a finite number".into());
            }
            Value::Double(v)
        }
        Type::String | Type::Class => Value::String(raw.trim().to_string()),
        Type::List => Value::List(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        ),
        Type::Password => Value::Password(raw.to_string()),
    })
}

fn as_i64(value: &Value) -> Option<i64> {
    match value {
        Value::Short(v) => Some(*v as i64),
        Value::Int(v) => Some(*v as i64),
        Value::Long(v) => Some(*v),
        _ => None,
    }
}

/// Checks `value` against `validator`; the error is the reason.
pub fn check(validator: &Validator, value: &Value) -> Result<(), String> {
    match (validator, value) {
        (Validator::Any, _) | (_, Value::Null) => Ok(()),
        (Validator::AtLeast(min), v) => match as_i64(v) {
            Some(n) if n >= *min => Ok(()),
            Some(_) => Err(format!("must be at least {min}")),
            None => Err("expected a number".into()),
        },
        (Validator::Between(min, max), v) => match as_i64(v) {
            Some(n) if (*min..=*max).contains(&n) => Ok(()),
            Some(_) => Err(format!("must be between {min} and {max}")),
            None => Err("expected a number".into()),
        },
        (Validator::BetweenF(min, max), Value::Double(d)) if (*min..=*max).contains(d) => Ok(()),
        (Validator::BetweenF(min, max), _) => Err(format!("must be between {min} and {max}")),
        (Validator::OneOf(allowed), Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        (Validator::OneOfIgnoreCase(allowed), Value::String(s))
            if allowed.iter().any(|a| a.eq_ignore_ascii_case(s)) =>
        {
            Ok(())
        }
        (Validator::OneOf(allowed) | Validator::OneOfIgnoreCase(allowed), _) => {
            Err(format!("must be one of {}", allowed.join(", ")))
        }
        (Validator::ListOf(allowed), Value::List(items)) => {
            match items.iter().find(|i| !allowed.contains(&i.as_str())) {
                None => Ok(()),
                Some(bad) => Err(format!("{bad:?} is not one of {}", allowed.join(", "))),
            }
        }
        (Validator::ListOf(_), _) => Err("expected a list".into()),
        (Validator::NonEmpty, Value::String(s) | Value::Password(s)) if !s.is_empty() => Ok(()),
        (Validator::NonEmpty, Value::List(v)) if !v.is_empty() => Ok(()),
        (Validator::NonEmpty, _) => Err("must not be empty".into()),
        (Validator::Custom(f), v) => f(v),
    }
}

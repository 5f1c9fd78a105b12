//! Reading a reply's JSON with its path at hand, so every problem names where it is.
//!
//! A `null` field reads as an absent one: providers (and OpenAI-compatible servers) send
//! `"content": null`, `"tool_calls": null` or leave the field out for the same thing.

use serde_json::{Map, Value};

use super::ReplyError;
use crate::dialect::Dialect;

/// A value of the reply and its JSON path (`choices[0].message`; empty at the root).
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub(super) value: &'a Value,
    path: &'a str,
    dialect: Dialect,
}

/// An owned path under construction, so children can borrow it.
pub(super) struct Path(String);

impl Path {
    pub(super) fn key(parent: &str, key: &str) -> Self {
        if parent.is_empty() {
            Path(key.to_owned())
        } else {
            Path(format!("{parent}.{key}"))
        }
    }

    pub(super) fn index(parent: &str, index: usize) -> Self {
        Path(format!("{parent}[{index}]"))
    }

    pub(super) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'a> At<'a> {
    pub(super) fn new(dialect: Dialect, value: &'a Value, path: &'a Path) -> Self {
        At {
            value,
            path: path.as_str(),
            dialect,
        }
    }

    /// The root of a reply's `body` (its path is empty).
    pub(super) fn root(dialect: Dialect, body: &'a Value) -> Self {
        At {
            value: body,
            path: "",
            dialect,
        }
    }

    /// The root of a reply's `body`, refused when it has an `error` member: the provider
    /// answered with an error instead of a reply.
    pub(super) fn reply_root(dialect: Dialect, body: &'a Value) -> Result<Self, ReplyError> {
        let root = At::root(dialect, body);
        if let Some(error) = root.field("error")? {
            return Err(root.error_at(
                "error",
                format!("the provider answered with an error: {error}"),
            ));
        }
        Ok(root)
    }

    pub(super) fn path(&self) -> &'a str {
        self.path
    }

    /// An error at this value.
    pub(super) fn error(&self, reason: impl Into<String>) -> ReplyError {
        ReplyError::new(self.dialect, self.path, reason)
    }

    /// An error at this value's field `key`.
    pub(super) fn error_at(&self, key: &str, reason: impl Into<String>) -> ReplyError {
        ReplyError::new(self.dialect, Path::key(self.path, key).0, reason)
    }

    pub(super) fn object(&self) -> Result<&'a Map<String, Value>, ReplyError> {
        self.value.as_object().ok_or_else(|| {
            self.error(format!(
                "expected a JSON object, found {}",
                kind(self.value)
            ))
        })
    }

    /// The field `key`, `None` when it is absent or `null`.
    pub(super) fn field(&self, key: &str) -> Result<Option<&'a Value>, ReplyError> {
        Ok(self.object()?.get(key).filter(|v| !v.is_null()))
    }

    /// The field `key`, which must be there.
    pub(super) fn required(&self, key: &str) -> Result<&'a Value, ReplyError> {
        self.field(key)?
            .ok_or_else(|| self.error_at(key, "missing; every reply of this kind has it"))
    }

    /// The string field `key`, `None` when absent or `null`.
    pub(super) fn str(&self, key: &str) -> Result<Option<&'a str>, ReplyError> {
        match self.field(key)? {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => {
                Err(self.error_at(key, format!("expected a string, found {}", kind(other))))
            }
        }
    }

    /// The string field `key`, which must be there and not be empty.
    pub(super) fn required_str(&self, key: &str) -> Result<&'a str, ReplyError> {
        match self.str(key)? {
            None => Err(self.error_at(key, "missing; every reply of this kind has it")),
            Some("") => Err(self.error_at(key, "empty; every reply of this kind has one")),
            Some(text) => Ok(text),
        }
    }

    /// The string field `key`, which must be there (it may be empty: a delta).
    pub(super) fn required_text(&self, key: &str) -> Result<&'a str, ReplyError> {
        self.str(key)?
            .ok_or_else(|| self.error_at(key, "missing; every event of this kind has it"))
    }

    /// The array field `key` (empty when absent or `null`), with each element's path. The
    /// paths are made as the elements are walked, not all at once: a list of a million small
    /// elements does not take a million paths.
    pub(super) fn array(
        &self,
        key: &str,
    ) -> Result<impl ExactSizeIterator<Item = (&'a Value, Path)> + use<'a>, ReplyError> {
        let items: &'a [Value] = match self.field(key)? {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.error_at(key, format!("expected an array, found {}", kind(other))));
            }
        };
        let base = Path::key(self.path, key);
        Ok(items
            .iter()
            .enumerate()
            .map(move |(i, v)| (v, Path::index(base.as_str(), i))))
    }
}

/// The array field `key` of `value` (whose path is `path`), taken out of it, with each
/// element's path: what [`At::array`] reads, by value, so a reader can move the elements into
/// the reply rather than copy them.
pub(super) fn take_array(
    dialect: Dialect,
    value: &mut Value,
    path: &str,
    key: &str,
) -> Result<impl ExactSizeIterator<Item = (Value, Path)> + use<>, ReplyError> {
    let at = At {
        value,
        path,
        dialect,
    };
    // Checked as it reads it: the same errors at the same paths.
    drop(at.array(key)?);
    let items = match value.get_mut(key) {
        Some(Value::Array(items)) => std::mem::take(items),
        _ => Vec::new(),
    };
    let base = Path::key(path, key);
    Ok(items
        .into_iter()
        .enumerate()
        .map(move |(i, v)| (v, Path::index(base.as_str(), i))))
}

/// `an object`, `a string`, … for messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

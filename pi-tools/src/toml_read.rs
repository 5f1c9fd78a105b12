//! Reading TOML text with its positions: the problems found, each at the byte where it
//! starts, the checks every reader of a section makes (a table, a known key, an execution
//! mode), the values they share (integers, JSON) and the closest known word for a typo.
//!
//! The configuration loader and the reader of declared tools (which sits below it) both
//! read through it, so a mistake is worded the same wherever it is made.

use std::ops::Range;

use serde_json::Value as Json;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::core::ExecutionMode;

/// The problems found while reading a TOML text, each at the byte where it starts, in the
/// order they were found.
#[derive(Debug, Default)]
pub(crate) struct Problems(Vec<(usize, String)>);

impl Problems {
    /// Records `message` at the start of `span`.
    pub(crate) fn report(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.0.push((span.start, message.into()));
    }

    /// How many problems there are so far (a reader compares it before and after a part).
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no problem was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The problems by position; problems at one position keep the order they were found.
    pub(crate) fn into_sorted(mut self) -> Vec<(usize, String)> {
        self.0.sort_by_key(|(at, _)| *at);
        self.0
    }

    /// Reports `key`, unknown in `section`, with the closest allowed key and all of them.
    pub(crate) fn unknown_key(
        &mut self,
        span: Range<usize>,
        key: &str,
        section: &str,
        allowed: &[&str],
    ) {
        let hint = suggest(key, allowed.iter().copied())
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        self.report(
            span,
            format!(
                "unknown key `{key}` in {section}; {hint}the keys allowed there are: {}",
                allowed.join(", ")
            ),
        );
    }

    /// The value as a table; `None`, reported as `what`, for anything else.
    pub(crate) fn table<'v, 'a>(
        &mut self,
        value: &'v Spanned<DeValue<'a>>,
        what: &str,
    ) -> Option<&'v DeTable<'a>> {
        match value.get_ref() {
            DeValue::Table(table) => Some(table),
            other => {
                self.report(
                    value.span(),
                    format!(
                        "{what} must be a table, found {}; write it as a `{what}` section",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `"parallel"` or `"sequential"`; `None`, reported at `key`, for anything else.
    pub(crate) fn mode(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        key: &str,
    ) -> Option<ExecutionMode> {
        match value.get_ref().as_str().map(str::parse::<ExecutionMode>) {
            Some(Ok(mode)) => Some(mode),
            _ => {
                self.report(
                    value.span(),
                    format!("`{key}` must be \"parallel\" or \"sequential\""),
                );
                None
            }
        }
    }
}

/// A TOML integer, when the value is one that fits an `i64`.
pub(crate) fn integer(value: &Spanned<DeValue<'_>>) -> Option<i64> {
    let DeValue::Integer(n) = value.get_ref() else {
        return None;
    };
    i64::from_str_radix(n.as_str(), n.radix()).ok()
}

/// A TOML value as JSON, for a tool's configuration loader (datetimes become strings).
pub(crate) fn to_json(value: &DeValue<'_>) -> Json {
    match value {
        DeValue::String(s) => Json::String(s.to_string()),
        DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix())
            .map(Json::from)
            .or_else(|_| u64::from_str_radix(n.as_str(), n.radix()).map(Json::from))
            .unwrap_or_else(|_| Json::String(n.to_string())),
        DeValue::Float(f) => f
            .as_str()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Json::String(f.to_string()), Json::Number),
        DeValue::Boolean(b) => Json::Bool(*b),
        DeValue::Datetime(d) => Json::String(d.to_string()),
        DeValue::Array(items) => Json::Array(items.iter().map(|i| to_json(i.get_ref())).collect()),
        DeValue::Table(table) => Json::Object(
            table
                .iter()
                .map(|(k, v)| (k.get_ref().to_string(), to_json(v.get_ref())))
                .collect(),
        ),
    }
}

/// The closest candidate by edit distance, when it is close enough to be a likely typo.
pub(crate) fn suggest<'c>(
    word: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<&'c str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        // A few edits away, or a near prefix (`timeout` for `timeout_secs`).
        .filter(|(d, c)| *d <= limit || strsim::jaro_winkler(word, c) >= 0.85)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

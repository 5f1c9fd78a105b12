//! TOML values as the loader reads them: integers, JSON for a tool's own configuration, and
//! the closest known word for a typo.

use serde_json::Value as Json;
use toml::Spanned;
use toml::de::DeValue;

/// A TOML integer, when the value is one that fits an `i64`.
pub(in crate::config) fn integer(value: &Spanned<DeValue<'_>>) -> Option<i64> {
    let DeValue::Integer(n) = value.get_ref() else {
        return None;
    };
    i64::from_str_radix(n.as_str(), n.radix()).ok()
}

/// `[tools] shapes`: `"pi-tools"` or `"native"`, or what to write instead.
pub(super) fn shapes(
    value: &Spanned<DeValue<'_>>,
) -> Result<crate::dialect::native::Shapes, &'static str> {
    use crate::dialect::native::Shapes;
    match value.get_ref().as_str() {
        Some("native") => Ok(Shapes::Native),
        Some("pi-tools") => Ok(Shapes::PiTools),
        _ => Err(
            "`shapes` must be \"pi-tools\" (the default) or \"native\" (each provider family's own tools where it has them)",
        ),
    }
}

/// A TOML value as JSON, for a tool's configuration loader (datetimes become strings).
pub(super) fn to_json(value: &DeValue<'_>) -> Json {
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
pub(in crate::config) fn suggest<'c>(
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

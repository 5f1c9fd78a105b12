//! TOML values as the loader reads them: integers, `[tools] shapes`, JSON for a tool's own
//! configuration, and the closest known word for a typo.

use serde_json::Value as Json;

use crate::dialect::Dialect;
use crate::dialect::native::{FamilyShapes, SHAPE_FAMILIES, Shapes};
use toml::Spanned;
use toml::de::DeValue;

/// A TOML integer, when the value is one that fits an `i64`.
pub(in crate::config) fn integer(value: &Spanned<DeValue<'_>>) -> Option<i64> {
    let DeValue::Integer(n) = value.get_ref() else {
        return None;
    };
    i64::from_str_radix(n.as_str(), n.radix()).ok()
}

/// `[tools] shapes`: `"pi-tools"` or `"native"` for every family, or a table of families
/// (by dialect name) and their shapes; what is wrong, with its span, otherwise.
pub(super) fn shapes(
    value: &Spanned<DeValue<'_>>,
) -> Result<FamilyShapes, Vec<(std::ops::Range<usize>, String)>> {
    if let Some(word) = value.get_ref().as_str() {
        return shape(word).map(FamilyShapes::all).ok_or_else(|| {
            vec![(
                value.span(),
                format!("`shapes` must be {WORDS}, or {TABLE}"),
            )]
        });
    }
    let DeValue::Table(table) = value.get_ref() else {
        return Err(vec![(
            value.span(),
            format!("`shapes` must be {WORDS}, or {TABLE}"),
        )]);
    };
    let families = SHAPE_FAMILIES.map(Dialect::as_str);
    let listed = || {
        families
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let mut shapes = FamilyShapes::default();
    let mut problems = Vec::new();
    for (key, item) in table {
        let family = key.get_ref().as_ref();
        let Ok(dialect) = family.parse::<Dialect>() else {
            let hint = suggest(family, families.into_iter())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            problems.push((
                key.span(),
                format!(
                    "unknown family `{family}` in `shapes`{hint}; name the families with native tools by their dialect: {}",
                    listed()
                ),
            ));
            continue;
        };
        let Some(chosen) = item.get_ref().as_str().and_then(shape) else {
            problems.push((item.span(), format!("`shapes.{family}` must be {WORDS}")));
            continue;
        };
        if !shapes.set(dialect, chosen) {
            problems.push((
                key.span(),
                format!(
                    "`shapes.{family}`: the {family} dialect has no native tools, so it always gets the pi-tools shapes; remove it (the families with native tools are {})",
                    listed()
                ),
            ));
        }
    }
    if problems.is_empty() {
        Ok(shapes)
    } else {
        Err(problems)
    }
}

const WORDS: &str =
    "\"pi-tools\" (the default) or \"native\" (each provider family's own tools where it has them)";
const TABLE: &str =
    "a table of families, e.g. { anthropic = \"native\", openai-responses = \"pi-tools\" }";

/// A shapes word.
fn shape(word: &str) -> Option<Shapes> {
    match word {
        "native" => Some(Shapes::Native),
        "pi-tools" => Some(Shapes::PiTools),
        _ => None,
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

//! `[tools] shapes` as the loader reads it. The values every reader shares (integers, JSON,
//! the closest known word for a typo) are [`crate::toml_read`]'s.

use crate::dialect::Dialect;
use crate::dialect::native::{FamilyShapes, SHAPE_FAMILIES, Shapes};
use toml::Spanned;
use toml::de::DeValue;

use crate::toml_read::suggest;

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

//! What a dialect cannot keep in a keyword, kept in the description instead: a dropped
//! `default`, `format` or `optional`, and an enum of numbers sent as strings. The model still
//! reads it; the description is the one place every dialect keeps.

use serde_json::{Map, Value};

/// Ends the node's description with `sentence`, or makes it the description; a description
/// that already speaks of `topic` (case ignored) is left as it is.
pub(super) fn append(object: &mut Map<String, Value>, topic: &str, sentence: &str) {
    let current = object.get("description").and_then(Value::as_str);
    if current.is_some_and(|text| text.to_lowercase().contains(&topic.to_lowercase())) {
        return;
    }
    let description = match current.map(str::trim_end) {
        None | Some("") => sentence.to_owned(),
        Some(text) if text.ends_with(['.', '!', '?']) => format!("{text} {sentence}"),
        Some(text) => format!("{text}. {sentence}"),
    };
    object.insert("description".into(), Value::String(description));
}

/// A value as a description writes it: a one-word string as it is, anything else as JSON.
pub(super) fn value_text(value: &Value) -> String {
    match value {
        Value::String(text)
            if !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_') =>
        {
            text.clone()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sentence_joins_the_description_once() {
        let mut object = Map::new();
        append(&mut object, "default", "Default: 3.");
        assert_eq!(object["description"], json!("Default: 3."));
        let mut object = json!({"description": "How many"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        append(&mut object, "format", "Format: date.");
        assert_eq!(object["description"], json!("How many. Format: date."));
        append(&mut object, "format", "Format: time.");
        assert_eq!(object["description"], json!("How many. Format: date."));
        assert_eq!(value_text(&json!("celsius")), "celsius");
        assert_eq!(value_text(&json!("a b")), "\"a b\"");
    }
}

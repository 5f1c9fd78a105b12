//! Decoding a reply's JSON into only what its reader looks at.
//!
//! A JSON value costs tens of bytes however small it is written (`0,` is two bytes), so a
//! reply of 1.2 MB holding 600 K small numbers in a member nobody reads took 40 MB as a
//! `Value`. Each wire format describes, as a [`Keep`], the members its reader reads or
//! keeps for the next request; the others are skipped as they are parsed (still checked to
//! be JSON), so they cost nothing. What the reader keeps whole (output items, content
//! blocks, parts, a call's arguments, the provider's error) is decoded whole, exactly as
//! `serde_json` would; an item, block or part only when it is an object, as its reader wants.
//!
//! A value of another kind than described (a list where an object is read) is kept as an
//! empty one of its kind, so the reader names the same kind in its error; and a list stops
//! at its first element of the wrong kind, where its reader stops with that error (a count
//! of the list, as of Chat Completions' choices, then counts up to that element).
//!
//! Skipped members are walked by serde_json without recursion, so their nesting takes no
//! stack and is not limited; what is kept is limited as serde_json limits it (128 levels).

use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// What of a JSON value a reader uses.
#[derive(Debug)]
pub(super) enum Keep {
    /// All of it, as it is: it is handed on or sent back.
    All,
    /// An object, all of it, as it is (an item, block or part that goes back as it came).
    WholeObject,
    /// An object: its members named here, each as described; the others are skipped.
    Object(&'static [(&'static str, Keep)]),
    /// A list: each element as described.
    List(&'static Keep),
    /// A string, number, boolean or `null`.
    Scalar,
}

/// `bytes` as JSON (a whole body, nothing after it but white space), decoded as `keep` says.
pub(super) fn from_slice(bytes: &[u8], keep: &Keep) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let (value, _) = Kept(keep).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// `text` as JSON, decoded as `keep` says.
pub(super) fn from_str(text: &str, keep: &Keep) -> serde_json::Result<Value> {
    from_slice(text.as_bytes(), keep)
}

/// The seed of a value described by a [`Keep`]: the value, and whether it is of the kind
/// described.
struct Kept<'k>(&'k Keep);

impl<'de> DeserializeSeed<'de> for Kept<'_> {
    type Value = (Value, bool);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        match self.0 {
            Keep::All => Ok((Value::deserialize(deserializer)?, true)),
            keep => deserializer.deserialize_any(Kept(keep)),
        }
    }
}

impl Kept<'_> {
    fn scalar<E>(&self, value: Value) -> Result<(Value, bool), E> {
        Ok((value, matches!(self.0, Keep::Scalar)))
    }
}

impl<'de> Visitor<'de> for Kept<'_> {
    type Value = (Value, bool);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.scalar(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.scalar(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.scalar(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.scalar(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.scalar(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        self.scalar(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.scalar(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.scalar(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Keep::List(element) = self.0 else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok((Value::Array(Vec::new()), false));
        };
        let mut list = Vec::new();
        while let Some((value, fits)) = seq.next_element_seed(Kept(element))? {
            list.push(value);
            if !fits {
                // Its reader stops here with an error; what follows is not read.
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                break;
            }
        }
        Ok((Value::Array(list), true))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let members = match self.0 {
            Keep::Object(members) => members,
            Keep::WholeObject => {
                return Ok((Value::deserialize(MapAccessDeserializer::new(map))?, true));
            }
            _ => {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok((Value::Object(Map::new()), false));
            }
        };
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match members.iter().find(|(name, _)| *name == key) {
                Some((_, keep)) => {
                    let (value, _) = map.next_value_seed(Kept(keep))?;
                    // As serde_json: a repeated member's last value wins.
                    object.insert(key, value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((Value::Object(object), true))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SHAPE: Keep = Keep::Object(&[
        ("a", Keep::Scalar),
        ("all", Keep::All),
        ("whole", Keep::List(&Keep::WholeObject)),
        ("list", Keep::List(&Keep::Object(&[("id", Keep::Scalar)]))),
    ]);

    #[test]
    fn members_not_described_are_skipped_and_the_rest_kept_exactly() {
        let text = r#"{"a": "x", "b": [0, 0, {"c": 1}], "all": {"z": [1, 2.5, null], "y": "é"},
                       "list": [{"id": 1, "junk": [0, 0]}, {"id": "two"}], "a": 3,
                       "whole": [{"id": 1, "x": {"y": [true, "\u00e9"]}}, {}]}"#;
        assert_eq!(
            from_str(text, &SHAPE).unwrap(),
            json!({"a": 3, "all": {"z": [1, 2.5, null], "y": "é"},
                   "list": [{"id": 1}, {"id": "two"}],
                   "whole": [{"id": 1, "x": {"y": [true, "é"]}}, {}]})
        );
        let whole: Value = serde_json::from_str(text).unwrap();
        assert_eq!(from_str(text, &Keep::All).unwrap(), whole);
    }

    #[test]
    fn a_value_of_another_kind_is_kept_empty_and_a_list_stops_at_it() {
        assert_eq!(
            from_str(r#"{"a": [1, 2], "list": {"id": 1}}"#, &SHAPE).unwrap(),
            json!({"a": [], "list": {}})
        );
        assert_eq!(
            from_str(r#"{"list": [{"id": 1}, [0, 0], {"id": 2}, 0]}"#, &SHAPE).unwrap(),
            json!({"list": [{"id": 1}, []]})
        );
        assert_eq!(
            from_str(r#"{"whole": [{"id": 1}, 0, 0, 0], "all": [0, 0]}"#, &SHAPE).unwrap(),
            json!({"whole": [{"id": 1}, 0], "all": [0, 0]})
        );
        assert_eq!(from_str("[0, 0]", &SHAPE).unwrap(), json!([]));
        assert_eq!(from_str("\"s\"", &SHAPE).unwrap(), json!("s"));
    }

    /// The same error at the same place as decoding it whole (serde_json words a trailing
    /// comma in a skipped list as a missing value).
    #[test]
    fn skipped_members_must_still_be_json_and_nothing_may_follow() {
        let place = |e: serde_json::Error| (e.classify(), e.line(), e.column());
        for text in [
            r#"{"b": [0, 0,]}"#,
            r#"{"b": {"c": tru}}"#,
            r#"{"a": 1} x"#,
            r#"{"b": "#,
            r#"{"b": "\q"}"#,
        ] {
            let kept = from_str(text, &SHAPE).unwrap_err();
            let whole = serde_json::from_str::<Value>(text).unwrap_err();
            assert_eq!(place(kept), place(whole), "{text}");
        }
    }

    /// A kept value nested deeper than serde_json's limit (128) is refused as serde_json
    /// refuses it; a skipped one is walked without recursion, so any depth takes no stack.
    #[test]
    fn nesting_is_bounded_where_values_are_kept_and_free_where_skipped() {
        let nested = |key: &str, depth: usize| {
            format!("{{\"{key}\": {}{}}}", "[".repeat(depth), "]".repeat(depth))
        };
        let kept = from_str(&nested("all", 200), &SHAPE).unwrap_err();
        let whole = serde_json::from_str::<Value>(&nested("all", 200)).unwrap_err();
        assert_eq!(kept.to_string(), whole.to_string());
        assert_eq!(from_str(&nested("b", 100_000), &SHAPE).unwrap(), json!({}));
    }
}

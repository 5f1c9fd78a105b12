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

use std::cell::Cell;
use std::fmt;

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

/// A reply may be decoded into at most one JSON value for every this many bytes of it, as
/// the gateway bounds what a mounted server sends: a decoded value takes 80 bytes (an object
/// counts as [`OBJECT_VALUES`]), so what a reply keeps takes at most about five times its
/// size for each copy of it the reader keeps, however its values are written.
pub(super) const BYTES_PER_VALUE: usize = 16;

/// What an object counts as, in values: its table of members takes about as much as four
/// small values more than the one it is (a value takes 80 bytes, an object of one member
/// about 450), so a list of small objects is bounded by what it takes, not by its count.
pub(super) const OBJECT_VALUES: usize = 5;

/// The values any reply may hold, however short it is: a call's arguments of a few
/// thousand numbers in a reply of a few kB are ordinary, and 65,536 values take a few MB.
pub(super) const LEAST_VALUES: usize = 65_536;

/// How many JSON values decoding a reply may make: at most one per [`BYTES_PER_VALUE`] bytes
/// of what was read, and at least [`LEAST_VALUES`]. Values skipped cost nothing and do not
/// count; every value kept does (an object as [`OBJECT_VALUES`]), and so does each value of
/// a call's arguments parsed from their JSON text.
#[derive(Debug)]
pub(super) struct Budget {
    /// The bytes read: the body or the stream, or the argument texts of a reply decoded by
    /// the caller (which grow it as they are parsed).
    bytes: Cell<usize>,
    /// Whether the argument texts parsed add their length to `bytes`.
    grows: bool,
    used: Cell<usize>,
    /// Of `used`, the values inside what is kept whole (an item, block, part or argument
    /// kept as it came): what a stream's accumulator may keep after its event.
    whole: Cell<usize>,
}

impl Budget {
    /// For a body or stream of `bytes` bytes (the argument texts are inside it).
    pub(super) fn of_bytes(bytes: usize) -> Self {
        Budget {
            bytes: Cell::new(bytes),
            grows: false,
            used: Cell::new(0),
            whole: Cell::new(0),
        }
    }

    /// For a reply the caller decoded: only the argument texts are parsed here, and each
    /// adds its length.
    pub(super) fn of_texts() -> Self {
        Budget {
            bytes: Cell::new(0),
            grows: true,
            used: Cell::new(0),
            whole: Cell::new(0),
        }
    }

    /// An argument text of `len` bytes is about to be parsed.
    pub(super) fn text(&self, len: usize) {
        if self.grows {
            self.bytes.set(self.bytes.get().saturating_add(len));
        }
    }

    /// The most values allowed.
    pub(super) fn most(&self) -> usize {
        (self.bytes.get() / BYTES_PER_VALUE).max(LEAST_VALUES)
    }

    /// Whether decoding stopped because the values made reached [`Budget::most`].
    pub(super) fn spent(&self) -> bool {
        self.used.get() > self.most()
    }

    /// Of the values made, those inside what is kept whole.
    pub(super) fn kept_whole(&self) -> usize {
        self.whole.get()
    }

    /// Counts `values` made (`whole`: inside what is kept whole); an error once there are
    /// too many.
    fn take<E: de::Error>(&self, values: usize, whole: bool) -> Result<(), E> {
        if whole {
            self.whole.set(self.whole.get().saturating_add(values));
        }
        let used = self.used.get().saturating_add(values);
        self.used.set(used);
        if used > self.most() {
            return Err(E::custom("too many JSON values for the reply's size"));
        }
        Ok(())
    }

    /// Why a reply that spent its budget is refused: a complete sentence.
    pub(super) fn reason(&self) -> String {
        format!(
            "it holds more JSON values than pi-tools decodes for a reply of its size: more than {} in what it reads (one for every {BYTES_PER_VALUE} bytes of the {} bytes read, and at least {LEAST_VALUES}; an object counts as {OBJECT_VALUES}), and decoding them would take memory far out of proportion to the reply; check what sent it, and have the tool take such data as text or in smaller calls",
            self.most(),
            self.bytes.get()
        )
    }
}

/// `bytes` as JSON (a whole body, nothing after it but white space), decoded as `keep` says,
/// each value made counted against `budget`.
pub(super) fn from_slice(bytes: &[u8], keep: &Keep, budget: &Budget) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let kept = Kept {
        keep,
        budget,
        whole: false,
    }
    .with(keep);
    let (value, _) = kept.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// `text` as JSON, decoded as `keep` says, each value made counted against `budget`.
pub(super) fn from_str(text: &str, keep: &Keep, budget: &Budget) -> serde_json::Result<Value> {
    from_slice(text.as_bytes(), keep, budget)
}

/// What of `value` a reader reads when `keep` describes it, as [`from_slice`] would have
/// decoded it from its text: a reply the caller decoded is read from a copy of only that.
pub(super) fn copy(value: &Value, keep: &Keep) -> Value {
    match (keep, value) {
        (Keep::All, value) | (Keep::WholeObject, value @ Value::Object(_)) => value.clone(),
        (Keep::Scalar, Value::Array(_) | Value::Object(_)) => empty_like(value),
        (Keep::Scalar, value) => value.clone(),
        (Keep::List(element), Value::Array(items)) => {
            let mut list = Vec::new();
            for item in items {
                list.push(copy(item, element));
                if !fits(item, element) {
                    break;
                }
            }
            Value::Array(list)
        }
        (Keep::Object(members), Value::Object(object)) => Value::Object(
            object
                .iter()
                .filter_map(|(key, value)| {
                    let (_, keep) = members.iter().find(|(name, _)| name == key)?;
                    Some((key.clone(), copy(value, keep)))
                })
                .collect(),
        ),
        (_, Value::Array(_) | Value::Object(_)) => empty_like(value),
        (_, scalar) => scalar.clone(),
    }
}

/// An empty value of `value`'s kind (a scalar as it is).
fn empty_like(value: &Value) -> Value {
    match value {
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Object(_) => Value::Object(Map::new()),
        scalar => scalar.clone(),
    }
}

/// Whether `value` is of the kind `keep` describes.
fn fits(value: &Value, keep: &Keep) -> bool {
    match keep {
        Keep::All => true,
        Keep::Scalar => !matches!(value, Value::Array(_) | Value::Object(_)),
        Keep::List(_) => value.is_array(),
        Keep::WholeObject | Keep::Object(_) => value.is_object(),
    }
}

/// The seed of a value described by a [`Keep`]: the value, and whether it is of the kind
/// described.
#[derive(Clone, Copy)]
struct Kept<'k> {
    keep: &'k Keep,
    budget: &'k Budget,
    /// Whether the value is inside what is kept whole.
    whole: bool,
}

impl<'k> Kept<'k> {
    fn with(self, keep: &'k Keep) -> Self {
        Kept {
            keep,
            budget: self.budget,
            whole: self.whole || matches!(keep, Keep::All | Keep::WholeObject),
        }
    }

    fn scalar<E: de::Error>(&self, value: Value) -> Result<(Value, bool), E> {
        self.budget.take(1, self.whole)?;
        Ok((value, matches!(self.keep, Keep::Scalar | Keep::All)))
    }
}

impl<'de> DeserializeSeed<'de> for Kept<'_> {
    type Value = (Value, bool);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
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
        let element = match self.keep {
            Keep::List(element) => *element,
            Keep::All => &Keep::All,
            _ => {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok((Value::Array(Vec::new()), false));
            }
        };
        self.budget.take(1, self.whole)?;
        let mut list = Vec::new();
        while let Some((value, fits)) = seq.next_element_seed(self.with(element))? {
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
        let members = match self.keep {
            Keep::Object(members) => Some(*members),
            Keep::WholeObject | Keep::All => None,
            _ => {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok((Value::Object(Map::new()), false));
            }
        };
        self.budget.take(OBJECT_VALUES, self.whole)?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let keep = match members {
                None => Some(&Keep::All),
                Some(members) => members
                    .iter()
                    .find(|(name, _)| *name == key)
                    .map(|(_, keep)| keep),
            };
            match keep {
                Some(keep) => {
                    let (value, _) = map.next_value_seed(self.with(keep))?;
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

    /// `text` decoded as `keep` says, within the budget of its length.
    fn read(text: &str, keep: &Keep) -> serde_json::Result<Value> {
        from_str(text, keep, &Budget::of_bytes(text.len()))
    }

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
            read(text, &SHAPE).unwrap(),
            json!({"a": 3, "all": {"z": [1, 2.5, null], "y": "é"},
                   "list": [{"id": 1}, {"id": "two"}],
                   "whole": [{"id": 1, "x": {"y": [true, "é"]}}, {}]})
        );
        let whole: Value = serde_json::from_str(text).unwrap();
        assert_eq!(read(text, &Keep::All).unwrap(), whole);
    }

    #[test]
    fn a_value_of_another_kind_is_kept_empty_and_a_list_stops_at_it() {
        assert_eq!(
            read(r#"{"a": [1, 2], "list": {"id": 1}}"#, &SHAPE).unwrap(),
            json!({"a": [], "list": {}})
        );
        assert_eq!(
            read(r#"{"list": [{"id": 1}, [0, 0], {"id": 2}, 0]}"#, &SHAPE).unwrap(),
            json!({"list": [{"id": 1}, []]})
        );
        assert_eq!(
            read(r#"{"whole": [{"id": 1}, 0, 0, 0], "all": [0, 0]}"#, &SHAPE).unwrap(),
            json!({"whole": [{"id": 1}, 0], "all": [0, 0]})
        );
        assert_eq!(read("[0, 0]", &SHAPE).unwrap(), json!([]));
        assert_eq!(read("\"s\"", &SHAPE).unwrap(), json!("s"));
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
            let kept = read(text, &SHAPE).unwrap_err();
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
        let kept = read(&nested("all", 200), &SHAPE).unwrap_err();
        let whole = serde_json::from_str::<Value>(&nested("all", 200)).unwrap_err();
        assert_eq!(kept.to_string(), whole.to_string());
        assert_eq!(read(&nested("b", 100_000), &SHAPE).unwrap(), json!({}));
    }

    /// Every value kept counts, the lists and objects too; skipped ones do not. At most
    /// [`LEAST_VALUES`] for a short text, one per [`BYTES_PER_VALUE`] bytes for a long one.
    #[test]
    fn kept_values_are_counted_against_the_budget() {
        let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
        let within = zeros(LEAST_VALUES - 1);
        let budget = Budget::of_bytes(0);
        let list = from_str(&within, &Keep::All, &budget).unwrap();
        assert_eq!(list.as_array().map(Vec::len), Some(LEAST_VALUES - 1));
        assert!(!budget.spent());
        let past = zeros(LEAST_VALUES);
        let budget = Budget::of_bytes(past.len());
        assert_eq!(budget.most(), LEAST_VALUES);
        assert!(from_str(&past, &Keep::All, &budget).is_err());
        assert!(budget.spent());
        // A long text may hold one value per 16 bytes of it.
        let budget = Budget::of_bytes(BYTES_PER_VALUE * (LEAST_VALUES + 10));
        assert!(from_str(&past, &Keep::All, &budget).is_ok());
        // Skipped, they cost nothing.
        let skipped = format!(r#"{{"b": {}, "a": 1}}"#, zeros(10 * LEAST_VALUES));
        let budget = Budget::of_bytes(0);
        assert_eq!(
            from_str(&skipped, &SHAPE, &budget).unwrap(),
            json!({"a": 1})
        );
        assert!(!budget.spent());
    }

    /// A reply the caller decoded is copied as it would have been decoded from its text.
    #[test]
    fn a_copy_keeps_what_decoding_keeps() {
        for text in [
            r#"{"a": "x", "b": [0, {"c": 1}], "all": {"z": [1, null]}, "a": 3,
                "list": [{"id": 1, "junk": [0]}, {"id": "two"}], "whole": [{"x": {"y": [true]}}, {}]}"#,
            r#"{"a": [1, 2], "list": {"id": 1}}"#,
            r#"{"list": [{"id": 1}, [0, 0], {"id": 2}, 0]}"#,
            r#"{"whole": [{"id": 1}, 0, 0, 0], "all": [0, 0]}"#,
            "[0, 0]",
            "\"s\"",
        ] {
            let whole: Value = serde_json::from_str(text).unwrap();
            assert_eq!(copy(&whole, &SHAPE), read(text, &SHAPE).unwrap(), "{text}");
        }
    }
}

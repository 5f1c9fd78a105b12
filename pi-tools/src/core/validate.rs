//! Argument validation: coerce common model mistakes, then check against the tool's schema,
//! listing every violation.

mod closed;

use serde_json::{Map, Number, Value};

/// A compiled validator for one tool's parameter schema. Compile it once and reuse it: the
/// runner caches one per tool.
pub struct ArgumentValidator {
    schema: Value,
    validator: jsonschema::Validator,
    /// Whether a property the schema does not declare is an error (see
    /// [`ArgumentValidator::rejecting_unknown_properties`]).
    reject_unknown: bool,
    /// With `reject_unknown`: the schema closed where an unknown property is an error, which
    /// accepts exactly the valid arguments without one (see `closed.rs`).
    closed: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl ArgumentValidator {
    /// Compiles a schema. The error says why the schema itself is unusable.
    pub fn new(schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::options()
            .build(schema)
            .map_err(|e| format!("the parameter schema is not a valid JSON schema: {e}"))?;
        Ok(ArgumentValidator {
            schema: schema.clone(),
            validator,
            reject_unknown: false,
            closed: None,
        })
    }

    /// Makes a property that the schema does not declare an error, naming the closest
    /// declared one ("unknown property `file_path`; did you mean `path`?"). Objects whose
    /// schema allows extra properties (`additionalProperties` or `patternProperties`) are
    /// left alone. A model that misspells an optional property otherwise never learns that
    /// it was ignored.
    pub fn rejecting_unknown_properties(mut self, reject: bool) -> Self {
        self.reject_unknown = reject;
        // The closed schema compiles whenever the schema did (it only adds
        // `additionalProperties: false`); were it not to, every call takes the longer way.
        self.closed = reject
            .then(|| closed::closed_schema(&self.schema))
            .flatten()
            .and_then(|closed| jsonschema::options().build(&closed).ok());
        self
    }

    /// The schema this validator checks.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Coerces `args` (see [`coerce_arguments`]) and validates the result. Returns the coerced
    /// copy, or the error text for the model: a first line naming the tool, one line per
    /// violation, then the received arguments.
    pub fn validate(&self, tool_name: &str, args: Value) -> Result<Value, String> {
        let mut unknown = Vec::new();
        if self.reject_unknown {
            // Valid with no unknown property, in one pass (the common case).
            if self
                .closed
                .as_ref()
                .is_some_and(|closed| closed.is_valid(&args))
            {
                return Ok(args);
            }
            unknown_properties(&self.schema, &args, "", &mut unknown);
        }
        // Coercion only touches values the schema rejects, so arguments that are already
        // valid come back unchanged: skip the copy and the walk (the common case).
        if unknown.is_empty() && self.validator.is_valid(&args) {
            return Ok(args);
        }
        let coerced = coerce_arguments(&self.schema, args.clone());
        if unknown.is_empty() && self.validator.is_valid(&coerced) {
            return Ok(coerced);
        }
        let mut text = format!("Validation failed for tool \"{tool_name}\":");
        for line in &unknown {
            text.push_str(&format!("\n  - {line}"));
        }
        for error in self.validator.iter_errors(&coerced) {
            let mut path = pointer_to_dotted(error.instance_path().as_str());
            if let jsonschema::error::ValidationErrorKind::Required { property } = error.kind() {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned);
                path = if path == "root" {
                    name
                } else {
                    format!("{path}.{name}")
                };
            }
            let sent = args.pointer(error.instance_path().as_str());
            let message = enum_violation(&self.schema, &error, sent)
                .unwrap_or_else(|| as_sent(error.to_string(), error.instance(), sent));
            text.push_str(&format!("\n  - {path}: {message}"));
        }
        let received = serde_json::to_string_pretty(&args).unwrap_or_else(|_| args.to_string());
        text.push_str("\n\nReceived arguments:\n");
        text.push_str(&received);
        Err(text)
    }
}

/// Collects one line per property of `value` that `schema` does not declare, walking into
/// declared properties and array items. `at` is the dotted path of `value` ("" at the root).
fn unknown_properties(schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    match value {
        Value::Object(map) => {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                return;
            };
            // `properties: {}` declares nothing, so (as in JSON Schema) any key is welcome
            // unless `additionalProperties: false` closes the object.
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            let open = schema.contains_key("patternProperties")
                || (properties.is_empty() && !closed)
                || schema
                    .get("additionalProperties")
                    .is_some_and(|a| a != &Value::Bool(false));
            for (name, item) in map {
                let path = if at.is_empty() {
                    name.clone()
                } else {
                    format!("{at}.{name}")
                };
                match properties.get(name) {
                    Some(item_schema) => unknown_properties(item_schema, item, &path, out),
                    None if open => {}
                    None => out.push(unknown_property_line(at, &path, name, properties)),
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let path = if at.is_empty() {
                        i.to_string()
                    } else {
                        format!("{at}.{i}")
                    };
                    unknown_properties(item_schema, item, &path, out);
                }
            }
        }
        _ => {}
    }
}

/// "unknown property `file_path`; did you mean `path`?", or, for an object that declares
/// none, which object has none: the tool (at the root) or the parameter at `parent`.
fn unknown_property_line(
    parent: &str,
    path: &str,
    name: &str,
    properties: &Map<String, Value>,
) -> String {
    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
    match closest(name, &known) {
        Some(best) => format!(
            "{path}: unknown property `{name}`; did you mean `{best}`? Remove `{name}` or rename it."
        ),
        None if parent.is_empty() => {
            format!("{path}: unknown property `{name}`; this tool takes no parameters. Remove it.")
        }
        None => {
            format!("{path}: unknown property `{name}`; `{parent}` takes no properties. Remove it.")
        }
    }
}

/// The declared name closest to `name`: one contained in it (or containing it) once case,
/// `_` and `-` are ignored (`file_path` → `path`), else the smallest edit distance.
fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = squash(name);
    let score = |candidate: &str| -> (usize, usize) {
        let c = squash(candidate);
        let contained = !c.is_empty() && (wanted.contains(&c) || c.contains(&wanted));
        let distance = strsim::damerau_levenshtein(&wanted, &c);
        (usize::from(!contained), distance)
    };
    known.iter().copied().min_by_key(|k| score(k))
}

/// `/a/0/b` → `a.0.b`; the empty pointer → `root`.
fn pointer_to_dotted(pointer: &str) -> String {
    if pointer.is_empty() {
        return "root".to_owned();
    }
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|seg| seg.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

/// Repairs the mistakes models commonly make, guided by the schema, and returns the repaired
/// value. Nothing is coerced that would lose information:
/// - numeric strings become numbers where a number is expected (`"5"` → `5`), but `"3.5"`
///   never becomes an integer;
/// - `"true"` / `"false"` become booleans where a boolean is expected;
/// - numbers and booleans become strings where a string is expected;
/// - a JSON-encoded string becomes the array or object the schema expects;
/// - `null` for an optional property (one not in `required`, whose schema does not allow
///   null) is treated as absent;
/// - a string that is not one of an enumeration's values becomes the one value it equals
///   after trimming, or ignoring case (`"Fahrenheit"` → `"fahrenheit"`); when it matches
///   none, or several, it is left for the validator to report with the allowed values;
/// - a boolean or number for an enumeration of strings becomes the one value that spells it
///   ignoring case (`true` → `"True"`), and a string that spells one of an enumeration's
///   numbers becomes that number (`"2"` → `2`, how Gemini sends such an enum);
/// - array items and nested properties are repaired the same way.
pub fn coerce_arguments(schema: &Value, value: Value) -> Value {
    // A call without arguments is an empty object, not `null`.
    let value = if value.is_null() && allows_type(schema, "object") && !allows_type(schema, "null")
    {
        Value::Object(Map::new())
    } else {
        value
    };
    coerce(schema, value)
}

fn coerce(schema: &Value, value: Value) -> Value {
    let Some(schema_obj) = schema.as_object() else {
        return value;
    };
    if let Some(value) = coerce_enum(schema, &value) {
        return value;
    }
    // Unions: keep a value that already has an acceptable type; otherwise take the first
    // branch that can repair it.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema_obj.get(key) {
            if let Some(branch) = branches.iter().find(|b| type_matches(b, &value)) {
                return coerce(branch, value);
            }
            for branch in branches {
                let candidate = coerce(branch, value.clone());
                if type_matches(branch, &candidate) {
                    return candidate;
                }
            }
            return value;
        }
    }
    if let Some(Value::Array(all)) = schema_obj.get("allOf") {
        return all.iter().fold(value, |v, s| coerce(s, v));
    }

    let value = if type_matches(schema, &value) {
        value
    } else {
        convert(schema, value)
    };
    match value {
        Value::Object(map) => Value::Object(coerce_object(schema_obj, map)),
        Value::Array(items) => match schema_obj.get("items") {
            Some(item_schema) if item_schema.is_object() => {
                Value::Array(items.into_iter().map(|v| coerce(item_schema, v)).collect())
            }
            _ => Value::Array(items),
        },
        other => other,
    }
}

fn coerce_object(schema: &Map<String, Value>, mut map: Map<String, Value>) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    let additional = schema.get("additionalProperties").filter(|s| s.is_object());
    if properties.is_none() && additional.is_none() {
        return map;
    }
    let is_required = |name: &str| required.is_some_and(|r| r.iter().any(|v| v == name));
    map.retain(|name, value| {
        if !value.is_null() || is_required(name) {
            return true;
        }
        let prop_schema = properties.and_then(|p| p.get(name)).or(additional);
        prop_schema.is_some_and(|s| allows_type(s, "null"))
    });
    for (name, value) in map.iter_mut() {
        if let Some(prop_schema) = properties.and_then(|p| p.get(name)).or(additional) {
            *value = coerce(prop_schema, std::mem::take(value));
        }
    }
    map
}

/// The `type` keyword as a list (`None` when the schema does not constrain the type).
pub(crate) fn types_of(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn allows_type(schema: &Value, wanted: &str) -> bool {
    if let Some(types) = types_of(schema) {
        return types.contains(&wanted);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            return branches.iter().any(|b| allows_type(b, wanted));
        }
    }
    // A schema without a type constraint accepts null too (unless it pins the values), so
    // such a null is a value the tool asked to see, not a model mistake.
    wanted == "null"
        && match schema {
            Value::Bool(b) => *b,
            Value::Object(o) => !o.contains_key("enum") && !o.contains_key("const"),
            _ => false,
        }
}

fn type_matches(schema: &Value, value: &Value) -> bool {
    let Some(types) = types_of(schema) else {
        // Unions are judged branch by branch; an untyped schema accepts any type.
        return match (schema.get("anyOf"), schema.get("oneOf")) {
            (Some(Value::Array(b)), _) | (_, Some(Value::Array(b))) => {
                b.iter().any(|s| type_matches(s, value))
            }
            _ => true,
        };
    };
    types.iter().any(|t| match (*t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => is_integral(n),
        _ => false,
    })
}

fn is_integral(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Tries each type the schema allows, in order, and returns the first lossless conversion.
fn convert(schema: &Value, value: Value) -> Value {
    let Some(types) = types_of(schema) else {
        return value;
    };
    for t in types {
        if let Some(converted) = convert_to(t, &value) {
            return converted;
        }
    }
    value
}

fn convert_to(target: &str, value: &Value) -> Option<Value> {
    match (target, value) {
        ("integer", Value::String(s)) => parse_integer(s.trim()),
        ("number", Value::String(s)) => {
            parse_integer(s.trim()).or_else(|| parse_float(s.trim()).map(Value::Number))
        }
        ("boolean", Value::String(s)) => match s.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("array", Value::String(s)) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(v @ Value::Array(_)) => Some(v),
            _ => None,
        },
        ("object", Value::String(s)) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// An integer from a string, refusing anything that would lose information (`"3.5"`).
fn parse_integer(s: &str) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Some(Value::Number(u.into()));
    }
    // "5.0" or "1e3" are integral and safe; "3.5" is not.
    let f = parse_float(s)?;
    let f = f.as_f64()?;
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        return Some(Value::Number((f as i64).into()));
    }
    None
}

fn parse_float(s: &str) -> Option<Number> {
    if s.is_empty() {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    Number::from_f64(f)
}

/// The values an enumeration allows: `enum`, `const`, or a `oneOf`/`anyOf` whose every
/// branch is one of those (schemars' form for an enum with documented variants).
fn enum_values(schema: &Value) -> Option<Vec<&Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.iter().collect());
    }
    if let Some(value) = schema.get("const") {
        return Some(vec![value]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let mut all = Vec::new();
            for branch in branches {
                all.extend(enum_values(branch)?);
            }
            return Some(all);
        }
    }
    None
}

/// The allowed strings `text` could have meant: the one it equals after trimming, else
/// those it equals ignoring case.
fn enum_candidates<'v>(text: &str, allowed: &[&'v Value]) -> Vec<&'v str> {
    let strings = allowed.iter().filter_map(|v| v.as_str());
    let trimmed = text.trim();
    if let Some(exact) = strings.clone().find(|s| *s == trimmed) {
        return vec![exact];
    }
    let folded = trimmed.to_lowercase();
    strings.filter(|s| s.to_lowercase() == folded).collect()
}

/// A value that is not one of the enumeration's values, repaired when it means exactly one
/// of them; `None` when there is nothing to repair or no single repair:
/// - a string equal to one value after trimming or ignoring case;
/// - a string that spells a number or boolean value (`"2"` for `2`: Gemini sends such an
///   enum as strings);
/// - a boolean or number for the one string value that spells it, case ignored (`true` for
///   `"True"`, as Python-made schemas write booleans).
fn coerce_enum(schema: &Value, value: &Value) -> Option<Value> {
    if !matches!(value, Value::String(_) | Value::Bool(_) | Value::Number(_)) {
        return None;
    }
    let allowed = enum_values(schema)?;
    if allowed.contains(&value) {
        return None;
    }
    let only = |found: Vec<&Value>| match found[..] {
        [one] => Some(one.clone()),
        _ => None,
    };
    match value {
        Value::String(text) => match enum_candidates(text, &allowed)[..] {
            [one] => Some(Value::String(one.to_owned())),
            [] => only(
                allowed
                    .iter()
                    .copied()
                    .filter(|v| spells(text.trim(), v))
                    .collect(),
            ),
            _ => None,
        },
        _ => {
            let spelled = value.to_string();
            only(
                allowed
                    .iter()
                    .copied()
                    .filter(|v| v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(&spelled)))
                    .collect(),
            )
        }
    }
}

/// Whether `text` is how a number or boolean `value` is written (`"2"` for `2`).
fn spells(text: &str, value: &Value) -> bool {
    match value {
        Value::Number(n) => n.to_string() == text,
        Value::Bool(b) => (if *b { "true" } else { "false" }) == text,
        _ => false,
    }
}

/// A violation's message with the value as the model sent it: coercion may have turned a
/// sent `true` into `"true"` before the validator saw it, and the model must recognise
/// its own value. Only scalars are put back (a JSON-encoded array sent as a string is
/// reported as the array it became).
fn as_sent(message: String, instance: &Value, sent: Option<&Value>) -> String {
    match sent {
        Some(sent) if sent != instance && !sent.is_array() && !sent.is_object() => {
            let shown = instance.to_string();
            match message.strip_prefix(&shown) {
                Some(rest) => format!("{sent}{rest}"),
                None => message,
            }
        }
        _ => message,
    }
}

/// The message for a value outside an enumeration, listing the allowed values (and, for a
/// string that matches several of them when case is ignored, which ones); `None` for any
/// other violation.
fn enum_violation(
    root: &Value,
    error: &jsonschema::ValidationError<'_>,
    sent: Option<&Value>,
) -> Option<String> {
    let path = error.schema_path().as_str();
    let (parent, keyword) = path.rsplit_once('/')?;
    if !matches!(keyword, "enum" | "const" | "oneOf" | "anyOf") {
        return None;
    }
    let allowed = enum_values(root.pointer(parent)?)?;
    // The value as the model sent it, when coercion changed a scalar (see [`as_sent`]).
    let instance: &Value = match sent {
        Some(sent) if !sent.is_array() && !sent.is_object() => sent,
        _ => error.instance(),
    };
    let list = allowed
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mut message = format!("{instance} is not one of the allowed values: {list}");
    if let Value::String(text) = instance {
        let candidates = enum_candidates(text, &allowed);
        if candidates.len() > 1 {
            let quoted: Vec<String> = candidates.iter().map(|c| format!("\"{c}\"")).collect();
            message.push_str(&format!(
                " ({instance} matches {} when case is ignored; give one of them exactly)",
                quoted.join(" and ")
            ));
        }
    }
    Some(message)
}

//! What the code `#[tool]` generates refers to, so a crate that depends only on `pi-tools`
//! compiles. Not a public API: names here change without notice.

use std::any::Any;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

pub use ::inventory;
pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use std::boxed::Box;
pub use std::option::Option;
pub use std::result::Result;
pub use std::string::String;
pub use std::sync::OnceLock;
pub use std::vec::Vec;

pub use super::registry::ToolRegistration;
pub use crate::core::{BoxFuture, ExecutionMode, ToolContext, ToolError, ToolResult};
pub use crate::tool::render::Styled;
pub use crate::tool::schema::canonical_schema;
pub use crate::tool::{IntoToolResult, Json};
pub use crate::tool::{
    SourceLocation, ToolConfigSpec, ToolDefinition, ToolOrigin, ToolRenderer, ToolRole, ToolSpec,
};

use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a tool parameter's type must be. The generated check points at the parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "this parameter's type does not implement `Deserialize` and `JsonSchema`",
    note = "derive both on the type with schemars 1: `#[derive(serde::Deserialize, schemars::JsonSchema)]`; schemars 0.8's `JsonSchema` is another trait: depend on `schemars = \"1\"` or derive `pi_tools::schemars::JsonSchema`"
)]
pub trait ToolArgument: DeserializeOwned + schemars::JsonSchema {}

impl<T: DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

/// Compile-time check that a parameter type is a [`ToolArgument`].
pub const fn assert_tool_argument<T: ToolArgument>() {}

/// What a parameter with `#[default = value]` must be: a tool argument whose default can be
/// written into the schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter with a default: it must implement `serde::Deserialize`, `schemars::JsonSchema` and `serde::Serialize`",
    label = "this parameter's type cannot show its default in the schema",
    note = "`Serialize` writes the default into the schema: derive `serde::Serialize` on the type as well; `JsonSchema` must come from schemars 1 (`pi_tools::schemars`), not schemars 0.8"
)]
pub trait DefaultArgument: ToolArgument + serde::Serialize {}

impl<T: ToolArgument + serde::Serialize> DefaultArgument for T {}

/// Compile-time check that a parameter type with a default is a [`DefaultArgument`].
pub const fn assert_default_argument<T: DefaultArgument>() {}

/// The schema of a parameter's type, for the generated argument struct's `JsonSchema`
/// derive (`#[schemars(schema_with = ...)]`); the same subschema the derive makes for a
/// field. Its bound is the parameter's check: a type that is not a [`ToolArgument`] is
/// reported here, once, with the fix, while the derive itself asks nothing of the type and
/// so adds no second error of its own.
pub fn param_schema<T: ToolArgument>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    generator.subschema_for::<T>()
}

/// [`param_schema`] for a parameter with a default, checked as a [`DefaultArgument`].
pub fn default_param_schema<T: DefaultArgument>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    generator.subschema_for::<T>()
}

/// What a parameter with `#[default = "text"]` must be: built from a string. The message
/// shows the form an enum's default takes instead.
#[diagnostic::on_unimplemented(
    message = "`#[default = \"...\"]` gives a string, and `{Self}` cannot be built from one",
    label = "`{Self}` does not implement `From<&str>`",
    note = "for an enum, write the variant as a path: `#[default = {Self}::Variant]`; for another type, write the value as an expression of that type"
)]
pub trait DefaultFromStr: From<&'static str> {}

impl<T: From<&'static str>> DefaultFromStr for T {}

/// The value of `#[default = "text"]` for a parameter of type `T`.
pub fn default_from_str<T: DefaultFromStr>(text: &'static str) -> T {
    T::from(text)
}

/// What a tool's typed result must be to be written: checked at the return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's typed result: it must implement `serde::Serialize`",
    label = "the value this fn returns cannot be written as the tool's structured result",
    note = "derive it on the type: `#[derive(serde::Serialize, schemars::JsonSchema)]`; or return `ToolOutput` (content without an output schema)"
)]
pub trait ToolReturn: serde::Serialize {}

impl<T: serde::Serialize + ?Sized> ToolReturn for T {}

/// What a tool's typed result must be to give the output schema: checked at the return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's typed result: it must implement `schemars::JsonSchema`, which gives the tool its output schema",
    label = "this return type has no schema to list as the tool's output schema",
    note = "derive it on the type: `#[derive(serde::Serialize, schemars::JsonSchema)]`; or return `Json(value)` (JSON text without an output schema)"
)]
pub trait ToolReturnSchema: schemars::JsonSchema {}

impl<T: schemars::JsonSchema + ?Sized> ToolReturnSchema for T {}

/// The output schema of a typed result (the fn's `Ok` type).
pub fn return_schema<T: ToolReturnSchema>() -> Value {
    crate::tool::schema::output_schema::<T>()
}

/// The output schema of `#[tool(output = Type)]`.
pub fn declared_output_schema<T: ToolReturnSchema>() -> Value {
    crate::tool::schema::output_schema::<T>()
}

/// A typed result: the value as structured content, and `text` (compact JSON when `None`)
/// as what the model reads.
pub fn typed_result<T: ToolReturn + ?Sized>(
    value: &T,
    text: Option<String>,
) -> Result<ToolResult, ToolError> {
    crate::tool::output::typed_result(value, text)
}

/// Passes a future through, requiring it to be `Send` (the error points at the tool fn).
pub fn assert_send<F: Future + Send>(future: F) -> F {
    future
}

/// Deserialises validated arguments; a failure here means the schema and the type disagree.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::new(format!(
            "The arguments for tool \"{tool}\" could not be read: {e}. Check them against the tool's parameters and call it again."
        ))
    })
}

/// The tool's configuration, which `wrap` always sets for a tool declaring `config = T`.
pub fn expect_config<T: Any + Send + Sync>(ctx: &ToolContext) -> Result<&T, ToolError> {
    ctx.tool_config::<T>().ok_or_else(|| {
        ToolError::new(format!(
            "The tool was run without its configuration (`{}`); run it through `pi_tools::wrap`.",
            std::any::type_name::<T>()
        ))
    })
}

/// The [`ToolConfigSpec`] of a `config = T` type.
pub fn config_spec<T>() -> ToolConfigSpec
where
    T: DeserializeOwned + schemars::JsonSchema + Default + Send + Sync + 'static,
{
    ToolConfigSpec {
        schema: canonical_schema::<T>,
        load: load_config::<T>,
        default: || Arc::new(T::default()),
    }
}

/// Parses a configuration section, rejecting keys the type does not declare.
fn load_config<T>(section: Value) -> Result<Arc<dyn Any + Send + Sync>, String>
where
    T: DeserializeOwned + schemars::JsonSchema + Send + Sync + 'static,
{
    let schema = canonical_schema::<T>();
    if let (Value::Object(given), Some(Value::Object(known))) = (&section, schema.get("properties"))
        && let Some(unknown) = given.keys().find(|k| !known.contains_key(*k))
    {
        let mut expected: Vec<&str> = known.keys().map(String::as_str).collect();
        expected.sort_unstable();
        let expected = if expected.is_empty() {
            "this tool takes no configuration keys".to_owned()
        } else {
            format!("expected one of `{}`", expected.join("`, `"))
        };
        return Err(format!("unknown key `{unknown}`: {expected}"));
    }
    serde_json::from_value::<T>(section)
        .map(|config| Arc::new(config) as Arc<dyn Any + Send + Sync>)
        .map_err(|e| e.to_string())
}

/// Wraps a tool fn's error so method resolution picks how it becomes a [`ToolError`]:
/// a `ToolError` is kept as is (with its details), any other `Display` error becomes its text.
pub struct ErrorWrap<E>(pub E);

/// Picked for `ErrorWrap<ToolError>`.
pub trait KeepToolError {
    /// The error itself.
    fn to_tool_error(&self) -> ToolError;
}

impl KeepToolError for ErrorWrap<ToolError> {
    fn to_tool_error(&self) -> ToolError {
        self.0.clone()
    }
}

/// Picked (through one more auto-reference) for any other `Display` error.
pub trait DisplayToolError {
    /// The error's text as a tool error.
    fn to_tool_error(&self) -> ToolError;
}

impl<E: Display> DisplayToolError for &ErrorWrap<E> {
    fn to_tool_error(&self) -> ToolError {
        ToolError::new(self.0.to_string())
    }
}

/// Builds a definition for the registry.
pub fn make_tool<T: ToolDefinition + Default>() -> Arc<dyn ToolDefinition> {
    Arc::new(T::default())
}

/// A tool's `examples = [...]`: each literal was checked to be JSON when the macro expanded,
/// so a literal that does not parse cannot reach here; it would show as `null`.
pub fn examples(literals: &[&str]) -> Vec<Value> {
    literals
        .iter()
        .map(|text| serde_json::from_str(text).unwrap_or(Value::Null))
        .collect()
}

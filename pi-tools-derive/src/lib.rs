//! The `#[tool]` attribute macro of pi-tools. Use it through `pi_tools::tool`.
//!
//! The crate follows serde_derive's layout: `attr` parses the keys, `ast` builds the model
//! of the function, `check` judges it (every mistake is gathered in a `ctxt::Ctxt` and
//! reported together), and `expand` generates the code.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

/// Declares a tool as an annotated `async fn`.
///
/// ```ignore
/// use pi_tools::{tool, ToolContext, ToolError, ToolOutput};
///
/// /// Read the contents of a file.
/// ///
/// /// Later paragraphs of the doc comment stay rustdoc only.
/// #[tool(snippet = "Read file contents",
///        guidelines = ["Use read to examine files instead of cat or sed."],
///        mode = parallel, read_only)]
/// async fn read(
///     ctx: &ToolContext,
///     /// Path to the file to read (relative or absolute)
///     path: String,
///     /// Line number to start reading from (1-indexed)
///     offset: Option<u64>,
/// ) -> Result<String, ToolError> {
///     # let _ = (ctx, offset);
///     Ok(path)
/// }
/// ```
///
/// # Keys
///
/// | key | value | default |
/// |---|---|---|
/// | `name` | string matching `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` | the fn name |
/// | `label` | string, a short human label | the name |
/// | `description` | string, what the tool does for the model | the doc comment's first paragraph |
/// | `snippet` | string, the system prompt's "Available tools" line | none (tool not listed) |
/// | `guidelines` | `["...", ...]`, lines for the prompt's "Guidelines" | none |
/// | `mode` | `parallel` or `sequential` | `parallel` |
/// | `config = Type` | `Type: DeserializeOwned + JsonSchema + Default + Send + Sync + 'static`, the tool's `[tool.<name>]` section; loading rejects unknown keys, naming them | no configuration |
/// | `renderer = Type` | `Type: pi_tools::ToolRenderer + Default`, draws calls and results | the `ToolDefinition` defaults |
/// | `prepare = path` | a `fn(serde_json::Value) -> Result<serde_json::Value, ToolError>` run before validation | identity |
/// | `read_only` | flag → `ToolDefinition::read_only()` is true | false |
/// | `destructive` | flag → `ToolDefinition::destructive()` is true | false |
/// | `accept_unknown_properties` | flag → arguments may carry undeclared properties (otherwise each is a validation error naming the closest declared one) | false |
///
/// Unknown keys, a key given twice, an invalid name and an invalid mode are compile errors
/// at the offending token.
///
/// # Parameters
///
/// - Plain parameters become the fields (and JSON properties, under their own names: no case
///   conversion) of a generated `<Pascal>Args` struct deriving `Deserialize` and
///   `JsonSchema`. A `///` comment on a parameter becomes its schema description;
///   `#[serde(...)]` and `#[schemars(...)]` on a parameter are moved to its field (e.g.
///   `#[serde(rename = "oldText")]`, `#[serde(default)]`). `Option<T>` is optional. Each type
///   must implement `Deserialize + JsonSchema`; the error says so at the parameter.
/// - `#[args] args: MyArgs`: the alternative form, a whole struct as the arguments. It cannot be
///   mixed with plain parameters.
/// - The context: a parameter whose type is a reference to a path ending in `ToolContext`
///   (`&ToolContext`, `&pi_tools::ToolContext`), or any parameter marked `#[ctx]` (for a
///   renamed import, or `ToolContext` by value). The type path is read, never guessed from
///   imports. At most one.
/// - `#[config] cfg: &MyConfig`: the tool's configuration, which `pi_tools::wrap` always sets
///   (needs `config = MyConfig`). Without it, read it with `ctx.tool_config::<MyConfig>()`.
///
/// No receiver (`self`) and no generics.
///
/// # Description
///
/// The first paragraph of the fn's doc comment (its lines joined with spaces) is the
/// description unless `description` is given. Later paragraphs are ignored by the macro:
/// they remain rustdoc for people. A tool without either is a compile error.
///
/// # Return type
///
/// `Result<T, E>` (any path ending in `Result` with `T` as its first argument):
/// - `T` = `String`, `&'static str`, `ToolOutput<D>`, `ToolResult` or `Json<T>` is converted
///   with `IntoToolResult`; any other `T` must be `Serialize` and is returned as pretty JSON
///   text.
/// - `E` = `ToolError` is kept as is (with its details); any other `E: Display` becomes a
///   `ToolError` with its text. An `Err` becomes an error result for the model.
///
/// The fn's future must be `Send` (the error points at the fn).
///
/// # Generated items
///
/// Beside the fn (unchanged and still callable): the args struct, a unit struct named after
/// the tool (`read` → `ReadTool`, `read_file` → `ReadFileTool`) implementing
/// `pi_tools::ToolDefinition` (its schema computed once, on first use, as the canonical
/// schema), and an `inventory` registration that `pi_tools::Registry::from_inventory` finds.
/// Everything is reached through `pi_tools`, so a crate needs no other dependency.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}

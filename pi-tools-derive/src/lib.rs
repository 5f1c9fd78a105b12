//! The `#[tool]` attribute macro of pi-tools. Use it through `pi_tools::tool`: a tool is an
//! annotated `async fn`.
//!
//! ```rust
//! use pi_tools::{tool, ToolContext, ToolError, ToolOutput};
//!
//! /// Count the words of a text.
//! ///
//! /// Use it on long texts; for a few words, count them yourself.
//! #[tool(guidelines = ["Use word_count for long texts."], read_only)]
//! async fn word_count(
//!     ctx: &ToolContext,
//!     /// The text to count.
//!     text: String,
//!     /// Count only words longer than this many characters.
//!     #[default = 0]
//!     min_len: usize,
//! ) -> Result<ToolOutput, ToolError> {
//!     ctx.update(pi_tools::ToolResult::text("counting…"));
//!     let n = text.split_whitespace().filter(|w| w.len() > min_len).count();
//!     Ok(ToolOutput::text(n.to_string()))
//! }
//! # use pi_tools::ToolDefinition;
//! # assert_eq!(WordCountTool.name(), "word_count");
//! # assert_eq!(WordCountTool.prompt_snippet(), Some("Count the words of a text."));
//! # assert_eq!(
//! #     WordCountTool.description(),
//! #     "Count the words of a text.\n\nUse it on long texts; for a few words, count them yourself."
//! # );
//! # assert_eq!(WordCountTool.parameters()["properties"]["min_len"]["default"], 0);
//! # assert_eq!(WordCountTool.parameters()["required"].to_string(), r#"["text"]"#);
//! ```
//!
//! The crate follows serde_derive's layout: `attr` parses the keys, `ast` builds the model
//! of the function, `check` judges it (every mistake is gathered in a `ctxt::Ctxt`, which
//! must be checked before it is dropped, and reported together), and `expand` generates
//! the code, one function per generated item.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
#[cfg(test)]
mod readme;
#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

/// Declares a tool as an annotated `async fn`.
///
/// ```rust
/// use pi_tools::{tool, ToolContext, ToolError, ToolOutput};
///
/// /// Read the contents of a file.
/// ///
/// /// Text comes back as it is; use `offset` to continue where a long file was cut.
/// #[tool(snippet = "Read file contents",
///        guidelines = ["Use read to examine files instead of cat or sed."],
///        mode = parallel, read_only)]
/// async fn read(
///     ctx: &ToolContext,
///     /// Path to the file to read (relative or absolute)
///     path: String,
///     /// Line number to start reading from (1-indexed)
///     #[default = 1]
///     offset: u64,
///     /// Stop after this line, if given.
///     last: Option<u64>,
/// ) -> Result<String, ToolError> {
///     # let _ = (ctx, last);
///     Ok(format!("{path} from line {offset}"))
/// }
/// # use pi_tools::ToolDefinition;
/// # assert_eq!(ReadTool.description(), "Read the contents of a file.\n\nText comes back as it is; use `offset` to continue where a long file was cut.");
/// # assert_eq!(ReadTool.parameters()["properties"]["offset"]["default"], 1);
/// ```
///
/// # Keys
///
/// | key | value | default |
/// |---|---|---|
/// | `name` | string matching `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` | the fn name |
/// | `label` | string, a short human label | the name |
/// | `description` | string, what the tool does for the model | the whole doc comment (see [Description](#description)) |
/// | `snippet` | string, the system prompt's "Available tools" line; `""` leaves the tool out of the list | the description's first paragraph |
/// | `guidelines` | `["...", ...]`, lines for the prompt's "Guidelines" | none |
/// | `mode` | `parallel` or `sequential` | `parallel` |
/// | `role` | `explore` (the tool lists, finds or searches files) or `shell` (it runs shell commands) → `ToolDefinition::role()`, which the prompt's rule on exploring files reads | no role |
/// | `config = Type` | `Type: DeserializeOwned + JsonSchema + Default + Send + Sync + 'static`, the tool's `[tool.<name>]` section; loading rejects unknown keys, naming them | no configuration |
/// | `renderer = Type` | `Type: pi_tools::ToolRenderer + Default`, draws calls and results | the `ToolDefinition` defaults |
/// | `prepare = path` | a `fn(serde_json::Value) -> Result<serde_json::Value, ToolError>` run before validation | identity |
/// | `read_only` | flag → `ToolDefinition::read_only()` is true | false |
/// | `destructive` | flag → `ToolDefinition::destructive()` is true | false |
/// | `accept_unknown_properties` | flag → arguments may carry undeclared properties (otherwise each is a validation error naming the closest declared one) | false |
/// | `examples = [r#"{..}"#, ..]` | JSON objects (checked at compile time) → `ToolDefinition::examples()`, shown in the catalog | none |
/// | `crate = "path"` | the path your crate reaches pi-tools by, when it renames the dependency (`crate = "my_pi_tools"`); generated code then goes through `path::__private` | `::pi_tools` |
///
/// Unknown keys, a key given twice, an invalid name, mode or role are compile errors at the
/// offending token.
///
/// # Parameters
///
/// - Plain parameters become the fields (and JSON properties, under their own names: no case
///   conversion) of a generated `<Pascal>Args` struct deriving `Deserialize` and
///   `JsonSchema`. A `///` comment on a parameter becomes its schema description;
///   `#[serde(...)]` and `#[schemars(...)]` on a parameter are moved to its field (e.g.
///   `#[serde(rename = "oldText")]`). `Option<T>` is optional. Each type must implement
///   `Deserialize + JsonSchema`; the error says so at the parameter.
/// - `#[default = value]` on a plain parameter: the parameter is optional for the model,
///   the schema shows `"default": value` (so do the catalog and every dialect that keeps
///   `default`), and the fn receives `value` when the argument is absent (or `null`). The
///   parameter's type is the value's type, not an `Option` (`#[default = 100] limit: u64`):
///   the fn never sees "absent". A string literal is converted with `From<&str>` (`#[default
///   = "."] path: String`); any other value is an expression of the parameter's type. The
///   type must also be `Serialize` (to write the default into the schema). In an `#[args]`
///   struct, write `#[serde(default = "path")]` on the field instead: schemars shows that
///   default too.
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
/// Unless `description = "..."` is given, the fn's whole doc comment is the description the
/// model reads, as Markdown text:
/// - paragraphs (separated by an empty `///` line) stay separated by a blank line;
/// - the lines of one paragraph are joined with spaces, as Markdown renders them;
/// - list items (`- `, `* `, `1. `) and headings (`# `) start a new line, and fenced code
///   blocks keep their lines as written.
///
/// The first paragraph, on one line, is also the prompt snippet unless `snippet` is given
/// (with `description = "..."`, the first paragraph of that text). Give `description` when
/// the rustdoc is meant for people and the model should read something else. A tool
/// without either is a compile error.
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
/// Everything is reached through `pi_tools::__private` (or the `crate` key's path), so a
/// crate needs no other dependency.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}

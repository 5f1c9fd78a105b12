//! What a `#[tool]` function may return, and how it becomes a [`ToolResult`].
//!
//! [`ToolOutput`] and [`ToolResult`] share six fields, and stay two types on purpose:
//!
//! - [`ToolResult`] is the kernel's one shape for every tool: `dyn AgentTool` returns it, the
//!   runner, hooks, events and the MCP server carry it, and it is what goes on the wire
//!   (camelCase JSON, `details: Null` when there are none). A set of tools with different
//!   detail types can only share a runner through one untyped result.
//! - [`ToolOutput<D>`] is what a tool's author writes and its tests read: typed details
//!   (`out.details.unwrap().exit_code`, no JSON lookups), absent as `None`, serialised once,
//!   in [`IntoToolResult`], where a serialisation failure becomes a [`ToolError`].
//!
//! One generic `ToolResult<D = Value>` was weighed and left: a default type parameter does
//! not apply in expression position, so `ToolResult::text(..)` would need a type annotation
//! wherever nothing else fixes `D` (a `let`, an event, a test), and "no details" is `Null` on
//! one face and `None` on the other. The fields are kept in step in one place: the
//! conversion below destructures a `ToolOutput` and builds a `ToolResult` with every field
//! named, so a field added to either and not the other fails to compile there.

use serde::Serialize;

use crate::core::{ContentBlock, ResourceLink, ToolError, ToolResult, Usage};

/// A tool's output with typed details: content for the model, details for user interfaces,
/// and the batch-level signals (terminate, tools to activate).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput<D = serde_json::Value> {
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Structured data for user interfaces.
    pub details: Option<D>,
    /// The structured result, for a tool that declares its output schema with
    /// `#[tool(output = Type)]` and gives its text beside it.
    pub structured_content: Option<serde_json::Value>,
    /// Files the result points at (see [`ToolResult::links`]).
    pub links: Vec<ResourceLink>,
    /// Ask the agent loop to stop after this batch.
    pub terminate: bool,
    /// Registered tools to activate for the next batch.
    pub added_tool_names: Vec<String>,
    /// Model usage, for tools that call a model.
    pub usage: Option<Usage>,
}

impl<D> Default for ToolOutput<D> {
    fn default() -> Self {
        ToolOutput {
            content: Vec::new(),
            details: None,
            structured_content: None,
            links: Vec::new(),
            terminate: false,
            added_tool_names: Vec::new(),
            usage: None,
        }
    }
}

impl<D> ToolOutput<D> {
    /// An output with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(text)],
            ..ToolOutput::default()
        }
    }

    /// An output with these content blocks.
    pub fn blocks(content: Vec<ContentBlock>) -> Self {
        ToolOutput {
            content,
            ..ToolOutput::default()
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: D) -> Self {
        self.details = Some(details);
        self
    }

    /// Sets the structured result: the value the tool's output schema (`#[tool(output =
    /// Type)]`) describes. Fails only when the value cannot be serialised.
    pub fn with_structured<S: Serialize>(mut self, value: &S) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value).map_err(|e| {
            ToolError::new(format!("The tool's result could not be serialised: {e}"))
        })?;
        self.structured_content = Some(value);
        Ok(self)
    }

    /// Appends a content block.
    pub fn with_block(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// Adds a file the result points at (see [`ToolResult::links`]).
    pub fn with_link(mut self, link: ResourceLink) -> Self {
        self.links.push(link);
        self
    }

    /// Asks the loop to stop after this batch.
    pub fn terminate(mut self) -> Self {
        self.terminate = true;
        self
    }

    /// Asks for these registered tools to be active in the next batch.
    pub fn add_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.added_tool_names
            .extend(names.into_iter().map(Into::into));
        self
    }
}

/// Wraps any serialisable value so a tool can return it as pretty JSON text, without an
/// output schema or a structured result.
///
/// A `#[tool]` fn returning `Result<T, _>` for a `T: Serialize + JsonSchema` needs no
/// wrapper: the plain `T` is the typed result (structured content, compact JSON text, and
/// `T`'s schema as the tool's output schema). The return type was chosen over a
/// `Json<T>`-marks-typed form (rmcp's) because the macro reads the return type itself, so
/// no trait impl has to tell a typed value from `String` or `ToolOutput`, and the fn stays
/// callable from Rust with the value its callers want (`divide(6.0, 3.0).await ==
/// Ok(2.0)`), not a wrapper to take apart. `Json` is what is left for a value whose type has
/// no schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

/// A typed value as a tool result: the value as its structured content, and `text` as what
/// the model reads (the value as compact JSON when `None`).
///
/// ```
/// let result = pi_tools::tool::typed_result(&serde_json::json!({"sum": 3}), None)
///     .expect("a JSON value serialises");
/// assert_eq!(result.text_content(), r#"{"sum":3}"#);
/// assert_eq!(result.structured_content, Some(serde_json::json!({"sum": 3})));
/// ```
pub fn typed_result<T: Serialize + ?Sized>(
    value: &T,
    text: Option<String>,
) -> Result<ToolResult, ToolError> {
    let unserialisable = |e: serde_json::Error| {
        ToolError::new(format!("The tool's result could not be serialised: {e}"))
    };
    let structured = serde_json::to_value(value).map_err(unserialisable)?;
    // The value itself written out, not its `Value` (whose `Display` goes through a
    // formatter adapter): the same compact JSON for less.
    let text = match text {
        Some(text) => text,
        None => serde_json::to_string(value).map_err(unserialisable)?,
    };
    Ok(ToolResult::text(text).with_structured_content(structured))
}

/// Conversion of a tool function's `Ok` value into a [`ToolResult`].
pub trait IntoToolResult {
    /// Converts; fails only when details cannot be serialised.
    fn into_tool_result(self) -> Result<ToolResult, ToolError>;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(self))
    }
}

impl<D: Serialize> IntoToolResult for ToolOutput<D> {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        // Every field named on both sides: see the module docs.
        let ToolOutput {
            content,
            details,
            structured_content,
            links,
            terminate,
            added_tool_names,
            usage,
        } = self;
        let details = match details {
            Some(d) => serde_json::to_value(d).map_err(|e| {
                ToolError::new(format!("The tool's details could not be serialised: {e}"))
            })?,
            None => serde_json::Value::Null,
        };
        Ok(ToolResult {
            content,
            details,
            structured_content,
            links,
            usage,
            added_tool_names,
            terminate,
        })
    }
}

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        let text = serde_json::to_string_pretty(&self.0).map_err(|e| {
            ToolError::new(format!("The tool's output could not be serialised: {e}"))
        })?;
        Ok(ToolResult::text(text))
    }
}

//! A whole catalog in one dialect: the tools it can express, and the ones it cannot, each
//! left out with its reason and JSON path.
//!
//! A catalog is many tools from many owners (mounted servers above all). One tool a
//! dialect cannot express must not cost the others their place, so rendering a catalog
//! never fails: it leaves that tool out of that dialect only and says so once.
//! [`DialectSchemas::all_or_nothing`] keeps the old rule for those who want it.

use serde_json::Value;

use super::{Dialect, DialectError, tool_schema};
use crate::tool::ToolDefinition;

/// Every tool's wire description in one dialect, beside the tools the dialect cannot
/// express.
///
/// ```
/// use pi_tools::dialect::{Dialect, tool_schemas};
/// use pi_tools::tool::{ToolSpec, from_fn, ToolDefinition};
/// use pi_tools::ToolResult;
/// use serde_json::json;
///
/// let free_form = ToolSpec::new(
///     "kv",
///     "Stores keys.",
///     json!({"type": "object", "properties": {"map": {"type": "object"}}, "required": []}),
/// );
/// let plain = ToolSpec::new("ping", "Pings.", json!({"type": "object", "properties": {}, "required": []}));
/// let tools = [
///     from_fn(free_form, |_, _| async { Ok(ToolResult::text("ok")) }),
///     from_fn(plain, |_, _| async { Ok(ToolResult::text("pong")) }),
/// ];
/// let rendered = tool_schemas(tools.iter().map(|t| t.as_ref()), Dialect::OpenAiStrict);
/// assert_eq!(rendered.schemas.len(), 1);
/// assert_eq!(rendered.excluded[0].tool.as_deref(), Some("kv"));
/// assert_eq!(rendered.excluded[0].path, "/properties/map");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DialectSchemas {
    /// The dialect rendered.
    pub dialect: Dialect,
    /// The wire description of every tool the dialect can express, in catalog order.
    pub schemas: Vec<Value>,
    /// One error per tool left out, naming the tool, the JSON path and the reason.
    pub excluded: Vec<DialectError>,
}

impl DialectSchemas {
    /// The schemas when every tool fits, else every tool left out (the all-or-nothing rule
    /// of `--strict-catalog`).
    pub fn all_or_nothing(self) -> Result<Vec<Value>, Vec<DialectError>> {
        if self.excluded.is_empty() {
            Ok(self.schemas)
        } else {
            Err(self.excluded)
        }
    }

    /// One line per tool left out (empty when none is): the dialect, the tool, the path and
    /// the reason, as the command line prints them.
    pub fn report(&self) -> Vec<String> {
        self.excluded
            .iter()
            .map(|e| format!("left out of {}: {e}", self.dialect))
            .collect()
    }
}

/// Renders every tool of `tools` in `dialect`, leaving out (and listing) those it cannot
/// express.
pub fn tool_schemas<'a>(
    tools: impl IntoIterator<Item = &'a dyn ToolDefinition>,
    dialect: Dialect,
) -> DialectSchemas {
    let mut rendered = DialectSchemas {
        dialect,
        schemas: Vec::new(),
        excluded: Vec::new(),
    };
    for tool in tools {
        match tool_schema(tool, dialect) {
            Ok(schema) => rendered.schemas.push(schema),
            Err(error) => rendered.excluded.push(error),
        }
    }
    rendered
}

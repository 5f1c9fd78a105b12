//! Arguments mirrored into HTTP headers (MCP 2026-07-28, SEP-2243): a tool's input schema
//! may mark a property with `x-mcp-header`, and a client then sends that argument's value in
//! an `Mcp-Param-{Name}` header too, so that a proxy or load balancer can route on it
//! without reading the body. The protocol library's HTTP transport checks those headers
//! against the arguments (a missing one, a mismatch or a malformed Base64 value is refused
//! with `-32020`, header mismatch) for every tool the server names to it; this module picks
//! the tools that declare such a property, so that a call of any other tool costs no lookup.

use std::collections::HashMap;

use rmcp::model::Tool;
use serde_json::Value;

/// The tools of `listing` whose input schema marks a property with `x-mcp-header` (along
/// `properties`, nested objects included), by name.
pub(crate) fn header_tools(listing: &[Tool]) -> HashMap<String, Tool> {
    listing
        .iter()
        .filter(|tool| marks_headers(tool.input_schema.get("properties")))
        .map(|tool| (tool.name.to_string(), tool.clone()))
        .collect()
}

/// Whether a `properties` object marks one of its properties, or one of theirs, with
/// `x-mcp-header`.
fn marks_headers(properties: Option<&Value>) -> bool {
    let Some(Value::Object(properties)) = properties else {
        return false;
    };
    properties.values().any(|schema| {
        schema.get("x-mcp-header").is_some() || marks_headers(schema.get("properties"))
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn tool(name: &str, schema: Value) -> Tool {
        let Value::Object(schema) = schema else {
            panic!("an object schema");
        };
        Tool::new(name.to_owned(), "a tool", Arc::new(schema))
    }

    #[test]
    fn only_tools_marking_a_property_are_picked() {
        let listing = [
            tool(
                "deploy",
                json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
            ),
            tool(
                "nested",
                json!({"type": "object", "properties": {"target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}}}),
            ),
            tool(
                "plain",
                json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            ),
            tool("empty", json!({"type": "object"})),
        ];
        let mut picked: Vec<_> = header_tools(&listing).into_keys().collect();
        picked.sort();
        assert_eq!(picked, ["deploy", "nested"]);
    }
}

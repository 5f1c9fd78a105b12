//! What the transports do for MCP 2025-11-25's own tasks (see `tasks_2025`), which the
//! protocol library no longer models: it drops a `tools/call`'s `params.task`, answers
//! `tasks/get` and `tasks/cancel` only in the shapes of the 2026-07-28 tasks extension, and
//! has no `capabilities.tasks` in its `initialize` answer nor `execution` in a tool of
//! `tools/list`. So the transports, which read every message as JSON first, rename the
//! requests of a session opened with `initialize` whose 2025-11-25 answer the server gives
//! itself ([`divert`]): the library passes a request of an unknown method on as it came,
//! and the server answers it (see `tasks_2025`). And they add the capability to the
//! `initialize` answer ([`offer_in_initialize`]). Written once here, for stdio and HTTP.

use rmcp::model::{ClientJsonRpcMessage, InitializeRequest, RequestId, ServerJsonRpcMessage};
use serde_json::{Value, json};

/// The 2025-11-25 methods the server answers itself, under the names the transports give
/// them on their way through the protocol library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Diverted {
    /// `tools/list`: each tool with its `execution.taskSupport`.
    ToolsList,
    /// `tools/call` with `params.task`: a task at once.
    ToolsCall,
    /// `tasks/get`: the task's fields at the top level.
    TasksGet,
    /// `tasks/cancel`: the task, cancelled.
    TasksCancel,
}

const ALL: [Diverted; 4] = [
    Diverted::ToolsList,
    Diverted::ToolsCall,
    Diverted::TasksGet,
    Diverted::TasksCancel,
];

impl Diverted {
    /// The method a client sends.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Diverted::ToolsList => "tools/list",
            Diverted::ToolsCall => "tools/call",
            Diverted::TasksGet => "tasks/get",
            Diverted::TasksCancel => "tasks/cancel",
        }
    }

    /// The name it travels under, which no client sends (a space is in no MCP method).
    fn renamed(self) -> &'static str {
        match self {
            Diverted::ToolsList => "pi-tools 2025-11-25 tools/list",
            Diverted::ToolsCall => "pi-tools 2025-11-25 tools/call",
            Diverted::TasksGet => "pi-tools 2025-11-25 tasks/get",
            Diverted::TasksCancel => "pi-tools 2025-11-25 tasks/cancel",
        }
    }

    /// The diverted method a request of method `renamed` is, if it is one.
    pub(crate) fn from_renamed(renamed: &str) -> Option<Self> {
        ALL.into_iter().find(|d| d.renamed() == renamed)
    }
}

/// Whether a request of `method` may be one that [`divert`] renames (to read it as JSON
/// only then).
pub(crate) fn may_divert(method: &str) -> bool {
    ALL.iter().any(|d| d.method() == method)
}

/// Renames `message`, a JSON-RPC request of a session opened with `initialize`, when it is
/// one whose 2025-11-25 answer the server gives itself: `tools/list`, `tasks/get`,
/// `tasks/cancel`, and a `tools/call` with `params.task`. A request naming MCP 2026-07-28
/// (or later) in its `_meta` is left alone: it is of the other era. Whether it renamed it.
pub(crate) fn divert(message: &mut Value) -> bool {
    let Some(object) = message.as_object_mut() else {
        return false;
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return false;
    };
    let Some(diverted) = ALL.into_iter().find(|d| d.method() == method) else {
        return false;
    };
    let params = object.get("params");
    let names_stateless_era = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
    if names_stateless_era {
        return false;
    }
    let asks_task = params
        .and_then(|p| p.get("task"))
        .is_some_and(|task| !task.is_null());
    if diverted == Diverted::ToolsCall && !asks_task {
        return false;
    }
    object.insert("method".to_owned(), Value::from(diverted.renamed()));
    true
}

/// Whether a session of `version` (the client's at `initialize`; none: a sessionless HTTP
/// request) that did (`declared_extension`) or did not declare the tasks extension is
/// served MCP 2025-11-25's own tasks: one of 2025-11-25 (tasks came with it) that did not
/// declare the extension, which it is served instead.
pub(crate) fn serves_2025_tasks(version: Option<&str>, declared_extension: bool) -> bool {
    let version = version.unwrap_or(FIRST_VERSION);
    !declared_extension
        && version >= FIRST_VERSION
        && version < rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
}

/// The first version with tasks of its own.
const FIRST_VERSION: &str = "2025-11-25";

/// The server's `capabilities.tasks` of MCP 2025-11-25: `tasks/list`, `tasks/cancel` and
/// task-augmented `tools/call`.
pub(crate) fn tasks_capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

/// Adds `capabilities.tasks` to `answer`, the JSON-RPC answer to an `initialize` whose
/// client did (`declared_extension`) or did not declare the tasks extension, when the
/// session is served MCP 2025-11-25's own tasks (see [`serves_2025_tasks`]). An error
/// answer is left alone.
pub(crate) fn offer_in_initialize(answer: &mut Value, declared_extension: bool) {
    let Some(result) = answer.get_mut("result") else {
        return;
    };
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if !serves_2025_tasks(Some(version.as_deref().unwrap_or("")), declared_extension) {
        return;
    }
    if let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    {
        capabilities.insert("tasks".to_owned(), tasks_capability());
    }
}

/// `events`, complete events of a Streamable HTTP answer to an `initialize` whose client did
/// (`declared_extension`) or did not declare the tasks extension, with the capability
/// offered in the answer they carry (see [`offer_in_initialize`]).
pub(crate) fn offer_in_events(events: &str, declared_extension: bool) -> String {
    let lines = events.split('\n').map(|line| {
        let Some(data) = line.strip_prefix("data:") else {
            return line.to_owned();
        };
        match serde_json::from_str::<Value>(data.trim_start()) {
            Ok(mut answer) if answer.is_object() => {
                offer_in_initialize(&mut answer, declared_extension);
                format!("data: {answer}")
            }
            _ => line.to_owned(),
        }
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// The id of the `initialize` the stdio transport read and did not answer yet, and whether
/// its client declared the tasks extension: its answer offers 2025-11-25's tasks (see
/// [`initialize_line`]).
pub(crate) type PendingInitialize = std::sync::Arc<std::sync::Mutex<Option<(RequestId, bool)>>>;

/// `message`, read from the line `text` by the protocol library, renamed when [`divert`]
/// renames it (the stdio transport's side of it).
pub(crate) fn divert_message(text: &str, message: ClientJsonRpcMessage) -> ClientJsonRpcMessage {
    let ClientJsonRpcMessage::Request(request) = &message else {
        return message;
    };
    if !may_divert(request.request.method()) {
        return message;
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return message;
    };
    if !divert(&mut value) {
        return message;
    }
    serde_json::from_value(value).unwrap_or(message)
}

/// Remembers `initialize`, read by the stdio transport as the request `id`, in `pending`.
pub(crate) fn remember(
    pending: &PendingInitialize,
    id: &RequestId,
    initialize: &InitializeRequest,
) {
    let declared = initialize.params.capabilities.supports_tasks();
    *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some((id.clone(), declared));
}

/// The line of `message`, the stdio transport's answer to the request `id` (`None`: it
/// answers none): the answer to the `initialize` in `pending` offers 2025-11-25's tasks
/// (see [`offer_in_initialize`]).
pub(crate) fn answer_line(
    pending: &PendingInitialize,
    message: &ServerJsonRpcMessage,
    id: Option<RequestId>,
) -> std::io::Result<Vec<u8>> {
    let declared = id.and_then(|id| {
        let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.take_if(|(asked, _)| *asked == id).map(|(_, d)| d)
    });
    let Some(declared) = declared else {
        return super::line_write::serialize(message);
    };
    let mut value = serde_json::to_value(message).map_err(std::io::Error::other)?;
    offer_in_initialize(&mut value, declared);
    let mut line = serde_json::to_vec(&value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_diverted_only_with_a_task_and_only_in_a_session() {
        let mut plain = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": {}}});
        assert!(!divert(&mut plain));
        assert_eq!(plain["method"], "tools/call");

        let mut tasked = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": {}, "task": {"ttl": 60000}}});
        assert!(divert(&mut tasked));
        assert_eq!(
            Diverted::from_renamed(tasked["method"].as_str().unwrap_or_default()),
            Some(Diverted::ToolsCall)
        );

        let mut stateless = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
            "params": {"taskId": "t", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        assert!(!divert(&mut stateless));
        assert_eq!(stateless["method"], "tasks/get");
    }

    #[test]
    fn the_capability_is_offered_to_a_2025_11_25_session_without_the_extension() {
        let answer = |version: &str| {
            json!({"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": version, "capabilities": {"tools": {}}}})
        };
        let mut offered = answer("2025-11-25");
        offer_in_initialize(&mut offered, false);
        assert_eq!(
            offered["result"]["capabilities"]["tasks"],
            tasks_capability()
        );

        let events = format!("data: \nid: 0\n\ndata: {}\n\n", answer("2025-11-25"));
        let offered_in_events = offer_in_events(&events, false);
        let data = offered_in_events.lines().nth(3).unwrap_or_default();
        let carried: Value = serde_json::from_str(&data["data: ".len()..]).unwrap_or_default();
        assert_eq!(
            carried["result"]["capabilities"]["tasks"],
            tasks_capability()
        );
        assert!(offered_in_events.starts_with("data: \nid: 0\n\n"));

        for (version, declared) in [("2025-11-25", true), ("2025-06-18", false)] {
            let mut not = answer(version);
            offer_in_initialize(&mut not, declared);
            assert!(
                not["result"]["capabilities"].get("tasks").is_none(),
                "{version} {declared}"
            );
        }
    }
}

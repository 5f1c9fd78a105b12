//! What a provider's reply says, in the runner's terms: the calls to run, the text and
//! thinking around them, and the assistant turn to keep in the history.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::core::{
    BatchOutcome, ContentBlock, EventSink, RunnerConfig, ToolCall, ToolResult, ToolResultMessage,
    ToolSet, execute_tool_calls,
};

use super::keep::{self, Budget, Keep};
use super::{ReplyError, format};
use crate::dialect::Dialect;

/// A provider's reply, read: the batch of calls the runner runs, and what else the model said.
///
/// Build it with [`read_reply`](super::read_reply), [`read_json`](super::read_json) or a
/// [`ReplyStream`](super::ReplyStream); run it with [`Reply::run`]; turn the results into the
/// provider's next-request messages with [`Reply::results`].
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The wire format the reply came in.
    pub dialect: Dialect,
    /// The calls, in the reply's order. A call the provider sent without an id (Gemini may)
    /// gets `call_<n>`, its position in the reply; [`Reply::results`] leaves that id out again.
    pub calls: Vec<ToolCall>,
    /// The assistant's text, all text parts joined (empty when there was none).
    pub text: String,
    /// The model's visible thinking (reasoning summaries, thinking blocks, thought parts).
    pub thinking: String,
    /// The assistant turn as it goes back into the next request's history, in the provider's
    /// shape: one message (OpenAI Chat, Anthropic), one content (Gemini), or the output items
    /// (Responses). For a stream it is rebuilt from the events; thinking signatures are kept.
    pub assistant: Vec<Value>,
    /// Why the model stopped (`tool_calls`, `end_turn`, `STOP`, …), as the provider says it.
    pub stop_reason: Option<String>,
    /// Whether `null` for an optional parameter means "absent" (OpenAI strict mode sends one
    /// for every optional parameter the model leaves out): [`Reply::run`] then drops such
    /// `null`s, so the parameter's default applies. Set from the dialect: for `openai-strict`
    /// and Responses (whose function tools are strict unless declared otherwise).
    pub strict: bool,
    /// Per call: why its arguments cannot be used, when they cannot.
    unreadable: Vec<Option<String>>,
    /// Per call: whether the provider sent its id.
    sent_ids: Vec<bool>,
    /// Per call: the native shape it came in, when its result goes back in a form of its
    /// own (a Responses `apply_patch_call` or `shell_call`).
    native: Vec<Option<NativeCall>>,
}

/// A call that came in a provider's native tool shape whose result has a form of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NativeCall {
    /// A Responses `apply_patch_call`, answered with an `apply_patch_call_output`. The
    /// reply's items are applied together, all or nothing, by the call of its first item,
    /// which carries every item's operation in one patch.
    ApplyPatch {
        /// The id of the call that carries this item's operation (its own, for the first).
        carrier: String,
        /// Which operation of the carried patch is this item's (0 for the first item).
        operation: usize,
        /// The line of the carried patch where this item's file section starts.
        header_line: usize,
    },
    /// A Responses `shell_call`, answered with a `shell_call_output`.
    Shell {
        /// The call's `max_output_length`, sent back with the output.
        max_output_length: Option<u64>,
    },
}

/// A call's arguments as the reply carries them.
pub(super) enum Arguments<'a> {
    /// A JSON text still to parse (OpenAI's `arguments`, a streamed `input_json_delta`).
    Text(&'a str),
    /// A JSON value already parsed, taken out of the reply (Anthropic's `input`, Gemini's
    /// `args`): an object becomes the call's arguments as it is, without a copy.
    Owned(Value),
    /// A JSON value already parsed, left in the reply (what is not an object).
    Value(&'a Value),
}

impl Arguments<'_> {
    /// The arguments in the field `value` taken out of the reply: a JSON text, a JSON value,
    /// or none when the field is absent or `null`.
    pub(super) fn taken(value: Option<&mut Value>) -> Arguments<'_> {
        match value {
            None | Some(Value::Null) => Arguments::Text(""),
            Some(Value::String(text)) => Arguments::Text(text),
            Some(value) if value.is_object() => Arguments::Owned(std::mem::take(value)),
            Some(value) => Arguments::Value(value),
        }
    }
}

impl Reply {
    pub(super) fn new(dialect: Dialect) -> Self {
        Reply {
            dialect,
            calls: Vec::new(),
            text: String::new(),
            thinking: String::new(),
            assistant: Vec::new(),
            stop_reason: None,
            strict: dialect.strict(),
            unreadable: Vec::new(),
            sent_ids: Vec::new(),
            native: Vec::new(),
        }
    }

    /// Adds a call; `path` is where its arguments are in the reply. Parsing a JSON text
    /// counts its values against `budget`: past it, the whole reply is refused.
    pub(super) fn push_call(
        &mut self,
        id: Option<&str>,
        name: &str,
        arguments: Arguments<'_>,
        path: &str,
        budget: &Budget,
    ) -> Result<(), ReplyError> {
        let (arguments, problem) = match read_arguments(arguments, budget) {
            Ok(value) => (value, None),
            Err(_) if budget.spent() => {
                return Err(ReplyError::new(self.dialect, path, budget.reason()));
            }
            Err(problem) => (Value::Object(Map::new()), Some(problem)),
        };
        self.sent_ids.push(id.is_some());
        let id = id.map_or_else(|| format!("call_{}", self.calls.len()), str::to_owned);
        self.calls.push(match &problem {
            None => ToolCall::new(id, name, arguments),
            // The runner answers it without running anything, like any refused call.
            Some(problem) => {
                let result = ToolResult {
                    content: vec![ContentBlock::text(format!(
                        "The call was not run: its arguments {problem}. Call {name} again with its arguments as one JSON object."
                    ))],
                    details: json!({"provider": self.dialect.api(), "path": path}),
                    ..ToolResult::default()
                };
                ToolCall::refused(id, name, arguments, result)
            }
        });
        self.unreadable.push(problem);
        self.native.push(None);
        Ok(())
    }

    /// Adds a call that came in a native shape, already mapped onto the tool that serves it
    /// (`arguments` an object); `native` says how its result goes back.
    pub(super) fn push_native_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
        native: NativeCall,
    ) {
        self.sent_ids.push(true);
        self.calls.push(ToolCall::new(id, name, arguments));
        self.unreadable.push(None);
        self.native.push(Some(native));
    }

    /// Adds a call that came in a native shape and is answered without running anything
    /// (a request the tools have no use for, such as restarting a shell that every command
    /// gets anew): the runner gives it `answer` as a failed result saying why.
    pub(super) fn push_answered_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
        answer: String,
    ) {
        self.sent_ids.push(true);
        let result = ToolResult {
            content: vec![ContentBlock::text(answer)],
            details: json!({"provider": self.dialect.api()}),
            ..ToolResult::default()
        };
        self.calls
            .push(ToolCall::refused(id, name, arguments, result));
        self.unreadable.push(None);
        self.native.push(None);
    }

    /// Adds a call that came in a native shape and runs as part of another call (an
    /// `apply_patch_call` item carried by the reply's first): the runner gives it
    /// `placeholder`, and [`Reply::run`] puts its own answer in its place.
    pub(super) fn push_joined_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
        placeholder: ToolResult,
        native: NativeCall,
    ) {
        self.sent_ids.push(true);
        self.calls
            .push(ToolCall::refused(id, name, arguments, placeholder));
        self.unreadable.push(None);
        self.native.push(Some(native));
    }

    /// The native shape call `index` came in, when its result goes back in a form of its
    /// own (see [`NativeCall`]).
    pub fn native(&self, index: usize) -> Option<&NativeCall> {
        self.native.get(index).and_then(Option::as_ref)
    }

    pub(super) fn push_text(&mut self, text: &str) {
        self.text.push_str(text);
    }

    pub(super) fn push_thinking(&mut self, text: &str) {
        self.thinking.push_str(text);
    }

    /// Whether the provider sent the id of call `index` (Gemini may not).
    pub fn sent_id(&self, index: usize) -> bool {
        self.sent_ids.get(index).copied().unwrap_or(true)
    }

    /// Why call `index` cannot run as sent (its arguments are not a JSON object), when it
    /// cannot: the text its failed result carries. [`Reply::run`] gives it that result
    /// without running it.
    pub fn unreadable(&self, index: usize) -> Option<&str> {
        self.unreadable.get(index).and_then(Option::as_deref)
    }

    /// The calls with their strict-mode `null`s removed: a property whose value is `null` and
    /// which the tool's schema does not require is left out, at any depth, so its default
    /// applies. Calls to tools the set does not hold are unchanged.
    pub fn calls_without_strict_nulls(&self, tools: &ToolSet) -> Vec<ToolCall> {
        self.calls
            .iter()
            .map(|call| {
                let mut call = call.clone();
                if let Some(tool) = tools.get(&call.name) {
                    drop_optional_nulls(tool.parameters(), &mut call.arguments);
                }
                call
            })
            .collect()
    }

    /// Runs the calls with the runner and returns one result message per call, in the
    /// reply's order. A call whose arguments cannot be read does not run: the runner gives it
    /// a failed result saying why (with start and end events like any other call), and
    /// `details` naming the provider and the JSON path. With [`Reply::strict`], optional
    /// `null`s are dropped first. A Responses reply's `apply_patch_call` items run as one
    /// patch in the first item's call (see [`NativeCall::ApplyPatch`]); the message of
    /// each later item says what became of its operation.
    pub async fn run<S: EventSink>(
        &self,
        tools: &ToolSet,
        config: &RunnerConfig,
        cancel: &CancellationToken,
        sink: &S,
    ) -> BatchOutcome {
        let mut outcome = if self.strict {
            let calls = self.calls_without_strict_nulls(tools);
            execute_tool_calls(tools, &calls, config, cancel, sink).await
        } else {
            execute_tool_calls(tools, &self.calls, config, cancel, sink).await
        };
        super::patch_group::settle(self, &mut outcome.messages);
        outcome
    }

    /// The batch's results as what goes next into this provider's request, to append to the
    /// history after [`Reply::assistant`]: tool messages (and a `user` message with the
    /// images) for OpenAI Chat, `function_call_output` items for Responses, one `user` message
    /// for Anthropic, one content for Gemini. Empty when the reply called no tool.
    ///
    /// `messages` are [`Reply::run`]'s, one per call in the reply's order (a message for a
    /// call the reply does not have is an error of the caller: it is rendered as it is).
    pub fn results(&self, messages: &[ToolResultMessage]) -> Vec<Value> {
        if messages.is_empty() {
            return Vec::new();
        }
        format::wire(self.dialect)
            .map(|wire| (wire.results)(self, messages))
            .unwrap_or_default()
    }

    /// Whether [`Reply::results`] is one entry of the history (an Anthropic message, a
    /// Gemini content) rather than a list of them (OpenAI's tool messages and items).
    pub fn results_are_one_entry(&self) -> bool {
        format::wire(self.dialect).is_some_and(|wire| wire.results_are_one_entry)
    }
}

/// The arguments as a JSON object, or what is wrong with them ("are not valid JSON (…)").
/// An empty text is no arguments (some OpenAI-compatible servers send `""` for them).
fn read_arguments(arguments: Arguments<'_>, budget: &Budget) -> Result<Value, String> {
    let value = match arguments {
        Arguments::Text(text) if text.trim().is_empty() => return Ok(Value::Object(Map::new())),
        Arguments::Text(text) => {
            budget.text(text.len());
            keep::from_str(text, &Keep::All, budget)
                .map_err(|e| format!("are not valid JSON ({e})"))?
        }
        Arguments::Owned(value) => value,
        Arguments::Value(value) if value.is_object() => value.clone(),
        Arguments::Value(value) => {
            return Err(format!(
                "are {}, not a JSON object",
                super::walk::kind(value)
            ));
        }
    };
    match value {
        Value::Object(_) => Ok(value),
        other => Err(format!(
            "are {}, not a JSON object",
            super::walk::kind(&other)
        )),
    }
}

/// Removes `null` properties that `schema` does not require, in `value` and below it.
fn drop_optional_nulls(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let required = schema.get("required").and_then(Value::as_array);
            let is_required =
                |name: &str| required.is_some_and(|r| r.iter().any(|v| v.as_str() == Some(name)));
            map.retain(|name, v| !v.is_null() || is_required(name));
            for (name, v) in map.iter_mut() {
                if let Some(sub) = properties.and_then(|p| p.get(name)) {
                    drop_optional_nulls(sub, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for item in items {
                    drop_optional_nulls(sub, item);
                }
            }
        }
        _ => {}
    }
    // Unions (an optional struct is `anyOf: [object, null]` in some schemas): each branch
    // that describes an object has its say.
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                if branch.get("properties").is_some() || branch.get("items").is_some() {
                    drop_optional_nulls(branch, value);
                }
            }
        }
    }
}

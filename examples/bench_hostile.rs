//! Peak memory of what another party sends, built to take memory:
//!
//! - through `pi-tools mcp` as a gateway, a mounted server's answer of 40 MB (20 M elements
//!   of structured content, over the default `[mcp] max_message_bytes` of 16 MiB), from one
//!   server and from four at once; and the largest answer the default lets through (15 MB,
//!   1 M values), from one and from four at once;
//! - read by `pi-tools run --dialect …`, provider replies of about 1.2 MB: a Responses
//!   stream whose output and content indexes point near the cap, a Responses stream of
//!   one-character text deltas, a Chat Completions stream of one-character argument deltas,
//!   Responses and Chat Completions JSON bodies, and a Chat Completions stream event, holding
//!   600 K small values in a field nobody reads; and replies too dense to decode, which are
//!   refused: a call's arguments of 600 K small values (an Anthropic `input`, a Gemini
//!   `args`, a Chat Completions `arguments` text) and a Responses `output` of 100 K small
//!   items; and an Anthropic call whose `input` is nearly as dense as a reply may be (70 K
//!   values in 1.2 MB; the bound is one per 16 bytes), read.
//!
//! ```text
//! cargo run --release -p pi-tools-examples --example bench_hostile
//! BENCH_HOSTILE_ONLY=run cargo run --release -p pi-tools-examples --example bench_hostile
//! ```
//!
//! `BENCH_HOSTILE_ONLY` runs only the cases whose name holds its text (`run`, `gateway`,
//! `JSON`, …).
//!
//! Each case runs in a process of its own (this example, spawned as the `pi-tools` command
//! line, its mounted servers spawned as a small MCP server of this example), which writes
//! its peak resident set (`VmHWM`, Linux) when it ends. A case prints that peak, the peak of
//! the same process given a small input, and what the input added as a multiple of its size.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use serde_json::{Value, json};

#[path = "support/peak.rs"]
mod peak;
use peak::{spawn_gateway, status_bytes};

type Error = Box<dyn std::error::Error + Send + Sync>;

const MB: f64 = 1_000_000.0;

/// Where a spawned command line writes its peak resident set when it ends.
const PEAK_VAR: &str = "BENCH_HOSTILE_PEAK_FILE";

fn main() -> ExitCode {
    // Run with no arguments. Spawned with any, this is the `pi-tools` command line (its
    // `mcp` and `run`, and the `env-guard` the gateway starts), or a mounted server.
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("serve-big") => return serve_big(),
        Some(command) => {
            let measured = matches!(command, "mcp" | "run");
            let code = pi_tools::cli::main();
            if measured && let Some(file) = std::env::var_os(PEAK_VAR) {
                let _ = std::fs::write(file, status_bytes("VmHWM").to_string());
            }
            return code;
        }
    }
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_hostile: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench() -> Result<(), Error> {
    let work = tempfile::TempDir::new()?;
    let only = std::env::var("BENCH_HOSTILE_ONLY").unwrap_or_default();
    let wanted = |case: &str| case.contains(only.as_str());
    println!(
        "{:<58} {:>10} {:>10} {:>10}",
        "case", "input", "peak", "added"
    );
    for servers in [1, 4] {
        let cases = [
            (
                format!("gateway: 40 MB answer (20 M elements) x{servers}"),
                40_000_000,
                json!({"count": 20_000_000}),
            ),
            (
                format!("gateway: 15 MB answer (1 M values, let through) x{servers}"),
                15_000_000,
                json!({"count": 1_000_000, "width": 12}),
            ),
            (
                format!("gateway: the same with a field unknown to the fast path x{servers}"),
                15_000_000,
                json!({"count": 1_000_000, "width": 13}),
            ),
            (
                format!("gateway: pings without end, input unread x{servers}"),
                0,
                json!({"flood": true}),
            ),
        ];
        if !cases.iter().any(|(case, _, _)| wanted(case)) {
            continue;
        }
        let base = gateway(work.path(), servers, &json!({"count": 1}))?;
        for (case, input, arguments) in cases {
            if wanted(&case) {
                let peak = gateway(work.path(), servers, &arguments)?;
                print_case(&case, input * servers as u64, peak, base);
            }
        }
    }
    let (base, _) = run(work.path(), "openai-responses", &responses_small())?;
    for (case, dialect, body) in [
        (
            "run: Responses stream, indexes near the cap",
            "openai-responses",
            responses_far_indexes(),
        ),
        (
            "run: Responses stream, 1-character text deltas",
            "openai-responses",
            responses_deltas(),
        ),
        (
            "run: Chat Completions stream, 1-character arguments",
            "openai",
            openai_argument_deltas(),
        ),
        (
            "run: Responses JSON, 600 K values nobody reads",
            "openai-responses",
            responses_many_values(),
        ),
        (
            "run: Chat Completions JSON, 600 K values nobody reads",
            "openai",
            openai_many_values(),
        ),
        (
            "run: Chat Completions stream, an event of 600 K values",
            "openai",
            openai_event_many_values(),
        ),
        (
            "run: Anthropic JSON, a call's input of 600 K values",
            "anthropic",
            anthropic_input(&zeros()),
        ),
        (
            "run: Gemini JSON, a call's args of 600 K values",
            "gemini",
            gemini_args_many_values(),
        ),
        (
            "run: Chat Completions JSON, arguments of 600 K values",
            "openai",
            openai_arguments_many_values(),
        ),
        (
            "run: Responses JSON, 100 K small output items",
            "openai-responses",
            responses_small_items(),
        ),
        (
            "run: Anthropic JSON, a call's input of 70 K values, read",
            "anthropic",
            anthropic_input(&dense_numbers()),
        ),
    ] {
        if !wanted(case) {
            continue;
        }
        let (peak, refused) = run(work.path(), dialect, &body)?;
        let case = if refused {
            format!("{case} (refused)")
        } else {
            case.to_owned()
        };
        print_case(&case, body.len() as u64, peak, base);
    }
    Ok(())
}

fn print_case(case: &str, input: u64, peak: u64, base: u64) {
    let added = peak.saturating_sub(base);
    if input == 0 {
        println!(
            "{case:<58} {:>10} {:>7.1} MB {:>7.1} MB",
            "-",
            peak as f64 / MB,
            added as f64 / MB
        );
        return;
    }
    println!(
        "{case:<58} {:>7.1} MB {:>7.1} MB {:>7.1} MB ({:.1}x the input; small input's peak {:.1} MB)",
        input as f64 / MB,
        peak as f64 / MB,
        added as f64 / MB,
        added as f64 / input as f64,
        base as f64 / MB
    );
}

/// The peak of `pi-tools mcp` mounting `servers` servers of this example, each called at
/// once with `arguments` (see [`serve_big`]).
fn gateway(dir: &Path, servers: usize, arguments: &Value) -> Result<u64, Error> {
    let exe = std::env::current_exe()?;
    let exe = serde_json::to_string(&exe.to_string_lossy())?;
    let names: Vec<String> = (1..=servers).map(|n| format!("s{n}")).collect();
    let mut config = format!(
        "[tools]\nactive = [{}]\n",
        names
            .iter()
            .map(|n| format!("\"{n}__big\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for name in &names {
        config.push_str(&format!(
            "\n[mcp.servers.{name}]\ncommand = [{exe}, \"serve-big\"]\n"
        ));
    }
    let config_file = dir.join("gateway.toml");
    std::fs::write(&config_file, config)?;
    let peak_file = dir.join("gateway.peak");
    let mut child = spawn_gateway(dir, &config_file, PEAK_VAR, &peak_file)?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    let mut answer_to =
        |stdin: &mut std::process::ChildStdin, messages: &[Value]| -> Result<(), Error> {
            let mut waiting: Vec<Value> = messages
                .iter()
                .filter_map(|m| m.get("id"))
                .cloned()
                .collect();
            for message in messages {
                writeln!(stdin, "{message}")?;
            }
            while !waiting.is_empty() {
                line.clear();
                if stdout.read_line(&mut line)? == 0 {
                    return Err("the gateway ended".into());
                }
                // Only the id is read: the answer may be 15 MB.
                let head: String = line.chars().take(64).collect();
                waiting.retain(|id| !head.contains(&format!("\"id\":{id}")));
            }
            Ok(())
        };
    answer_to(
        &mut stdin,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
        ],
    )?;
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )?;
    let calls: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": {
                "name": format!("{name}__big"), "arguments": arguments}})
        })
        .collect();
    answer_to(&mut stdin, &calls)?;
    drop(stdin);
    child.wait()?;
    Ok(std::fs::read_to_string(&peak_file)?.trim().parse()?)
}

/// The peak of `pi-tools run --dialect <dialect> -` reading `body`.
/// Its peak, and whether the reply was refused as too dense to decode (any other failure is
/// an error).
fn run(dir: &Path, dialect: &str, body: &str) -> Result<(u64, bool), Error> {
    let config = dir.join("run.toml");
    std::fs::write(&config, "")?;
    let peak_file = dir.join("run.peak");
    let _ = std::fs::remove_file(&peak_file);
    let mut child = Command::new(std::env::current_exe()?)
        .args(["run", "--dialect", dialect, "--cwd"])
        .arg(dir)
        .arg("--config")
        .arg(&config)
        .arg("-")
        .env(PEAK_VAR, &peak_file)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let body = body.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(body.as_bytes()));
    let output = child.wait_with_output()?;
    let _ = writer.join();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let refused = output.status.code() == Some(2) && stderr.contains("holds more JSON values");
    if !output.status.success() && !refused {
        return Err(format!("pi-tools run --dialect {dialect} failed: {stderr}").into());
    }
    Ok((
        std::fs::read_to_string(&peak_file)?.trim().parse()?,
        refused,
    ))
}

/// An event stream of `events` (`event:` name, data).
fn sse(events: impl IntoIterator<Item = (&'static str, Value)>) -> String {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body
}

fn completed() -> (&'static str, Value) {
    (
        "response.completed",
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    )
}

/// A Responses stream with nothing in it.
fn responses_small() -> String {
    sse([completed()])
}

/// 4096 messages whose one part each is announced at content index 4095 (the cap is
/// 4096): 1.3 MB of events.
fn responses_far_indexes() -> String {
    let mut events = Vec::new();
    for i in 0..4096 {
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": i,
                   "item": {"type": "message", "role": "assistant", "content": []}}),
        ));
        events.push((
            "response.content_part.added",
            json!({"type": "response.content_part.added", "output_index": i, "content_index": 4095,
                   "part": {"type": "output_text", "text": "x"}}),
        ));
    }
    events.push(completed());
    sse(events)
}

/// One message whose text comes one character per event: 1.2 MB of events.
fn responses_deltas() -> String {
    let mut events = vec![
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "message", "role": "assistant", "content": []}}),
        ),
        (
            "response.content_part.added",
            json!({"type": "response.content_part.added", "output_index": 0, "content_index": 0,
                   "part": {"type": "output_text", "text": ""}}),
        ),
    ];
    for _ in 0..9_000 {
        events.push((
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                   "delta": "x"}),
        ));
    }
    events.push(completed());
    sse(events)
}

/// One call whose arguments come one character per chunk (a string of 8,000 `x`): 1.2 MB.
fn openai_argument_deltas() -> String {
    let chunk = |call: Value, finish: Value| {
        json!({"object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}]})
    };
    let mut events = vec![(
        "",
        chunk(
            json!({"index": 0, "id": "call_1", "type": "function",
                   "function": {"name": "nosuch", "arguments": "{\"a\":\""}}),
            Value::Null,
        ),
    )];
    for _ in 0..8_000 {
        events.push((
            "",
            chunk(
                json!({"index": 0, "function": {"arguments": "x"}}),
                Value::Null,
            ),
        ));
    }
    events.push((
        "",
        chunk(
            json!({"index": 0, "function": {"arguments": "\"}"}}),
            Value::Null,
        ),
    ));
    events.push(("", chunk(json!({"index": 0}), json!("tool_calls"))));
    let mut body = sse(events);
    body.push_str("data: [DONE]\n\n");
    body
}

/// A JSON list of 600 K zeros.
fn zeros() -> String {
    let mut list = String::from("[");
    for i in 0..600_000 {
        if i > 0 {
            list.push(',');
        }
        list.push('0');
    }
    list.push(']');
    list
}

/// A finished response with 600 K small values in a field the reader does not use.
fn responses_many_values() -> String {
    format!(
        "{{\"status\":\"completed\",\"output\":[],\"metadata_extra\":{}}}",
        zeros()
    )
}

/// A `ChatCompletion` with one call and 600 K small values in its message's `annotations`,
/// which the reader does not use.
fn openai_many_values() -> String {
    let call = json!({"id": "call_1", "type": "function",
                      "function": {"name": "nosuch", "arguments": "{}"}});
    format!(
        "{{\"choices\":[{{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{call}],\"annotations\":{}}}}}]}}",
        zeros()
    )
}

/// A Chat Completions stream whose first chunk carries 600 K small values in `usage`.
fn openai_event_many_values() -> String {
    let mut body = format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"usage\":{},\"choices\":[]}}\n\n",
        zeros()
    );
    body.push_str(&sse([(
        "",
        json!({"object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": {"content": "done"}, "finish_reason": "stop"}]}),
    )]));
    body.push_str("data: [DONE]\n\n");
    body
}

/// An Anthropic `message` whose one call's `input` holds `values` (a JSON list): they are
/// the call's arguments, so they are kept (as the call's and as the assistant turn's).
fn anthropic_input(values: &str) -> String {
    format!(
        "{{\"type\":\"message\",\"role\":\"assistant\",\"stop_reason\":\"tool_use\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"nosuch\",\"input\":{{\"values\":{values}}}}}]}}"
    )
}

/// A list of 70 K numbers of 16 digits, 1.2 MB: one value per 17 bytes, near the most a
/// reply may hold (one per 16 bytes, less what the rest of the reply takes).
fn dense_numbers() -> String {
    let numbers: Vec<String> = (0..70_000u64)
        .map(|i| (1_000_000_000_000_000 + i).to_string())
        .collect();
    format!("[{}]", numbers.join(","))
}

/// A `GenerateContentResponse` whose one call's `args` holds 600 K small values.
fn gemini_args_many_values() -> String {
    format!(
        "{{\"candidates\":[{{\"finishReason\":\"STOP\",\"content\":{{\"role\":\"model\",\"parts\":[{{\"functionCall\":{{\"name\":\"nosuch\",\"args\":{{\"values\":{}}}}}}}]}}}}]}}",
        zeros()
    )
}

/// A `ChatCompletion` whose one call's `arguments` text holds 600 K small values.
fn openai_arguments_many_values() -> String {
    let call = json!({"id": "call_1", "type": "function", "function": {"name": "nosuch",
        "arguments": format!("{{\"values\":{}}}", zeros())}});
    format!(
        "{{\"choices\":[{{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{call}]}}}}]}}"
    )
}

/// A finished response whose `output` is 100 K items `{"type":"x"}` (13 bytes each).
fn responses_small_items() -> String {
    let items = vec![r#"{"type":"x"}"#; 100_000].join(",");
    format!("{{\"status\":\"completed\",\"output\":[{items}]}}")
}

/// A mounted server of one tool, `big`, which answers with `count` elements of structured
/// content (`width` bytes of string each, 0: the number 0), written as it is made; with an
/// odd `width`, the answer has one more field at its top (allowed, and read another way).
/// With `flood`, it stops reading and sends pings until it cannot write.
fn serve_big() -> ExitCode {
    let stdin = std::io::stdin();
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let written = match message.get("method").and_then(Value::as_str) {
            Some("initialize") => answer(
                &mut out,
                &id,
                &json!({"protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "big", "version": "1"}}),
            ),
            Some("tools/list") => answer(
                &mut out,
                &id,
                &json!({"tools": [{"name": "big", "description": "A big answer.",
                        "inputSchema": {"type": "object"},
                        "annotations": {"readOnlyHint": true}}]}),
            ),
            Some("tools/call") => {
                let args = &message["params"]["arguments"];
                if args["flood"] == true {
                    let mut n = 0u64;
                    while writeln!(
                        out,
                        "{}",
                        json!({"jsonrpc": "2.0", "id": format!("ping-{n}"), "method": "ping"})
                    )
                    .is_ok()
                    {
                        n += 1;
                    }
                    break;
                }
                let count = args["count"].as_u64().unwrap_or(1);
                let width = args["width"].as_u64().unwrap_or(0);
                big_answer(&mut out, &id, count, width)
            }
            _ => Ok(()),
        };
        if written.is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

fn answer(out: &mut impl Write, id: &Value, result: &Value) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    )?;
    out.flush()
}

fn big_answer(out: &mut impl Write, id: &Value, count: u64, width: u64) -> std::io::Result<()> {
    let item = if width == 0 {
        "0".to_owned()
    } else {
        format!("\"{}\"", "x".repeat(usize::try_from(width).unwrap_or(1)))
    };
    let extra = if width % 2 == 1 { "\"extra\":1," } else { "" };
    write!(
        out,
        "{{\"jsonrpc\":\"2.0\",{extra}\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"big\"}}],\"isError\":false,\"structuredContent\":{{\"items\":["
    )?;
    for i in 0..count {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(item.as_bytes())?;
    }
    out.write_all(b"]}}}\n")?;
    out.flush()
}

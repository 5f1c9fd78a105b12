//! Tools declared in the configuration file, run for real through the command line: `run`
//! and `mcp` over stdio, with the injection attempts a model could make through every
//! parameter type, checked by what the command received (one argument per line) and by the
//! files it did not create; and the mistakes `check` reports at their place.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::spawn::feed;

/// A tool printing each argument it gets on a line of its own (`printf '%s\n'`), one over
/// `wc -l`, one with an enum, an array and optional flags, and one `script`.
const TOOLS: &str = r#"[tools]
active = ["args", "lines", "pick", "greet"]

[tool.args]
description = "Print the arguments."
command = ["printf", "%s\n", "{text}", "n={count}", "x={ratio}", "{flag}", "{names}"]
[tool.args.params.text]
type = "string"
[tool.args.params.count]
type = "integer"
default = 1
[tool.args.params.ratio]
type = "number"
default = 0.5
[tool.args.params.flag]
type = "boolean"
default = false
[tool.args.params.names]
type = "array"
items = "string"
default = []

[tool.lines]
description = "Count the lines of files."
snippet = "Count lines"
command = ["wc", "-l", "{files}"]
read_only = true
[tool.lines.params.files]
type = "array"
items = "string"
min_items = 1

[tool.pick]
description = "Print a word, loudly or not, a number of times."
command = ["printf", "%s\n", "{word}", ["--loud", "{loud}"], ["--times", "{times}"]]
[tool.pick.params.word]
type = "enum"
values = ["alpha", "beta"]
[tool.pick.params.loud]
type = "boolean"
default = false
[tool.pick.params.times]
type = "integer"
required = false
minimum = 1

[tool.greet]
description = "Greet someone."
script = 'printf "hello <%s>\n" "$who"; printf "%s\n" "$tags"'
[tool.greet.params.who]
type = "string"
[tool.greet.params.tags]
type = "array"
items = "enum"
values = ["a", "b"]
default = []
"#;

/// The binary in `dir`, with the configuration there named: a found one would need the
/// user's trust, since it declares tools (`tests/cli/trust.rs` tests that).
fn pi_tools(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command
        .current_dir(dir)
        .env_remove("PI_TOOLS_CONFIG")
        .env("NO_COLOR", "1");
    if dir.join("pi-tools.toml").is_file() {
        command.arg("--config").arg(dir.join("pi-tools.toml"));
    }
    command
}

/// A directory with the configuration and a file of three lines.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("pi-tools.toml"), TOOLS).expect("config");
    std::fs::write(dir.path().join("three.txt"), "a\nb\nc\n").expect("file");
    dir
}

/// Runs one call through `run --json` and returns its result message.
fn call(dir: &Path, name: &str, arguments: Value) -> Value {
    let mut command = pi_tools(dir);
    command.args(["run", "--json"]);
    let batch = json!([{"id": "1", "name": name, "arguments": arguments}]);
    let output = feed(command, &batch.to_string());
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON lines"))
        .find(|e| e["type"] == "message_end")
        .map(|e| e["message"].clone())
        .unwrap_or_else(|| panic!("no message in {stdout}"))
}

fn text(message: &Value) -> String {
    message["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Every text a model might use to break out of an argument.
const HOSTILE: [&str; 6] = [
    "; touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    "a\ntouch pwned",
    "' || touch pwned '",
    "x & touch pwned &",
];

#[test]
fn hostile_strings_arrive_as_one_inert_argument_each() {
    let dir = workspace();
    for hostile in HOSTILE {
        let message = call(
            dir.path(),
            "args",
            json!({"text": hostile, "names": [hostile, "*"]}),
        );
        assert_eq!(message["isError"], false, "{message}");
        assert_eq!(
            text(&message),
            format!("{hostile}\nn=1\nx=0.5\nfalse\n{hostile}\n*"),
            "{hostile:?}"
        );
        assert!(!dir.path().join("pwned").exists(), "{hostile:?} ran");
    }
}

#[test]
fn numbers_and_booleans_fill_their_arguments_as_json_writes_them() {
    let dir = workspace();
    let message = call(
        dir.path(),
        "args",
        json!({"text": "t", "count": 42, "ratio": 2.25, "flag": true}),
    );
    assert_eq!(text(&message), "t\nn=42\nx=2.25\ntrue");
}

#[test]
fn a_value_that_would_be_an_option_or_holds_a_nul_is_refused_before_anything_runs() {
    let dir = workspace();
    let leading = call(dir.path(), "lines", json!({"files": ["three.txt", "-c"]}));
    assert_eq!(leading["isError"], true);
    assert_eq!(
        text(&leading),
        "The value `-c` of `files` starts with `-`, so the command would read it as an option, and lines does not allow that. Call it again with a value that does not start with `-`."
    );
    let negative = call(dir.path(), "args", json!({"text": "t", "count": -3}));
    assert!(text(&negative).starts_with("The value `-3` of `count` starts with `-`"));
    let nul = call(dir.path(), "args", json!({"text": "a\u{0}b"}));
    assert_eq!(
        text(&nul),
        "The value of `text` contains a NUL byte, which no command line can carry. Call args again without it."
    );
}

#[test]
fn an_array_fills_one_argument_per_item_and_the_exit_code_decides_the_error() {
    let dir = workspace();
    let ok = call(dir.path(), "lines", json!({"files": ["three.txt"]}));
    assert_eq!(ok["isError"], false);
    assert_eq!(text(&ok), "3 three.txt");
    assert_eq!(ok["details"]["exitCode"], 0);
    let missing = call(
        dir.path(),
        "lines",
        json!({"files": ["three.txt", "gone.txt"]}),
    );
    assert_eq!(missing["isError"], true);
    let shown = text(&missing);
    assert!(shown.contains("gone.txt"), "{shown}");
    assert!(shown.ends_with("Command exited with code 1"), "{shown}");
    let empty = call(dir.path(), "lines", json!({"files": []}));
    assert!(text(&empty).starts_with("Validation failed for tool \"lines\""));
}

#[test]
fn groups_go_with_their_parameter_and_an_enum_refuses_other_words() {
    let dir = workspace();
    let plain = call(dir.path(), "pick", json!({"word": "alpha"}));
    assert_eq!(text(&plain), "alpha");
    let all = call(
        dir.path(),
        "pick",
        json!({"word": "beta", "loud": true, "times": 3}),
    );
    assert_eq!(text(&all), "beta\n--loud\n--times\n3");
    let other = call(dir.path(), "pick", json!({"word": "gamma; touch pwned"}));
    assert_eq!(other["isError"], true);
    assert!(text(&other).contains("is not one of the allowed values"));
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn a_script_reads_its_parameters_from_the_environment_never_from_its_text() {
    let dir = workspace();
    for hostile in HOSTILE {
        let message = call(
            dir.path(),
            "greet",
            json!({"who": hostile, "tags": ["a", "b"]}),
        );
        assert_eq!(message["isError"], false, "{message}");
        assert_eq!(text(&message), format!("hello <{hostile}>\na\nb"));
        assert!(!dir.path().join("pwned").exists(), "{hostile:?} ran");
    }
}

/// A script gets an array's items one per line, so an item holding a newline would become
/// two, the second unchecked for a leading `-`: it is refused before anything runs.
#[test]
fn a_script_s_array_item_holding_a_newline_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("pi-tools.toml"),
        r#"[tools]
active = ["each"]

[tool.each]
description = "Print each item in angle brackets."
script = 'printf "%s\n" "$items" | while IFS= read -r item; do printf "<%s>\n" "$item"; done'
[tool.each.params.items]
type = "array"
items = "string"
"#,
    )
    .expect("config");
    let ok = call(dir.path(), "each", json!({"items": ["a b", "c"]}));
    assert_eq!(text(&ok), "<a b>\n<c>");
    let split = call(dir.path(), "each", json!({"items": ["a\n-rf", "c"]}));
    assert_eq!(split["isError"], true);
    assert_eq!(
        text(&split),
        "An item of `items` holds a newline, but each gets an array's items one per line, so the item would arrive as two. Call each again with each line as an item of its own."
    );
}

#[test]
fn declared_tools_are_listed_and_called_over_mcp() {
    let dir = workspace();
    let mut command = pi_tools(dir.path());
    command.arg("mcp");
    let input = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lines","arguments":{"files":["three.txt"]}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"args","arguments":{"text":"$(touch pwned)"}}}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let output = feed(command, &input);
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON-RPC"))
        .collect();
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id} in {answers:?}"))
    };
    let tools = by_id(2)["result"]["tools"].as_array().expect("tools");
    let lines = tools.iter().find(|t| t["name"] == "lines").expect("lines");
    assert_eq!(lines["description"], "Count the lines of files.");
    assert_eq!(lines["annotations"]["readOnlyHint"], true);
    assert_eq!(
        lines["inputSchema"],
        json!({"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}, "minItems": 1}}, "required": ["files"]})
    );
    assert_eq!(by_id(3)["result"]["content"][0]["text"], "3 three.txt");
    assert_eq!(
        by_id(4)["result"]["content"][0]["text"],
        "$(touch pwned)\nn=1\nx=0.5\nfalse"
    );
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn mistakes_in_a_declaration_are_reported_at_their_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("bad.toml"),
        r#"[tools]
active = ["t"]

[tool.t]
command = ["{prog}", "a{missing}", "{files}x"]
colour = "red"
[tool.t.params.prog]
type = "string"
[tool.t.params.files]
type = "array"
items = "string"
[tool.t.params.kind]
type = "strnig"
[tool.t.params.n]
type = "integer"
default = "five"
[tool.t.params.idle]
type = "string"

[tool.read]
description = "A read of our own."
command = ["cat"]
"#,
    )
    .expect("config");
    let mut command = pi_tools(dir.path());
    command.args(["check", "--config", "bad.toml"]);
    let output = feed(command, "");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    let expected = [
        "error: bad.toml:4:7: [tool.t] declares a tool but has no `description`; say in a sentence what it does, for the model",
        "error: bad.toml:5:11: the parameter `idle` is used by no placeholder of `command`; add `\"{idle}\"` where it goes, or remove the parameter",
        "error: bad.toml:5:12: the program (the first element of `command`) must be written out, not a parameter",
        "error: bad.toml:5:22: the placeholder `{missing}` names no parameter; declare it under [tool.t.params.missing] or remove it",
        "error: bad.toml:5:36: the array parameter `files` fills arguments of its own: write `\"{files}\"` alone as an element",
        "error: bad.toml:6:1: unknown key `colour` in [tool.t]; the keys allowed there are: description, label, snippet, guidelines, command, script, params, timeout_secs, read_only, destructive, mode, role, cwd, env, success_codes, output, output_schema",
        "error: bad.toml:13:8: unknown type; use one of string, integer, number, boolean, enum or array",
        "error: bad.toml:16:11: the default \"five\" is not a value of type integer; give one that is, or remove it",
        "error: bad.toml:20:7: [tool.read] declares a tool with `command` or `script`, but a tool named `read` is already registered; give the declared tool another name",
    ];
    let got: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(got, expected, "{stderr}");
}

#[test]
fn declared_tools_keep_every_dialect_s_rules() {
    let dir = workspace();
    for dialect in pi_tools::dialect::Dialect::ALL {
        let mut command = pi_tools(dir.path());
        command.args(["schema", "--dialect", dialect.as_str()]);
        let output = feed(command, "");
        assert!(
            output.status.success(),
            "{dialect}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let tools: Vec<Value> = serde_json::from_slice(&output.stdout).expect("a JSON array");
        assert_eq!(tools.len(), 4, "{dialect}");
        for tool in &tools {
            if let Err(problems) = pi_tools::dialect::check(dialect, tool) {
                panic!("{dialect}: {tool} breaks the dialect's rules: {problems:?}");
            }
        }
    }
}

/// A tool whose `region` a 2026-07-28 client mirrors into `Mcp-Param-Region`.
const DEPLOY: &str = r#"[tools]
active = ["deploy"]

[tool.deploy]
description = "Say where it would deploy."
command = ["echo", "deploying to {region}"]
[tool.deploy.params.region]
type = "string"
header = "Region"
"#;

/// A 2026-07-28 `tools/call` of `deploy` with `region`, with `header` as `Mcp-Param-Region`
/// when given: the HTTP status and the JSON-RPC answer.
async fn deploy(
    server: &crate::mcp_http_support::HttpServer,
    region: &str,
    header: Option<&str>,
) -> (u16, Value) {
    let call = crate::mcp_http_support::request_2026(
        1,
        "tools/call",
        json!({"name": "deploy", "arguments": {"region": region}}),
        &json!({}),
    );
    let mut request = server
        .post_raw(None, &call.to_string())
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "deploy");
    if let Some(header) = header {
        request = request.header("Mcp-Param-Region", header);
    }
    let response = request.send().await.expect("sent");
    let status = response.status().as_u16();
    let answers = crate::mcp_http_support::messages(response).await;
    (status, answers.into_iter().next().expect("an answer"))
}

#[tokio::test]
async fn a_parameter_s_header_is_listed_and_checked_over_http() {
    let server = crate::mcp_http_support::HttpServer::spawn_with(None, &[], Some(DEPLOY)).await;
    let (listed, _, _) = server
        .post_2026(&crate::mcp_http_support::request_2026(
            1,
            "tools/list",
            json!({}),
            &json!({}),
        ))
        .await;
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"],
        json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]})
    );
    // The header says the same, plainly or in Base64.
    for header in ["eu-west", "=?base64?ZXUtd2VzdA==?="] {
        let (status, answer) = deploy(&server, "eu-west", Some(header)).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "deploying to eu-west",
            "{answer}"
        );
    }
    // A different value, none, or Base64 that is not: refused before the command runs.
    for header in [Some("us-east"), None, Some("=?base64?ZXUtd2VzdA?=")] {
        let (status, answer) = deploy(&server, "eu-west", header).await;
        assert_eq!(
            (status, &answer["error"]["code"]),
            (400, &json!(-32020)),
            "{header:?}: {answer}"
        );
    }
}

#[test]
fn mistakes_in_a_header_are_reported_at_their_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("bad.toml"),
        r#"[tools]
active = ["t"]

[tool.t]
description = "Take everything."
command = ["echo", "{a}", "{b}", "{c}", "{d}", "{e}"]
[tool.t.params.a]
type = "string"
header = "Target Region"
[tool.t.params.b]
type = "array"
items = "string"
header = "Files"
[tool.t.params.c]
type = "string"
header = "Zone"
[tool.t.params.d]
type = "integer"
header = "zone"
[tool.t.params.e]
type = "number"
header = ""
"#,
    )
    .expect("config");
    let mut command = pi_tools(dir.path());
    command.args(["check", "--config", "bad.toml"]);
    let output = feed(command, "");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    let expected = [
        "error: bad.toml:9:10: `header` must be the name `Mcp-Param-` is followed by: letters, digits and any of !#$%&'*+-.^_`|~, without spaces, e.g. \"A\"",
        "error: bad.toml:13:10: `header` applies to a parameter of type string, integer, boolean or enum (a header carries one such value), and `b` is of type array; remove `header` here",
        "error: bad.toml:19:10: another parameter of this tool is mirrored into the header `Mcp-Param-zone` already (header names ignore case); give this one another `header`",
        "error: bad.toml:22:10: `header` must be the name `Mcp-Param-` is followed by: letters, digits and any of !#$%&'*+-.^_`|~, without spaces, e.g. \"E\"",
    ];
    let got: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(got, expected, "{stderr}");
}

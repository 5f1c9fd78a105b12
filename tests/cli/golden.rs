//! Golden files: what the command line prints for the built-in tools, the `my_tools`
//! example and a mounted server (every dialect's schemas, the catalog in its three formats,
//! the prompt, the MCP listing and `run` transcripts, plain and per provider), kept byte for
//! byte in `tests/golden/`. They were recorded before the tool metadata became data, so a
//! change to how tools are described shows here as a diff. After an intended change, record
//! them again with `PI_TOOLS_BLESS=1 cargo test -p pi-tools-tests --test binary golden` and
//! read the diff before committing it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{my_tools, pi_tools, scratch_dir, stderr, stdout};
use spawn::feed;
#[cfg(feature = "mount")]
use support::mount::{filesystem_command, toml_list};
use support::spawn;

/// Every dialect `schema` and `run --dialect` know.
const DIALECTS: [&str; 6] = [
    "mcp",
    "openai",
    "openai-strict",
    "openai-responses",
    "anthropic",
    "gemini",
];

/// The seven built-in tools, all active.
const BUILTINS_TOML: &str = r#"[tools]
active = ["read", "bash", "edit", "write", "grep", "find", "ls"]
"#;

/// Two of the example's tools (its third, a map, has no strict or Gemini form).
const MY_TOOLS_TOML: &str = r#"[tools]
active = ["sleep_ms", "shout"]

[prompt]
guidelines = ["Keep answers short."]
"#;

/// The MCP conversation the listing is read from: initialize, the listings, the prompt.
const MCP_INPUT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"system_prompt"}}"#,
    "\n",
);

/// One case: a binary, a configuration and a working directory with a file to read.
struct Case {
    name: &'static str,
    binary: fn() -> Command,
    config: PathBuf,
    dir: PathBuf,
}

impl Case {
    /// `toml` may name the working directory as `<DIR>`.
    fn new(name: &'static str, binary: fn() -> Command, toml: &str) -> Case {
        let dir = scratch_dir(&format!("golden-{name}"));
        std::fs::write(dir.join("notes.txt"), "alpha\nbeta\ngamma\n").expect("notes.txt");
        let config = dir.join("pi-tools.toml");
        let toml = toml.replace("<DIR>", dir.to_str().expect("UTF-8 path"));
        std::fs::write(&config, toml).expect("the configuration");
        Case {
            name,
            binary,
            config,
            dir,
        }
    }

    /// Runs `args` (after the subcommand, `--config`), feeding `input`, and returns what it
    /// printed, with the scratch directory and the clock taken out.
    fn output(&self, subcommand: &str, args: &[&str], input: &str) -> String {
        let mut command = (self.binary)();
        command
            .current_dir(&self.dir)
            .env_remove("PI_TOOLS_CONFIG")
            .env("NO_COLOR", "1")
            .arg(subcommand)
            .arg("--config")
            .arg(&self.config)
            .args(args);
        let output = feed(command, input);
        let mut text = format!("exit: {:?}\n", output.status.code());
        text.push_str("--- stdout\n");
        text.push_str(&stdout(&output));
        text.push_str("--- stderr\n");
        text.push_str(&stderr(&output));
        normalise(&text, &self.dir)
    }

    /// Compares (or, with `PI_TOOLS_BLESS=1`, records) `tests/golden/<case>/<file>`.
    fn check(&self, file: &str, actual: &str) -> Option<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("golden")
            .join(self.name)
            .join(file);
        if std::env::var_os("PI_TOOLS_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("golden dir");
            std::fs::write(&path, actual).expect("the golden file");
            return None;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        (expected != actual).then(|| {
            format!(
                "{} differs from what the command printed:\n{}",
                path.display(),
                first_difference(&expected, actual)
            )
        })
    }

    /// Every output of this case, compared with its golden file; panics listing each one
    /// that differs.
    fn check_all(&self, calls: &[&str]) {
        // The listings only read, so they run side by side (each start of the binary, and
        // of a mounted server, is mostly waiting); the calls run in order, one at a time.
        let mut listings: Vec<(String, String, Vec<&str>, &str)> = Vec::new();
        for dialect in DIALECTS {
            let file = format!("schema-{dialect}.txt");
            listings.push((file, "schema".into(), vec!["--dialect", dialect], ""));
        }
        for format in ["json", "markdown", "html"] {
            let file = format!("catalog-{format}.txt");
            listings.push((file, "catalog".into(), vec!["--format", format], ""));
        }
        listings.push(("prompt.txt".into(), "prompt".into(), vec![], ""));
        listings.push(("mcp.txt".into(), "mcp".into(), vec![], MCP_INPUT));
        let (mut outputs, transcript) = std::thread::scope(|scope| {
            let running: Vec<_> = listings
                .iter()
                .map(|(file, subcommand, args, input)| {
                    scope.spawn(move || (file.clone(), self.output(subcommand, args, input)))
                })
                .collect();
            // One call per batch, so the transcript's order is the tools' and not the
            // scheduler's.
            let mut transcript = String::new();
            for call in calls {
                transcript.push_str(&format!("=== {call}\n"));
                transcript.push_str(&self.output("run", &["--json"], &format!("[{call}]")));
            }
            let outputs: Vec<(String, String)> = running
                .into_iter()
                .map(|r| r.join().expect("a listing"))
                .collect();
            (outputs, transcript)
        });
        outputs.push(("run.txt".into(), transcript));
        let mut failures = Vec::new();
        for (file, actual) in outputs {
            // The server answers requests concurrently: the answers are kept in request
            // order.
            let actual = if file == "mcp.txt" {
                sorted_by_id(&actual)
            } else {
                actual
            };
            failures.extend(self.check(&file, &actual));
        }
        failures.sort();
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    /// `run --dialect` on each provider's reply, one good call and one whose arguments are
    /// not an object.
    fn check_replies(&self, tool: &str, arguments: &str) {
        let mut failures = Vec::new();
        for (dialect, reply) in replies(tool, arguments) {
            let path = self.dir.join(format!("reply-{dialect}.json"));
            std::fs::write(&path, reply).expect("the reply");
            let actual = self.output(
                "run",
                &["--dialect", dialect, path.to_str().expect("UTF-8 path")],
                "",
            );
            failures.extend(self.check(&format!("reply-{dialect}.txt"), &actual));
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }
}

/// Each provider's reply with a call of `tool` with `arguments`, and one with `[1]`.
fn replies(tool: &str, arguments: &str) -> Vec<(&'static str, String)> {
    let quoted = serde_json::to_string(arguments).expect("a string");
    vec![
        (
            "openai",
            format!(
                r#"{{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{quoted}}}}},{{"id":"call_2","type":"function","function":{{"name":"{tool}","arguments":"[1]"}}}}]}}}}]}}"#
            ),
        ),
        (
            "openai-strict",
            format!(
                r#"{{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{quoted}}}}}]}}}}]}}"#
            ),
        ),
        (
            "openai-responses",
            format!(
                r#"{{"id":"r","object":"response","status":"completed","output":[{{"type":"function_call","id":"fc_1","call_id":"call_1","name":"{tool}","arguments":{quoted},"status":"completed"}},{{"type":"function_call","id":"fc_2","call_id":"call_2","name":"{tool}","arguments":"[1]","status":"completed"}}]}}"#
            ),
        ),
        (
            "anthropic",
            format!(
                r#"{{"id":"msg","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","content":[{{"type":"tool_use","id":"tu_1","name":"{tool}","input":{arguments}}},{{"type":"tool_use","id":"tu_2","name":"{tool}","input":[1]}}]}}"#
            ),
        ),
        (
            "gemini",
            format!(
                r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"functionCall":{{"name":"{tool}","args":{arguments}}}}},{{"functionCall":{{"name":"{tool}","args":[1]}}}}]}}}}]}}"#
            ),
        ),
    ]
}

/// The output with its JSON-RPC answers (the lines that start with `{`) in the order of
/// their ids.
fn sorted_by_id(text: &str) -> String {
    let mut answers: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
    answers.sort_by_key(|line| {
        serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["id"].as_u64())
            .unwrap_or(0)
    });
    let mut answers = answers.into_iter();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = if line.starts_with('{') {
            answers.next().unwrap_or(line)
        } else {
            line
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The text with the scratch directory written `<DIR>` and every timestamp `0`.
fn normalise(text: &str, dir: &Path) -> String {
    let dir = dir.to_str().expect("UTF-8 path");
    let text = text.replace(dir, "<DIR>");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    const KEY: &str = "\"timestamp\":";
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at + KEY.len()]);
        rest = &rest[at + KEY.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        out.push('0');
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// The first line where the two texts differ, for the failure message.
fn first_difference(expected: &str, actual: &str) -> String {
    let mut expected_lines = expected.lines();
    for (n, line) in actual.lines().enumerate() {
        match expected_lines.next() {
            Some(want) if want == line => {}
            want => {
                return format!(
                    "line {}:\n  golden: {}\n  now:    {line}",
                    n + 1,
                    want.unwrap_or("<end of file>")
                );
            }
        }
    }
    match expected_lines.next() {
        Some(want) => format!("the output ends where the golden file has: {want}"),
        None => "they differ in line endings or a final newline".into(),
    }
}

#[test]
fn the_builtin_tools_print_what_the_golden_files_hold() {
    let case = Case::new("builtins", pi_tools, BUILTINS_TOML);
    std::fs::create_dir_all(case.dir.join("src")).expect("src");
    std::fs::write(case.dir.join("src/lib.rs"), "pub fn alpha() {}\n").expect("lib.rs");
    case.check_all(&[
        r#"{"id":"1","name":"read","arguments":{"path":"notes.txt","offset":2}}"#,
        r#"{"id":"2","name":"bash","arguments":{"command":"echo hi; exit 3"}}"#,
        r#"{"id":"3","name":"edit","arguments":{"path":"notes.txt","edits":[{"oldText":"beta","newText":"BETA"}]}}"#,
        r#"{"id":"4","name":"write","arguments":{"path":"out/new.txt","content":"one\ntwo\n"}}"#,
        r#"{"id":"5","name":"grep","arguments":{"pattern":"alpha","path":"."}}"#,
        r#"{"id":"6","name":"find","arguments":{"pattern":"*.rs"}}"#,
        r#"{"id":"7","name":"ls","arguments":{"path":"src"}}"#,
        r#"{"id":"8","name":"read","arguments":{"pth":"notes.txt"}}"#,
        r#"{"id":"9","name":"nope","arguments":{}}"#,
    ]);
    case.check_replies("read", r#"{"path":"notes.txt","limit":1}"#);
}

#[test]
fn the_example_tools_print_what_the_golden_files_hold() {
    let case = Case::new("my_tools", my_tools, MY_TOOLS_TOML);
    case.check_all(&[
        r#"{"id":"1","name":"shout","arguments":{"text":"hi"}}"#,
        r#"{"id":"2","name":"sleep_ms","arguments":{"ms":1}}"#,
        r#"{"id":"3","name":"shout","arguments":{"txt":"hi"}}"#,
    ]);
    case.check_replies("shout", r#"{"text":"hi"}"#);
}

#[cfg(feature = "mount")]
#[test]
fn a_mounted_server_prints_what_the_golden_files_hold() {
    let toml = format!(
        "[tools]\nactive = [\"read\", \"fs__*\"]\n\n[mcp.servers.fs]\ncommand = {}\nstartup_timeout_secs = 60\n",
        toml_list(&filesystem_command(Path::new("<DIR>")))
    );
    let case = Case::new("mounted", pi_tools, &toml);
    case.check_all(&[
        r#"{"id":"1","name":"fs__read_text_file","arguments":{"path":"notes.txt"}}"#,
        r#"{"id":"2","name":"fs__read_text_file","arguments":{}}"#,
        r#"{"id":"3","name":"fs__list_allowed_directories","arguments":{}}"#,
    ]);
}

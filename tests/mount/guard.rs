//! The guard the gateway starts for its mounted servers (`pi-tools env-guard`, its own
//! binary again), and the limit that keeps a binary that does not route that subcommand from
//! starting guards without end.

use super::*;

/// The pids whose parent is `parent` and whose second argument is `env-guard`.
fn guards_of(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent is the second field after the command name, which ends with ") ".
        let ppid = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let second = cmdline.split(|b| *b == 0).nth(1).unwrap_or_default();
        if ppid == Some(parent) && second == b"env-guard" {
            found.push(pid);
        }
    }
    found
}

/// Starts `pi-tools mcp` with a mounted server, calls its tool (which starts the server and
/// the gateway's guard), and returns how many guards it has then.
fn guards_after_a_mounted_call(guard_var: Option<&str>) -> usize {
    let setup = Setup::new(&everything_config(r#"["everything__echo"]"#, ""));
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command
        .arg("--config")
        .arg(setup.config())
        .arg("mcp")
        .current_dir(setup.work.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(value) = guard_var {
        command.env("PI_TOOLS_GUARD_OF", value);
    }
    let mut child = command.spawn().expect("the gateway starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(
        child.stdout.take().expect("stdout"),
    ));
    let guards = {
        let mut send = |message: Value| {
            use std::io::Write;
            writeln!(stdin, "{message}").expect("the gateway reads");
            let Some(id) = message.get("id").cloned() else {
                return Value::Null;
            };
            for line in lines.by_ref() {
                let answer: Value = serde_json::from_str(&line.expect("a line")).expect("JSON-RPC");
                if answer["id"] == id {
                    return answer;
                }
            }
            panic!("the gateway ended");
        };
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
        );
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let answer = send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "everything__echo", "arguments": {"message": "hi"}}}));
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        guards_of(child.id()).len()
    };
    drop(stdin);
    child.wait().expect("the gateway ends");
    guards
}

/// A gateway with a mounted server has one guard; a process started by a guard (as a binary
/// that does not route `env-guard` would be) starts none, so guards cannot multiply.
#[test]
fn a_gateway_has_one_guard_and_what_a_guard_started_has_none() {
    assert_eq!(guards_after_a_mounted_call(None), 1);
    assert_eq!(guards_after_a_mounted_call(Some("1")), 0);
}

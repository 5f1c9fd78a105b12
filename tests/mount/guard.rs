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
fn guards_after_a_mounted_call(env: &[(&str, &str)]) -> usize {
    let setup = Setup::new(&everything_config(r#"["everything__echo"]"#, ""));
    let mut gateway = StdioGateway::start(&setup, env);
    let answer = gateway.call(2, "everything__echo", json!({"message": "hi"}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let guards = guards_of(gateway.pid()).len();
    gateway.end_input();
    guards
}

/// A gateway with a mounted server has one guard; a process started by a guard (as a binary
/// that does not route `env-guard` would be) starts none, so guards cannot multiply.
#[test]
fn a_gateway_has_one_guard_and_what_a_guard_started_has_none() {
    assert_eq!(guards_after_a_mounted_call(&[]), 1);
    assert_eq!(
        guards_after_a_mounted_call(&[("PI_TOOLS_GUARD_OF", "1")]),
        0
    );
}

//! Nothing of an SSH session outlives it: after `pi-tools run --ssh` exits, and after
//! `pi-tools mcp --ssh` is ended by SIGTERM or SIGKILL, no master connection runs here
//! (checked in /proc), and nothing runs under the sshd for it (its connection processes,
//! the remote server, the command it was running).
#![cfg(all(feature = "ssh", feature = "cli"))]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;
use support::procfs::{processes_with, settle_blocking};
use support::ssh::{ALIAS, Sshd, descendants};

/// A configuration whose `[env]` is the test server's directory `remote`, with the remote
/// server uploaded (so commands go through it) or not (commands run by the shell over SSH),
/// and bash active.
fn config(sshd: &Sshd, remote: &Path, etc: &Path, helper: bool) -> PathBuf {
    let file = etc.join(format!("pi-tools-{helper}.toml"));
    std::fs::write(
        &file,
        format!(
            "[tools]\nactive = [\"bash\", \"read\"]\n\n[env]\nkind = \"ssh\"\nhost = \"{ALIAS}\"\ncwd = \"{}\"\nssh_config = \"{}\"\nupload_helper = {helper}\n",
            remote.display(),
            sshd.config_file().display()
        ),
    )
    .expect("config");
    file
}

fn pi_tools(config: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command
        .env_remove("RUST_LOG")
        .env_remove("PI_TOOLS_CONFIG")
        .arg("--config")
        .arg(config);
    command
}

/// The ssh processes here that connect with the test server's client config: the master
/// connections (the multiplexed sessions name only the control socket).
fn masters(sshd: &Sshd) -> Vec<u32> {
    let config = sshd.config_file().display().to_string();
    processes_with(&config)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
                argv0 == b"ssh" || argv0.ends_with(b"/ssh")
            })
        })
        .collect()
}

/// Everything that runs under the sshd for its connections.
fn remote_processes(sshd: &Sshd) -> Vec<u32> {
    descendants(sshd.pid().expect("sshd runs"))
}

/// After each of three runs (the master used to stay up in most runs, depending on how the
/// runtime's shutdown raced the session's drop): no master, nothing under the sshd.
#[test]
fn run_over_ssh_leaves_no_connection_and_nothing_remote() {
    let Some(sshd) = Sshd::start() else { return };
    let remote = tempfile::tempdir().expect("remote dir");
    let etc = tempfile::tempdir().expect("config dir");
    let config = config(&sshd, remote.path(), etc.path(), true);
    for round in 0..3 {
        let mut child = pi_tools(&config)
            .args(["run", "--json", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pi-tools starts");
        let batch = json!([{"id": "b", "name": "bash", "arguments": {"command": "echo hi"}}]);
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(batch.to_string().as_bytes())
            .expect("input");
        drop(stdin);
        assert!(child.wait().expect("status").success(), "round {round}");
        assert_eq!(
            settle_blocking(0, || masters(&sshd).len()),
            0,
            "round {round}: the master connection ended with the process: {:?}",
            masters(&sshd)
        );
        assert_eq!(
            settle_blocking(0, || remote_processes(&sshd).len()),
            0,
            "round {round}: the remote side ended: {:?}",
            remote_processes(&sshd)
        );
    }
}

/// `pi-tools mcp --ssh`, ended by SIGTERM and by SIGKILL in the middle of a command, with
/// the remote server and without it: the master goes with it, and so do the command and a
/// job it started outside its process group (`setsid -f`) on the remote side.
#[test]
fn mcp_over_ssh_ended_by_a_signal_leaves_no_connection_and_no_command() {
    let Some(sshd) = Sshd::start() else { return };
    let remote = tempfile::tempdir().expect("remote dir");
    let etc = tempfile::tempdir().expect("config dir");
    for (helper, signal) in [
        (true, libc::SIGTERM),
        (true, libc::SIGKILL),
        (false, libc::SIGTERM),
        (false, libc::SIGKILL),
    ] {
        let config = config(&sshd, remote.path(), etc.path(), helper);
        let seconds = format!("303.{}{signal}{}", std::process::id(), u8::from(helper));
        let job = format!("sleep {seconds}");
        let mut child = pi_tools(&config)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("pi-tools starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut answer = |stdin: &mut std::process::ChildStdin, message: serde_json::Value| {
            writeln!(stdin, "{message}").expect("the server reads");
            let Some(id) = message.get("id").cloned() else {
                return;
            };
            // The first call may upload the remote server first: no time limit but the test's.
            for line in lines.by_ref() {
                let line = line.expect("a line");
                let read: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
                if read["id"] == id {
                    assert!(read.get("result").is_some(), "{read}");
                    return;
                }
            }
            panic!("the server ended without answering {message}");
        };
        answer(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
        );
        answer(
            &mut stdin,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        answer(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bash",
                "arguments": {"command": "echo ready"}}}),
        );
        // Runs until the signal, with a job that left its group; their duration, from a
        // variable, names only the sleeps.
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "bash",
            "arguments": {"command": format!("t={seconds}; setsid -f sleep $t; sleep $t")}}});
        writeln!(stdin, "{call}").expect("the server reads");
        assert_eq!(
            settle_blocking(2, || processes_with(&job).len()),
            2,
            "the command and its job run"
        );
        assert_eq!(masters(&sshd).len(), 1, "one master connection");

        // SAFETY: kill(2) of the child this test started.
        unsafe { libc::kill(child.id() as i32, signal) };
        child.wait().expect("status");
        assert_eq!(
            settle_blocking(0, || masters(&sshd).len()),
            0,
            "signal {signal}, server {helper}: the master connection ended with its owner: {:?}",
            masters(&sshd)
        );
        assert_eq!(
            settle_blocking(0, || processes_with(&job).len()),
            0,
            "signal {signal}, server {helper}: the remote command ended"
        );
        assert_eq!(
            settle_blocking(0, || remote_processes(&sshd).len()),
            0,
            "signal {signal}, server {helper}: the remote side ended: {:?}",
            remote_processes(&sshd)
        );
        drop(stdin);
    }
}

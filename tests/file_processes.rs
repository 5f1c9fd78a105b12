//! The file tools across processes, through the real `pi-tools run` binary: concurrent edits
//! of one file lose nothing (issue 12, finding 11), and an unprivileged user is refused what
//! the shell would refuse and told what could not be read (findings 10 and 13).
#![cfg(feature = "cli")]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use spawn::feed;
use support::spawn;

fn pi_tools() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
}

/// A configuration with every file tool active.
const CONFIG: &str = r#"
[tools]
active = ["read", "edit", "write", "grep", "find", "ls"]
"#;

/// Runs one batch with `pi-tools run --json` in `dir` (as `user`, through `setpriv`, when
/// given) and returns every result text with whether it was an error.
fn run_batch(dir: &Path, calls: &[Value], user: Option<u32>) -> Vec<(String, bool)> {
    let config = dir.join("pi-tools.toml");
    if !config.exists() {
        std::fs::write(&config, CONFIG).unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut command = match user {
        Some(uid) => {
            let mut command = Command::new("setpriv");
            command
                .arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .arg("--clear-groups")
                .arg(env!("CARGO_BIN_EXE_cli-under-test"));
            command
        }
        None => pi_tools(),
    };
    command
        .args(["run", "--json", "--config"])
        .arg(&config)
        .arg("--cwd")
        .arg(dir);
    let output = feed(command, &serde_json::to_string(calls).unwrap());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "tool_execution_end")
        .map(|event| {
            let text = event["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (text, event["isError"] == true)
        })
        .collect()
}

fn edit_call(id: usize, path: &str, old: &str, new: &str) -> Value {
    json!({"id": format!("e{id}"), "name": "edit", "arguments": {
        "path": path, "edits": [{"oldText": old, "newText": new}]
    }})
}

#[test]
fn two_processes_editing_one_file_lose_no_update() {
    const PER_PROCESS: usize = 60;
    let dir = tempfile::tempdir().unwrap();
    let slots: String = (0..2 * PER_PROCESS)
        .map(|i| format!("slot {i:03}: todo\n"))
        .collect();
    std::fs::write(dir.path().join("shared.txt"), slots).unwrap();
    let batch = |first: usize| -> Vec<Value> {
        (first..first + PER_PROCESS)
            .map(|i| {
                edit_call(
                    i,
                    "shared.txt",
                    &format!("slot {i:03}: todo"),
                    &format!("slot {i:03}: done"),
                )
            })
            .collect()
    };
    let (a, b) = (batch(0), batch(PER_PROCESS));
    let path = dir.path().to_path_buf();
    let other = {
        let path = path.clone();
        std::thread::spawn(move || run_batch(&path, &b, None))
    };
    let mut results = run_batch(&path, &a, None);
    results.extend(other.join().unwrap());

    let succeeded = results.iter().filter(|(_, is_error)| !is_error).count();
    let losers: Vec<&String> = results.iter().filter(|(_, e)| *e).map(|(t, _)| t).collect();
    let content = std::fs::read_to_string(dir.path().join("shared.txt")).unwrap();
    let done = content.lines().filter(|l| l.ends_with(": done")).count();
    assert_eq!(results.len(), 2 * PER_PROCESS);
    // Every reported success is in the file, and with the lock nobody has to lose.
    assert_eq!(done, succeeded, "losers: {losers:?}");
    assert_eq!(succeeded, 2 * PER_PROCESS, "losers: {losers:?}");
}

/// The unprivileged half runs as `nobody` (uid 65534) through `setpriv`.
const NOBODY: u32 = 65534;

fn as_nobody_possible() -> bool {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: running as nobody needs root (for setpriv)");
        return false;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: setpriv is not installed");
        return false;
    }
    true
}

#[test]
fn an_unprivileged_user_is_refused_what_the_shell_would_refuse() {
    if !as_nobody_possible() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let put = |name: &str, text: &str, mode: u32, owner: Option<u32>| {
        let path = root.join(name);
        std::fs::write(&path, text).unwrap();
        if let Some(uid) = owner {
            std::os::unix::fs::chown(&path, Some(uid), Some(uid)).unwrap();
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    put("readonly.txt", "old\n", 0o444, Some(NOBODY));
    put("rootonly.txt", "old\n", 0o000, None);
    put("shared.txt", "old\n", 0o666, None);
    put("mine.txt", "old\n", 0o644, Some(NOBODY));
    put("visible.txt", "needle\n", 0o644, None);
    put("hidden.txt", "needle\n", 0o000, None);

    let calls = vec![
        edit_call(0, "readonly.txt", "old", "new"),
        edit_call(1, "rootonly.txt", "old", "new"),
        edit_call(2, "shared.txt", "old", "new"),
        edit_call(3, "mine.txt", "old", "new"),
        json!({"id": "g", "name": "grep", "arguments": {"pattern": "needle", "glob": "*.txt"}}),
    ];
    let results = run_batch(root, &calls, Some(NOBODY));
    let by_text: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    let find = |needle: &str| {
        by_text
            .iter()
            .find(|t| t.contains(needle))
            .unwrap_or_else(|| panic!("no result mentions {needle:?}: {by_text:#?}"))
            .to_string()
    };
    assert!(
        find("readonly.txt is not writable by this process (mode 444)").contains("left unchanged")
    );
    assert!(
        find("rootonly.txt").contains("ermission denied")
            || find("rootonly.txt").contains("not writable")
    );
    assert!(find("shared.txt belongs to another user (uid 0)").contains("left unchanged"));
    assert_eq!(
        find("mine.txt"),
        "Successfully replaced 1 block in mine.txt."
    );
    assert_eq!(
        find("needle"),
        "visible.txt:1: needle\n\n[2 files or directories could not be read and were skipped: hidden.txt (permission denied), rootonly.txt (permission denied)]"
    );
    for name in ["readonly.txt", "rootonly.txt", "shared.txt"] {
        assert_eq!(
            std::fs::read_to_string(root.join(name)).unwrap(),
            "old\n",
            "{name}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("mine.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn an_unreadable_directory_is_named_by_find_and_grep() {
    if !as_nobody_possible() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::create_dir(root.join("locked")).unwrap();
    std::fs::write(root.join("locked/a.rs"), "needle\n").unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let calls = vec![
        json!({"id": "f", "name": "find", "arguments": {"pattern": "*.rs"}}),
        json!({"id": "g", "name": "grep", "arguments": {"pattern": "needle"}}),
    ];
    let results = run_batch(root, &calls, Some(NOBODY));
    let texts: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    assert!(
        texts.contains(&"No files found matching pattern\n\n[1 directory could not be read and was skipped: locked (directory not readable). Search inside them by a path you can read, or check their permissions]"),
        "{texts:#?}"
    );
    assert!(
        texts.contains(&"No matches found in what could be read\n\n[1 file or directory could not be read and was skipped: locked (directory not readable). Check their permissions, or search them with bash]"),
        "{texts:#?}"
    );
}

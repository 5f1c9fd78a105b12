//! `pi-tools run` and `pi-tools call` on a pseudo-terminal: a call the policy says `ask` for
//! is put to the person at the terminal, and their answer decides whether it runs; without a
//! terminal it is denied.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use rustix::fs::{Mode, OFlags};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

use super::{pi_tools, scratch_dir, stderr, stdout};

const POLICY: &str = r#"[tools]
active = ["bash"]

[sandbox]
mode = "off"

[[policy.rule]]
tool = "bash"
command = ["touch"]
decision = "ask"
reason = "Files appear only when a person says so."
"#;

/// Runs `touch <name>` under the policy on a new pseudo-terminal, answering `answer` to the
/// question; returns what the terminal showed.
fn run_answering(name: &str, answer: &str) -> (std::path::PathBuf, String) {
    let dir = scratch_dir(&format!("policy_tty_{name}"));
    let config = write_policy(&dir);
    let batch = dir.join("batch.json");
    let call = serde_json::json!([{"id": "1", "name": "bash", "arguments": {"command": format!("touch {name}")}}]);
    std::fs::write(&batch, call.to_string()).expect("the batch is written");
    let mut command = pi_tools();
    command
        .arg("--config")
        .arg(&config)
        .arg("run")
        .arg("--cwd")
        .arg(&dir)
        .arg(&batch);
    let (shown, output) = answering(command, answer);
    assert!(
        output.status.success() || answer != "y",
        "{}",
        stderr(&output)
    );
    (dir, shown)
}

/// Writes the policy into `dir`; returns the configuration file's path.
fn write_policy(dir: &std::path::Path) -> std::path::PathBuf {
    let config = dir.join("pi-tools.toml");
    std::fs::write(&config, POLICY).expect("the configuration is written");
    config
}

/// `pi-tools call bash` with `touch <name>` in `dir` under the policy.
fn call_touch(dir: &std::path::Path, name: &str) -> std::process::Command {
    let config = write_policy(dir);
    let mut command = pi_tools();
    command
        .arg("--config")
        .arg(&config)
        .arg("call")
        .arg("bash")
        .arg("--cwd")
        .arg(dir)
        .arg("--args")
        .arg(serde_json::json!({"command": format!("touch {name}")}).to_string());
    command
}

/// Runs `command` in a session of its own whose controlling terminal is a new
/// pseudo-terminal, answers `answer` to the question it asks there, and returns what the
/// terminal showed and the output.
fn answering(mut command: std::process::Command, answer: &str) -> (String, std::process::Output) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let pts = ptsname(&master, Vec::new()).expect("the terminal's name");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid and open are async-signal-safe; the child gets a session whose
    // controlling terminal is the pseudo-terminal (opened without O_NOCTTY), so /dev/tty
    // names it.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setsid()?;
            let fd = rustix::fs::open(pts.as_c_str(), OFlags::RDWR, Mode::empty())?;
            std::mem::forget(fd);
            Ok(())
        });
    }
    let child = command.spawn().expect("pi-tools starts");
    let mut terminal = std::fs::File::from(master);
    let mut shown = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&shown).contains("[n] no: ") {
        let n = terminal.read(&mut buf).expect("the terminal reads");
        assert!(n > 0, "the terminal closed before the question");
        shown.extend_from_slice(&buf[..n]);
    }
    terminal
        .write_all(format!("{answer}\n").as_bytes())
        .expect("the answer is typed");
    let output = child.wait_with_output().expect("pi-tools ends");
    (String::from_utf8_lossy(&shown).into_owned(), output)
}

#[test]
fn run_asks_at_the_terminal_and_yes_runs_the_call() {
    let (dir, shown) = run_answering("yes_file", "y");
    assert!(
        shown.contains(
            "pi-tools: This call needs a person's approval: `touch yes_file` is covered by the policy rule at "
        ),
        "{shown}"
    );
    assert!(shown.contains("Its reason: Files appear only when a person says so."));
    assert!(shown.contains("  tool: bash\r\n"), "{shown:?}");
    assert!(dir.join("yes_file").exists(), "the approved call ran");
}

#[test]
fn run_asks_at_the_terminal_and_no_denies_the_call() {
    let (dir, _) = run_answering("no_file", "n");
    assert!(
        !dir.join("no_file").exists(),
        "the declined call did not run"
    );
}

#[test]
fn call_applies_the_policy_and_asks_at_the_terminal() {
    let dir = scratch_dir("policy_tty_call_yes");
    let (shown, output) = answering(call_touch(&dir, "called"), "y");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        shown.contains("pi-tools: This call needs a person's approval: `touch called` is covered"),
        "{shown}"
    );
    let result: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON line");
    assert_eq!(result["isError"], false, "{result}");
    assert!(dir.join("called").exists(), "the approved call ran");
}

#[test]
fn call_without_a_terminal_denies_what_the_policy_asks_about() {
    let dir = scratch_dir("policy_tty_call_none");
    let mut command = call_touch(&dir, "unasked");
    command.stdin(Stdio::null());
    // SAFETY: setsid is async-signal-safe; the child's new session has no controlling
    // terminal, whatever terminal the tests run in.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()?;
            Ok(())
        });
    }
    let output = command.output().expect("pi-tools runs");
    assert!(output.status.success(), "{}", stderr(&output));
    let result: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON line");
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text");
    assert!(
        text.starts_with(
            "This call needs a person's approval: `touch unasked` is covered by the policy rule at "
        ),
        "{text}"
    );
    assert!(
        text.contains("pi-tools.toml:7:1 (tool = bash, command = touch). Its reason: Files appear only when a person says so. No one can be asked here, so the call was denied and nothing ran."),
        "{text}"
    );
    assert!(!dir.join("unasked").exists(), "the denied call never ran");
}

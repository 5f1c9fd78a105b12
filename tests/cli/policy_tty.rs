//! `pi-tools run` on a pseudo-terminal: a call the policy says `ask` for is put to the
//! person at the terminal, and their answer decides whether it runs.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use rustix::fs::{Mode, OFlags};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

use super::{pi_tools, scratch_dir, stderr};

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
    let config = dir.join("pi-tools.toml");
    std::fs::write(&config, POLICY).expect("the configuration is written");
    let batch = dir.join("batch.json");
    let call = serde_json::json!([{"id": "1", "name": "bash", "arguments": {"command": format!("touch {name}")}}]);
    std::fs::write(&batch, call.to_string()).expect("the batch is written");
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let pts = ptsname(&master, Vec::new()).expect("the terminal's name");
    let mut command = pi_tools();
    command
        .arg("--config")
        .arg(&config)
        .arg("run")
        .arg("--cwd")
        .arg(&dir)
        .arg(&batch)
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
    assert!(
        output.status.success() || answer != "y",
        "{}",
        stderr(&output)
    );
    (dir, String::from_utf8_lossy(&shown).into_owned())
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

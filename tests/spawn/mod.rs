//! Running a binary under test with some standard input and collecting what it printed.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `command` with `stdin` as its standard input and waits for it to finish.
pub fn feed(mut command: Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the input");
    child.wait_with_output().expect("the binary finishes")
}

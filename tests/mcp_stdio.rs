//! `pi-tools mcp` over stdio reads and writes pipes on the runtime's own threads (non-blocking
//! descriptions), and puts their flags back when it ends, so a script that goes on using the
//! same pipes is not left with non-blocking I/O.
#![cfg(feature = "cli")]

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::fs::OFlags;
use serde_json::{Value, json};

fn nonblocking(fd: impl AsFd) -> bool {
    rustix::fs::fcntl_getfl(fd)
        .expect("fcntl(F_GETFL)")
        .contains(OFlags::NONBLOCK)
}

#[test]
fn stdio_pipes_are_polled_while_serving_and_blocking_again_after() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let (in_read, mut in_write) = std::io::pipe().unwrap();
    let (out_read, out_write) = std::io::pipe().unwrap();
    // Copies of the server's ends: the same open descriptions, so the same flags.
    let server_in = in_read.try_clone().unwrap();
    let server_out = out_write.try_clone().unwrap();
    assert!(!nonblocking(&server_in) && !nonblocking(&server_out));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
        .arg("mcp")
        .arg("--cwd")
        .arg(dir.path())
        .stdin(in_read)
        .stdout(out_write)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut answers = BufReader::new(out_read);
    let send = |to: &mut std::io::PipeWriter, message: Value| {
        to.write_all(format!("{message}\n").as_bytes()).unwrap();
    };
    send(
        &mut in_write,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    send(
        &mut in_write,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut in_write,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "read", "arguments": {"path": "a.txt"}}}),
    );
    let mut line = String::new();
    let mut read_answer = None;
    while read_answer.is_none() {
        line.clear();
        assert_ne!(
            answers.read_line(&mut line).unwrap(),
            0,
            "the server ended early"
        );
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            read_answer = Some(message);
        }
    }
    let answer = read_answer.unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "alpha\n",
        "{answer}"
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // Serving: both pipes are polled by the runtime.
    assert!(
        nonblocking(&server_in),
        "stdin is read through the blocking pool"
    );
    assert!(
        nonblocking(&server_out),
        "stdout is written through the blocking pool"
    );
    drop(in_write);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not end at end of input"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    // Ended: the flags are as they were.
    assert!(!nonblocking(&server_in), "stdin was left non-blocking");
    assert!(!nonblocking(&server_out), "stdout was left non-blocking");
}

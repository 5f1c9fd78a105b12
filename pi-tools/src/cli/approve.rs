//! `pi-tools run`'s approver: a call the policy says `ask` for is put to the person at the
//! terminal (`/dev/tty`, so it works while standard input carries the batch); without a
//! terminal there is no approver, and `ask` denies.

use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex};

use crate::core::BoxFuture;
use crate::policy::{Approval, ApprovalRequest, Approver};

/// Asks on the controlling terminal, one question at a time.
pub(super) struct TerminalApprover {
    tty: Arc<Mutex<std::fs::File>>,
}

impl TerminalApprover {
    /// The approver of this process's terminal, or `None` when it has none.
    pub(super) fn open() -> Option<Self> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        Some(TerminalApprover {
            tty: Arc::new(Mutex::new(tty)),
        })
    }
}

impl Approver for TerminalApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval> {
        let tty = Arc::clone(&self.tty);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask(&tty, &request))
                .await
                .unwrap_or(Approval::Deny(None))
        })
    }
}

/// Puts the question and reads one answer; anything but yes or always is no.
fn ask(tty: &Mutex<std::fs::File>, request: &ApprovalRequest) -> Approval {
    let Ok(mut tty) = tty.lock() else {
        return Approval::Deny(None);
    };
    let question = format!(
        "\npi-tools: {}\n  tool: {}\n  arguments: {}\nAllow it? [y] once, [a] for this session, [n] no: ",
        request.reason, request.tool, request.args
    );
    if tty
        .write_all(question.as_bytes())
        .and_then(|()| tty.flush())
        .is_err()
    {
        return Approval::Deny(None);
    }
    let mut line = String::new();
    let Ok(file) = tty.try_clone() else {
        return Approval::Deny(None);
    };
    if BufReader::new(file).read_line(&mut line).is_err() {
        return Approval::Deny(None);
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Approval::AllowOnce,
        "a" | "always" => Approval::AllowForSession,
        _ => Approval::Deny(None),
    }
}

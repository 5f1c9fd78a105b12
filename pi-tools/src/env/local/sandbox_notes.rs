//! What the sandbox adds to the end of a command's output: the git redirect files it undid
//! after the call, what it took away from protected paths the call created, and, when the
//! command failed on the read-only `.git`, the setting that allows commits.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use pi_tools_sandbox::{GitAccess, Sandbox};

use crate::env::{ExecOutcome, OutputSink};

/// How a write to a read-only mount fails.
const READ_ONLY: &[u8] = b"Read-only file system";

struct Watch {
    sink: OutputSink,
    /// The end of the output so far, so a message split between chunks is still seen.
    tail: Vec<u8>,
    saw_read_only: bool,
    /// The last byte of the output (`None`: nothing yet).
    last: Option<u8>,
}

/// The command's output sink, watched.
pub(crate) struct CallNotes {
    watch: Arc<Mutex<Watch>>,
}

impl CallNotes {
    /// Wraps `sink`: the returned sink forwards every chunk to it.
    pub(crate) fn wrap(sink: OutputSink) -> (CallNotes, OutputSink) {
        let watch = Arc::new(Mutex::new(Watch {
            sink,
            tail: Vec::new(),
            saw_read_only: false,
            last: None,
        }));
        let forward = Arc::clone(&watch);
        let sink: OutputSink = Box::new(move |chunk: &[u8]| {
            let mut watch = forward.lock().unwrap_or_else(PoisonError::into_inner);
            if !watch.saw_read_only {
                watch.tail.extend_from_slice(chunk);
                watch.saw_read_only = memchr::memmem::find(&watch.tail, READ_ONLY).is_some();
                let keep = READ_ONLY.len().min(watch.tail.len());
                let cut = watch.tail.len() - keep;
                watch.tail.drain(..cut);
            }
            if let Some(&last) = chunk.last() {
                watch.last = Some(last);
            }
            (watch.sink)(chunk);
        });
        (CallNotes { watch }, sink)
    }

    /// After the command: undoes what it did to git's redirect files and says so, and
    /// names the setting that allows commits when it failed on the read-only `.git`.
    /// `still_running`: commands of the session left processes running. A command that
    /// could not be run gets the undoing too (it may have started), and its error back.
    pub(crate) fn finish(
        self,
        sandbox: &Sandbox,
        outcome: io::Result<ExecOutcome>,
        still_running: bool,
    ) -> io::Result<ExecOutcome> {
        let mut notes = Vec::new();
        let undone = sandbox.after_call(still_running);
        let planted = sandbox.after_call_plants(still_running);
        let outcome = outcome?;
        if !undone.is_empty() {
            notes.push(format!(
                "[The sandbox undid what this command did to git's settings, hooks or redirect files, which could make a later git command outside the sandbox run other code: {}. Leave them as they are.]",
                undone.join(", ")
            ));
        }
        if !planted.is_empty() {
            notes.push(format!(
                "[The sandbox took away what this command made where other programs load or run files by themselves later, outside any sandbox (pi-tools' configuration, shell, editor and agent settings): {}. Leave such files as they are; tell the user what should change there, and they can change it themselves.]",
                planted.join(", ")
            ));
        }
        let mut watch = self.watch.lock().unwrap_or_else(PoisonError::into_inner);
        let failed = outcome.exit_code != Some(0);
        if failed && watch.saw_read_only && sandbox.git_is_read_only() {
            notes.push(format!(
                "[The repository's .git is read-only in this sandbox ([sandbox] git = \"{}\"), so git can read it but not commit, stage or switch branches. Leave such changes to the user, or ask them to set [sandbox] git = \"{}\" in the configuration.]",
                GitAccess::ReadOnly,
                GitAccess::Commit
            ));
        }
        if !notes.is_empty() {
            // On a line of their own.
            let start = match watch.last {
                None | Some(b'\n') => "",
                Some(_) => "\n",
            };
            (watch.sink)(format!("{start}{}\n", notes.join("\n")).as_bytes());
        }
        drop(watch);
        Ok(outcome)
    }
}

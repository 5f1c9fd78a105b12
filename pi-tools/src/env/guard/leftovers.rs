//! What a server that died leaves: the serving end marks every command it starts with
//! `PI_TOOLS_ENV_SERVER=<its pid>-<its start time>` in the environment (which the command's
//! processes inherit), so a server that was killed outright (and so could not end its
//! commands) has its leftovers killed by the next server that starts there: the next call
//! after the loss. A process that clears its environment escapes this.

use std::fs;

use pi_tools_sandbox::procs::{environ, proc_pids};

/// How many rounds of killing one pass may take.
const ROUNDS: usize = 20;

/// The environment variable that marks a served command's processes.
pub(crate) const SERVER_VAR: &str = "PI_TOOLS_ENV_SERVER";

/// When `pid` started (in clock ticks after boot), so a reused pid is not taken for it.
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the parenthesised command name: state is field 3, starttime field 22.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// This process's mark.
pub(crate) fn own_mark() -> String {
    let pid = std::process::id();
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// Whether the server that made `mark` still runs.
#[cfg(feature = "cli")]
fn server_runs(mark: &str) -> bool {
    let Some((pid, started)) = mark.split_once('-') else {
        return false;
    };
    match (pid.parse::<u32>(), started.parse::<u64>()) {
        (Ok(pid), Ok(started)) => start_time(pid) == Some(started),
        _ => false,
    }
}

/// Kills every process (of those this user may read) marked by a server that no longer
/// runs; returns how many.
#[cfg(feature = "cli")]
pub(crate) fn kill_orphans() -> usize {
    kill_marked_where(|mark| !server_runs(mark))
}

/// Kills every process (of those this user may read) marked by the server that made
/// `mark`; returns how many. What the guard does once its server is gone.
#[cfg(feature = "cli")]
pub(crate) fn kill_marked(mark: &str) -> usize {
    kill_marked_where(|found| found == mark)
}

/// Kills every process whose environment has `var` set to `value`; returns how many.
pub(crate) fn kill_with(var: &str, value: &str) -> usize {
    kill_where(var, |found| found == value)
}

/// Kills every process whose mark `doomed` accepts.
#[cfg(feature = "cli")]
fn kill_marked_where(doomed: impl Fn(&str) -> bool) -> usize {
    kill_where(SERVER_VAR, doomed)
}

/// Kills every process whose value of `var` `doomed` accepts. Rounds until one finds
/// nothing (at most [`ROUNDS`]), for what the processes of a round forked meanwhile.
fn kill_where(var: &str, doomed: impl Fn(&str) -> bool) -> usize {
    let needle = format!("{var}=");
    let mut killed = 0;
    for _ in 0..ROUNDS {
        let mut round = 0;
        for pid in proc_pids() {
            let Ok(environ) = environ(pid) else {
                continue;
            };
            let mark = environ
                .split(|b| *b == 0)
                .find_map(|var| var.strip_prefix(needle.as_bytes()));
            if let Some(mark) = mark
                && doomed(&String::from_utf8_lossy(mark))
            {
                // SAFETY: kill(2) of a process found in /proc; no memory is involved.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                round += 1;
            }
        }
        killed += round;
        if round == 0 {
            break;
        }
    }
    killed
}

#[cfg(all(test, feature = "cli"))]
mod tests {
    use super::*;

    #[test]
    fn a_mark_names_a_running_server_only() {
        assert!(server_runs(&own_mark()));
        let pid = std::process::id();
        assert!(!server_runs(&format!("{pid}-1")), "another start time");
        assert!(!server_runs("nonsense"));
        assert!(!server_runs(&format!("{}-0", u32::MAX)));
    }
}

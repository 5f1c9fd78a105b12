//! Which processes a command started, including those that left its process group.
//!
//! A process group is not enough to find a command's processes: `setsid`, `setsid -f` and
//! `set -m` move children into groups (and sessions) of their own. So every command gets a
//! `CallProcs` that finds all of them:
//!
//! - **cgroup v2** where the process may create cgroups below its own (as root, or in a
//!   delegated subtree): each command runs in a fresh cgroup, entered by the child itself
//!   before `exec`, so nothing it starts can leave; `cgroup.kill` ends them all at once.
//! - **/proc scan** otherwise: the command's environment carries a marker
//!   (`PI_TOOLS_CALL=<id>`) that its descendants inherit; a process is the command's when it
//!   carries the marker or descends from one that does. A process that clears its
//!   environment and is orphaned escapes this fallback.
//!
//! A command's processes inside its own process group are the jobs it put in the background
//! (`cmd &`): they may outlive the call. Every other one is killed when the call ends, and
//! from then on a watcher thread keeps that rule for as long as the call has processes: one
//! that leaves the group later (a job that had not yet called `setsid` when the shell
//! exited, or a background job's `setsid` child) is killed within 50 ms (the
//! /proc scan: 250 ms). [`Tracker::end_session`] kills whatever is left.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// The environment variable that marks a command's processes in the /proc fallback.
pub(crate) const MARKER_VAR: &str = "PI_TOOLS_CALL";

/// How many rounds of killing a call's stray processes may take: each round kills what
/// exists, the next catches what they forked meanwhile.
const KILL_ROUNDS: usize = 50;

/// How long ending a session waits for killed processes to be gone from their cgroups.
const REMOVE_WAIT: Duration = Duration::from_secs(2);

/// How often the processes of finished calls are checked for ones outside the call's
/// process group (cheap with cgroups: one small file per call).
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_millis(50);

/// The same when the /proc scan tracks them (a scan reads every process's environment).
pub(crate) const WATCH_INTERVAL_SCAN: Duration = Duration::from_millis(250);

/// How the processes of commands are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessTracking {
    /// A cgroup per command where the system allows it, else the /proc scan.
    Auto,
    /// Only the /proc scan (marker variable plus parent links).
    ProcScan,
}

/// The processes of every command one session ran that may still be alive: [`run`] adds
/// each command's, and [`end_session`](Self::end_session) ends whatever is left.
///
/// [`run`]: crate::exec::run
#[derive(Debug)]
pub struct Tracker {
    tracking: ProcessTracking,
    /// Set once creating or entering a cgroup failed: later commands use the scan.
    cgroups_failed: AtomicBool,
    /// Shared with the watcher thread, which holds it only weakly.
    calls: Arc<Mutex<Vec<Arc<CallProcs>>>>,
    /// Whether the watcher thread runs.
    watching: Arc<AtomicBool>,
}

/// One command's processes.
#[derive(Debug)]
pub(crate) struct CallProcs {
    /// The command's process group (its shell's pid), 0 until it started.
    pgid: AtomicI32,
    /// The cgroup the command runs in, if it has one.
    cgroup: Option<PathBuf>,
    /// The marker value its environment carries (the /proc fallback).
    marker: String,
    /// The command's shell has exited: only background jobs can be left.
    finished: AtomicBool,
}

impl Tracker {
    /// A tracker with no command yet, finding processes as `tracking` says.
    pub fn new(tracking: ProcessTracking) -> Self {
        Tracker {
            tracking,
            cgroups_failed: AtomicBool::new(false),
            calls: Arc::default(),
            watching: Arc::default(),
        }
    }

    /// A call has ended ([`CallProcs::finish`]): if it left processes, makes sure the
    /// watcher thread polices them until they are gone or the session ends.
    pub(crate) fn watch_finished(&self) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let calls = Arc::downgrade(&self.calls);
        let watching = Arc::clone(&self.watching);
        let spawned = std::thread::Builder::new()
            .name("pi-tools-procs".into())
            .spawn(move || watch(&calls, &watching));
        if spawned.is_err() {
            self.watching.store(false, Ordering::SeqCst);
        }
    }

    /// Starts tracking a new command (with a cgroup of its own when `cgroup` is allowed and
    /// one can be made).
    pub(crate) fn begin(&self, cgroup: bool) -> Arc<CallProcs> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("pi-tools-{}-{n}", std::process::id());
        let cgroup = (cgroup
            && self.tracking == ProcessTracking::Auto
            && !self.cgroups_failed.load(Ordering::Relaxed))
        .then(|| own_cgroup_dir().map(|base| base.join(&name)))
        .flatten()
        .filter(|dir| match fs::create_dir(dir) {
            Ok(()) => true,
            Err(_) => {
                self.cgroups_failed.store(true, Ordering::Relaxed);
                false
            }
        });
        let call = Arc::new(CallProcs {
            pgid: AtomicI32::new(0),
            cgroup,
            marker: name,
            finished: AtomicBool::new(false),
        });
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        // Forget finished commands with nothing left, so the list stays short.
        calls.retain(|c| !(c.finished.load(Ordering::Relaxed) && c.try_remove()));
        calls.push(Arc::clone(&call));
        call
    }

    /// Entering the cgroup failed in the child: later commands use the /proc scan.
    pub(crate) fn cgroup_failed(&self, call: &CallProcs) {
        self.cgroups_failed.store(true, Ordering::Relaxed);
        call.try_remove();
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.retain(|c| !std::ptr::eq(Arc::as_ptr(c), call));
    }

    /// Whether a command is running or a finished one left processes (which are then
    /// still tracked).
    pub fn any_alive(&self) -> bool {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.retain(|c| !(c.finished.load(Ordering::Relaxed) && c.try_remove()));
        !calls.is_empty()
    }

    /// Kills every process of every command this tracker followed, background jobs and
    /// running commands included, and removes their cgroups.
    pub fn end_session(&self) {
        let calls = std::mem::take(&mut *self.calls.lock().unwrap_or_else(|e| e.into_inner()));
        for call in &calls {
            call.kill_all();
        }
        let deadline = Instant::now() + REMOVE_WAIT;
        for call in &calls {
            while !call.try_remove() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

impl CallProcs {
    /// The cgroup the command runs in, if it has one.
    pub(crate) fn cgroup(&self) -> Option<&Path> {
        self.cgroup.as_deref()
    }

    /// The `(name, value)` of the marker variable for the command's environment.
    pub(crate) fn marker(&self) -> (&str, &str) {
        (MARKER_VAR, &self.marker)
    }

    /// Records the command's process group once it started.
    pub(crate) fn started(&self, pgid: i32) {
        self.pgid.store(pgid, Ordering::Relaxed);
    }

    /// Opens the cgroup's `cgroup.procs` for the child to enter it (see [`enter_cgroup`]).
    pub(crate) fn open_procs_file(&self) -> io::Result<Option<OwnedFd>> {
        match &self.cgroup {
            None => Ok(None),
            Some(dir) => {
                let file = fs::OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))?;
                Ok(Some(file.into()))
            }
        }
    }

    /// The command's live processes (zombies left out), each with its process group.
    fn members(&self) -> Vec<(i32, i32)> {
        match &self.cgroup {
            Some(dir) => fs::read_to_string(dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse::<i32>().ok())
                .filter_map(|pid| {
                    let stat = ProcStat::read(pid)?;
                    (stat.state != 'Z').then_some((pid, stat.pgid))
                })
                .collect(),
            None => scan_marked(&self.marker),
        }
    }

    /// Kills every process of the command (on timeout, cancellation and session end).
    pub(crate) fn kill_all(&self) {
        // A group that is gone yields ESRCH, which is fine.
        let pgid = self.pgid.load(Ordering::Relaxed);
        if let Some(pgid) = Pid::from_raw(pgid.max(0)) {
            let _ = rustix::process::kill_process_group(pgid, Signal::KILL);
        }
        if let Some(dir) = &self.cgroup
            && fs::write(dir.join("cgroup.kill"), "1").is_ok()
        {
            return;
        }
        self.kill_rounds(|_| true);
    }

    /// Kills the command's processes outside its process group (when its shell has exited
    /// normally): the group's members are its background jobs and may stay.
    pub(crate) fn kill_escaped(&self) {
        let pgid = self.pgid.load(Ordering::Relaxed);
        self.kill_rounds(|group| group != pgid);
    }

    /// The command's shell has exited (and been waited for).
    pub(crate) fn finish(&self) {
        self.finished.store(true, Ordering::Relaxed);
        self.try_remove();
    }

    fn kill_rounds(&self, doomed: impl Fn(i32) -> bool) {
        for _ in 0..KILL_ROUNDS {
            let targets: Vec<i32> = self
                .members()
                .into_iter()
                .filter(|&(_, group)| doomed(group))
                .map(|(pid, _)| pid)
                .collect();
            if targets.is_empty() {
                return;
            }
            for pid in targets
                .into_iter()
                .filter_map(|pid| Pid::from_raw(pid.max(0)))
            {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
    }

    /// Whether the command has no processes left; its cgroup is removed when it has none.
    pub(crate) fn try_remove(&self) -> bool {
        match &self.cgroup {
            Some(dir) => match fs::remove_dir(dir) {
                Ok(()) => true,
                Err(e) => e.kind() == io::ErrorKind::NotFound,
            },
            None => self.members().is_empty(),
        }
    }
}

/// The watcher thread: every interval, kills the processes of finished calls that are
/// outside their call's process group, and forgets calls with nothing left. Ends when no
/// finished call has processes (or the tracker is gone).
fn watch(calls: &std::sync::Weak<Mutex<Vec<Arc<CallProcs>>>>, watching: &AtomicBool) {
    loop {
        let finished: Vec<Arc<CallProcs>> = match calls.upgrade() {
            None => Vec::new(),
            Some(calls) => {
                let mut list = calls.lock().unwrap_or_else(|e| e.into_inner());
                list.retain(|c| !(c.finished.load(Ordering::Relaxed) && c.try_remove()));
                list.iter()
                    .filter(|c| c.finished.load(Ordering::Relaxed))
                    .cloned()
                    .collect()
            }
        };
        if finished.is_empty() {
            watching.store(false, Ordering::SeqCst);
            // A call that finished just now saw the flag still set and left it to us.
            let more = calls.upgrade().is_some_and(|calls| {
                calls
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .any(|c| c.finished.load(Ordering::Relaxed))
            });
            if !more || watching.swap(true, Ordering::SeqCst) {
                return;
            }
            continue;
        }
        let interval = if finished.iter().all(|c| c.cgroup.is_some()) {
            WATCH_INTERVAL
        } else {
            WATCH_INTERVAL_SCAN
        };
        for call in &finished {
            call.kill_escaped();
        }
        std::thread::sleep(interval);
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is open as `fd`. Runs in
/// the forked child before `exec`, so it only makes the `write` system call.
pub(crate) fn enter_cgroup(fd: &OwnedFd) -> io::Result<()> {
    // rustix's write is the bare system call (no allocation, no lock): async-signal-safe,
    // as code between fork and exec must be.
    rustix::io::write(fd, b"0\n")?;
    Ok(())
}

/// The directory of this process's own cgroup v2, when one is mounted.
fn own_cgroup_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let mount = fs::read_to_string("/proc/self/mountinfo")
            .ok()?
            .lines()
            .find_map(|line| {
                // `… mount-point options … - fstype source options`
                let (before, after) = line.split_once(" - ")?;
                (after.split_whitespace().next()? == "cgroup2")
                    .then(|| before.split_whitespace().nth(4).map(PathBuf::from))
                    .flatten()
            })?;
        let own = fs::read_to_string("/proc/self/cgroup")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("0::").map(str::to_owned))?;
        let dir = mount.join(own.trim().trim_start_matches('/'));
        dir.join("cgroup.procs").exists().then_some(dir)
    })
    .clone()
}

/// What `/proc/<pid>/stat` tells about a process.
struct ProcStat {
    state: char,
    ppid: i32,
    pgid: i32,
}

impl ProcStat {
    fn read(pid: i32) -> Option<ProcStat> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is parenthesised and may hold spaces and parentheses.
        let (_, rest) = stat.rsplit_once(')')?;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgid = fields.next()?.parse().ok()?;
        Some(ProcStat { state, ppid, pgid })
    }
}

/// The ids of the processes `/proc` lists (those this user may see); none when it cannot
/// be read.
pub fn proc_pids() -> impl Iterator<Item = i32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
}

/// The environment of process `pid`, as `/proc` has it: `NAME=value` entries, each ended by
/// a NUL byte.
pub fn environ(pid: i32) -> io::Result<Vec<u8>> {
    fs::read(format!("/proc/{pid}/environ"))
}

/// Live processes that carry `PI_TOOLS_CALL=<marker>` in their environment or descend from
/// one that does, each with its process group.
fn scan_marked(marker: &str) -> Vec<(i32, i32)> {
    let needle = format!("{MARKER_VAR}={marker}");
    let mut stats: HashMap<i32, ProcStat> = HashMap::new();
    let mut marked: HashSet<i32> = HashSet::new();
    for pid in proc_pids() {
        let Some(stat) = ProcStat::read(pid) else {
            continue;
        };
        if stat.state == 'Z' {
            continue;
        }
        let carries = environ(pid)
            .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()));
        if carries {
            marked.insert(pid);
        }
        stats.insert(pid, stat);
    }
    // Descendants of marked processes belong to the command too, whatever their environment.
    let mut changed = true;
    while changed {
        changed = false;
        for (&pid, stat) in &stats {
            if !marked.contains(&pid) && marked.contains(&stat.ppid) {
                marked.insert(pid);
                changed = true;
            }
        }
    }
    marked
        .into_iter()
        .filter_map(|pid| stats.get(&pid).map(|s| (pid, s.pgid)))
        .collect()
}

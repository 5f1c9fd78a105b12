//! The session's jobs: commands handed back to the model while they run. bash starts one
//! when a call asks for `background` or a `yield` passes; the job tools read its output,
//! write to its input, signal it and list them. A job runs through its environment's
//! [`exec_job`](crate::env::ExecutionEnv::exec_job), so it is confined and tracked like any
//! command of the session, and it ends with the session at the latest
//! ([`Jobs::end_all`], called by the environment's `end_session`).
//!
//! The store belongs to one environment, that is one session: a job of another session is
//! not found, so it can be neither read nor signalled. The number of running jobs is
//! bounded, and so is what each keeps of its output ([`ring`]).

mod job;
pub mod ring;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::mpsc;

// What a job is sent while it runs is the command runner's (the sandbox crate's) input.
pub use job::{Job, JobRead, JobState, run_time_text};
pub use pi_tools_sandbox::exec::{Control as JobControl, Input as JobInput, TerminalSize};

use crate::core::Notices;
use crate::env::{ExecRequest, ExecutionEnv, OutputSink};

/// The most jobs of one session that may run at once.
pub const DEFAULT_MAX_RUNNING: usize = 16;

/// The most ended jobs a session keeps for reading (the oldest go first).
const MAX_ENDED_KEPT: usize = 64;

/// A session's jobs.
///
/// ```
/// use pi_tools::env::Jobs;
/// let jobs = Jobs::default();
/// assert!(jobs.list().is_empty());
/// assert!(jobs.get(1).is_none());
/// ```
#[derive(Debug)]
pub struct Jobs {
    inner: Mutex<Inner>,
    notices: Notices,
    max_running: usize,
    ring_bytes: usize,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    jobs: Vec<Arc<Job>>,
    /// The session ended: no job may start.
    ended: bool,
    /// Why no job may start in this environment at all, as a sentence for the model.
    refusal: Option<String>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("id", &self.id())
            .field("command", &self.command())
            .finish_non_exhaustive()
    }
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs::new(DEFAULT_MAX_RUNNING, ring::DEFAULT_RING_BYTES)
    }
}

impl Jobs {
    /// A store letting at most `max_running` jobs run at once, each keeping the last
    /// `ring_bytes` of its output.
    pub fn new(max_running: usize, ring_bytes: usize) -> Self {
        Jobs {
            inner: Mutex::default(),
            notices: Notices::default(),
            max_running,
            ring_bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on every start is refused with `why` (a sentence for the model saying what
    /// to do instead): for an environment that lives only as long as one call, where a job
    /// would be ended before anyone could read it.
    pub fn refuse_new(&self, why: impl Into<String>) {
        self.lock().refusal = Some(why.into());
    }

    /// Whether a job may start here (none may in an environment that
    /// [refuses](Jobs::refuse_new) them, or whose session ended).
    pub fn accepts_new(&self) -> bool {
        let inner = self.lock();
        inner.refusal.is_none() && !inner.ended
    }

    /// The notes for the model's next result (a job that ended). A front end puts them in
    /// the batch's extensions ([`WithEnv`](crate::env::WithEnv) does), so the runner
    /// appends them to the next result; a program can also [take](Notices::take) them.
    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    /// Starts `request` as a job in `env` (the environment that holds this store), its
    /// output going to `attached` too until the job is [detached](Job::detach). Refused, with
    /// the reason as a sentence for the model, when the session already runs the most jobs
    /// it may or has ended.
    pub fn start(
        &self,
        env: Arc<dyn ExecutionEnv>,
        request: ExecRequest,
        terminal: Option<TerminalSize>,
        attached: OutputSink,
    ) -> Result<Arc<Job>, String> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let job = {
            let mut inner = self.lock();
            if let Some(why) = &inner.refusal {
                return Err(why.clone());
            }
            if inner.ended {
                return Err(
                    "The session is ending, so no job can start. Start the command in a new session."
                        .to_owned(),
                );
            }
            let running = inner.jobs.iter().filter(|j| is_running(j)).count();
            if running >= self.max_running {
                return Err(format!(
                    "This session already runs {running} jobs, the most it may. End one with job_kill (job_list shows them), or wait for one to end, then start this command again."
                ));
            }
            inner.next += 1;
            let job = Arc::new(Job::new(
                inner.next,
                request.command.clone(),
                self.ring_bytes,
                attached,
                sender,
                self.notices.clone(),
                terminal.is_some(),
            ));
            inner.jobs.push(Arc::clone(&job));
            let ended = inner.jobs.len() - inner.jobs.iter().filter(|j| is_running(j)).count();
            if ended > MAX_ENDED_KEPT
                && let Some(oldest) = inner.jobs.iter().position(|j| !is_running(j))
            {
                inner.jobs.remove(oldest);
            }
            job
        };
        let request = with_guard_mark(env.as_ref(), request);
        let input = JobInput {
            control: receiver,
            terminal,
        };
        let running = Arc::clone(&job);
        let sink = job.sink();
        let cancel = job.cancel_token();
        tokio::spawn(async move {
            let outcome = env.exec_job(request, input, cancel, sink).await;
            running.finish(outcome.map_err(|e| crate::core::text::sentence(&e)));
        });
        Ok(job)
    }

    /// The job numbered `id`, if this session has it.
    pub fn get(&self, id: u64) -> Option<Arc<Job>> {
        self.lock().jobs.iter().find(|j| j.id() == id).cloned()
    }

    /// Every job the session keeps, oldest first.
    pub fn list(&self) -> Vec<Arc<Job>> {
        self.lock().jobs.clone()
    }

    /// Forgets job `id` (one that ended before its call stopped waiting: the call told
    /// the model everything).
    pub fn forget(&self, id: u64) {
        let mut inner = self.lock();
        inner.jobs.retain(|j| j.id() != id);
        // The model never saw its id: the next job may have it.
        if inner.next == id {
            inner.next -= 1;
        }
    }

    /// Ends every job (each process of each gets SIGKILL) and refuses new ones: the
    /// session is over.
    pub fn end_all(&self) {
        let jobs = {
            let mut inner = self.lock();
            inner.ended = true;
            std::mem::take(&mut inner.jobs)
        };
        for job in jobs {
            job.kill();
        }
    }
}

/// `request` with this process's guard mark, so that should the process be killed
/// outright its guard ends the job's processes too (those on this machine: a remote server
/// has a guard of its own). Only the pi-tools binary has a guard.
#[cfg(feature = "mount")]
fn with_guard_mark(env: &dyn ExecutionEnv, mut request: ExecRequest) -> ExecRequest {
    if env.is_local()
        && let Some(mark) = crate::env::guard::for_this_process()
    {
        let var = crate::env::guard::leftovers::SERVER_VAR;
        request.env.push((var.to_owned(), mark.to_owned()));
    }
    request
}

#[cfg(not(feature = "mount"))]
fn with_guard_mark(_env: &dyn ExecutionEnv, request: ExecRequest) -> ExecRequest {
    request
}

fn is_running(job: &Job) -> bool {
    job.state() == JobState::Running
}

/// The parameters a shell tool takes to start a job, as JSON schema properties: offered
/// (added to its schema) only when a tool of [`ToolRole::Jobs`](crate::tool::ToolRole) is
/// active, so a model is never told of jobs it could not read.
pub fn start_parameters() -> serde_json::Map<String, serde_json::Value> {
    let schema = serde_json::json!({
        "background": {
            "type": "boolean",
            "description": "Start the command as a background job and return at once with its job id and any output so far. Use it for servers, watchers and other commands that do not end by themselves; read their output with job_output."
        },
        "yield": {
            "type": "number",
            "minimum": 0,
            "maximum": 86400,
            "description": "Seconds to wait for the command. If it is still running then, the call returns its output so far and a job id, and the command keeps running as a job (read it with job_output, write to it with job_input, stop it with job_kill). You are told when a job ends."
        },
        "pty": {
            "type": "boolean",
            "description": "Run the command on a pseudo-terminal (80x24 unless rows and cols say otherwise), for programs that need one: a REPL such as python3 -i, a pager, a prompt. Its output comes with the terminal's control sequences removed. Without background or yield it returns after 2 seconds as a job; answer it with job_input."
        },
        "rows": {"type": "integer", "minimum": 1, "maximum": 500, "description": "The pseudo-terminal's rows (with pty)."},
        "cols": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "The pseudo-terminal's columns (with pty)."}
    });
    match schema {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The sentence a shell tool's description gains with [`start_parameters`].
pub const START_DESCRIPTION: &str = "A command that runs long or waits for input can run as a job: give background: true, or a yield in seconds after which the call returns while the command goes on; the job tools read its output, write to its input and end it, and every job ends with the session.";

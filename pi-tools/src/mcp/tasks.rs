//! Long calls as tasks (the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28):
//! a call of a request that declares the extension and runs past
//! [`McpTools::with_task_after`](super::McpTools::with_task_after) is answered with a task;
//! the call goes on, `tasks/get` polls it, and `tasks/cancel` cancels it (a command's
//! process group is killed, as for a cancelled request). The tasks belong to the server,
//! not to one request, so any request of the same server reaches them; a finished task's
//! result is kept for [`TASK_TTL`], and at most [`MAX_TASKS`] are kept at once.
//!
//! A task's call may ask its client (a tool's [`ctx.ask`](crate::ToolContext::ask)): the
//! question is the task's (`input_required`, its `inputRequests` on `tasks/get`) and the
//! tool waits until `tasks/update` brings the answer under the question's key.
//!
//! A background job that bash hands back to such a request is a task of the same store
//! ([`Tasks::start_job`]): its status is read from the job itself, working while it runs and
//! completed, with the job's end (how, after how long, its last lines), once it ended;
//! `tasks/cancel` kills it as `job_kill` does.
//!
//! The same store holds the tasks a 2025-11-25 session asks for with `params.task` (see
//! `tasks_2025`): each is marked with the session that made it, which `tasks/list` lists,
//! and `tasks/result` waits for its end ([`Tasks::wait_end`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, DetailedTask, GetTaskResult, InputRequest, InputResponses, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::env::jobs::{Job, JobState};

/// How long a finished task's result is kept.
pub(crate) const TASK_TTL: Duration = Duration::from_secs(600);
/// The most tasks kept at once; a new one past it first drops the oldest finished one, and
/// is refused when every one is still working.
pub(crate) const MAX_TASKS: usize = 256;
/// How often a client is asked to poll, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// The tasks of one server.
#[derive(Default)]
pub(crate) struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
    /// Woken at every change of a task's state, for those waiting for a task's end.
    changed: tokio::sync::Notify,
}

struct Entry {
    created_at: String,
    updated_at: String,
    state: State,
    /// What the task follows: a call (cancelled by its token), or a job of bash.
    work: Work,
    /// When it finished, for [`TASK_TTL`].
    ended: Option<Instant>,
    /// Its order of creation, to drop the oldest first.
    number: u64,
    /// The questions its call waits on, by key: while there are any, it is `input_required`.
    questions: BTreeMap<String, Waiting>,
    /// The session that made it with a 2025-11-25 `params.task`, whose `tasks/list` lists it.
    owner: Option<u64>,
    /// The requests its call sent its session's client and waits on (a 2025-11-25 task's
    /// questions): while there are any, it is `input_required`.
    asking: usize,
}

/// A question a task's call asked, waiting for its answer.
struct Waiting {
    /// The question as the client is given it.
    request: InputRequest,
    /// Gives the call the answer, once `tasks/update` brings it.
    answer: oneshot::Sender<Value>,
}

/// A task of the store, as a call that became one reaches it to put its questions.
#[derive(Clone)]
pub(crate) struct TaskLink {
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) id: String,
}

enum Work {
    /// A call that ran long; the token cancels it.
    Call(CancellationToken),
    /// A job a call handed back; its state is the task's until the task ends.
    Job(Arc<Job>),
}

enum State {
    Working,
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
}

impl Tasks {
    /// Registers a working task for a call that `cancel` cancels; the task as the client
    /// first sees it, or the error refusing it when too many are working.
    pub(crate) fn start(&self, cancel: CancellationToken) -> Result<Task, ErrorData> {
        self.insert(Work::Call(cancel), None)
    }

    /// As [`Tasks::start`], for a call the session `owner` asked to run as a task
    /// (2025-11-25 `params.task`): its `tasks/list` lists it.
    pub(crate) fn start_owned(
        &self,
        cancel: CancellationToken,
        owner: u64,
    ) -> Result<Task, ErrorData> {
        self.insert(Work::Call(cancel), Some(owner))
    }

    /// Registers the job a call handed back as a task that follows it; the task, or the
    /// error refusing it when too many are working (the job then goes on as a job only).
    pub(crate) fn start_job(&self, job: Arc<Job>) -> Result<Task, ErrorData> {
        self.insert(Work::Job(job), None)
    }

    fn insert(&self, work: Work, owner: Option<u64>) -> Result<Task, ErrorData> {
        let mut entries = self.lock();
        for entry in entries.values_mut() {
            entry.follow_job();
        }
        let now = Instant::now();
        entries.retain(|_, e| e.ended.is_none_or(|ended| now - ended < TASK_TTL));
        if entries.len() >= MAX_TASKS {
            let oldest = entries
                .iter()
                .filter(|(_, e)| e.ended.is_some())
                .min_by_key(|(_, e)| e.number)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => {
                    entries.remove(&id);
                }
                None => {
                    return Err(ErrorData::internal_error(
                        format!(
                            "The server already runs {MAX_TASKS} tasks, so no task was made: a call that ran long is cancelled, a call sent as a task does not start, and a background job goes on without one. Wait for some to end (tasks/get) or cancel them (tasks/cancel), then call again."
                        ),
                        None,
                    ));
                }
            }
        }
        let number = entries.values().map(|e| e.number).max().unwrap_or(0) + 1;
        let id = task_id(number)?;
        let stamp = timestamp(SystemTime::now());
        entries.insert(
            id.clone(),
            Entry {
                created_at: stamp.clone(),
                updated_at: stamp.clone(),
                state: State::Working,
                work,
                ended: None,
                number,
                questions: BTreeMap::new(),
                owner,
                asking: 0,
            },
        );
        Ok(task(&id, TaskStatus::Working, &stamp, &stamp))
    }

    /// A task for a call that already ended with `outcome` (a tool that runs only as a task
    /// gives even a quick result so).
    pub(crate) fn done(
        &self,
        outcome: Result<CallToolResult, ErrorData>,
    ) -> Result<Task, ErrorData> {
        let task = self.insert(Work::Call(CancellationToken::new()), None)?;
        self.finish(&task.task_id, outcome);
        let entries = self.lock();
        let entry = entries.get(&task.task_id);
        let status = match entry.map(|e| &e.state) {
            Some(State::Failed(_)) => TaskStatus::Failed,
            _ => TaskStatus::Completed,
        };
        let updated = entry.map_or(task.last_updated_at.clone(), |e| e.updated_at.clone());
        Ok(self::task(
            &task.task_id,
            status,
            &task.created_at,
            &updated,
        ))
    }

    /// Records how the task's call ended; a cancelled task stays cancelled.
    pub(crate) fn finish(&self, id: &str, outcome: Result<CallToolResult, ErrorData>) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(id) else {
            return;
        };
        if matches!(entry.state, State::Cancelled) {
            return;
        }
        entry.state = match outcome {
            Ok(result) => match serde_json::to_value(result) {
                Ok(Value::Object(result)) => State::Completed(result),
                _ => State::Failed(error_object(&ErrorData::internal_error(
                    "The call's result could not be serialized; this is a bug in pi-tools.",
                    None,
                ))),
            },
            Err(error) => State::Failed(error_object(&error)),
        };
        entry.questions.clear();
        entry.updated_at = timestamp(SystemTime::now());
        entry.ended = Some(Instant::now());
        drop(entries);
        self.changed.notify_waiters();
    }

    /// Drops a task made for a call that ended before it was given to the client.
    pub(crate) fn discard(&self, id: &str) {
        self.lock().remove(id);
        self.changed.notify_waiters();
    }

    /// Puts the question `request` (under `key`) to the client of the working task `id`: the
    /// task is `input_required` until `tasks/update` answers it; the receiver gets the answer.
    /// `None` when the task is gone or ended (its call was cancelled).
    pub(crate) fn ask(
        &self,
        id: &str,
        key: String,
        request: InputRequest,
    ) -> Option<oneshot::Receiver<Value>> {
        let mut entries = self.lock();
        let entry = entries.get_mut(id)?;
        if !matches!(entry.state, State::Working) {
            return None;
        }
        let (answer, answered) = oneshot::channel();
        entry.questions.insert(key, Waiting { request, answer });
        entry.updated_at = timestamp(SystemTime::now());
        Some(answered)
    }

    /// `tasks/update`: gives each answer to the question of its key that the task waits on;
    /// an answer to no such question (unknown, answered already, or the task ended) is
    /// ignored. `check` says whether an answer is a result of its question's method (the
    /// sentence refusing it if not): one unfit answer refuses the whole update, and nothing
    /// of it is given.
    pub(crate) fn update(
        &self,
        id: &str,
        responses: InputResponses,
        check: impl Fn(&str, &InputRequest, &Value) -> Result<(), String>,
    ) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        let entry = entries.get_mut(id).ok_or_else(|| unknown(id))?;
        let answered: Vec<(String, Value)> = responses
            .into_iter()
            .filter(|(key, _)| entry.questions.contains_key(key))
            .collect();
        for (key, response) in &answered {
            if let Some(waiting) = entry.questions.get(key) {
                check(key, &waiting.request, response)
                    .map_err(|refusal| ErrorData::invalid_params(refusal, None))?;
            }
        }
        for (key, response) in answered {
            if let Some(waiting) = entry.questions.remove(&key) {
                // A call that stopped waiting (cancelled) no longer takes it.
                let _ = waiting.answer.send(response);
            }
        }
        entry.updated_at = timestamp(SystemTime::now());
        Ok(())
    }

    /// Counts a request the call of task `id` sent its session's client (`true`) or had
    /// answered (`false`): a working task is `input_required` while any waits.
    pub(crate) fn asking(&self, id: &str, waits: bool) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(id) else {
            return;
        };
        entry.asking = match waits {
            true => entry.asking + 1,
            false => entry.asking.saturating_sub(1),
        };
        entry.updated_at = timestamp(SystemTime::now());
    }

    /// `tasks/get`: the task with its status and, once it ended, its result.
    pub(crate) fn get(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let mut entries = self.lock();
        let entry = entries.get_mut(id).ok_or_else(|| unknown(id))?;
        entry.follow_job();
        let payload = match &entry.state {
            State::Working if !entry.questions.is_empty() => TaskPayload::InputRequired {
                input_requests: entry
                    .questions
                    .iter()
                    .map(|(key, waiting)| (key.clone(), waiting.request.clone()))
                    .collect(),
            },
            // Its call waits on a request to the session's client, which the client
            // answers as any request (there is nothing for `tasks/update` to give).
            State::Working if entry.asking > 0 => TaskPayload::InputRequired {
                input_requests: Default::default(),
            },
            State::Working => TaskPayload::Working,
            State::Completed(result) => TaskPayload::Completed {
                result: result.clone(),
            },
            State::Failed(error) => TaskPayload::Failed {
                error: error.clone(),
            },
            State::Cancelled => TaskPayload::Cancelled,
        };
        let base = task(id, payload.status(), &entry.created_at, &entry.updated_at);
        Ok(GetTaskResult::new(DetailedTask::new(base, payload)))
    }

    /// `tasks/cancel`: cancels a working task's call (its processes end with it); a task
    /// that already ended is left as it is. Whether it was working (and is cancelled now).
    pub(crate) fn cancel(&self, id: &str) -> Result<bool, ErrorData> {
        let mut entries = self.lock();
        let entry = entries.get_mut(id).ok_or_else(|| unknown(id))?;
        entry.follow_job();
        if !matches!(entry.state, State::Working) {
            return Ok(false);
        }
        match &entry.work {
            Work::Call(cancel) => cancel.cancel(),
            Work::Job(job) => job.kill(),
        }
        entry.state = State::Cancelled;
        entry.questions.clear();
        entry.updated_at = timestamp(SystemTime::now());
        entry.ended = Some(Instant::now());
        drop(entries);
        self.changed.notify_waiters();
        Ok(true)
    }

    /// The tasks `owner` made that are still kept, oldest first, as `tasks/get` gives them.
    pub(crate) fn list(&self, owner: u64) -> Vec<GetTaskResult> {
        let mut owned: Vec<(u64, String)> = {
            let entries = self.lock();
            let now = Instant::now();
            entries
                .iter()
                .filter(|(_, e)| e.owner == Some(owner))
                .filter(|(_, e)| e.ended.is_none_or(|ended| now - ended < TASK_TTL))
                .map(|(id, e)| (e.number, id.clone()))
                .collect()
        };
        owned.sort();
        owned
            .into_iter()
            .filter_map(|(_, id)| self.get(&id).ok())
            .collect()
    }

    /// The task once it ended (completed, failed or cancelled), as `tasks/get` gives it; the
    /// error of an unknown task, also when it is dropped while this waits.
    pub(crate) async fn wait_end(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        loop {
            // Listening before looking, so that an end between the two is not missed.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let got = self.get(id)?;
            if got.task.status().is_terminal() {
                return Ok(got);
            }
            // A job's task is not told of its job's end: it is looked at again now and then.
            let _ = tokio::time::timeout(Duration::from_millis(POLL_INTERVAL_MS), changed).await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Entry {
    /// A job's task takes the job's end once it ended: completed with a result that says
    /// how (an error result unless it exited with 0), as its end notice does.
    fn follow_job(&mut self) {
        let (Work::Job(job), State::Working) = (&self.work, &self.state) else {
            return;
        };
        let failed = match job.state() {
            JobState::Running => return,
            JobState::Ended(outcome) => outcome.exit_code != Some(0) || outcome.signal.is_some(),
            JobState::Failed(_) => true,
        };
        let end = job.end_sentence().unwrap_or_default();
        let last = job.last_lines();
        let mut text = format!("Job {} (`{}`) {end}.", job.id(), job.command());
        if last.is_empty() {
            text.push_str(" It printed nothing.");
        } else {
            text.push_str(&format!(" Its last lines:\n{last}"));
        }
        let content = vec![rmcp::model::ContentBlock::text(text)];
        let result = match failed {
            true => CallToolResult::error(content),
            false => CallToolResult::success(content),
        };
        self.state = match serde_json::to_value(result) {
            Ok(Value::Object(result)) => State::Completed(result),
            _ => State::Failed(JsonObject::new()),
        };
        self.updated_at = timestamp(SystemTime::now());
        self.ended = Some(Instant::now());
    }
}

fn task(id: &str, status: TaskStatus, created: &str, updated: &str) -> Task {
    Task::new(id, status, created, updated)
        .with_ttl_ms(TASK_TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "No task `{id}`: it never existed on this server, or it ended more than {} minutes ago and its result was dropped. Call the tool again.",
            TASK_TTL.as_secs() / 60
        ),
        None,
    )
}

fn error_object(error: &ErrorData) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// A task id no one can guess: its number and 128 random bits from the system's source.
/// The id is all a request needs to read or cancel a task, so without the random source no
/// task is made.
fn task_id(number: u64) -> Result<String, ErrorData> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        ErrorData::internal_error(
            format!(
                "The system's random source could not be read ({e}), so no task was made: its id would be guessable. Check that the server may read it (getrandom(2) or /dev/urandom), then call again."
            ),
            None,
        )
    })?;
    let random: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("task-{number}-{random}"))
}

/// `time` as ISO 8601 in UTC, to the millisecond.
fn timestamp(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The date of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_in_utc() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_millis(1_785_196_800_123);
        assert_eq!(timestamp(time), "2026-07-28T00:00:00.123Z");
        assert_eq!(
            timestamp(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn task_ids_carry_128_random_bits() {
        let tasks = Tasks::default();
        let ids: Vec<String> = (0..2)
            .map(|_| {
                tasks
                    .start(CancellationToken::new())
                    .expect("started")
                    .task_id
            })
            .collect();
        for (number, id) in (1..).zip(&ids) {
            let random = id
                .strip_prefix(&format!("task-{number}-"))
                .unwrap_or_else(|| panic!("numbered: {id}"));
            assert_eq!(random.len(), 32, "{id}");
            assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        }
        assert_ne!(ids[0][7..], ids[1][7..], "the random parts differ");
    }

    #[test]
    fn a_cancelled_task_stays_cancelled_and_an_unknown_one_is_named() {
        let tasks = Tasks::default();
        let cancel = CancellationToken::new();
        let task = tasks.start(cancel.clone()).expect("started");
        tasks.cancel(&task.task_id).expect("cancelled");
        assert!(cancel.is_cancelled());
        tasks.finish(&task.task_id, Ok(CallToolResult::success(Vec::new())));
        let got = tasks.get(&task.task_id).expect("known");
        assert_eq!(got.task.status(), TaskStatus::Cancelled);
        let error = tasks.get("task-0").expect_err("unknown");
        assert!(
            error.message.contains("No task `task-0`"),
            "{}",
            error.message
        );
    }
}

//! Jobs: bash's `background` and `yield`, the job tools, the end notices, the bounds, and
//! that every process of every job ends with its session, checked in /proc and on real
//! ports.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_tools::builtins::bash::{BashArgs, BashConfig, BashDetails, JobArgs, bash};
use pi_tools::builtins::jobs::input::job_input;
use pi_tools::builtins::jobs::kill::job_kill;
use pi_tools::builtins::jobs::list::job_list;
use pi_tools::builtins::jobs::output::job_output;
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{ToolContext, ToolOutput};
use support::procfs::{listening_ports, processes_with, settle};
use tokio_util::sync::CancellationToken;

fn session(dir: &Path) -> Arc<dyn ExecutionEnv> {
    Arc::new(LocalEnv::new(dir))
}

fn ctx(env: &Arc<dyn ExecutionEnv>) -> ToolContext {
    ToolContext::new("call", CancellationToken::new()).with_env(Arc::clone(env))
}

fn background(command: &str) -> BashArgs {
    BashArgs {
        job: JobArgs {
            background: true,
            ..JobArgs::default()
        },
        ..BashArgs::new(command)
    }
}

fn yielding(command: &str, secs: f64) -> BashArgs {
    BashArgs {
        job: JobArgs {
            yield_secs: Some(secs),
            ..JobArgs::default()
        },
        ..BashArgs::new(command)
    }
}

fn text(out: &ToolOutput<BashDetails>) -> String {
    out.content[0].as_text().expect("text").to_owned()
}

async fn run(env: &Arc<dyn ExecutionEnv>, args: BashArgs) -> ToolOutput<BashDetails> {
    bash(&ctx(env), &BashConfig::default(), args)
        .await
        .expect("bash answers")
}

/// Reads job `id`'s output until it holds `needle` (10 s at most); all of it read.
async fn read_until(env: &Arc<dyn ExecutionEnv>, id: u64, needle: &str) -> String {
    let mut seen = String::new();
    for _ in 0..20 {
        let out = job_output(&ctx(env), id, None, 0.5).await.expect("reads");
        seen.push_str(&out);
        if seen.contains(needle) {
            return seen;
        }
    }
    panic!("job {id} never printed {needle:?}; it printed {seen}");
}

#[tokio::test]
async fn a_server_in_the_background_answers_while_later_calls_run_and_is_gone_with_the_session() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let marker = tmp.path().display().to_string();
    let out = run(
        &env,
        background(&format!(
            "exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory {marker}"
        )),
    )
    .await;
    assert_eq!(out.details.as_ref().and_then(|d| d.job), Some(1));
    assert!(
        text(&out).contains("[Job 1 is still running after"),
        "{}",
        text(&out)
    );
    let seen = read_until(&env, 1, "Serving HTTP").await;
    assert!(seen.contains("Job 1 is still running"), "{seen}");
    let pids = processes_with(&marker);
    assert_eq!(pids.len(), 1, "one server: {pids:?}");
    let port = settle_port(pids[0]).await;
    // A later call reaches it, while it runs.
    let later = run(
        &env,
        BashArgs::new(format!(
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/').status)\""
        )),
    )
    .await;
    assert_eq!(text(&later), "200");
    let seen = read_until(&env, 1, "\"GET / HTTP/1.1\" 200").await;
    assert!(seen.contains("GET /"), "{seen}");

    env.end_session();
    assert_eq!(settle(0, || processes_with(&marker).len()).await, 0);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} is closed"
    );
}

async fn settle_port(pid: u32) -> u16 {
    for _ in 0..100 {
        if let Some(port) = listening_ports(pid).first() {
            return *port;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("process {pid} never listened");
}

#[tokio::test]
async fn a_command_that_ends_within_its_yield_is_answered_as_without_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let plain = run(&env, BashArgs::new("echo one; sleep 0.2; echo two")).await;
    let yielded = run(&env, yielding("echo one; sleep 0.2; echo two", 10.0)).await;
    assert_eq!(text(&plain), text(&yielded));
    assert_eq!(plain.details, yielded.details);
    let failed = bash(
        &ctx(&env),
        &BashConfig::default(),
        yielding("echo no; exit 3", 10.0),
    )
    .await
    .expect_err("exit 3 fails");
    assert!(failed.message().ends_with("Command exited with code 3"));
    assert_eq!(
        job_list(&ctx(&env)).await.expect("lists"),
        "No jobs in this session."
    );
}

#[tokio::test]
async fn past_its_yield_a_command_is_handed_back_with_its_output_so_far() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let started = std::time::Instant::now();
    let out = run(&env, yielding("echo first; sleep 30; echo never", 0.5)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let shown = text(&out);
    assert!(
        shown.starts_with("first\n\n[Job 1 is still running after"),
        "{shown}"
    );
    let listed = job_list(&ctx(&env)).await.expect("lists");
    assert!(listed.contains("1\trunning\t"), "{listed}");
    let ended = job_kill(&ctx(&env), 1, "TERM".into(), true)
        .await
        .expect("kills");
    assert!(
        ended.contains("Job 1 was killed by signal 15 (SIGTERM)"),
        "{ended}"
    );
    let listed = job_list(&ctx(&env)).await.expect("lists");
    assert!(listed.contains("1\tkilled by signal 15\t"), "{listed}");
}

#[tokio::test]
async fn input_written_to_a_job_reaches_it_and_its_answer_is_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    run(
        &env,
        background("while read line; do echo \"got $line\"; done; echo bye"),
    )
    .await;
    let answer = job_input(&ctx(&env), 1, "hello\n".into(), false, 2.0)
        .await
        .expect("writes");
    assert!(
        answer.starts_with("got hello\n\n[Job 1 is still running"),
        "{answer}"
    );
    let answer = job_input(&ctx(&env), 1, "last\n".into(), true, 2.0)
        .await
        .expect("writes and closes");
    assert!(
        answer.starts_with("got last\nbye\n\n[Job 1 exited with code 0"),
        "{answer}"
    );
    let refused = job_input(&ctx(&env), 1, "more\n".into(), false, 0.0)
        .await
        .expect_err("an ended job takes no input");
    assert!(refused.message().contains("so it takes no input"));
}

/// The built-in tools with `active` on, working in `env`.
fn toolbox(active: &str, env: Arc<dyn ExecutionEnv>) -> pi_tools::toolbox::Toolbox {
    let registered: Vec<_> = pi_tools::Registry::from_inventory()
        .expect("registry")
        .iter()
        .cloned()
        .collect();
    let toml = format!("[tools]\nactive = [{active}]\n");
    let config =
        pi_tools::config::Config::parse(&toml, "pi-tools.toml", &registered).expect("config");
    pi_tools::toolbox::Toolbox::new(
        registered,
        &config,
        pi_tools::Extensions::new().with_env(env),
    )
}

#[tokio::test]
async fn a_jobs_end_is_told_in_the_next_result_once() {
    use pi_tools::{CollectingSink, ToolCall, ToolEvent, execute_tool_calls};
    let tmp = tempfile::tempdir().expect("tempdir");
    let toolbox = toolbox(r#""bash", "job_list""#, session(tmp.path()));
    let config = toolbox.runner_config();
    let tools = toolbox.tool_set();
    let call = |id: &str, name: &str, args: serde_json::Value| ToolCall::new(id, name, args);
    let sink = CollectingSink::new();
    let cancel = CancellationToken::new();
    let first = [call(
        "a",
        "bash",
        serde_json::json!({"command": "echo working; sleep 0.3; echo finished", "background": true}),
    )];
    let outcome = execute_tool_calls(tools, &first, &config, &cancel, &sink).await;
    assert!(!outcome.messages[0].is_error, "{:?}", outcome.messages[0]);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let next = [call(
        "b",
        "bash",
        serde_json::json!({"command": "echo later"}),
    )];
    let outcome = execute_tool_calls(tools, &next, &config, &cancel, &sink).await;
    let blocks: Vec<&str> = outcome.messages[0]
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert_eq!(blocks[0], "later");
    assert!(
        blocks[1].starts_with(
            "[Job 1 (`echo working; sleep 0.3; echo finished`) exited with code 0 after "
        ),
        "{}",
        blocks[1]
    );
    assert!(
        blocks[1].ends_with("its last lines:]\nworking\nfinished"),
        "{}",
        blocks[1]
    );
    let notices: Vec<ToolEvent> = sink
        .events()
        .into_iter()
        .filter(|e| e.kind() == "notice")
        .collect();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].tool_call_id(), "b");
    let again = [call("c", "job_list", serde_json::json!({}))];
    let outcome = execute_tool_calls(tools, &again, &config, &cancel, &sink).await;
    assert_eq!(outcome.messages[0].content.len(), 1, "told once");
}

#[tokio::test]
async fn bash_offers_jobs_only_with_a_job_tool_active() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let schema = |active: &str| {
        let toolbox = toolbox(active, session(tmp.path()));
        let bash = toolbox
            .active()
            .iter()
            .find(|t| t.spec().name == "bash")
            .cloned();
        bash.expect("bash").spec().parameters["properties"].clone()
    };
    let plain = schema(r#""bash""#);
    assert_eq!(
        plain
            .as_object()
            .expect("properties")
            .keys()
            .collect::<Vec<_>>(),
        ["command", "timeout"]
    );
    let with_jobs = schema(r#""bash", "job_output""#);
    assert_eq!(
        with_jobs
            .as_object()
            .expect("properties")
            .keys()
            .collect::<Vec<_>>(),
        [
            "command",
            "timeout",
            "background",
            "yield",
            "pty",
            "rows",
            "cols"
        ]
    );
}

#[tokio::test]
async fn a_flood_stays_within_the_bound_and_the_reader_is_told_what_was_dropped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    run(
        &env,
        background("head -c 5000000 /dev/zero | tr '\\0' 'x'; echo; echo end"),
    )
    .await;
    let job = env.jobs().expect("jobs").get(1).expect("job 1");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    assert!(job.ended_by(deadline).await, "the flood ends");
    let read = job_output(&ctx(&env), 1, Some(0), 0.0)
        .await
        .expect("reads");
    let total: u64 = 5_000_005;
    let first = total - 1024 * 1024;
    let notice = format!(
        "[3.8MB of output before byte {first} were dropped: a job keeps only the last 1.0MB of its output.]\n"
    );
    assert!(
        read.starts_with(&notice),
        "{}",
        &read[..200.min(read.len())]
    );
    let peek = job.peek(Some(0), usize::MAX);
    assert_eq!(peek.total, total);
    assert_eq!(peek.bytes.len(), 1024 * 1024);
}

#[tokio::test]
async fn a_session_reaches_only_its_own_jobs_and_runs_a_bounded_number() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let one = session(tmp.path());
    let other = session(tmp.path());
    let tag = support::procfs::tag();
    run(&one, background(&format!("sleep {tag}"))).await;
    let refused = job_kill(&ctx(&other), 1, "KILL".into(), true)
        .await
        .expect_err("not this session's");
    assert_eq!(
        refused.message(),
        "There is no job 1 in this session. This session has no jobs. Use an id that job_list shows (a job of another session cannot be reached)."
    );
    assert_eq!(settle(1, || support::procfs::alive(&tag).len()).await, 1);
    for _ in 1..16 {
        run(&one, background(&format!("sleep {tag}"))).await;
    }
    let refused = bash(&ctx(&one), &BashConfig::default(), background("true"))
        .await
        .expect_err("past the bound");
    assert_eq!(
        refused.message(),
        "This session already runs 16 jobs, the most it may. End one with job_kill (job_list shows them), or wait for one to end, then start this command again."
    );
    assert_eq!(settle(16, || support::procfs::alive(&tag).len()).await, 16);
    one.end_session();
    assert_eq!(settle(0, || support::procfs::alive(&tag).len()).await, 0);
}

fn on_pty(command: &str, rows: u16, cols: u16) -> BashArgs {
    BashArgs {
        job: JobArgs {
            pty: true,
            rows: Some(rows),
            cols: Some(cols),
            ..JobArgs::default()
        },
        ..BashArgs::new(command)
    }
}

#[tokio::test]
async fn a_command_on_a_pty_has_a_terminal_of_its_size() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let out = run(
        &env,
        on_pty(
            "test -t 0 && test -t 1 && test -t 2 && echo terminal; stty size",
            10,
            40,
        ),
    )
    .await;
    assert_eq!(text(&out), "terminal\n10 40");
}

#[tokio::test]
async fn python_driven_through_its_terminal_gives_its_prompt_and_results() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let out = run(&env, on_pty("python3 -i -q", 24, 80)).await;
    let shown = text(&out);
    assert!(
        shown.starts_with(">>> \n\n[Job 1 is still running after"),
        "{shown:?}"
    );
    let answer = job_input(&ctx(&env), 1, "print(6 * 7)\n".into(), false, 3.0)
        .await
        .expect("writes");
    assert!(
        answer.starts_with("print(6 * 7)\n42\n>>> \n\n[Job 1 is still running"),
        "{answer:?}"
    );
    let answer = job_input(&ctx(&env), 1, "x = 'a' * 3\nx\n".into(), false, 3.0)
        .await
        .expect("writes");
    assert!(answer.contains("'aaa'\n>>> "), "{answer:?}");
    let mut answer = job_input(&ctx(&env), 1, "\u{4}".into(), false, 3.0)
        .await
        .expect("Ctrl-D");
    for _ in 0..10 {
        if answer.contains("[Job 1 exited") {
            break;
        }
        answer = job_output(&ctx(&env), 1, None, 1.0).await.expect("reads");
    }
    assert!(answer.contains("[Job 1 exited with code 0"), "{answer:?}");
}

#[tokio::test]
async fn a_pager_shows_one_screen_and_quits_on_q() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let out = run(&env, on_pty("seq 1 100 | LESS= less", 6, 40)).await;
    let shown = text(&out);
    assert!(shown.starts_with("1\n2\n3\n4\n5\n"), "{shown:?}");
    assert!(!shown.contains("\n6\n"), "one screen: {shown:?}");
    let answer = job_input(&ctx(&env), 1, " ".into(), false, 2.0)
        .await
        .expect("next page");
    assert!(answer.contains("10"), "{answer:?}");
    let answer = job_input(&ctx(&env), 1, "q".into(), false, 3.0)
        .await
        .expect("quits");
    assert!(answer.contains("[Job 1 exited with code 0"), "{answer:?}");
}

#[tokio::test]
async fn a_progress_bar_on_a_pty_reads_as_its_last_state() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let out = run(
        &env,
        on_pty(
            "for i in 1 2 3; do printf '\\r\\033[32m%d%%\\033[0m' $((i * 33)); sleep 0.1; done; echo; echo done",
            24,
            80,
        ),
    )
    .await;
    assert_eq!(text(&out), "99%\ndone");
}

#[tokio::test]
async fn a_job_runs_in_its_calls_sandbox_on_pipes_and_on_a_pty() {
    let fx = support::sandbox::Fixture::plain();
    let env = fx.workspace_write();
    let target = fx.outside.join("target.txt").display().to_string();
    let attempt = format!("echo planted > {target}; echo inside > here.txt; echo tried");
    run(&env, background(&format!("sleep 0.2; {attempt}"))).await;
    let seen = read_until(&env, 1, "tried").await;
    assert!(seen.contains("Permission denied"), "{seen}");
    let out = run(&env, on_pty(&attempt, 24, 80)).await;
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    assert_eq!(
        support::sandbox::read(&fx.outside.join("target.txt")),
        "original\n"
    );
    assert_eq!(support::sandbox::read(&fx.ws.join("here.txt")), "inside\n");
}

#[tokio::test]
async fn the_configured_yield_hands_back_a_command_that_forgot_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let config = BashConfig {
        yield_secs: Some(1),
        ..BashConfig::default()
    };
    let quick = bash(&ctx(&env), &config, BashArgs::new("echo quick"))
        .await
        .expect("runs");
    assert_eq!(text(&quick), "quick");
    let started = std::time::Instant::now();
    let slow = bash(&ctx(&env), &config, BashArgs::new("echo slow; sleep 30"))
        .await
        .expect("handed back");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        text(&slow).starts_with("slow\n\n[Job 1 is still running after 1.0s."),
        "{}",
        text(&slow)
    );
    env.end_session();
}

#[tokio::test]
async fn a_yield_past_the_calls_time_limit_hands_the_job_back_before_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = session(tmp.path());
    let ctx = ctx(&env).with_time_limit(Some(Duration::from_secs(2)));
    let started = std::time::Instant::now();
    let out = bash(&ctx, &BashConfig::default(), yielding("sleep 30", 600.0))
        .await
        .expect("handed back");
    assert!(started.elapsed() < Duration::from_millis(1900));
    assert!(
        text(&out).contains("[Job 1 is still running after 1.0s."),
        "{}",
        text(&out)
    );
    env.end_session();
}

//! Jobs over SSH against a real sshd, with the remote server and without it: a job runs on
//! the remote side, its output is read, input is refused with the reason (the SSH
//! environment passes none), and its processes end with the session.
#![cfg(all(feature = "ssh", feature = "cli"))]

use support::procfs::{alive, settle, tag};
use support::ssh as ssh_support;

use std::sync::Arc;

use pi_tools::ToolContext;
use pi_tools::builtins::bash::{BashArgs, BashConfig, JobArgs, bash};
use pi_tools::builtins::jobs::input::job_input;
use pi_tools::builtins::jobs::output::job_output;
use pi_tools::env::remote::SshEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use ssh_support::Sshd;
use tokio_util::sync::CancellationToken;

async fn jobs_end_with_the_session(env: Arc<dyn ExecutionEnv>) {
    let ctx = ToolContext::new("call", CancellationToken::new()).with_env(Arc::clone(&env));
    let seconds = tag();
    let args = BashArgs {
        job: JobArgs {
            background: true,
            ..JobArgs::default()
        },
        ..BashArgs::new(format!("echo started; sleep {seconds}; echo never"))
    };
    let out = bash(&ctx, &BashConfig::default(), args)
        .await
        .expect("starts");
    let answered: String = out.content.iter().filter_map(|b| b.as_text()).collect();
    assert_eq!(out.details.and_then(|d| d.job), Some(1));
    assert_eq!(settle(1, || alive(&seconds).len()).await, 1);
    if answered.contains("started") {
        // Printed before the command was handed back as a job (a busy machine): the call's
        // answer gave it as the output so far, and a read has nothing new.
        let read = job_output(&ctx, 1, None, 0.0).await.expect("reads");
        assert!(
            read.starts_with("(no new output)\n\n[Job 1 is still running"),
            "{read}"
        );
    } else {
        let mut seen = String::new();
        for _ in 0..10 {
            seen.push_str(&job_output(&ctx, 1, None, 1.0).await.expect("reads"));
            if seen.contains("started") {
                break;
            }
        }
        assert!(
            seen.starts_with("started\n\n[Job 1 is still running"),
            "{seen}"
        );
    }
    let refused = job_input(&ctx, 1, "x\n".into(), false, 0.0)
        .await
        .expect_err("no input over SSH");
    assert!(
        refused
            .message()
            .starts_with("Job 1 runs in an environment that cannot pass input"),
        "{}",
        refused.message()
    );
    env.end_session();
    assert_eq!(settle(0, || alive(&seconds).len()).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_over_ssh_ends_with_its_session_without_the_remote_server() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env = SshEnv::connect(sshd.target(), dir.path())
        .await
        .expect("connect");
    assert!(!env.uses_remote_server().await);
    jobs_end_with_the_session(Arc::new(env)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_over_ssh_ends_with_its_session_through_the_remote_server() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let target = sshd
        .target()
        .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()));
    let env = SshEnv::connect(target, dir.path()).await.expect("connect");
    assert!(env.uses_remote_server().await);
    jobs_end_with_the_session(Arc::new(env.session())).await;
}

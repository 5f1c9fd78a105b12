//! `[policy]` enforced through the runner: a denied call ends in the prepare phase as an
//! error result naming the rule, and the tool never starts; `ask` goes to the approver, and
//! without one it is denied.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_tools::config::Config;
use pi_tools::core::BoxFuture;
use pi_tools::env::WithEnv;
use pi_tools::policy::{Approval, ApprovalRequest, Approver};
use pi_tools::session::{Session, WithSession};
use pi_tools::toolbox::Toolbox;
use pi_tools::{BatchOutcome, CollectingSink, Extensions, ToolCall, execute_tool_calls};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const POLICY: &str = r#"
[tools]
active = ["bash", "write"]

[sandbox]
mode = "off"

[policy]
default = "allow"

[[policy.rule]]
tool = "bash"
command = ["touch", "denied"]
decision = "deny"
reason = "Nothing may be called denied."

[[policy.rule]]
tool = "bash"
command = ["touch", "asked"]
decision = "ask"

[[policy.rule]]
tool = "write"
path = "secrets/**"
decision = "deny"
"#;

fn toolbox(cwd: &Path) -> Toolbox {
    let registry = pi_tools::Registry::from_inventory().expect("the built-in tools register");
    let registered: Vec<_> = registry.iter().cloned().collect();
    let config = Config::parse(POLICY, "pi-tools.toml", &registered).expect("valid");
    let env = config.local_env(cwd).expect("the environment builds");
    Toolbox::new(
        registered,
        &config,
        Extensions::new().with_env(Arc::new(env)),
    )
}

async fn run(toolbox: &Toolbox, calls: &[ToolCall]) -> BatchOutcome {
    execute_tool_calls(
        toolbox.tool_set(),
        calls,
        &toolbox.runner_config(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await
}

fn bash(id: &str, command: &str) -> ToolCall {
    ToolCall::new(id, "bash", json!({ "command": command }))
}

fn text(outcome: &BatchOutcome, index: usize) -> String {
    outcome.messages[index]
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect()
}

#[tokio::test]
async fn a_denied_call_never_starts_and_names_its_rule() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let toolbox = toolbox(dir.path());
    let outcome = run(
        &toolbox,
        &[
            bash("1", "touch allowed"),
            bash("2", "touch ok && sh -c 'touch denied'"),
            ToolCall::new("3", "write", json!({ "path": "secrets/k", "content": "x" })),
        ],
    )
    .await;
    assert!(!outcome.messages[0].is_error);
    assert!(dir.path().join("allowed").exists());
    assert!(outcome.messages[1].is_error);
    assert!(
        !dir.path().join("ok").exists(),
        "no part of a denied command runs"
    );
    assert!(!dir.path().join("denied").exists());
    assert_eq!(
        text(&outcome, 1),
        "The policy denies this call, so nothing ran: `touch denied` is covered by the policy \
         rule at pi-tools.toml:11:1 (tool = bash, command = touch denied). Its reason: Nothing may \
         be called denied. Do not retry it in another form: do what the policy allows instead, \
         or ask the user to do this step themselves."
    );
    assert!(outcome.messages[2].is_error);
    assert!(!dir.path().join("secrets").exists());
    assert_eq!(
        text(&outcome, 2),
        "The policy denies this call, so nothing ran: this call is covered by the policy rule \
         at pi-tools.toml:22:1 (tool = write, path = secrets/**). Do not retry it in another form: \
         do what the policy allows instead, or ask the user to do this step themselves."
    );
}

/// A write through `link/../x`, `link` pointing into `secrets/`, lands in `secrets/`: the
/// rule over `secrets/**` refuses it, and nothing is written there.
#[tokio::test]
async fn a_write_climbing_out_of_a_symlink_into_a_denied_path_never_starts() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join("secrets/sub")).expect("mkdir");
    std::os::unix::fs::symlink("secrets/sub", dir.path().join("link")).expect("symlink");
    let outcome = run(
        &toolbox(dir.path()),
        &[
            ToolCall::new(
                "1",
                "write",
                json!({ "path": "link/../x", "content": "planted" }),
            ),
            bash("2", "echo planted > link/../y"),
        ],
    )
    .await;
    assert!(outcome.messages[0].is_error, "{}", text(&outcome, 0));
    assert!(text(&outcome, 0).starts_with("The policy denies this call, so nothing ran"));
    assert!(!dir.path().join("secrets/x").exists());
    assert!(outcome.messages[1].is_error, "{}", text(&outcome, 1));
    assert!(!dir.path().join("secrets/y").exists());
}

#[tokio::test]
async fn ask_without_an_approver_is_denied_and_says_so() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let outcome = run(&toolbox(dir.path()), &[bash("1", "touch asked")]).await;
    assert!(outcome.messages[0].is_error);
    assert!(!dir.path().join("asked").exists());
    assert_eq!(
        text(&outcome, 0),
        "This call needs a person's approval: `touch asked` is covered by the policy rule at \
         pi-tools.toml:17:1 (tool = bash, command = touch asked). No one can be asked here, so \
         the call was denied and nothing ran. Do not retry it in another form: do what the \
         policy allows instead, or ask the user to do this step themselves."
    );
}

/// Answers from a script, and records what it was asked.
struct Scripted {
    answers: Mutex<Vec<Approval>>,
    asked: Mutex<Vec<String>>,
}

impl Approver for Scripted {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval> {
        let position = request.rule.map(|r| r.position).unwrap_or_default();
        self.asked.lock().expect("lock").push(format!(
            "{} {} {position}",
            request.tool, request.args["command"]
        ));
        let answer = self.answers.lock().expect("lock").remove(0);
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn the_approver_allows_once_for_the_session_or_denies_with_a_message() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let approver = Arc::new(Scripted {
        answers: Mutex::new(vec![
            Approval::Deny(Some("not today".to_owned())),
            Approval::AllowOnce,
            Approval::AllowForSession,
        ]),
        asked: Mutex::new(Vec::new()),
    });
    let toolbox = toolbox(dir.path()).with_approver(approver.clone());
    let first = run(&toolbox, &[bash("1", "touch asked")]).await;
    assert!(first.messages[0].is_error);
    assert!(
        text(&first, 0).contains("The person asked declined, so nothing ran. They said: not today")
    );
    assert!(!dir.path().join("asked").exists());
    let second = run(&toolbox, &[bash("2", "touch asked a1")]).await;
    assert!(!second.messages[0].is_error);
    let third = run(&toolbox, &[bash("3", "touch asked a2")]).await;
    assert!(!third.messages[0].is_error);
    // Allowed for the session: the fourth call is not asked about.
    let fourth = run(&toolbox, &[bash("4", "touch asked a3")]).await;
    assert!(!fourth.messages[0].is_error);
    assert!(dir.path().join("a3").exists());
    assert_eq!(
        *approver.asked.lock().expect("lock"),
        [
            "bash \"touch asked\" pi-tools.toml:17:1",
            "bash \"touch asked a1\" pi-tools.toml:17:1",
            "bash \"touch asked a2\" pi-tools.toml:17:1",
        ]
    );
}

/// A server of many clients makes each a session of its own: its policy asks that
/// client's person, what they allow for the session stays in that session, and the session
/// ends once.
#[tokio::test]
async fn each_client_session_asks_its_own_person_and_keeps_what_they_allow() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scripted = |answers: Vec<Approval>| {
        Arc::new(Scripted {
            answers: Mutex::new(answers),
            asked: Mutex::new(Vec::new()),
        })
    };
    let fallback = scripted(vec![Approval::AllowOnce]);
    let first_person = scripted(vec![Approval::AllowForSession]);
    let second_person = scripted(vec![Approval::Deny(Some("no".to_owned()))]);
    let toolbox = toolbox(dir.path()).with_approver(fallback.clone());
    let base = toolbox.session();
    let first = Arc::new(base.for_client(base.env().clone(), Some(first_person.clone())));
    let second = Arc::new(base.for_client(base.env().clone(), Some(second_person.clone())));
    let in_session = async |session: &Arc<Session>, call: ToolCall| {
        let config = toolbox.runner_config().with_session(session.clone());
        execute_tool_calls(
            toolbox.tool_set(),
            &[call],
            &config,
            &CancellationToken::new(),
            &CollectingSink::new(),
        )
        .await
    };
    let one = in_session(&first, bash("1", "touch asked f1")).await;
    let two = in_session(&first, bash("2", "touch asked f2")).await;
    let three = in_session(&second, bash("3", "touch asked s1")).await;
    let four = run(&toolbox, &[bash("4", "touch asked t1")]).await;
    assert!(!one.messages[0].is_error && !two.messages[0].is_error);
    assert!(three.messages[0].is_error, "{}", text(&three, 0));
    assert!(!four.messages[0].is_error);
    let asked = |person: &Scripted| person.asked.lock().expect("lock").clone();
    assert_eq!(
        asked(&first_person),
        ["bash \"touch asked f1\" pi-tools.toml:17:1"]
    );
    assert_eq!(
        asked(&second_person),
        ["bash \"touch asked s1\" pi-tools.toml:17:1"]
    );
    assert_eq!(
        asked(&fallback),
        ["bash \"touch asked t1\" pi-tools.toml:17:1"]
    );
    assert!(dir.path().join("f2").exists() && !dir.path().join("s1").exists());

    assert!(first.end(), "the first end ends the session");
    assert!(!first.end(), "a session ends once");
    assert!(first.is_ended() && first.cancel().is_cancelled());
    assert!(!second.is_ended() && !base.is_ended());
}

/// The slips of the last campaign, run: each would have left its mark (a file called
/// `denied`, a write under `secrets/`), and none may now start.
#[tokio::test]
async fn code_in_traps_expansions_xargs_and_writes_after_cd_or_through_links_never_runs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("secrets")).expect("mkdir");
    std::fs::write(dir.path().join("secrets/key"), "KEY").expect("write");
    let commands = [
        "trap 'touch denied' EXIT",
        "trap 'touch denied' DEBUG; true",
        "echo ${x:-$(touch denied)}",
        "echo denied | xargs -I{} touch {}",
        "cd secrets && echo x > key",
        "pushd secrets; echo x > key",
        "ln -s secrets/key lnk; echo x > lnk",
        "ln secrets/key hard",
    ];
    let calls: Vec<ToolCall> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| bash(&i.to_string(), command))
        .collect();
    let outcome = run(&toolbox(dir.path()), &calls).await;
    for (i, command) in commands.iter().enumerate() {
        assert!(
            outcome.messages[i].is_error,
            "{command}: {}",
            text(&outcome, i)
        );
    }
    assert!(!dir.path().join("denied").exists());
    assert!(!dir.path().join("lnk").exists());
    assert!(!dir.path().join("hard").exists());
    // A hard link made by other means, then written through in a later call.
    std::fs::hard_link(dir.path().join("secrets/key"), dir.path().join("other")).expect("link");
    let outcome = run(&toolbox(dir.path()), &[bash("9", "echo x > other")]).await;
    assert!(outcome.messages[0].is_error, "{}", text(&outcome, 0));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("secrets/key")).expect("read"),
        "KEY"
    );
}

//! `pi-tools policy check` and the policy line of `pi-tools check`.

use super::{pi_tools, scratch_dir, stderr, stdout};

const POLICY: &str = r#"[policy]
default = "allow"

[[policy.rule]]
tool = "bash"
command = ["git", ["push", "fetch"]]
decision = "deny"
reason = "A person pushes and fetches."

[[policy.rule]]
tool = ["write", "edit"]
path = ["**/.env", "secrets/**"]
decision = "deny"
"#;

#[test]
fn policy_check_prints_the_decision_its_rule_and_each_command() {
    let dir = scratch_dir("policy_check");
    let file = dir.join("pi-tools.toml");
    std::fs::write(&file, POLICY).expect("the configuration is written");
    let origin = file.display();
    let output = pi_tools()
        .arg("--config")
        .arg(&file)
        .args(["policy", "check", "--cwd"])
        .arg(&dir)
        .args([
            "bash",
            "git status && sh -c 'git push' > .env; $(echo rm) x",
        ])
        .output()
        .expect("pi-tools runs");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        format!(
            "decision: deny\n\
             rule: {origin}:4:1 (tool = bash, command = git push|fetch)\n\
             reason: A person pushes and fetches.\n\
             commands:\n  \
             allow git status  [default]\n  \
             deny  git push  [{origin}:4:1]\n  \
             allow echo rm  [default]\n  \
             ask   … x  [unreadable] (unreadable: its command name is computed when it runs (a substitution or expansion))\n  \
             deny  > .env  [{origin}:10:1] (a write, judged by the write tool's path rules)\n"
        )
    );
    let output = pi_tools()
        .arg("--config")
        .arg(&file)
        .args(["policy", "check", "--cwd"])
        .arg(&dir)
        .args(["edit", r#"{"path": "src/../secrets/k", "edits": []}"#])
        .output()
        .expect("pi-tools runs");
    assert_eq!(
        stdout(&output),
        format!(
            "decision: deny\nrule: {origin}:10:1 (tool = write|edit, path = **/.env|secrets/**)\n"
        )
    );
    let output = pi_tools()
        .arg("--config")
        .arg(&file)
        .arg("check")
        .output()
        .expect("pi-tools runs");
    assert!(
        stdout(&output).contains("\npolicy: default allow, 2 rules (2 deny, 0 ask, 0 allow)\n"),
        "{}",
        stdout(&output)
    );
}

/// The slips of the last campaign, as `policy check` decides them: code in a trap and in a
/// parameter's default, input completing a prefix, writes after `cd` and through a link.
#[test]
fn policy_check_decides_traps_expansions_xargs_cd_and_links() {
    let dir = scratch_dir("policy_check_slips");
    let file = dir.join("pi-tools.toml");
    std::fs::write(&file, POLICY).expect("the configuration is written");
    let cases = [
        ("trap 'git push' EXIT", "deny"),
        ("echo ${x:-$(git push)}", "deny"),
        ("echo push | xargs -I{} git {}", "ask"),
        ("cd secrets && echo x > key", "deny"),
        ("pushd secrets; echo x > key", "deny"),
        ("ln -s .env lnk; echo x > lnk", "deny"),
        ("ln .env hard", "deny"),
    ];
    for (command, want) in cases {
        let output = pi_tools()
            .arg("--config")
            .arg(&file)
            .args(["policy", "check", "--cwd"])
            .arg(&dir)
            .args(["bash", command])
            .output()
            .expect("pi-tools runs");
        let shown = stdout(&output);
        assert!(
            shown.starts_with(&format!("decision: {want}\n")),
            "{command}: {shown}"
        );
    }
}

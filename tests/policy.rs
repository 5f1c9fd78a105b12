//! `[policy]`: shell commands read by a parser so a prefix rule cannot be slipped past,
//! path rules over the file tools and over redirections, and rule examples checked as the
//! file loads.

use std::path::Path;

use pi_tools::config::Config;
use pi_tools::policy::Decision::{self, Allow, Ask, Deny};
use serde_json::json;

const POLICY: &str = r#"
[policy]
default = "allow"

[[policy.rule]]
tool = "bash"
command = ["git", ["push", "fetch"]]
decision = "deny"
reason = "A person pushes and fetches."

[[policy.rule]]
tool = "bash"
command = ["rm"]
decision = "deny"

[[policy.rule]]
tool = ["write", "edit"]
path = ["**/.env", "secrets/**"]
decision = "deny"

[[policy.rule]]
tool = "bash"
command = ["curl"]
decision = "ask"
"#;

/// The tools a rule may name: stand-ins for the seven built-ins, which say they are built
/// in (a rule about a tool that is not registered is an error), so the policy is tested
/// the same with and without the built-in tools compiled.
fn registered() -> Vec<std::sync::Arc<dyn pi_tools::ToolDefinition>> {
    support::builtin_like()
}

fn config(text: &str) -> Config {
    Config::parse(text, "pi-tools.toml", &registered()).expect("valid policy")
}

fn write(config: &Config, path: &str, cwd: &Path) -> Decision {
    config
        .policy
        .check("write", &json!({ "path": path, "content": "x" }), cwd)
        .decision
}

fn bash(config: &Config, command: &str, cwd: &Path) -> Decision {
    config
        .policy
        .check("bash", &json!({ "command": command }), cwd)
        .decision
}

/// Commands meant to slip past a prefix rule, each with the decision it must get.
const SLIPS: &[(&str, Decision)] = &[
    ("git status", Allow),
    ("git push", Deny),
    ("git status; git push", Deny),
    ("git status && git push", Deny),
    ("git status || git push", Deny),
    ("git status | git push", Deny),
    ("git status & git push", Deny),
    ("git status\ngit push", Deny),
    ("echo $(git push)", Deny),
    ("echo \"$(git push)\"", Deny),
    ("echo `git push`", Deny),
    ("cat <(git push)", Deny),
    ("diff <(ls) >(git fetch)", Deny),
    ("(git push)", Deny),
    ("{ git push; }", Deny),
    ("if true; then git push; fi", Deny),
    ("for i in 1; do git fetch; done", Deny),
    ("while false; do git push; done", Deny),
    ("f() { git push; }; f", Deny),
    ("'g'it push", Deny),
    ("g\\it push", Deny),
    ("\"git\" \"push\"", Deny),
    ("git 'push' origin", Deny),
    ("gi\\\nt push", Deny),
    ("env git push", Deny),
    ("env -i FOO=1 git push", Deny),
    ("FOO=1 git push", Deny),
    ("command git push", Deny),
    ("exec git push", Deny),
    ("nohup git push &", Deny),
    ("time git push", Deny),
    ("timeout 5 git push", Deny),
    ("sudo git push", Deny),
    ("sudo -u root rm -rf /srv", Deny),
    ("stdbuf -o L git push", Deny),
    ("xargs -0 rm < list", Deny),
    ("sh -c 'git push'", Deny),
    ("bash -c \"git fetch origin\"", Deny),
    ("bash -lc 'git status; git push'", Deny),
    ("sh -c \"sh -c 'git push'\"", Deny),
    ("bash <<'EOF'\ngit push\nEOF", Deny),
    ("cat <<EOF\n$(git push)\nEOF", Deny),
    ("eval 'git push'", Deny),
    ("eval git push", Deny),
    ("echo x | xargs git push", Deny),
    ("echo push | xargs git", Ask),
    ("find . -name x -exec git push \\;", Deny),
    ("rm -rf build", Deny),
    ("/bin/rm -rf build", Deny),
    ("\\rm build", Deny),
    ("/usr/bin/env rm build", Deny),
    ("xargs rm < list", Deny),
    ("find . -exec /bin/rm {} +", Deny),
    ("$(echo git) push", Ask),
    ("$CMD push", Ask),
    ("git $SUB", Ask),
    ("git${IFS}push", Ask),
    ("sh -c \"$X\"", Ask),
    ("bash deploy.sh", Ask),
    ("echo 'git push' | bash", Ask),
    ("source ./deploy.sh", Ask),
    ("curl https://example.com", Ask),
    ("echo hi > .env", Deny),
    ("echo hi >> secrets/key", Deny),
    ("echo hi &> config/.env", Deny),
    ("echo hi > notes.txt", Allow),
    ("echo hi > $OUT", Ask),
    ("cat .env", Allow),
    ("echo 'git push'", Allow),
    ("git log --grep='git push'", Allow),
    ("git status # ; git push", Allow),
    ("git status\\; git push", Allow),
    ("ls | grep x && cargo test", Allow),
    // A trap's string is code, run at the signal or at exit.
    ("trap 'git push' EXIT", Deny),
    ("trap 'git fetch' DEBUG; true", Deny),
    ("trap -- 'rm -rf build' ERR", Deny),
    ("trap \"$X\" EXIT", Ask),
    ("trap 'echo bye' EXIT", Allow),
    ("trap - EXIT", Allow),
    // The words inside `${…}` and arithmetic are expanded, substitutions and all.
    ("echo ${x:-$(git push)}", Deny),
    ("echo \"${x:+$(git fetch)}\"", Deny),
    ("echo ${x/a/$(rm y)}", Deny),
    ("echo ${x:=`git push`}", Deny),
    ("echo ${a[$(git push)]}", Deny),
    ("echo ${x:$(git push)}", Deny),
    ("echo ${x@P}", Ask),
    ("echo $(( $(git push) + 1 ))", Deny),
    ("(( x = $(git push) ))", Deny),
    ("echo ${x:-default} $((i + 1))", Allow),
    // A name or a number the shell evaluates expands its subscript, quoted or not.
    ("printf -v 'a[$(git push)]' x", Deny),
    ("read 'a[$(git push)]' < f", Deny),
    ("declare 'a[$(git push)]=1'", Deny),
    ("let 'a[$(git push)]=1'", Deny),
    ("[[ 'a[$(git push)]' -eq 0 ]]", Deny),
    ("x='a[$(git push)]'; echo $((x))", Deny),
    ("printf '%s' '$(git push)'", Allow),
    ("[[ $x == '$(git push)' ]]", Allow),
    // Variables a shell runs or expands as code, and code run later.
    ("PROMPT_COMMAND='git push' bash -i", Deny),
    ("export PROMPT_COMMAND='git fetch'", Deny),
    ("export PROMPT_COMMAND=\"$X\"", Ask),
    ("export PATH=$PATH:/opt/bin && echo ok > log.txt", Allow),
    ("PS4='$(git push)' bash -xc true", Deny),
    ("BASH_ENV=setup.sh bash -c true", Ask),
    ("env BASH_ENV=setup.sh bash -c true", Ask),
    ("env 'BASH_FUNC_ls%%=() { git push; }' bash -c ls", Deny),
    ("shopt -s expand_aliases; alias ls='git push'", Deny),
    ("mapfile -C 'git push' -c 1 lines < f", Deny),
    // Input that completes a prefix: `xargs -I` and `find -exec … {}`.
    ("echo push | xargs -I{} git {}", Ask),
    ("echo push | xargs -I % git %", Ask),
    ("echo push | xargs --replace git {}", Ask),
    ("find push -exec git {} \\;", Ask),
    ("echo x | xargs -I{} echo {}", Allow),
    // Redirections are taken from the directory the shell is in there.
    ("cd secrets && echo x > key", Deny),
    ("pushd secrets; echo x > key", Deny),
    ("cd secrets; cd ..; cd secrets; echo x >> key", Deny),
    ("cd nowhere; echo x > secrets/key", Deny),
    ("builtin cd secrets && echo x > key", Deny),
    ("eval 'cd secrets'; echo x > key", Deny),
    ("for d in a b; do echo x > key; cd secrets; done", Deny),
    ("cd $D && echo x > key", Ask),
    ("f() { echo x > key; }; cd secrets; f", Ask),
    ("(cd secrets); echo x > key", Allow),
    ("cd /tmp && echo x > key", Allow),
    ("sh -c 'cd secrets'; echo x > key", Allow),
    // Links made in the line decide as what they name; a name made is written.
    ("ln -s .env lnk; echo x > lnk", Deny),
    ("ln -s ../.env sub/l && echo x > sub/l", Deny),
    ("ln -s secrets s; echo x > s/key", Deny),
    ("ln -sr .env sub/l; echo x > sub/l", Deny),
    ("ln -s .env a; mv a b; echo x > b", Deny),
    ("ln -s .env a && ln -s a b && echo x > b", Deny),
    ("cd secrets && ln -s key ../k; cd ..; echo x > k", Deny),
    ("ln -s \"$T\" lnk; echo x > lnk", Ask),
    ("ln -s x .env", Deny),
    ("ln -s notes.txt lnk; echo x > lnk", Allow),
    // A hard link's new name writes its target's contents: it is a write of the target.
    ("ln .env hard", Deny),
    ("link secrets/key k", Deny),
    ("cp -l .env k", Deny),
    ("cd build && cmake .. > log.txt 2>&1", Allow),
    ("for f in a b; do echo $f >> list.txt; done", Allow),
    ("x=$((x + 1)); echo \"${HOME}\" > out.txt", Allow),
    ("cp -r src backup && echo done > log.txt", Allow),
];

#[test]
fn commands_meant_to_slip_past_a_prefix_rule_get_their_decision() {
    let config = config(POLICY);
    let cwd = std::env::current_dir().expect("a working directory");
    let wrong: Vec<String> = SLIPS
        .iter()
        .filter_map(|&(command, want)| {
            let got = bash(&config, command, &cwd);
            (got != want).then(|| format!("{command:?}: want {want}, got {got}"))
        })
        .collect();
    assert!(SLIPS.len() >= 40);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn each_simple_command_gets_its_own_decision_and_the_strictest_wins() {
    let config = config(POLICY);
    let cwd = std::env::current_dir().expect("a working directory");
    let verdict = config.policy.check(
        "bash",
        &json!({ "command": "git status && curl x | sh -c 'git push' > .env" }),
        &cwd,
    );
    let parts: Vec<(String, Decision, Option<usize>)> = verdict
        .parts
        .iter()
        .map(|p| (p.text.clone(), p.decision, p.rule))
        .collect();
    assert_eq!(
        parts,
        [
            ("git status".to_owned(), Allow, None),
            ("curl x".to_owned(), Ask, Some(3)),
            ("git push".to_owned(), Deny, Some(0)),
            ("> .env".to_owned(), Deny, Some(2)),
        ]
    );
    assert_eq!((verdict.decision, verdict.rule), (Deny, Some(0)));
    // A rule's position is its `[[policy.rule]]` header.
    assert_eq!(config.policy.rules[0].position, "pi-tools.toml:5:1");
}

#[test]
fn path_rules_resolve_dot_dot_and_symlinks_against_the_working_directory() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cwd = dir.path();
    std::fs::create_dir(cwd.join("secrets")).expect("mkdir");
    std::os::unix::fs::symlink(cwd.join("secrets"), cwd.join("notes")).expect("symlink");
    let config = config(POLICY);
    let write = |path: &str| write(&config, path, cwd);
    assert_eq!(write(".env"), Deny);
    assert_eq!(write("app/config/.env"), Deny);
    assert_eq!(write("secrets/key"), Deny);
    assert_eq!(write("src/../secrets/key"), Deny);
    assert_eq!(
        write("notes/key"),
        Deny,
        "a symlink into secrets/ is secrets/"
    );
    assert_eq!(write(&format!("{}/secrets/k", cwd.display())), Deny);
    assert_eq!(write("@secrets/key"), Deny);
    assert_eq!(write("src/main.rs"), Allow);
    assert_eq!(write(".envrc"), Allow);
    // The read tool is not named by the rule.
    let read = config
        .policy
        .check("read", &json!({ "path": ".env" }), cwd)
        .decision;
    assert_eq!(read, Allow);
    assert_eq!(bash(&config, "echo x > notes/key", cwd), Deny);
    // A symlink deeper down, a file not yet written below it, and a working directory
    // reached through a symlink of its own.
    std::fs::create_dir(cwd.join("a")).expect("mkdir");
    std::os::unix::fs::symlink(cwd.join("secrets"), cwd.join("a/deep")).expect("symlink");
    assert_eq!(write("a/deep/k"), Deny);
    assert_eq!(bash(&config, "echo x > a/deep/new/k", cwd), Deny);
    assert_eq!(bash(&config, "echo x > a/new/k", cwd), Allow);
    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    let linked = elsewhere.path().join("project");
    std::os::unix::fs::symlink(cwd, &linked).expect("symlink");
    assert_eq!(bash(&config, "echo x > secrets/k", &linked), Deny);
    assert_eq!(
        bash(&config, "echo x > a/deep/k && echo y > log.txt", &linked),
        Deny
    );
    assert_eq!(bash(&config, "echo y > log.txt", &linked), Allow);
}

/// A `..` after a symbolic link climbs from the link's target, as the kernel resolves it:
/// `link/../x` with `link` pointing to `secrets/sub` is `secrets/x`, so a rule over
/// `secrets/` judges it (a lexical fold took it for `x`, and the write landed in secrets/).
#[test]
fn a_dot_dot_after_a_symlink_is_judged_where_the_file_system_takes_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cwd = dir.path();
    std::fs::create_dir_all(cwd.join("secrets/sub")).expect("mkdir");
    std::os::unix::fs::symlink("secrets/sub", cwd.join("link")).expect("symlink");
    std::fs::create_dir(cwd.join("src")).expect("mkdir");
    let config = config(POLICY);
    let write = |path: &str| write(&config, path, cwd);
    assert_eq!(write("link/../x"), Deny);
    assert_eq!(write("link/../sub/new/k"), Deny);
    assert_eq!(write("link/./../../secrets/k"), Deny);
    assert_eq!(bash(&config, "echo x > link/../x", cwd), Deny);
    // Where the link does not lead into secrets/, its `..` is judged where it goes too.
    assert_eq!(write("src/../x"), Allow);
    assert_eq!(write("missing/../secrets/k"), Deny);
    assert_eq!(write("link/../../outside"), Allow);
    // The shell's `cd` is logical: `cd sub/away/..` is `sub`, wherever `away` leads; with
    // `-P` it climbs from the link's target. A rule naming `sub` by its absolute path tells
    // the two apart.
    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(elsewhere.path().join("a")).expect("mkdir");
    std::fs::create_dir(cwd.join("sub")).expect("mkdir");
    std::os::unix::fs::symlink(elsewhere.path().join("a"), cwd.join("sub/away")).expect("symlink");
    let real = cwd.canonicalize().expect("the directory resolves");
    let sub = config_text_rule(&format!("{}/sub/**", real.display()));
    assert_eq!(bash(&sub, "cd sub/away/.. && echo x > k", cwd), Deny);
    assert_eq!(
        bash(&sub, "cd sub && cd away && cd .. && echo x > k", cwd),
        Deny
    );
    assert_eq!(bash(&sub, "cd -P sub/away/.. && echo x > k", cwd), Allow);
}

/// A configuration whose one rule denies writes to `path`.
fn config_text_rule(path: &str) -> Config {
    config(&format!(
        "[policy]\ndefault = \"allow\"\n\n[[policy.rule]]\ntool = \"write\"\npath = {path:?}\ndecision = \"deny\"\n"
    ))
}

/// A hard link made in one call, written through in the next: the name written is not the
/// protected one, so a write to a file with more than one name is asked about.
#[test]
fn a_write_to_a_file_with_other_names_is_asked_about() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cwd = dir.path();
    std::fs::write(cwd.join(".env"), "KEY=1").expect("write");
    std::fs::write(cwd.join("notes.txt"), "x").expect("write");
    let config = config(POLICY);
    assert_eq!(bash(&config, "ln .env hard", cwd), Deny);
    std::fs::hard_link(cwd.join(".env"), cwd.join("hard")).expect("a hard link");
    assert_eq!(bash(&config, "echo x > hard", cwd), Ask);
    assert_eq!(bash(&config, "echo x >> notes.txt", cwd), Allow);
    let verdict = config
        .policy
        .check("bash", &json!({ "command": "echo x > hard" }), cwd);
    assert_eq!(
        verdict.parts[1].note.as_deref(),
        Some("a write to a file with other names (hard links), which the path rules cannot see")
    );
    assert_eq!(
        pi_tools::policy::question(&config.policy, &verdict),
        "This call needs a person's approval: `> hard` (a write to a file with other names \
         (hard links), which the path rules cannot see) writes a file that has other names, one \
         of which a path rule may protect, so a person decides. Write to a new file of its own \
         instead, or ask the user to make this change."
    );
}

#[test]
fn argument_conditions_and_the_default_decide_other_tools() {
    let config = config(
        r#"
[policy]
default = "ask"

[[policy.rule]]
tool = ["read", "grep", "github__*"]
decision = "allow"

[[policy.rule]]
tool = "github__*"
arg = { name = "mode", equals = "force" }
decision = "deny"

[[policy.rule]]
tool = "github__*"
arg = { name = "repo", matches = "secret-*" }
decision = "deny"
"#,
    );
    let cwd = Path::new("/");
    let check =
        |tool: &str, args: serde_json::Value| config.policy.check(tool, &args, cwd).decision;
    assert_eq!(check("read", json!({ "path": "a" })), Allow);
    assert_eq!(check("github__merge", json!({ "mode": "squash" })), Allow);
    assert_eq!(check("github__merge", json!({ "mode": "force" })), Deny);
    assert_eq!(
        check("github__clone", json!({ "repo": "secret-keys" })),
        Deny
    );
    assert_eq!(check("write", json!({ "path": "a" })), Ask);
    assert_eq!(check("bash", json!({ "command": "ls" })), Ask);
}

#[test]
fn rule_examples_that_fail_are_reported_at_their_position() {
    let text = r#"[policy]
[[policy.rule]]
tool = "bash"
command = ["git", ["push", "fetch"]]
decision = "deny"
examples = ["git push origin", "ls && git fetch", "git pull"]
not_examples = ["git status", "echo git push", "sh -c 'git push'"]

[[policy.rule]]
tool = "write"
path = "secrets/**"
decision = "deny"
examples = ["secrets/a", { path = "src/a" }]
"#;
    let err = Config::parse(text, "pi-tools.toml", &registered()).expect_err("examples fail");
    assert_eq!(
        err.to_string(),
        "pi-tools.toml:6:51: this example does not match its rule (tool = bash, command = git push|fetch), but `examples` lists what the rule must match; fix the rule's conditions or the example\n\
         pi-tools.toml:7:48: this example matches its rule (tool = bash, command = git push|fetch), but `not_examples` lists what the rule must not match; fix the rule's conditions or the example\n\
         pi-tools.toml:13:26: this example does not match its rule (tool = write, path = secrets/**), but `examples` lists what the rule must match; fix the rule's conditions or the example"
    );
}

#[test]
fn a_rule_is_named_at_the_line_and_column_of_its_header() {
    // An indented `[[policy.rule]]` header, and a rule written as an inline table.
    let inline =
        config("[policy]\nrule = [{ tool = \"bash\", command = [\"dd\"], decision = \"ask\" }]\n");
    assert_eq!(inline.policy.rules[0].position, "pi-tools.toml:2:9");
    let config = config(
        r#"
  [[policy.rule]]
  tool = "bash"
  command = ["rm"]
  decision = "deny"
"#,
    );
    assert_eq!(config.policy.rules[0].position, "pi-tools.toml:2:3");
    let cwd = std::env::current_dir().expect("a working directory");
    let verdict = config
        .policy
        .check("bash", &json!({ "command": "rm -rf x" }), &cwd);
    assert_eq!(
        pi_tools::policy::denial(&config.policy, &verdict),
        "The policy denies this call, so nothing ran: `rm -rf x` is covered by the policy rule \
         at pi-tools.toml:2:3 (tool = bash, command = rm). Do not retry it in another form: do \
         what the policy allows instead, or ask the user to do this step themselves."
    );
}

#[test]
fn mistakes_in_rules_are_reported_at_their_position() {
    let text = r#"[policy]
default = "maybe"
[[policy.rule]]
tool = "bahs"
command = "git push"
decision = "deny"
[[policy.rule]]
tool = "bash"
arg = { name = "x" }
[[policy.rule]]
decision = "allow"
colour = "red"
"#;
    let err = Config::parse(text, "pi-tools.toml", &registered()).expect_err("mistakes");
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "pi-tools.toml:2:11: `default` must be \"allow\", \"ask\" or \"deny\"",
            "pi-tools.toml:4:8: no tool named `bahs` is registered; did you mean `bash`? the registered tools are: bash, edit, find, grep, ls, read, write; a rule about it would never apply",
            "pi-tools.toml:5:11: `command` must be a non-empty list of words, each a string or a list of alternative strings, e.g. [\"git\", [\"push\", \"fetch\"]]",
            "pi-tools.toml:7:1: this rule has no decision; add `decision = \"allow\"`, \"ask\" or \"deny\"",
            "pi-tools.toml:9:7: `arg` must be a table with `name` and one of `equals` (any value) or `matches` (a glob in quotes), e.g. { name = \"mode\", equals = \"force\" }",
            "pi-tools.toml:10:1: this rule names no tool; add `tool = \"bash\"` (a name, a glob such as \"github__*\", or a list)",
            "pi-tools.toml:12:1: unknown key `colour` in [[policy.rule]]; the keys allowed there are: tool, command, path, arg, decision, reason, examples, not_examples",
        ]
    );
}

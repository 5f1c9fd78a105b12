//! Where the command line finds its configuration, and how it reports a broken one.

use super::*;

#[test]
fn run_with_a_broken_config_prints_the_config_error() {
    let config = scratch_file(
        "unknown_key.toml",
        "[tools]\nexecution = \"parallel\"\nspeed = 3\n",
    );
    let mut command = pi_tools();
    command.args(["run", "--config"]).arg(&config);
    let output = feed(command, "[]");
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.starts_with(&format!("error: {}:3:1: ", config.display())),
        "{message}"
    );
}

#[test]
fn check_summarises_a_valid_configuration() {
    let config = my_tools_config();
    let output = my_tools_with_config("check", &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    // The registered list also holds whatever built-ins the library registers.
    let (registered, rest): (Vec<&str>, Vec<&str>) = text
        .lines()
        .partition(|l| l.starts_with("registered tools: "));
    assert_eq!(registered.len(), 1);
    for name in ["fill", "shout", "sleep_ms"] {
        assert!(registered[0].contains(name), "{}", registered[0]);
    }
    // What the kernel offers (and so whether the sandbox is enforceable, and what it cannot
    // enforce) depends on the machine.
    let rest: Vec<&str> = rest
        .into_iter()
        .filter(|l| !l.starts_with("sandbox cannot enforce: "))
        .collect();
    let (kernel, rest): (Vec<&str>, Vec<&str>) = rest.into_iter().partition(|l| {
        l.starts_with("kernel ")
            || l.starts_with("sandbox: enforceable")
            || l.starts_with("sandbox: NOT")
    });
    assert_eq!(kernel.len(), 4, "{kernel:?}");
    assert!(kernel[0].starts_with("kernel Landlock: "), "{kernel:?}");
    assert_eq!(
        rest,
        [
            format!("{}: ok", config.display()).as_str(),
            format!("configuration: {} (from --config)", config.display()).as_str(),
            "active tools: sleep_ms, shout",
            "execution: parallel",
            "max concurrency: 4",
            "timeout per call: 30 seconds",
            "mode of shout: parallel",
            "policy: none (every call allowed)",
            "allowed roots: (no confinement)",
            "client roots (mcp): the roots a client lists confine the file tools and the sandbox's writes (over stdio and HTTP); a client without roots gets the working directory over HTTP",
            "environment: this machine",
            "sandbox: mode workspace-write, network on",
            "sandbox writable roots: . and a private TMPDIR",
            "sandbox git: read-only",
            "sandbox protected: the 33 defaults (git's hooks and settings, pi-tools.toml, .envrc, .mcp.json, editor, agent and build tool settings, shell start files)",
            "trust: not needed (a file the user named, or the default)",
            "schemas: every active tool fits every dialect",
        ]
    );
}

#[test]
fn check_reports_each_problem_at_its_file_line_and_column() {
    let config = scratch_file(
        "bad.toml",
        "[tools]\nactive = [\"sleep_ms\", \"shuot\"]\nexecution = \"fast\"\n",
    );
    let output = feed(
        {
            let mut c = my_tools();
            c.args(["check", "--config"]).arg(&config);
            c
        },
        "",
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    let message = stderr(&output).replace(&config.display().to_string(), "bad.toml");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 2, "{message}");
    // The list of registered tools that follows also holds the library's built-ins.
    assert!(
        lines[0].starts_with(
            "error: bad.toml:2:23: no tool named `shuot` is registered; did you mean `shout`? \
             the registered tools are: "
        ),
        "{message}"
    );
    assert_eq!(
        lines[1],
        "error: bad.toml:3:13: `execution` must be \"parallel\" or \"sequential\""
    );
}

/// `my_tools check` in `dir`, with `PI_TOOLS_CONFIG` set to `env` (or unset) and `args`
/// before the subcommand; returns the line naming the configuration and the active tools.
fn discovered(dir: &Path, env: Option<&Path>, args: &[&std::ffi::OsStr]) -> (String, String) {
    let mut command = my_tools();
    command.current_dir(dir).env_remove("PI_TOOLS_CONFIG");
    if let Some(env) = env {
        command.env("PI_TOOLS_CONFIG", env);
    }
    command.args(args).arg("check");
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let line = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` line in {text}"))
            .to_owned()
    };
    (line("configuration: "), line("active tools: "))
}

#[test]
fn configuration_comes_from_the_flag_then_the_variable_then_the_working_directory_then_the_default()
{
    let dir = scratch_dir("discovery");
    let local = dir.join("pi-tools.toml");
    std::fs::write(&local, "[tools]\nactive = [\"shout\"]\n").expect("written");
    let from_env = dir.join("env.toml");
    std::fs::write(&from_env, "[tools]\nactive = [\"fill\"]\n").expect("written");
    let flag = my_tools_config();

    assert_eq!(
        discovered(
            &dir,
            Some(&from_env),
            &["--config".as_ref(), flag.as_os_str()]
        ),
        (
            format!("{} (from --config)", flag.display()),
            "sleep_ms, shout".to_owned()
        )
    );
    assert_eq!(
        discovered(&dir, Some(&from_env), &[]),
        (
            format!("{} (from PI_TOOLS_CONFIG)", from_env.display()),
            "fill".to_owned()
        )
    );
    assert_eq!(
        discovered(&dir, None, &[]),
        (
            format!("{} (found in the working directory)", local.display()),
            "shout".to_owned()
        )
    );
    let empty = scratch_dir("discovery-empty");
    let (source, _) = discovered(&empty, None, &[]);
    assert_eq!(source, "the embedded default");
}

#[test]
fn config_is_a_global_flag_accepted_before_or_after_the_subcommand() {
    let config = my_tools_config();
    for args in [
        vec![
            "--config".into(),
            config.clone().into_os_string(),
            "prompt".into(),
        ],
        vec![
            "prompt".into(),
            "--config".into(),
            config.clone().into_os_string(),
        ],
    ] {
        let mut command = my_tools();
        command.args::<Vec<std::ffi::OsString>, _>(args);
        let output = feed(command, "");
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(stdout(&output).starts_with("Available tools:\n- sleep_ms:"));
    }
}

#[test]
fn calling_a_registered_tool_that_is_not_active_names_the_key_that_turns_it_on() {
    let dir = scratch_dir("inactive");
    let mut command = pi_tools();
    command
        .current_dir(&dir)
        .env_remove("PI_TOOLS_CONFIG")
        .args(["run", "--json"]);
    let output = feed(
        command,
        r#"[{"id": "g", "name": "grep", "arguments": {"pattern": "x"}}]"#,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let events = json_lines(&stdout(&output));
    assert_eq!(
        events[1]["result"]["content"][0]["text"],
        "Tool grep is registered but not active in this configuration, so it cannot be called. \
         The active tools are: read, bash, edit, write. To turn it on, add \"grep\" to `active` \
         in the `[tools]` section of pi-tools.toml."
    );
}

/// Issue: a crate with tools of its own that calls `cli::main` answered "registered but not
/// active" for its own tools when no configuration file named them. With the embedded
/// default, its tools are active after the default built-ins, and the prompt lists them.
#[test]
fn a_crates_own_tools_are_active_under_the_embedded_default() {
    let dir = scratch_dir("own-tools-default");
    let mut command = my_tools();
    command
        .current_dir(&dir)
        .env_remove("PI_TOOLS_CONFIG")
        .args(["run", "--json"]);
    let output = feed(
        command,
        r#"[{"id": "s", "name": "shout", "arguments": {"text": "hi"}}]"#,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let events = json_lines(&stdout(&output));
    assert_eq!(events[1]["result"]["content"][0]["text"], "HI");

    let mut command = my_tools();
    command
        .current_dir(&dir)
        .env_remove("PI_TOOLS_CONFIG")
        .arg("check");
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let active = text
        .lines()
        .find(|l| l.starts_with("active tools: "))
        .expect("check names the active tools");
    assert_eq!(
        active,
        "active tools: read, bash, edit, write, fill, shout, sleep_ms"
    );
}

/// `pi-tools check` on an SSH `[env]`: the line on how commands run there says the command
/// line uploads itself by default and how to opt out, and what `upload_helper = false`
/// costs. (It describes; it does not connect.)
#[test]
fn check_says_whether_the_command_line_uploads_itself_over_ssh() {
    let served = "commands over SSH: one long-lived pi-tools process on build-box serves every \
                  command, grep and find (its login shell's startup files run once, when it \
                  starts: commands get a login shell's PATH and variables; login_shell = false \
                  for a plain SSH command's)";
    let version = env!("CARGO_PKG_VERSION");
    let line = |upload: &str| {
        let config = scratch_file(
            &format!("ssh-upload{}.toml", upload.len()),
            &format!("[env]\nkind = \"ssh\"\nhost = \"build-box\"\ncwd = \"/srv/p\"\n{upload}"),
        );
        let mut command = pi_tools();
        command.args(["check", "--config"]).arg(&config);
        let output = feed(command, "");
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
            .lines()
            .find(|l| l.starts_with("commands over SSH: "))
            .expect("check says how commands run over SSH")
            .to_owned()
    };
    assert_eq!(
        line(""),
        format!(
            "{served}; pi-tools {version} on its PATH, else this binary, uploaded once to \
             ~/.cache/pi-tools there (same OS and architecture only; upload_helper is true by \
             default: set upload_helper = false in [env] not to upload)"
        )
    );
    assert_eq!(
        line("upload_helper = false\n"),
        format!(
            "{served}, when pi-tools {version} is on its PATH; else each command opens an SSH \
             session of its own, which runs the remote shell's startup files every time (often \
             0.1 to 0.3 s a call), and grep and find read the tree over SFTP (upload_helper = \
             false: remove it, as it defaults to true, to avoid that)"
        )
    );
}

//! `pi-tools.toml`: defaults, every error kind with its position, did-you-mean, and typed
//! tool sections.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pi_tools::ExecutionMode;
use pi_tools::config::{Config, DEFAULT_CONNECT_TIMEOUT, DEFAULT_ORIGIN, EnvSettings, SshSettings};
use pi_tools::env::remote::HostKeyPolicy;
use support::{FakeTool, ShellConfig, builtin_like};

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, "pi-tools.toml", &builtin_like()).map_err(|e| e.to_string())
}

fn error(text: &str) -> String {
    match parse(text) {
        Ok(config) => panic!("should be refused, loaded {config:?}"),
        Err(e) => e,
    }
}

#[test]
fn without_a_file_the_embedded_default_applies() {
    let config = Config::load(None, &builtin_like()).expect("the default loads");
    assert_eq!(config.active, ["read", "bash", "edit", "write"]);
    assert_eq!(config.execution, ExecutionMode::Parallel);
    assert_eq!(config.timeout, Some(Duration::from_secs(180)));
    assert_eq!(config.max_concurrency, None);
    assert!(config.tools.is_empty());
    assert_eq!(config.allowed_roots, None);
    assert_eq!(
        config.guidelines,
        [
            "Keep your answers short and to the point.",
            "Name file paths in full whenever you talk about files."
        ]
    );
    assert_eq!(config.origin, DEFAULT_ORIGIN);
}

#[test]
fn the_default_leaves_out_tools_this_binary_does_not_register() {
    let only = vec![FakeTool::new("bash").arc(), FakeTool::new("read").arc()];
    let config = Config::load(None, &only).expect("the default loads");
    assert_eq!(config.active, ["read", "bash"]);
}

#[test]
fn an_empty_file_means_defaults_for_every_key() {
    let config = parse("").expect("empty is valid");
    assert_eq!(config.active, ["read", "bash", "edit", "write"]);
    assert_eq!(config.timeout, Some(Duration::from_secs(180)));
    assert!(config.guidelines.is_empty());
}

#[test]
fn every_key_is_read() {
    let config = parse(
        r#"
[tools]
active = ["grep", "read"]
execution = "sequential"
max_concurrency = 4
timeout_secs = 0

[tool.bash]
mode = "sequential"
timeout_secs = 60
shell = "/bin/zsh"

[tool.read]
mode = "parallel"

[paths]
allowed_roots = [".", "/srv/data"]

[prompt]
guidelines = ["Be brief."]
"#,
    )
    .expect("valid");
    assert_eq!(config.active, ["grep", "read"]);
    assert_eq!(config.execution, ExecutionMode::Sequential);
    assert_eq!(config.max_concurrency, Some(4));
    assert_eq!(config.timeout, None);
    let bash = config.tool("bash").expect("bash section");
    assert_eq!(bash.mode, Some(ExecutionMode::Sequential));
    let typed = bash
        .config
        .as_deref()
        .and_then(|c| c.downcast_ref::<ShellConfig>())
        .expect("a ShellConfig");
    assert_eq!(
        typed,
        &ShellConfig {
            timeout_secs: 60,
            shell: Some("/bin/zsh".to_owned())
        }
    );
    let read = config.tool("read").expect("read section");
    assert_eq!(read.mode, Some(ExecutionMode::Parallel));
    assert!(read.config.is_none());
    assert_eq!(
        config.allowed_roots,
        Some(vec![PathBuf::from("."), PathBuf::from("/srv/data")])
    );
    assert_eq!(config.guidelines, ["Be brief."]);
}

#[test]
fn invalid_toml_is_reported_at_its_position() {
    assert_eq!(
        error("[tools]\nactive = [\"read\"\n"),
        "pi-tools.toml:2:17: this is not valid TOML: unclosed array, expected `]`"
    );
}

#[test]
fn unknown_tool_names_get_a_did_you_mean() {
    assert_eq!(
        error("[tools]\nactive = [\"read\", \"bsh\"]\n"),
        "pi-tools.toml:2:19: no tool named `bsh` is registered; did you mean `bash`? \
         the registered tools are: bash, edit, find, grep, ls, read, write"
    );
    assert_eq!(
        error("[tool.raed]\nmode = \"sequential\"\n"),
        "pi-tools.toml:1:7: no tool named `raed` is registered; did you mean `read`? \
         the registered tools are: bash, edit, find, grep, ls, read, write"
    );
    assert_eq!(
        error("[tools]\nactive = [\"python\"]\n"),
        "pi-tools.toml:2:11: no tool named `python` is registered; \
         the registered tools are: bash, edit, find, grep, ls, read, write"
    );
}

#[test]
fn unknown_keys_and_sections_are_errors() {
    assert_eq!(
        error("[tools]\ntimeout = 5\n"),
        "pi-tools.toml:2:1: unknown key `timeout` in [tools]; did you mean `timeout_secs`? \
         the keys allowed there are: active, execution, max_concurrency, timeout_secs, shapes"
    );
    assert_eq!(
        error("[tool]\n[toolz]\n"),
        "pi-tools.toml:2:2: unknown section `toolz`; did you mean [tools]? \
         the sections are [tools], [tool.<name>], [paths], [prompt], [sandbox], [env], [mcp] and [policy]"
    );
    assert_eq!(
        error("[prompt]\nguideline = []\n"),
        "pi-tools.toml:2:1: unknown key `guideline` in [prompt]; did you mean `guidelines`? \
         the keys allowed there are: guidelines"
    );
    assert_eq!(
        error("[tool.read]\nmode = \"parallel\"\nlimit = 5\n"),
        "pi-tools.toml:3:1: unknown key `limit` in [tool.read]; tool `read` has no \
         configuration of its own, so only `mode` is allowed there"
    );
}

#[test]
fn wrong_types_are_errors_saying_what_is_expected() {
    assert_eq!(
        error("[tools]\nexecution = \"fast\"\n"),
        "pi-tools.toml:2:13: `execution` must be \"parallel\" or \"sequential\""
    );
    assert_eq!(
        error("[tools]\ntimeout_secs = -1\nmax_concurrency = 0\n"),
        "pi-tools.toml:2:16: `timeout_secs` must be a whole number of seconds, 0 for no timeout\n\
         pi-tools.toml:3:19: `max_concurrency` must be a whole number of at least 1; remove it for no bound"
    );
    assert_eq!(
        error("[tools]\nactive = \"read\"\n"),
        "pi-tools.toml:2:10: `active` must be a list of tool names, e.g. [\"read\", \"bash\"]"
    );
    assert_eq!(
        error("[tools]\nactive = [\"read\", \"read\"]\n"),
        "pi-tools.toml:2:19: `read` is listed twice in `active`; keep one"
    );
    assert_eq!(
        error("[paths]\nallowed_roots = [\".\", 3]\n"),
        "pi-tools.toml:2:23: `allowed_roots` must be a list of directory paths in quotes, e.g. [\"…\"]"
    );
    assert_eq!(
        error("tools = 3\n"),
        "pi-tools.toml:1:9: [tools] must be a table, found integer; write it as a `[tools]` section"
    );
}

#[test]
fn shapes_is_one_word_or_a_table_of_families() {
    use pi_tools::dialect::Dialect;
    use pi_tools::dialect::native::{FamilyShapes, Shapes};
    let shapes = |text: &str| parse(text).expect("valid").shapes;
    assert_eq!(shapes(""), FamilyShapes::default());
    assert_eq!(
        shapes("[tools]\nshapes = \"native\"\n"),
        FamilyShapes::all(Shapes::Native)
    );
    let mixed =
        shapes("[tools]\nshapes = { anthropic = \"native\", openai-responses = \"pi-tools\" }\n");
    assert_eq!(mixed.of(Dialect::Anthropic), Shapes::Native);
    assert_eq!(mixed.of(Dialect::OpenAiResponses), Shapes::PiTools);
    // A family left out gets the pi-tools shapes; a sub-table reads the same.
    let responses = shapes("[tools.shapes]\nopenai-responses = \"native\"\n");
    assert_eq!(responses.of(Dialect::Anthropic), Shapes::PiTools);
    assert_eq!(responses.of(Dialect::OpenAiResponses), Shapes::Native);
}

#[test]
fn shapes_mistakes_name_the_families_and_the_words() {
    assert_eq!(
        error("[tools]\nshapes = \"trained\"\n"),
        "pi-tools.toml:2:10: `shapes` must be \"pi-tools\" (the default) or \"native\" (each \
         provider family's own tools where it has them), or a table of families, e.g. \
         { anthropic = \"native\", openai-responses = \"pi-tools\" }"
    );
    assert_eq!(
        error("[tools]\nshapes = { antropic = \"native\" }\n"),
        "pi-tools.toml:2:12: unknown family `antropic` in `shapes` (did you mean `anthropic`?); \
         name the families with native tools by their dialect: `anthropic` and `openai-responses`"
    );
    assert_eq!(
        error("[tools]\nshapes = { anthropic = \"yes\" }\n"),
        "pi-tools.toml:2:24: `shapes.anthropic` must be \"pi-tools\" (the default) or \
         \"native\" (each provider family's own tools where it has them)"
    );
    assert_eq!(
        error("[tools]\nshapes = { gemini = \"native\" }\n"),
        "pi-tools.toml:2:12: `shapes.gemini`: the gemini dialect has no native tools, so it \
         always gets the pi-tools shapes; remove it (the families with native tools are \
         `anthropic` and `openai-responses`)"
    );
}

#[test]
fn a_typed_tool_section_is_validated_by_the_tool_config() {
    assert_eq!(
        error("[tool.bash]\ntimout_secs = 5\n"),
        "pi-tools.toml:2:1: invalid configuration for tool `bash`: unknown field `timout_secs`, \
         expected `timeout_secs` or `shell`; fix the keys of [tool.bash]"
    );
    assert_eq!(
        error("[tool.bash]\ntimeout_secs = \"soon\"\n"),
        "pi-tools.toml:1:7: invalid configuration for tool `bash`: invalid type: string \"soon\", \
         expected u64; fix the keys of [tool.bash]"
    );
}

#[test]
fn all_problems_are_reported_in_file_order() {
    let e = error("[tools]\nexecution = 1\nactive = [\"x\"]\n[other]\n");
    let lines: Vec<&str> = e
        .lines()
        .map(|l| l.split(": ").next().unwrap_or(""))
        .collect();
    assert_eq!(
        lines,
        [
            "pi-tools.toml:2:13",
            "pi-tools.toml:3:11",
            "pi-tools.toml:4:2"
        ]
    );
}

/// `text` written to `name` in `dir`, a directory the test holds (and removes at its end).
fn temp_file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn loading_a_file_names_it_in_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir, "bad.toml", "[tools]\nexecution = \"later\"\n");
    let e = Config::load(Some(&path), &builtin_like()).expect_err("invalid");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2:13: `execution` must be \"parallel\" or \"sequential\"",
            path.display()
        )
    );
    let good = temp_file(&dir, "good.toml", "[tools]\nactive = [\"ls\"]\n");
    let config = Config::load(Some(&good), &builtin_like()).expect("valid");
    assert_eq!(config.active, ["ls"]);
    assert_eq!(config.origin, good.display().to_string());
    let missing = Path::new("/nonexistent/pi-tools.toml");
    let e = Config::load(Some(missing), &builtin_like()).expect_err("missing");
    assert!(
        e.to_string()
            .starts_with("/nonexistent/pi-tools.toml: cannot read the configuration file ("),
        "{e}"
    );
    assert!(
        e.to_string()
            .ends_with("); check the path given with --config"),
        "{e}"
    );
}

#[test]
fn without_an_env_section_the_tools_work_here() {
    assert_eq!(parse("").expect("valid").env, EnvSettings::Local);
    assert_eq!(
        parse("[env]\nkind = \"local\"\n").expect("valid").env,
        EnvSettings::Local
    );
    assert_eq!(
        Config::load(None, &builtin_like()).expect("default").env,
        EnvSettings::Local
    );
}

#[test]
fn an_ssh_env_section_reads_every_key() {
    let config = parse(
        "[env]\nkind = \"ssh\"\nhost = \"me@build-box\"\nport = 2222\n\
         identity_file = \"~/.ssh/id_ed25519\"\ncwd = \"/srv/project\"\n\
         known_hosts = \"accept-new\"\nupload_helper = true\nssh_config = \"conf/ssh\"\n\
         connect_timeout_secs = 4\nlogin_shell = false\n",
    )
    .expect("valid");
    assert_eq!(
        config.env,
        EnvSettings::Ssh(SshSettings {
            host: "me@build-box".into(),
            port: Some(2222),
            identity_file: Some("~/.ssh/id_ed25519".into()),
            cwd: "/srv/project".into(),
            known_hosts: HostKeyPolicy::AcceptNew,
            upload_helper: Some(true),
            login_shell: false,
            ssh_config: Some("conf/ssh".into()),
            connect_timeout: Duration::from_secs(4),
        })
    );
    let minimal = parse("[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"/w\"\n").expect("valid");
    let EnvSettings::Ssh(ssh) = minimal.env else {
        panic!("ssh expected")
    };
    assert_eq!(ssh.known_hosts, HostKeyPolicy::Strict, "strict by default");
    assert_eq!(ssh.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
    // No key: the front decides (the command line uploads, `target` does not).
    assert_eq!((ssh.port, ssh.upload_helper), (None, None));
    assert!(
        ssh.login_shell,
        "commands get a login shell's environment by default"
    );
    #[cfg(feature = "ssh")]
    {
        let target = ssh.target();
        assert!(target.login_shell);
        assert!(
            !target.upload_helper,
            "a library program's own binary is not uploaded unless asked"
        );
        let EnvSettings::Ssh(off) =
            parse("[env]\nkind = \"ssh\"\nhost = \"b\"\ncwd = \"/w\"\nupload_helper = false\n")
                .expect("valid")
                .env
        else {
            panic!("ssh expected")
        };
        assert_eq!(off.upload_helper, Some(false));
    }
}

#[test]
fn env_section_mistakes_are_errors_saying_what_to_fix() {
    assert_eq!(
        error("[env]\nkind = \"ssh\"\n"),
        "pi-tools.toml:1:2: [env] kind = \"ssh\" needs `host`: an ssh config alias or user@host, e.g. host = \"me@build-box\"\n\
         pi-tools.toml:1:2: [env] kind = \"ssh\" needs `cwd`: the absolute remote working directory, e.g. cwd = \"/srv/project\""
    );
    assert_eq!(
        error("[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"project\"\n"),
        "pi-tools.toml:4:7: `cwd` must be an absolute path on the remote machine, and `project` is relative; write it from the root, e.g. \"/home/me/project\""
    );
    assert_eq!(
        error("[env]\nkind = \"ssh\"\nhots = \"box\"\nhost = \"box\"\ncwd = \"/w\"\n"),
        "pi-tools.toml:3:1: unknown key `hots` in [env]; did you mean `host`? the keys allowed there are: \
         kind, host, port, identity_file, cwd, known_hosts, upload_helper, login_shell, ssh_config, connect_timeout_secs"
    );
    assert_eq!(
        error("[env]\nkind = \"remote\"\n"),
        "pi-tools.toml:2:8: `kind` must be \"local\" or \"ssh\""
    );
    assert_eq!(
        error("[env]\nhost = \"box\"\n"),
        "pi-tools.toml:2:1: `host` only applies to an SSH environment; add kind = \"ssh\" to [env], or remove `host`"
    );
    assert_eq!(
        error(
            "[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"/w\"\nport = 70000\nknown_hosts = \"yes\"\nupload_helper = \"true\"\nlogin_shell = 1\n"
        ),
        "pi-tools.toml:5:8: `port` must be a port number from 1 to 65535; remove it for the ssh config's (or 22)\n\
         pi-tools.toml:6:15: `known_hosts` must be one of \"strict\", \"accept-new\", \"accept-any\": \"strict\" needs the host's key in known_hosts already, \"accept-new\" records an unknown host's key, \"accept-any\" checks nothing\n\
         pi-tools.toml:7:17: `upload_helper` must be true or false (without quotes)\n\
         pi-tools.toml:8:15: `login_shell` must be true or false (without quotes): true gives commands a login shell's environment, false a plain SSH command's"
    );
}

#[test]
fn an_ssh_spec_replaces_host_port_and_directory_but_keeps_the_other_keys() {
    let config = parse(
        "[env]\nkind = \"ssh\"\nhost = \"box\"\nport = 2\ncwd = \"/w\"\nknown_hosts = \"accept-new\"\n",
    )
    .expect("valid");
    let settings = SshSettings::from_spec("me@other:2222/srv/p", &config.env).expect("valid spec");
    assert_eq!(
        (
            settings.host.as_str(),
            settings.port,
            settings.cwd.as_path()
        ),
        ("me@other", Some(2222), Path::new("/srv/p"))
    );
    assert_eq!(settings.known_hosts, HostKeyPolicy::AcceptNew);
    let plain = SshSettings::from_spec("alias/srv", &EnvSettings::Local).expect("valid spec");
    assert_eq!((plain.host.as_str(), plain.port), ("alias", None));
    assert_eq!(
        SshSettings::from_spec("alias", &EnvSettings::Local),
        Err(
            "`--ssh alias` names no absolute remote directory after the host; give \
             [user@]host[:port]/absolute/path, e.g. me@build-box:2222/srv/project"
                .to_string()
        )
    );
}

#[test]
fn mcp_servers_are_read_with_their_defaults() {
    use pi_tools::config::{DEFAULT_STARTUP_TIMEOUT, ServerTransport};
    let config = parse(
        r#"
[tools]
active = ["read", "github__*", "everything__echo"]

[mcp.servers.everything]
command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
env = { LOG_LEVEL = "warn" }
cwd = "servers"
tools = ["echo", "get-*"]
eager = true
sandbox = true
parallel = true
call_timeout_secs = 20

[mcp.servers.github]
url = "https://example.invalid/mcp"
token_file = "~/.config/github.token"
headers = { "X-Team" = "tools" }
startup_timeout_secs = 5
"#,
    )
    .expect("valid");
    assert_eq!(config.active, ["read", "github__*", "everything__echo"]);
    let everything = config.server("everything").expect("everything");
    assert_eq!(
        everything.transport,
        ServerTransport::Stdio {
            command: vec![
                "npx".into(),
                "-y".into(),
                "@modelcontextprotocol/server-everything".into()
            ],
            env: [("LOG_LEVEL".to_owned(), "warn".to_owned())].into(),
            cwd: Some(PathBuf::from("servers")),
        }
    );
    assert_eq!(everything.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(everything.call_timeout, Some(Duration::from_secs(20)));
    assert!(everything.eager && everything.sandbox && everything.parallel);
    assert!(everything.allows("echo") && everything.allows("get-sum"));
    assert!(!everything.allows("toggle-simulated-logging"));
    let github = config.server("github").expect("github");
    assert_eq!(
        github.transport,
        ServerTransport::Http {
            url: "https://example.invalid/mcp".into(),
            token_file: Some(PathBuf::from("~/.config/github.token")),
            headers: [("X-Team".to_owned(), "tools".to_owned())].into(),
        }
    );
    assert_eq!(github.startup_timeout, Duration::from_secs(5));
    assert!(github.allows("anything") && !github.eager && github.sandbox);
}

#[test]
fn mcp_server_mistakes_point_at_the_key_with_a_suggestion() {
    let err = error(
        r#"[mcp.servers.everything]
command = ["npx", "server-everything"]
startup_timeout = 5
eager = "yes"
"#,
    );
    assert_eq!(
        err,
        "pi-tools.toml:3:1: unknown key `startup_timeout` in [mcp.servers.everything]; did you mean `startup_timeout_secs`? the keys allowed there are: command, env, cwd, url, token_file, headers, startup_timeout_secs, call_timeout_secs, tools, eager, sandbox, parallel, rename\n\
         pi-tools.toml:4:9: `eager` must be true or false (without quotes)"
    );
    let err = error("[mcp.servers.x]\ntools = [\"a\"]\n");
    assert!(
        err.starts_with("pi-tools.toml:1:14: [mcp.servers.x] needs `command`"),
        "{err}"
    );
    let err = error("[mcp.servers.x]\ncommand = [\"a\"]\nurl = \"http://h/mcp\"\n");
    assert!(
        err.starts_with("pi-tools.toml:3:7: [mcp.servers.x] has both `command` and `url`"),
        "{err}"
    );
    let err = error("[mcp.servers.x]\ncommand = [\"a\"]\ntoken_file = \"t\"\n");
    assert!(
        err.starts_with("pi-tools.toml:3:1: `token_file` applies to a server reached by `url`"),
        "{err}"
    );
    let err = error("[mcp.servers.\"my.server\"]\ncommand = [\"a\"]\n");
    assert!(
        err.starts_with("pi-tools.toml:1:14: the server name `my.server` cannot prefix tool names"),
        "{err}"
    );
    let err = error("[mcp]\nserver = {}\n");
    assert!(
        err.starts_with(
            "pi-tools.toml:2:1: unknown key `server` in [mcp]; did you mean `servers`?"
        ),
        "{err}"
    );
}

#[test]
fn active_names_a_mounted_server_that_must_be_configured() {
    let err = error(
        r#"[tools]
active = ["read", "evrything__echo", "e*"]

[mcp.servers.everything]
command = ["npx", "server-everything"]
"#,
    );
    assert_eq!(
        err,
        "pi-tools.toml:2:19: `evrything__echo` names the tool `echo` of an MCP server `evrything`, but there is no [mcp.servers.evrything]; did you mean `everything__echo`? the configured servers are: everything\n\
         pi-tools.toml:2:38: `e*` is a glob, and globs may only name a mounted server's tools, e.g. \"github__*\""
    );
}

#[test]
fn mcp_session_and_connection_bounds_are_read_and_checked() {
    let config = parse(
        "[mcp]\nmax_sessions = 2\nmax_connections = 32\nmax_connections_per_client = 4\nrequest_timeout_secs = 3\n",
    )
    .expect("the bounds load");
    assert_eq!(config.mcp_max_sessions, Some(2));
    assert_eq!(config.mcp_connections.max_connections, Some(32));
    assert_eq!(config.mcp_connections.max_per_client, Some(4));
    assert_eq!(
        config.mcp_connections.request_timeout,
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        error(
            "[mcp]\nmax_sessions = 0\nmax_connections_per_client = -1\nrequest_timeout_secs = 0\n"
        ),
        "pi-tools.toml:2:16: `max_sessions` must be a whole number of sessions, at least 1 (e.g. 1024)\n\
         pi-tools.toml:3:30: `max_connections_per_client` must be a whole number of connections, at least 1 (e.g. 64)\n\
         pi-tools.toml:4:24: `request_timeout_secs` must be a whole number of seconds, at least 1"
    );
    // The embedded default leaves the session bound to the server, which derives it from
    // the limit on open files (a value set would be lowered with a warning).
    let default = Config::load(None, &builtin_like()).expect("the default loads");
    assert_eq!(default.mcp_max_sessions, None);
    // Past the bound a new session is refused unless the file says to end idle ones.
    assert!(!default.mcp_end_idle_when_full);
    let ending = parse("[mcp]\nwhen_full = \"end_idle\"\n").expect("loads");
    assert!(ending.mcp_end_idle_when_full);
    assert!(
        !parse("[mcp]\nwhen_full = \"refuse\"\n")
            .expect("loads")
            .mcp_end_idle_when_full
    );
    assert_eq!(
        error("[mcp]\nwhen_full = \"evict\"\n"),
        "pi-tools.toml:2:13: `when_full` must be \"refuse\" (a new session past `max_sessions` is refused; the default) or \"end_idle\" (it ends the least recently used idle session)"
    );
}

/// A declared tool is a tool to the diagnostics too: a near miss in `active` gets it as the
/// suggestion, and the list of tools there are names it.
#[test]
fn an_unknown_active_tool_is_told_of_the_declared_ones() {
    let text = r#"
[tools]
active = ["read", "wc_line"]

[tool.wc_lines]
description = "Count the lines of a file."
command = ["wc", "-l", "{file}"]
[tool.wc_lines.params.file]
type = "string"
"#;
    let registered = builtin_like();
    let err = Config::parse(text, "pi-tools.toml", &registered).expect_err("unknown tool");
    let message = err.to_string();
    assert!(message.contains("did you mean `wc_lines`?"), "{message}");
    assert!(
        message.contains(
            "the registered tools are: bash, edit, find, grep, ls, read, wc_lines, write"
        ),
        "{message}"
    );
}

/// A parameter whose `type` is wrong is one mistake, not two: its placeholder is not also
/// said to name no parameter.
#[test]
fn a_bad_parameter_type_is_reported_once() {
    let text = r#"
[tool.count]
description = "Count the lines of a file."
command = ["wc", "-l", "{file}"]
[tool.count.params.file]
type = "path"
"#;
    let err = Config::parse(text, "pi-tools.toml", &[]).expect_err("a bad type");
    assert_eq!(err.problems.len(), 1, "{err}");
    assert!(err.problems[0].message.contains("unknown type"), "{err}");
}

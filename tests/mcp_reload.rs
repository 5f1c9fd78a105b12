//! `pi-tools mcp` following its configuration file's declared tools while it runs, seen
//! from outside: the file is rewritten (in place, and by a rename as editors save), and the
//! client is told (`notifications/tools/list_changed`) and lists and calls the new tools; a
//! removed tool's call gets the unknown-tool error, a call already running finishes with
//! the tool it started with. A new content that is refused (a syntax error, a declared tool
//! that does not check, a file deleted, a found file not trusted) changes nothing and the
//! log says why; the other keys of the file wait for a restart. Over stdio here; over HTTP
//! (a 2025-11-25 session's stream and a 2026-07-28 `subscriptions/listen`) at the end.
#![cfg(feature = "cli")]

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::spawn::JsonLines;
use tempfile::TempDir;

use crate::mcp_http_support::{Events, HttpServer, messages, request_2026};

/// How long the server may take to see a change and answer for it.
const PATIENCE: Duration = Duration::from_secs(30);

/// A declared tool `name` printing `said` (its description says it too, so a change of
/// what it prints changes its listing).
fn tool(name: &str, said: &str) -> String {
    format!("[tool.{name}]\ndescription = \"Say {said}.\"\ncommand = [\"echo\", \"{said}\"]\n\n")
}

/// A configuration with `active` and the declared tools `tools`.
fn config(active: &[&str], tools: &[String]) -> String {
    format!(
        "[tools]\nactive = {}\n\n{}",
        serde_json::to_string(active).expect("a list"),
        tools.concat()
    )
}

/// Replaces `file` as editors save: a copy written beside it, renamed over it.
fn replace_by_rename(file: &Path, text: &str) {
    let copy = file.with_extension("toml.swp");
    std::fs::write(&copy, text).expect("the copy is written");
    std::fs::rename(&copy, file).expect("the copy replaces the file");
}

/// `pi-tools mcp` over stdio: what it writes on stdout and stderr, each line kept in order
/// of arrival.
struct Server {
    child: Child,
    stdin: ChildStdin,
    out: JsonLines,
    log: mpsc::Receiver<String>,
}

impl Server {
    /// Starts `command` (the binary with its arguments, environment and directory) and
    /// opens a 2025-11-25 session, which must be told of tool changes.
    fn start(mut command: Command) -> Server {
        let mut child = command
            .env_remove("PI_TOOLS_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("stdin");
        let out = JsonLines::read(child.stdout.take().expect("stdout"), PATIENCE);
        let (send, log) = mpsc::channel();
        let stderr = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            out,
            log,
        };
        let opened = server.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}));
        assert_eq!(
            opened["result"]["capabilities"]["tools"],
            json!({"listChanged": true}),
            "{opened}"
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("the server reads");
    }

    /// The next line of stdout matching `wanted`, kept or read within [`PATIENCE`].
    fn wait(&mut self, wanted: impl Fn(&Value) -> bool, what: &str) -> Value {
        self.out.wait(wanted, what)
    }

    /// The next line of stderr containing `text`, within [`PATIENCE`].
    fn wait_log(&mut self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        let mut said = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.log.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(line) => said.push(line),
                Err(_) => panic!("no log line with {text:?} within {PATIENCE:?}; said: {said:?}"),
            }
        }
    }

    fn request(&mut self, message: Value) -> Value {
        self.send(&message);
        let id = message["id"].clone();
        self.wait(|line| line["id"] == id, "answer")
    }

    /// The names `tools/list` gives.
    fn names(&mut self, id: i64) -> Vec<String> {
        let listed = self.request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        names(&listed)
    }

    fn call(&mut self, id: i64, name: &str) -> Value {
        self.request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {}}}))
    }

    /// Waits for the session's `notifications/tools/list_changed`.
    fn told(&mut self) {
        let told = self.wait(
            |line| line["method"] == "notifications/tools/list_changed",
            "notifications/tools/list_changed",
        );
        assert!(told.get("id").is_none(), "{told}");
    }

    /// Whether a `notifications/tools/list_changed` came that no one waited for.
    fn told_unasked(&self) -> bool {
        self.out
            .seen
            .iter()
            .any(|l| l["method"] == "notifications/tools/list_changed")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn names(listed: &Value) -> Vec<String> {
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {listed}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

/// A working directory, a configuration directory and a trust store of the test's own.
struct Scene {
    work: TempDir,
    etc: TempDir,
    home: TempDir,
}

impl Scene {
    fn new() -> Scene {
        Scene {
            work: TempDir::new().expect("a working directory"),
            etc: TempDir::new().expect("a configuration directory"),
            home: TempDir::new().expect("a configuration home"),
        }
    }

    /// The named configuration file.
    fn named(&self) -> PathBuf {
        self.etc.path().join("pi-tools.toml")
    }

    /// The configuration found in the working directory.
    fn found(&self) -> PathBuf {
        self.work.path().join("pi-tools.toml")
    }

    /// The binary in the working directory, with this scene's trust store, and `args`.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(support::cli_under_test());
        command
            .current_dir(self.work.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env_remove("RUST_LOG")
            .args(args);
        command
    }

    /// `pi-tools --config <named> mcp`.
    fn serve_named(&self, text: &str) -> Server {
        Server::start(self.named_command(text))
    }

    /// `pi-tools --config <named> mcp`, not started, `text` in the file.
    fn named_command(&self, text: &str) -> Command {
        std::fs::write(self.named(), text).expect("the configuration is written");
        let mut command = self.command(&["--config"]);
        command.arg(self.named()).arg("mcp");
        command
    }
}

/// Refused: the line the log has for a new content that changes nothing.
fn refused(file: &Path) -> String {
    format!(
        "{} (from --config) changed, but its new content was refused, so the tools served stay as they were. {}",
        file.display(),
        file.display()
    )
}

#[test]
fn a_named_file_rewritten_in_place_and_by_rename_changes_the_tools_served() {
    let scene = Scene::new();
    let mut server = scene.serve_named(&config(&["hello"], &[tool("hello", "hello")]));
    assert_eq!(server.names(1), ["hello"]);

    // In place: a tool comes.
    std::fs::write(
        scene.named(),
        config(
            &["hello", "bye"],
            &[tool("hello", "hello"), tool("bye", "bye")],
        ),
    )
    .expect("rewritten");
    server.told();
    assert_eq!(server.names(2), ["hello", "bye"]);
    assert_eq!(text(&server.call(3, "bye")), "bye");

    // By a rename: one leaves.
    replace_by_rename(&scene.named(), &config(&["bye"], &[tool("bye", "bye")]));
    server.told();
    assert_eq!(server.names(4), ["bye"]);
    let gone = server.call(5, "hello");
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(
        gone["error"]["message"],
        "Unknown tool `hello`. The tools are: bye. Call one of them by its exact name.",
        "{gone}"
    );
    // One change, one notification.
    assert!(!server.told_unasked(), "{:?}", server.out.seen);
}

#[test]
fn a_refused_content_changes_nothing_and_the_log_says_why() {
    let scene = Scene::new();
    let start = config(&["hello"], &[tool("hello", "hello")]);
    let mut server = scene.serve_named(&start);
    assert_eq!(server.names(1), ["hello"]);
    let file = scene.named();

    // Not TOML.
    std::fs::write(&file, format!("{start}[tool.bye\n")).expect("rewritten");
    let said = server.wait_log(&refused(&file));
    assert!(said.contains("this is not valid TOML"), "{said}");
    // A declared tool that does not check: no description.
    replace_by_rename(
        &file,
        &config(
            &["hello", "bye"],
            &[
                tool("hello", "hello"),
                "[tool.bye]\ncommand = [\"echo\", \"bye\"]\n".to_owned(),
            ],
        ),
    );
    let said = server.wait_log(&refused(&file));
    assert!(said.contains("`description`"), "{said}");
    // Deleted.
    std::fs::remove_file(&file).expect("deleted");
    let said = server.wait_log(&refused(&file));
    assert!(
        said.contains("cannot read the configuration file"),
        "{said}"
    );
    assert_eq!(server.names(2), ["hello"]);
    assert_eq!(text(&server.call(3, "hello")), "hello");
    assert!(!server.told_unasked(), "{:?}", server.out.seen);

    // Written again, it is followed as before.
    std::fs::write(&file, config(&["bye"], &[tool("bye", "bye")])).expect("written");
    server.told();
    assert_eq!(server.names(4), ["bye"]);
}

#[test]
fn the_other_keys_wait_for_a_restart_and_loosen_nothing() {
    let scene = Scene::new();
    let mut server = scene.serve_named(&config(&["hello"], &[tool("hello", "hello")]));
    assert_eq!(server.names(1), ["hello"]);
    // A built-in turned on and the sandbox turned off, beside a new declared tool.
    std::fs::write(
        scene.named(),
        format!(
            "[sandbox]\nmode = \"off\"\n\n{}",
            config(
                &["hello", "bash", "bye"],
                &[tool("hello", "hello"), tool("bye", "bye")]
            )
        ),
    )
    .expect("rewritten");
    let said = server.wait_log("a running server takes in only the declared tools");
    assert!(
        said.ends_with(&format!(
            "{} (from --config): a running server takes in only the declared tools, so what changed in [tools] active (other than the declared tools), [sandbox] applies only after a restart of pi-tools mcp",
            scene.named().display()
        )),
        "{said}"
    );
    server.told();
    assert_eq!(server.names(2), ["hello", "bye"]);
    let bash = server.request(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "echo escaped"}}}));
    assert_eq!(bash["error"]["code"], -32602, "{bash}");
}

#[test]
fn a_declared_tool_that_was_not_active_and_left_the_file_is_simply_unknown() {
    let scene = Scene::new();
    let start = config(&["hello"], &[tool("hello", "hello"), tool("idle", "idle")]);
    // At `info` the log says what was taken in, even when the listing stays the same.
    let mut command = scene.named_command(&start);
    command.env("RUST_LOG", "info");
    let mut server = Server::start(command);
    let idle = server.call(1, "idle");
    assert_eq!(
        idle["error"]["message"],
        "Tool idle is registered but not active in this configuration, so it cannot be called. The active tools are: hello. To turn it on, add \"idle\" to `active` in the `[tools]` section of pi-tools.toml.",
        "{idle}"
    );
    std::fs::write(scene.named(), config(&["hello"], &[tool("hello", "hello")]))
        .expect("rewritten");
    server.wait_log("changed: the declared tools are now hello");
    let idle = server.call(2, "idle");
    assert_eq!(
        idle["error"]["message"],
        "Unknown tool `idle`. The tools are: hello. Call one of them by its exact name.",
        "{idle}"
    );
    // The listing did not change: no client is told.
    assert_eq!(server.names(3), ["hello"]);
    assert!(!server.told_unasked(), "{:?}", server.out.seen);
}

#[test]
fn a_call_already_running_finishes_with_the_tool_it_started_with() {
    let scene = Scene::new();
    let slow = "[tool.slow]\ndescription = \"Wait for go.\"\nscript = 'touch started; while [ ! -e go ]; do sleep 0.05; done; echo old'\n";
    let mut server = scene.serve_named(&config(&["slow"], &[slow.to_owned()]));
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    let started = scene.work.path().join("started");
    let deadline = Instant::now() + PATIENCE;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the call did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    replace_by_rename(&scene.named(), &config(&["slow"], &[tool("slow", "new")]));
    server.told();
    std::fs::write(scene.work.path().join("go"), "").expect("go");
    let first = server.wait(|line| line["id"] == 1, "the first call's answer");
    assert_eq!(text(&first), "old");
    assert_eq!(text(&server.call(2, "slow")), "new");
}

#[test]
fn a_found_file_takes_in_a_change_only_once_the_user_trusts_it() {
    let scene = Scene::new();
    // Only tightening: it applies without trust, and its tools are built-ins.
    std::fs::write(scene.found(), config(&["read"], &[])).expect("written");
    let mut server = Server::start(scene.command(&["mcp"]));
    assert_eq!(server.names(1), ["read"]);

    // A declared tool runs a command: that needs trust, which a found file never had.
    let with_hello = config(&["read", "hello"], &[tool("hello", "hello")]);
    std::fs::write(scene.found(), &with_hello).expect("rewritten");
    let file = std::fs::canonicalize(scene.found()).expect("the file");
    let said = server.wait_log("changed, but its new content was refused");
    assert!(
        said.contains(&format!(
            "{} (found in the working directory) changed, but its new content was refused, so the tools served stay as they were. {}: this configuration was found in the working directory, and it needs the user's trust before it applies, but it has never been trusted. It needs trust because of: [tool.hello] (runs a program it names).",
            scene.found().display(),
            file.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("then run `pi-tools trust {}`", file.display())),
        "{said}"
    );
    assert_eq!(server.names(2), ["read"]);
    assert!(!server.told_unasked(), "{:?}", server.out.seen);

    // The user trusts it: the running server takes it in.
    let trusted = scene.command(&["trust"]).output().expect("trust runs");
    assert!(trusted.status.success(), "{trusted:?}");
    server.told();
    assert_eq!(server.names(3), ["read", "hello"]);
    assert_eq!(text(&server.call(4, "hello")), "hello");

    // Any change revokes the trust: nothing of it is taken in.
    std::fs::write(
        scene.found(),
        config(&["read", "hello"], &[tool("hello", "planted")]),
    )
    .expect("rewritten");
    let said = server.wait_log("changed, but its new content was refused");
    assert!(
        said.contains("but it changed since it was trusted"),
        "{said}"
    );
    assert_eq!(text(&server.call(5, "hello")), "hello");
    assert!(!server.told_unasked(), "{:?}", server.out.seen);
}

#[tokio::test]
async fn a_2025_http_session_and_a_2026_listen_hear_of_the_change() {
    let start = config(&["hello"], &[tool("hello", "hello")]);
    let server = HttpServer::spawn_with(None, &[], Some(&start)).await;
    let session = server.open_session().await;
    let stream = server.stream(&session).send().await.expect("the stream");
    assert_eq!(stream.status(), 200);
    let mut stream = Events::new(stream);
    let listen = request_2026(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        &json!({}),
    );
    let listening = server
        .post_raw(None, &listen.to_string())
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "subscriptions/listen")
        .send()
        .await
        .expect("the listen");
    let mut listening = Events::new(listening);
    let acknowledged = listening.next().await.expect("the acknowledgment");
    assert_eq!(
        acknowledged["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{acknowledged}"
    );

    replace_by_rename(
        &server.config_file(),
        &config(&["bye"], &[tool("bye", "bye")]),
    );
    let told = loop {
        let event = stream.next().await.expect("the stream stays open");
        if event["method"] == "notifications/tools/list_changed" {
            break event;
        }
    };
    assert!(told.get("id").is_none(), "{told}");
    let heard = listening.next().await.expect("the listen stays open");
    assert_eq!(
        heard,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}})
    );
    let listed = server
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .send()
        .await
        .expect("sent");
    let listed = messages(listed).await;
    assert_eq!(names(&listed[0]), ["bye"]);
    let (listed, _, _) = server
        .post_2026(&request_2026(3, "tools/list", json!({}), &json!({})))
        .await;
    assert_eq!(names(&listed), ["bye"]);
    let called = server.call(&session, 4, "bye", json!({})).await;
    assert_eq!(text(&called), "bye");
}

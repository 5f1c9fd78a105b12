//! `pi-tools call`: one tool, run in the environment the configuration describes, as `run`
//! and a program's own toolbox run it.

use super::*;

/// Runs `pi-tools call NAME --args ARGS --cwd DIR` with no configuration but `config`
/// (else the embedded default, since `dir` has no `pi-tools.toml`), and returns its result
/// message.
fn call(dir: &Path, config: Option<&Path>, name: &str, arguments: Value) -> Value {
    let mut command = pi_tools();
    command
        .current_dir(dir)
        .env_remove("PI_TOOLS_CONFIG")
        .args(["call", name, "--args", &arguments.to_string(), "--cwd"])
        .arg(dir);
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("one JSON line")
}

/// Issue: `pi-tools call` ran its tool unconfined in the directory, whatever `[sandbox]`
/// and `[paths]` said, though every other front applies them. Under the embedded default
/// bash cannot write outside the working directory; `[sandbox] mode = "off"` lets it, and
/// `[paths] allowed_roots` keeps the file tools inside.
#[test]
fn call_runs_the_tool_in_the_environment_the_configuration_describes() {
    let base = scratch_dir("call-sandbox");
    let dir = base.join("ws");
    std::fs::create_dir(&dir).unwrap();
    let outside = base.join("outside.txt");
    let touch = json!({"command": format!("touch {} inside.txt", outside.display())});

    let refused = call(&dir, None, "bash", touch.clone());
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["content"][0]["text"],
        format!(
            "touch: cannot touch '{}': Permission denied\n\nCommand exited with code 1",
            outside.display()
        )
    );
    assert!(
        !outside.exists(),
        "bash wrote outside the working directory"
    );
    assert!(dir.join("inside.txt").exists());

    let off = scratch_file("call-sandbox-off.toml", "[sandbox]\nmode = \"off\"\n");
    let allowed = call(&dir, Some(&off), "bash", touch);
    assert_eq!(allowed["isError"], false, "{allowed}");
    assert!(outside.exists());

    let confined = scratch_file(
        "call-allowed-roots.toml",
        "[paths]\nallowed_roots = [\".\"]\n",
    );
    let read = call(
        &dir,
        Some(&confined),
        "read",
        json!({"path": outside.display().to_string()}),
    );
    assert_eq!(read["isError"], true, "{read}");
    let text = read["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("is outside the allowed directories"),
        "{text}"
    );
}

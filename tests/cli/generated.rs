//! What the command line generates from the catalog: docs, the prompt, schemas, completions
//! and the man page.

use super::*;

#[test]
fn a_user_crate_sees_its_own_tools_in_the_catalog() {
    let output = feed(
        {
            let mut c = my_tools();
            c.args(["catalog", "--all", "--format", "json"]);
            c
        },
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let catalog: Value = serde_json::from_str(&stdout(&output)).expect("the catalog is JSON");
    let names: Vec<&str> = catalog["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in ["fill", "shout", "sleep_ms"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}

#[test]
fn catalog_markdown_documents_the_active_tools() {
    let output = my_tools_with_config("catalog", &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    insta::assert_snapshot!("catalog_markdown", stdout(&output));
}

#[test]
fn catalog_writes_html_to_a_file() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli/catalog.html");
    let _ = std::fs::remove_file(&target);
    let output = my_tools_with_config(
        "catalog",
        &[
            "--format",
            "html",
            "-o",
            target.to_str().expect("a UTF-8 path"),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "");
    let html = std::fs::read_to_string(&target).expect("the page was written");
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "{html}"
    );
    assert!(html.contains("sleep_ms") && html.contains("shout"));
}

#[test]
fn prompt_prints_the_sections_for_the_active_tools() {
    let output = my_tools_with_config("prompt", &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "Available tools:\n\
         - sleep_ms: Wait a number of milliseconds\n\
         - shout: Repeat a text in capital letters\n\
         \n\
         Guidelines:\n\
         - Keep answers short.\n"
    );
}

#[test]
fn schema_prints_the_openai_tool_array() {
    let output = my_tools_with_config("schema", &["--dialect", "openai"]);
    assert!(output.status.success(), "{}", stderr(&output));
    insta::assert_snapshot!("schema_openai", stdout(&output));
}

/// A tool a dialect cannot express is left out of that dialect only, named with its path
/// (issue 48); `--strict-catalog` keeps the all-or-nothing answer.
#[test]
fn schema_names_the_tool_and_path_a_dialect_cannot_express() {
    let why = "the schema of tool `fill` cannot be expressed in the gemini dialect at \
         `/properties/values/additionalProperties`: a map with arbitrary keys has no Gemini \
         form; use a list of `{key, value}` objects instead";
    let output = my_tools_with_config("schema", &["--dialect", "gemini", "--all"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let tools: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let names: Vec<&str> = tools
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"shout") && !names.contains(&"fill"),
        "{names:?}"
    );
    assert_eq!(
        stderr(&output),
        format!("pi-tools: left out of gemini: {why}\n")
    );

    let strict = my_tools_with_config(
        "schema",
        &["--dialect", "gemini", "--all", "--strict-catalog"],
    );
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(stdout(&strict), "");
    assert!(
        stderr(&strict).ends_with(&format!("error: left out of gemini: {why}\n")),
        "{}",
        stderr(&strict)
    );
}

#[test]
fn schema_refuses_an_unknown_dialect_listing_the_known_ones() {
    let output = feed(
        {
            let mut c = pi_tools();
            c.args(["schema", "--dialect", "cohere"]);
            c
        },
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains(
            "[possible values: mcp, openai, openai-strict, openai-responses, anthropic, gemini]"
        ),
        "{message}"
    );
}

#[test]
fn color_always_colours_a_pipe_and_never_or_no_color_do_not() {
    let batch = r#"[{"id": "f", "name": "shout", "arguments": {"text": "hi"}}]"#;
    let output_with = |flags: &[&str], no_color: bool| {
        let mut command = my_tools();
        command
            .args(["run", "--config"])
            .arg(my_tools_config())
            .args(flags);
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        let output = feed(command, batch);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let coloured = output_with(&["--color", "always"], true);
    assert!(coloured.contains("\x1b["), "{coloured:?}");
    assert!(coloured.contains("HI"));
    for (flags, no_color) in [
        (&["--color", "never"][..], false),
        (&[][..], true),
        (&["--color", "auto"][..], false),
    ] {
        let plain = output_with(flags, no_color);
        assert_eq!(
            plain,
            "✓ shout {\"text\":\"hi\"}\n  HI\n1 call: 1 succeeded, 0 failed.\n"
        );
    }
}

#[test]
fn catalog_takes_a_title_and_a_heading_level_and_dash_writes_to_standard_output() {
    let output = my_tools_with_config(
        "catalog",
        &["--heading-level", "1", "--title", "My tools", "-o", "-"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with("# My tools\n\n- [sleep_ms](#sleep_ms)"),
        "{text}"
    );
    assert!(text.contains("\n## shout\n"));
    assert!(
        !Path::new("-").exists(),
        "`-o -` must not create a file named `-`"
    );
    let output = my_tools_with_config("catalog", &["--heading-level", "5"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn completions_are_generated_for_every_shell() {
    let markers = [
        ("bash", "complete -F _pi__tools"),
        ("zsh", "#compdef pi-tools"),
        ("fish", "complete -c pi-tools"),
        ("powershell", "Register-ArgumentCompleter"),
    ];
    for (shell, marker) in markers {
        let mut command = pi_tools();
        command.args(["completions", shell]);
        let output = feed(command, "");
        assert!(output.status.success(), "{shell}: {}", stderr(&output));
        let script = stdout(&output);
        assert!(script.contains(marker), "{shell}: no `{marker}`");
        for word in ["catalog", "completions", "heading-level", "color"] {
            assert!(script.contains(word), "{shell}: no `{word}`");
        }
    }
}

#[test]
fn a_user_crate_s_completions_use_its_own_binary_name() {
    let mut command = my_tools();
    command.args(["completions", "fish"]);
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("complete -c my_tools"));
}

#[test]
fn the_man_page_is_generated_to_standard_output_or_a_file() {
    let mut command = pi_tools();
    command.args(["man", "-o", "-"]);
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    let page = stdout(&output);
    assert!(page.contains(".TH pi-tools 1"), "{page}");
    for word in ["completions", "catalog", "PI_TOOLS_CONFIG"] {
        assert!(page.contains(word), "the man page lacks `{word}`");
    }
    let target = scratch_dir("man").join("pi-tools.1");
    let mut command = pi_tools();
    command.args(["man", "-o"]).arg(&target);
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&target).expect("written"), page);
}

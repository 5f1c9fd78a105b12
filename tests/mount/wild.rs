//! A mounted server whose schemas are as a public tool catalog has them
//! (`wild_server.py`): one tool a dialect cannot express is left out of that dialect only
//! and named, in `schema`, `check` and the library; a boolean reaches a `"True"`/`"False"`
//! enum as its member; `properties: {}` accepts any keys; contradictory schemas are warned
//! about; a dotted name is served under a name providers accept.

use std::path::Path;

use pi_tools::config::ServerSettings;
use pi_tools::dialect::{Dialect, tool_schemas};
use pi_tools::mount::{McpServerTools, MountOptions};
use serde_json::{Value, json};

use super::mount_support::{STARTUP, Setup, text_of, toml_list};

fn command() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mount/wild_server.py");
    vec![
        "python3".into(),
        "-u".into(),
        script.to_str().expect("a UTF-8 path").into(),
    ]
}

/// A configuration that mounts the wild server as `wild`, `extra` added to its entry.
fn config(extra: &str) -> String {
    format!(
        "[tools]\nactive = [\"wild__*\"]\n\n[mcp.servers.wild]\ncommand = {}\nstartup_timeout_secs = 60\n{extra}",
        toml_list(&command())
    )
}

/// The names in a `schema` listing, whatever the dialect's shape.
fn names(listing: &str) -> Vec<String> {
    let tools: Value = serde_json::from_str(listing).expect("a JSON array");
    tools
        .as_array()
        .expect("an array")
        .iter()
        .map(|t| {
            t.get("name")
                .or_else(|| t["function"].get("name"))
                .and_then(Value::as_str)
                .expect("a name")
                .to_owned()
        })
        .collect()
}

/// What the server received for the one call `name(arguments)`, or the error text.
fn reached(setup: &Setup, name: &str, arguments: Value) -> Result<Value, String> {
    let messages = setup.run_calls(json!([{"id": "1", "name": name, "arguments": arguments}]));
    let text = text_of(&messages[0]);
    if messages[0]["isError"] == true {
        return Err(text);
    }
    Ok(serde_json::from_str(&text).expect("the server's echo"))
}

#[test]
fn a_tool_a_dialect_cannot_express_is_left_out_of_that_dialect_only_and_named() {
    let setup = Setup::new(&config(""));
    let (ok, stdout, stderr) = setup.run(&["schema", "--dialect", "openai-strict"], "");
    assert!(ok, "{stderr}");
    let listed = names(&stdout);
    assert!(
        !listed.contains(&"wild__free_form".to_owned()),
        "{listed:?}"
    );
    assert!(listed.contains(&"wild__plain".to_owned()), "{listed:?}");
    assert!(listed.contains(&"wild__level".to_owned()), "{listed:?}");
    assert!(
        stderr.contains("wild__free_form") && stderr.contains("/properties/data"),
        "{stderr}"
    );
    // Each offender once.
    assert_eq!(stderr.matches("wild__free_form").count(), 1, "{stderr}");

    // Gemini spells the integer enum as strings instead of refusing the catalog.
    let (ok, stdout, stderr) = setup.run(&["schema", "--dialect", "gemini"], "");
    assert!(ok, "{stderr}");
    let tools: Value = serde_json::from_str(&stdout).expect("JSON");
    let level = tools
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "wild__level")
        .expect("level is listed");
    assert_eq!(
        level["parameters"]["properties"]["level"]["enum"],
        json!(["1", "2", "3"])
    );
    assert!(
        level["parameters"]["properties"]["level"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("How loud. One of the numbers 1, 2, 3")),
        "{level}"
    );

    // The old all-or-nothing, on request, names every offender.
    let (ok, stdout, stderr) = setup.run(
        &["schema", "--dialect", "openai-strict", "--strict-catalog"],
        "",
    );
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("wild__free_form") && !stderr.contains("wild__closed"),
        "{stderr}"
    );

    // `check` lists every offender of every dialect in one run.
    let (ok, stdout, stderr) = setup.run(&["check"], "");
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("left out of openai-strict: the schema of tool `wild__free_form`")
            && stdout
                .contains("left out of openai-responses: the schema of tool `wild__free_form`"),
        "{stdout}"
    );
    let (ok, _, stderr) = setup.run(&["check", "--strict-catalog"], "");
    assert!(!ok && stderr.contains("wild__free_form"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_returns_the_tools_left_out_next_to_the_schemas() {
    let server = mounted().await;
    let tools = server.definitions();
    let strict = tool_schemas(tools.iter().map(|t| t.as_ref()), Dialect::OpenAiStrict);
    assert_eq!(strict.schemas.len() + strict.excluded.len(), tools.len());
    let left_out: Vec<(&str, &str)> = strict
        .excluded
        .iter()
        .map(|e| (e.tool.as_deref().unwrap_or(""), e.path.as_str()))
        .collect();
    assert_eq!(left_out, [("wild__free_form", "/properties/data")]);
    let gemini = tool_schemas(tools.iter().map(|t| t.as_ref()), Dialect::Gemini);
    assert!(gemini.excluded.is_empty(), "{:?}", gemini.excluded);
    // Gemini keeps what it drops in the description.
    let when = gemini
        .schemas
        .iter()
        .find(|t| t["name"] == "wild__when")
        .expect("listed");
    assert_eq!(
        when["parameters"]["properties"]["day"]["description"],
        json!("The day. Format: date. Optional.")
    );
    server.end().await;
}

async fn mounted() -> McpServerTools {
    let mut settings = ServerSettings::stdio("wild", command());
    settings.startup_timeout = STARTUP;
    let cwd = std::env::current_dir().expect("cwd");
    McpServerTools::connect_in(settings, &cwd, &MountOptions::default())
        .await
        .expect("the wild server starts")
}

#[test]
fn a_number_for_an_integer_enum_sent_as_a_string_reaches_the_server_as_the_number() {
    let setup = Setup::new(&config(""));
    // The untyped enum has no `type` to convert by: its members say what "0.5" means.
    let got =
        reached(&setup, "wild__level", json!({"level": "2", "step": "0.5"})).expect("accepted");
    assert_eq!(got["arguments"], json!({"level": 2, "step": 0.5}));
}

#[test]
fn a_boolean_for_a_true_false_enum_becomes_its_member_and_errors_show_it_as_sent() {
    let setup = Setup::new(&config(""));
    let got = reached(&setup, "wild__toggle", json!({"flag": true})).expect("accepted");
    assert_eq!(got["arguments"], json!({"flag": "True"}));
    let got = reached(&setup, "wild__toggle", json!({"flag": false})).expect("accepted");
    assert_eq!(got["arguments"], json!({"flag": "False"}));
    // No member spells it: refused, with the value as the model sent it.
    let error = reached(
        &setup,
        "wild__toggle",
        json!({"flag": "True", "answer": true}),
    )
    .expect_err("refused");
    assert!(
        error.contains("answer: true is not one of the allowed values"),
        "{error}"
    );
}

#[test]
fn empty_properties_accept_any_keys_and_a_closed_one_names_the_parameter() {
    let setup = Setup::new(&config(""));
    let got =
        reached(&setup, "wild__free_form", json!({"data": {"anything": 1}})).expect("accepted");
    assert_eq!(got["arguments"], json!({"data": {"anything": 1}}));
    let error = reached(&setup, "wild__closed", json!({"opts": {"x": 1}})).expect_err("refused");
    assert!(
        error.contains("`opts` takes no properties") && !error.contains("this tool"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contradictory_schemas_are_warned_about_and_stay_listed() {
    let server = mounted().await;
    let warnings = server.warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`wild__contradiction` at `/properties/flag`")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(
            |w| w.contains("`wild__contradiction` at `/properties/unit`") && w.contains("\"k\"")
        ),
        "{warnings:?}"
    );
    server.end().await;

    let setup = Setup::new(&config(""));
    let (ok, stdout, stderr) = setup.run(&["check"], "");
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("warning: the schema of tool `wild__contradiction` at `/properties/flag`"),
        "{stdout}"
    );
    let (ok, stdout, stderr) = setup.run(&["schema", "--dialect", "openai"], "");
    assert!(ok, "{stderr}");
    assert!(names(&stdout).contains(&"wild__contradiction".to_owned()));
}

#[test]
fn a_dotted_name_is_served_rewritten_and_called_by_its_own_name() {
    let setup = Setup::new(&config(""));
    let got = reached(&setup, "wild__math_factorial", json!({"n": 5})).expect("accepted");
    assert_eq!(
        got,
        json!({"name": "math.factorial", "arguments": {"n": 5}})
    );

    let renamed = Setup::new(&config("rename = { \"math.factorial\" = \"factorial\" }\n"));
    let got = reached(&renamed, "wild__factorial", json!({"n": 3})).expect("accepted");
    assert_eq!(got["name"], "math.factorial");

    // Two tools under one name are refused, with the way out.
    let collide = Setup::new(&config("env = { WILD_COLLIDE = \"1\" }\n"));
    let (ok, _, stderr) = collide.run(&["check"], "");
    assert!(!ok && stderr.contains("rename"), "{stderr}");
    let fixed = Setup::new(&config(
        "env = { WILD_COLLIDE = \"1\" }\nrename = { \"math.factorial\" = \"factorial\" }\n",
    ));
    let (ok, stdout, stderr) = fixed.run(&["schema", "--dialect", "gemini"], "");
    assert!(ok, "{stderr}");
    let listed = names(&stdout);
    assert!(
        listed.contains(&"wild__factorial".to_owned())
            && listed.contains(&"wild__math_factorial".to_owned()),
        "{listed:?}"
    );
}

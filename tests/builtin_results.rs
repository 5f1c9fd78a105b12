//! The built-ins' typed results: every successful call's structured result validates
//! against the tool's own output schema (with jsonschema), in the golden transcripts and in a
//! batch that reaches each tool's other paths (truncation, limits, images, each edit stage),
//! and says what the text says.
#![cfg(feature = "builtins")]

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{AgentTool, Registry, ToolContext, wrap};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn tool(name: &str) -> Arc<dyn AgentTool> {
    let registry = Registry::from_inventory().expect("the built-ins register");
    wrap(Arc::clone(registry.get(name).expect("a built-in")), None)
}

/// Asserts `value` is valid against `name`'s output schema, naming every violation.
fn assert_valid(name: &str, value: &Value) {
    let tool = tool(name);
    let schema = tool
        .output_schema()
        .expect("every built-in has an output schema");
    let validator = jsonschema::validator_for(schema).expect("the output schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: {value} is not valid: {errors:?}"
    );
}

/// The golden transcripts record every successful call's structured result: each is valid
/// against its tool's schema, and every built-in's successful end event has one.
#[test]
fn the_golden_transcripts_results_match_their_schemas() {
    let builtins = ["read", "bash", "edit", "write", "grep", "find", "ls"];
    let mut checked = Vec::new();
    for golden in ["builtins/run.txt", "mounted/run.txt"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("golden")
            .join(golden);
        let text = std::fs::read_to_string(&path).expect("the golden transcript");
        for line in text.lines().filter(|l| l.starts_with('{')) {
            let event: Value = serde_json::from_str(line).expect("a JSON event");
            if event["type"] != "tool_execution_end" || event["isError"] == true {
                continue;
            }
            let name = event["toolName"].as_str().unwrap_or_default();
            if !builtins.contains(&name) {
                continue;
            }
            let structured = &event["result"]["structuredContent"];
            assert!(
                !structured.is_null(),
                "{golden}: {name} has no structured result"
            );
            assert_valid(name, structured);
            checked.push(name.to_owned());
        }
    }
    checked.sort();
    checked.dedup();
    assert_eq!(checked, ["edit", "find", "grep", "ls", "read", "write"]);
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .expect("a PNG encodes");
    out
}

/// Runs `name` on `args` in `dir` and returns its structured result, checked valid.
async fn structured(dir: &Path, name: &str, args: Value) -> Value {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    let ctx = ToolContext::new("c", CancellationToken::new()).with_env(env);
    let result = tool(name)
        .execute(args.clone(), ctx)
        .await
        .unwrap_or_else(|e| panic!("{name} {args} failed: {}", e.message()));
    let value = result
        .structured_content
        .unwrap_or_else(|| panic!("{name} {args} has no structured result"));
    assert_valid(name, &value);
    value
}

#[tokio::test]
async fn each_tools_results_match_its_schema_and_its_text() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let long: String = (1..=2500).map(|n| format!("line {n}\n")).collect();
    std::fs::write(d.join("long.txt"), &long).expect("a file");
    std::fs::write(d.join("a.rs"), "fn alpha() {}\nfn beta() {}\n// alpha\n").expect("a file");
    std::fs::create_dir(d.join("sub")).expect("a directory");
    std::fs::write(d.join("sub/b.rs"), "alpha\n").expect("a file");
    std::fs::write(d.join("pic.png"), png(4, 3)).expect("an image");

    let v = structured(d, "write", json!({"path": "w.txt", "content": "héllo\n"})).await;
    assert_eq!(v["outcome"], "created");
    assert_eq!(v["bytes"], 7);
    let v = structured(d, "write", json!({"path": "w.txt", "content": "x"})).await;
    assert_eq!(v["outcome"], "replaced");

    let v = structured(d, "read", json!({"path": "long.txt"})).await;
    assert_eq!(
        (
            v["kind"].clone(),
            v["startLine"].clone(),
            v["endLine"].clone()
        ),
        (json!("text"), json!(1), json!(2000))
    );
    assert_eq!(
        (v["totalLines"].clone(), v["truncated"].clone()),
        (json!(2500), json!(true))
    );
    assert_eq!(v["nextOffset"], 2001);
    let v = structured(d, "read", json!({"path": "long.txt", "offset": 2490})).await;
    assert_eq!(
        (v["truncated"].clone(), v["nextOffset"].clone()),
        (json!(false), Value::Null)
    );
    let v = structured(d, "read", json!({"path": "pic.png"})).await;
    assert_eq!(v["kind"], "image");
    assert_eq!(
        v["image"],
        json!({"mimeType": "image/png", "width": 4, "height": 3, "originalWidth": 4, "originalHeight": 3})
    );

    let v = structured(d, "grep", json!({"pattern": "alpha"})).await;
    assert_eq!(
        v["matches"],
        json!([
            {"path": "a.rs", "line": 1, "text": "fn alpha() {}"},
            {"path": "a.rs", "line": 3, "text": "// alpha"},
            {"path": "sub/b.rs", "line": 1, "text": "alpha"}
        ])
    );
    assert_eq!(
        (v["truncated"].clone(), v["limitReached"].clone()),
        (json!(false), json!(false))
    );
    let v = structured(d, "grep", json!({"pattern": "alpha", "limit": 1})).await;
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["limitReached"], true);
    let v = structured(d, "grep", json!({"pattern": "nowhere"})).await;
    assert_eq!(v["matches"], json!([]));

    let v = structured(d, "find", json!({"pattern": "*.rs"})).await;
    assert_eq!(
        v["paths"],
        json!([{"path": "a.rs", "dir": false}, {"path": "sub/b.rs", "dir": false}])
    );
    let v = structured(d, "ls", json!({"limit": 2})).await;
    assert_eq!(
        v["entries"],
        json!([{"path": "a.rs", "dir": false}, {"path": "long.txt", "dir": false}])
    );
    assert_eq!(v["limitReached"], true);

    let v = structured(
        d,
        "edit",
        json!({"path": "a.rs", "edits": [
            {"oldText": "fn beta() {}", "newText": "fn beta() {}\nfn gamma() {}"},
            {"oldText": "//\u{a0}alpha", "newText": "// ALPHA"}
        ]}),
    )
    .await;
    assert_eq!(v["edits"], json!(["exact", "normalised"]));
    assert_eq!(v["changedLines"], json!([{"start": 3, "end": 4}]));
    assert!(
        v["diff"]
            .as_str()
            .unwrap_or_default()
            .contains("+fn gamma() {}"),
        "{v}"
    );

    let v = structured(d, "bash", json!({"command": "seq 1 3000"})).await;
    assert_eq!(
        (v["exitCode"].clone(), v["signal"].clone()),
        (json!(0), Value::Null)
    );
    assert_eq!(v["truncated"], true);
    // The spill file is the session's, deleted with its environment.
    assert!(v["fullOutputPath"].is_string(), "{v}");
    assert!(v["durationMs"].is_u64());
    let v = structured(d, "bash", json!({"command": "echo hi"})).await;
    assert_eq!(
        (v["truncated"].clone(), v["fullOutputPath"].clone()),
        (json!(false), Value::Null)
    );
}

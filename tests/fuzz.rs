//! Fuzzing with a fixed seed: what a model or a configuration file can hand the library must
//! never make it panic.
//!
//! - argument coercion and validation against every built-in tool's schema, then the
//!   deserialisation the tool's wrapper does, with arbitrary JSON (huge and negative
//!   numbers, numbers and JSON as strings, nulls, deep nesting, unknown keys);
//! - edit's matching (exact, normalised, forgiving indentation and blank lines) with files
//!   and oldTexts cut from Unicode-heavy pieces, mixed line endings, shifted indentation and
//!   blank lines left out or added;
//! - configuration parsing with TOML built from the real sections and keys and arbitrary
//!   values, and arbitrary text.
//!
//! Each property runs `PI_TOOLS_FUZZ_CASES` cases (default 300, to keep CI fast). The full
//! run:
//!
//! ```text
//! PI_TOOLS_FUZZ_CASES=100000 cargo test --release --test tools fuzz::
//! ```
#![cfg(feature = "builtins")]

use std::sync::Arc;

use pi_tools::ArgumentValidator;
use pi_tools::builtins::bash::BashArgs;
use pi_tools::builtins::edit::{EditArgs, Replacement, apply_edits, prepare_arguments};
use pi_tools::builtins::find::FindArgs;
use pi_tools::builtins::grep::GrepArgs;
use pi_tools::builtins::ls::LsArgs;
use pi_tools::builtins::read::ReadArgs;
use pi_tools::builtins::write::WriteArgs;
use pi_tools::config::Config;
use pi_tools::tool::{Registry, ToolDefinition};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Number, Value};
use std::sync::atomic::{AtomicU32, Ordering};

/// Counts the cases a property ran, to show the run was as long as asked.
struct Ran(AtomicU32);

impl Ran {
    fn new() -> Ran {
        Ran(AtomicU32::new(0))
    }

    fn one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn at_least_asked(&self) {
        let ran = self.0.load(Ordering::Relaxed);
        assert!(ran >= cases(), "{ran} cases ran, {} asked", cases());
        println!("{ran} cases, 0 panics");
    }
}

/// The seed every run starts from, so a failure found once is found again.
const SEED: [u8; 32] = *b"pi-tools fuzz: panics are bugs!!";

/// Cases per property: `PI_TOOLS_FUZZ_CASES`, else 300.
fn cases() -> u32 {
    std::env::var("PI_TOOLS_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

/// A runner with the fixed seed and [`cases`] cases (no failure files: the seed is the
/// record).
fn runner() -> TestRunner {
    let config = RunnerConfig {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..RunnerConfig::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED))
}

fn definitions() -> Vec<Arc<dyn ToolDefinition>> {
    Registry::from_inventory()
        .expect("the built-in tools register")
        .iter()
        .cloned()
        .collect()
}

// ---- argument coercion -------------------------------------------------------------

/// Numbers at and past every edge a tool's arithmetic could trip on.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![
            0i128,
            -1,
            1,
            i64::MAX as i128,
            i64::MIN as i128,
            u64::MAX as i128,
            9_223_372_036_854_775_807,
            86_400,
            86_401,
            100,
            101,
        ])
        .prop_map(|n| match (u64::try_from(n), i64::try_from(n)) {
            (Ok(u), _) => Value::from(u),
            (_, Ok(i)) => Value::from(i),
            _ => Value::Null,
        }),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![1e300, -1e300, 9.3e18, 1.8e19, 0.5, -0.0, 1e-300])
            .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

/// Strings a model sends: numbers, booleans and JSON as text, paths, odd Unicode.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,12}",
        prop::sample::select(vec![
            "",
            " ",
            "0",
            "-1",
            "1e400",
            "18446744073709551616",
            "9223372036854775807",
            "true",
            "False",
            "null",
            "NaN",
            "inf",
            "[]",
            "{}",
            "[1,2]",
            r#"[{"oldText":"a","newText":"b"}]"#,
            r#"{"oldText":"a"}"#,
            ".",
            "..",
            "/",
            "/proc/self/fd/0",
            "a\u{0}b",
            "\u{FEFF}",
            "Sequential",
            " parallel ",
        ])
        .prop_map(str::to_owned),
        number().prop_map(|n| n.to_string()),
    ]
}

/// Arbitrary JSON, objects keyed mostly by the tools' own property names.
fn json() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "path",
        "pattern",
        "command",
        "timeout",
        "offset",
        "limit",
        "context",
        "glob",
        "ignoreCase",
        "literal",
        "content",
        "edits",
        "oldText",
        "newText",
        "file_path",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|pairs| Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<Map<String, Value>>()
            )),
        ]
    })
}

/// What the tool's wrapper does with validated arguments: deserialise them into the
/// tool's argument type (an error is fine, a panic is not).
fn deserialize(tool: &str, args: Value) {
    let _ = match tool {
        "read" => serde_json::from_value::<ReadArgs>(args).map(drop),
        "bash" => serde_json::from_value::<BashArgs>(args).map(drop),
        "edit" => serde_json::from_value::<EditArgs>(args).map(drop),
        "write" => serde_json::from_value::<WriteArgs>(args).map(drop),
        "grep" => serde_json::from_value::<GrepArgs>(args).map(drop),
        "find" => serde_json::from_value::<FindArgs>(args).map(drop),
        "ls" => serde_json::from_value::<LsArgs>(args).map(drop),
        _ => Ok(()),
    };
}

#[test]
fn argument_coercion_and_validation_never_panic() {
    let tools: Vec<(String, Value, ArgumentValidator)> = definitions()
        .into_iter()
        .map(|d| {
            let schema = d.spec().parameters.clone();
            let validator = ArgumentValidator::new(&schema)
                .expect("a built-in schema compiles")
                .rejecting_unknown_properties(true);
            (d.spec().name.to_owned(), schema, validator)
        })
        .collect();
    assert!(tools.len() >= 7, "{} tools registered", tools.len());
    let ran = Ran::new();
    runner()
        .run(&(0..tools.len(), json()), |(which, args)| {
            ran.one();
            let (name, schema, validator) = &tools[which];
            let _ = pi_tools::coerce_arguments(schema, args.clone());
            let args = if name == "edit" {
                prepare_arguments(args)
            } else {
                args
            };
            if let Ok(valid) = validator.validate(name, args) {
                deserialize(name, valid);
            }
            Ok(())
        })
        .expect("no panic");
    ran.at_least_asked();
}

// ---- edit matching -------------------------------------------------------------------

const PIECES: &[&str] = &[
    "a", "b", "fn", "x = 1;", " ", "  ", "    ", "\t", "\n", "\n", "\r\n", "é", "e\u{301}",
    "\u{201C}", "\u{201D}", "\u{2018}", "\u{2014}", "\u{00A0}", "\u{3000}", "ｘ", "（", "\u{FB01}",
    "\u{2026}", "\u{FDFA}", "\u{0301}", "'", "\"", "-", "\u{FEFF}", "\r",
];

fn filler(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..max).prop_map(|p| p.concat())
}

/// How an oldText is derived from the file.
#[derive(Debug, Clone)]
enum Derive {
    /// A byte range of the file, moved to character boundaries.
    Cut(usize, usize),
    /// The cut with quotes, dashes and spaces made plain (the normalised stage).
    Plain(usize, usize),
    /// The cut with every line's indentation changed (the indentation stage).
    Indent(usize, usize, i8, bool),
    /// The cut with its blank lines left out, or a blank line added after every line (the
    /// blank-line stage).
    Blanks(usize, usize, bool),
    /// Text of its own.
    Free(String),
}

fn derive() -> impl Strategy<Value = Derive> {
    let at = || (0usize..4096, 0usize..4096);
    prop_oneof![
        at().prop_map(|(a, b)| Derive::Cut(a, b)),
        at().prop_map(|(a, b)| Derive::Plain(a, b)),
        (at(), -4i8..5, any::<bool>()).prop_map(|((a, b), s, t)| Derive::Indent(a, b, s, t)),
        (at(), any::<bool>()).prop_map(|((a, b), drop)| Derive::Blanks(a, b, drop)),
        filler(8).prop_map(Derive::Free),
    ]
}

fn cut(file: &str, a: usize, b: usize) -> &str {
    if file.is_empty() {
        return "";
    }
    let (mut a, mut b) = (a % (file.len() + 1), b % (file.len() + 1));
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    while !file.is_char_boundary(a) {
        a -= 1;
    }
    while !file.is_char_boundary(b) {
        b += 1;
    }
    &file[a..b]
}

fn old_text(file: &str, how: &Derive) -> String {
    match how {
        Derive::Cut(a, b) => cut(file, *a, *b).to_owned(),
        Derive::Plain(a, b) => cut(file, *a, *b)
            .chars()
            .map(|c| match c {
                '\u{201C}' | '\u{201D}' => '"',
                '\u{2018}' => '\'',
                '\u{2014}' => '-',
                '\u{00A0}' | '\u{3000}' => ' ',
                c => c,
            })
            .collect(),
        Derive::Indent(a, b, shift, tabs) => cut(file, *a, *b)
            .split('\n')
            .map(|line| {
                let body = line.trim_start_matches([' ', '\t']);
                let depth = (line.len() - body.len()) as i64 + i64::from(*shift);
                let indent = if *tabs { "\t" } else { " " };
                format!("{}{body}", indent.repeat(depth.max(0) as usize))
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Derive::Blanks(a, b, true) => cut(file, *a, *b)
            .split('\n')
            .filter(|line| !line.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Derive::Blanks(a, b, false) => cut(file, *a, *b).replace('\n', "\n\n"),
        Derive::Free(text) => text.clone(),
    }
}

#[test]
fn edit_matching_never_panics() {
    let strategy = (
        filler(64),
        prop::collection::vec((derive(), filler(6)), 1..4),
    );
    let ran = Ran::new();
    runner()
        .run(&strategy, |(file, edits)| {
            ran.one();
            let edits: Vec<Replacement> = edits
                .iter()
                .map(|(how, new)| Replacement {
                    old_text: old_text(&file, how),
                    new_text: new.clone(),
                    replace_all: false,
                })
                .collect();
            if let Ok(edited) = apply_edits(&file, &edits, "f.txt") {
                // A successful edit changed the file, and says where.
                prop_assert_ne!(&edited.content, &file);
                prop_assert!(
                    edited.diff.first_changed_line.is_some() || !edited.diff.patch.is_empty()
                );
            }
            Ok(())
        })
        .expect("no panic");
    ran.at_least_asked();
}

// ---- configuration -------------------------------------------------------------------

fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        number().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "-1",
            "0",
            "1",
            "18446744073709551615",
            "18446744073709551616",
            "1e400",
            "nan",
            "-inf",
            "1.5",
            "true",
            "false",
            "\"\"",
            "\"parallel\"",
            "\"sequential\"",
            "\"workspace-write\"",
            "\"read-only\"",
            "\"off\"",
            "\"Off\"",
            "[]",
            "[\"read\"]",
            "[\"read\", \"read\"]",
            "[\"nope\"]",
            "[1, \"a\"]",
            "{}",
            "{ mode = \"parallel\" }",
            "\".\"",
            "\"/\"",
            "\"\\u0000\"",
            "[\".\", \"/nonexistent\"]",
            "2026-11-30",
        ])
        .prop_map(str::to_owned),
        text().prop_map(|s| format!("{s:?}")),
    ]
}

fn toml_line() -> impl Strategy<Value = String> {
    let headers = prop::sample::select(vec![
        "[tools]",
        "[tool.bash]",
        "[tool.edit]",
        "[tool.read]",
        "[tool.grep]",
        "[tool.nope]",
        "[paths]",
        "[prompt]",
        "[sandbox]",
        "[tool]",
        "[[tools]]",
        "[other]",
        "[tools.x]",
    ]);
    let keys = prop::sample::select(vec![
        "active",
        "execution",
        "max_concurrency",
        "timeout_secs",
        "mode",
        "max_file_bytes",
        "max_spill_bytes",
        "allowed_roots",
        "guidelines",
        "network",
        "writable_roots",
        "protected",
        "unknown",
        "tool.edit.max_file_bytes",
        "\"quoted key\"",
    ]);
    prop_oneof![
        headers.prop_map(str::to_owned),
        (keys, toml_value()).prop_map(|(k, v)| format!("{k} = {v}")),
        ".{0,16}",
    ]
}

#[test]
fn configuration_parsing_never_panics() {
    let registered = definitions();
    let ran = Ran::new();
    runner()
        .run(&prop::collection::vec(toml_line(), 0..12), |lines| {
            ran.one();
            let _ = Config::parse(&lines.join("\n"), "fuzz.toml", &registered);
            Ok(())
        })
        .expect("no panic");
    ran.at_least_asked();
}

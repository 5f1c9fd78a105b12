//! The cost of a 200-hunk V4A patch beside the same edits sent as edit calls. Run with
//! `cargo run --release --example bench_patch`.
//!
//! A generated source file of 4000 lines gets 200 one-line changes, each with three lines
//! of context above and below (as models write V4A hunks). Measured, each the median of
//! several runs:
//! - in memory: parsing the patch and applying its hunks (`parse_patch` + `apply_hunks`),
//!   beside the same 200 replacements as one `apply_edits` and as 200 `apply_edits` one
//!   after another (what 200 edit calls compute);
//! - through the tools on a file: one `apply_patch` call, beside one `edit` call with 200
//!   edits and 200 `edit` calls of one edit each (each reads and replaces the file).
//!
//! The data is generated in a temporary directory and removed afterwards.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::builtins::edit::{EditArgs, FileHints, Replacement, apply_edits, edit};
use pi_tools::builtins::patch::{ApplyPatchArgs, FileOp, apply_hunks, apply_patch, parse_patch};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{IntoToolResult, ToolContext};
use tokio_util::sync::CancellationToken;

const LINES: usize = 4000;
const HUNKS: usize = 200;
const CONTEXT: usize = 3;
const RUNS: usize = 7;

fn line(i: usize) -> String {
    format!("    let value_{i} = compute({i}, \"item {i}\");")
}

/// The file, the V4A patch and the same changes as replacements (each with its context,
/// as a model would send oldText).
fn workload() -> (String, String, Vec<Replacement>) {
    let lines: Vec<String> = (0..LINES).map(line).collect();
    let mut text = lines.join("\n");
    text.push('\n');
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.rs\n");
    let mut edits = Vec::new();
    let step = LINES / HUNKS;
    for h in 0..HUNKS {
        let at = h * step + step / 2;
        let above = &lines[at - CONTEXT..at];
        let below = &lines[at + 1..at + 1 + CONTEXT];
        let new = lines[at].replace("compute", "compute_fast");
        patch.push_str("@@\n");
        let mut old_text = Vec::new();
        let mut new_text = Vec::new();
        for l in above {
            patch.push_str(&format!(" {l}\n"));
            old_text.push(l.clone());
            new_text.push(l.clone());
        }
        patch.push_str(&format!("-{}\n+{new}\n", lines[at]));
        old_text.push(lines[at].clone());
        new_text.push(new);
        for l in below {
            patch.push_str(&format!(" {l}\n"));
            old_text.push(l.clone());
            new_text.push(l.clone());
        }
        edits.push(Replacement::new(old_text.join("\n"), new_text.join("\n")));
    }
    patch.push_str("*** End Patch\n");
    (text, patch, edits)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time<F: FnMut()>(mut f: F) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (text, patch, edits) = workload();
    println!(
        "{HUNKS} one-line changes of a {LINES}-line file ({} KB), {CONTEXT} lines of context each; patch {} KB; median of {RUNS}",
        text.len() / 1024,
        patch.len() / 1024
    );

    // In memory.
    let mut expected = String::new();
    let parse = time(|| {
        std::hint::black_box(parse_patch(&patch).ok());
    });
    let whole = time(|| {
        let parsed = parse_patch(&patch).expect("the patch reads");
        let FileOp::Update { hunks, .. } = &parsed.files[0] else {
            return;
        };
        expected = apply_hunks(&text, hunks, "big.rs", FileHints::default())
            .expect("the patch applies")
            .content;
    });
    let one_edit = time(|| {
        let edited = apply_edits(&text, &edits, "big.rs").expect("the edits apply");
        assert_eq!(edited.content, expected);
    });
    let separate = time(|| {
        let mut current = text.clone();
        for e in &edits {
            current = apply_edits(&current, std::slice::from_ref(e), "big.rs")
                .expect("the edit applies")
                .content;
        }
        assert_eq!(current, expected);
    });
    println!("in memory:");
    println!("  V4A parse alone                        {}", ms(parse));
    println!("  V4A parse + apply (200 hunks)          {}", ms(whole));
    println!("  one edit of 200 replacements           {}", ms(one_edit));
    println!("  200 edits of one replacement each      {}", ms(separate));

    // Through the tools, on a file.
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.rs");
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()));
    let ctx = ToolContext::new("bench", CancellationToken::new()).with_env(env);
    let mut tool_times = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..RUNS {
        std::fs::write(&path, &text)?;
        let start = Instant::now();
        apply_patch(
            &ctx,
            ApplyPatchArgs {
                patch: patch.clone(),
            },
        )
        .await?
        .into_tool_result()?;
        tool_times[0].push(start.elapsed());
        assert_eq!(std::fs::read_to_string(&path)?, expected);

        std::fs::write(&path, &text)?;
        let start = Instant::now();
        edit(&ctx, EditArgs::new("big.rs", edits.clone())).await?;
        tool_times[1].push(start.elapsed());

        std::fs::write(&path, &text)?;
        let start = Instant::now();
        for e in &edits {
            edit(&ctx, EditArgs::new("big.rs", [e.clone()])).await?;
        }
        tool_times[2].push(start.elapsed());
        assert_eq!(std::fs::read_to_string(&path)?, expected);
    }
    let [patch_call, edit_call, edit_calls] = tool_times.map(median);
    println!("through the tools (read, change, atomic replace):");
    println!(
        "  1 apply_patch call (200 hunks)         {}",
        ms(patch_call)
    );
    println!("  1 edit call (200 edits)                {}", ms(edit_call));
    println!(
        "  200 edit calls (1 edit each)           {}",
        ms(edit_calls)
    );
    Ok(())
}

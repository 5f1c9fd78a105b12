//! Peak memory of the file tools on inputs built to exhaust it: an edit whose oldText is not
//! in a 100 MB file, a read of a 2 GB file that starts with PNG magic bytes, and a grep of
//! one 200 MB line.
//!
//! ```text
//! cargo run --release -p pi-tools --example bench_memory
//! ```
//!
//! Each case resets the process's peak resident set (`/proc/self/clear_refs`, Linux) and
//! prints the peak it reached above the resident set before it started.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use pi_tools::builtins::edit::{EditArgs, EditConfig, Replacement, edit};
use pi_tools::builtins::grep::{GrepArgs, grep};
use pi_tools::builtins::read::{ReadArgs, read};
use pi_tools::env::{ExecutionEnv, LocalEnv};
use pi_tools::{Extensions, IntoToolResult, ToolContext};
use tokio_util::sync::CancellationToken;

const MB: u64 = 1_000_000;

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

/// Runs `case`, printing the peak resident set it added and how long it took.
async fn measure<F: std::future::Future<Output = String>>(name: &str, file_bytes: u64, case: F) {
    // "5" resets the peak (VmHWM) to the current resident set.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_bytes("VmRSS");
    let start = Instant::now();
    let answer = case.await;
    let elapsed = start.elapsed();
    let peak = status_bytes("VmHWM").saturating_sub(before);
    println!(
        "{name:<44} file {:>6} MB  peak +{:>7.1} MB ({:.2}x the file)  {:>6.2} s",
        file_bytes / MB,
        peak as f64 / MB as f64,
        peak as f64 / file_bytes as f64,
        elapsed.as_secs_f64()
    );
    println!(
        "    -> {}",
        answer
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(110)
            .collect::<String>()
    );
}

fn ctx_in(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir).with_fsync(false));
    ToolContext::new("bench", CancellationToken::new())
        .with_extensions(Extensions::new().with::<Arc<dyn ExecutionEnv>>(env))
}

fn text<T: IntoToolResult, E: std::fmt::Display>(result: Result<T, E>) -> String {
    match result {
        Ok(out) => out
            .into_tool_result()
            .map(|r| r.text_content())
            .unwrap_or_default(),
        Err(err) => format!("error: {err}"),
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ctx_in(dir.path());

    // 100 MB of ordinary source-like lines.
    let edit_bytes = 100 * MB;
    {
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(dir.path().join("big.rs")).expect("create"),
        );
        let mut written = 0u64;
        let mut i = 0u64;
        while written < edit_bytes {
            let line = format!("    let value_{i} = compute({i}, \"text\"); // comment {i}\n");
            file.write_all(line.as_bytes()).expect("write");
            written += line.len() as u64;
            i += 1;
        }
    }
    let edit_ctx = ctx.clone().with_tool_config(Arc::new(EditConfig {
        max_file_bytes: Some(256 * MB),
    }));
    let args = EditArgs {
        path: "big.rs".into(),
        edits: vec![Replacement {
            old_text: "this text is nowhere in the file".into(),
            new_text: "x".into(),
        }],
    };
    measure("edit, oldText not found", edit_bytes, async {
        text(edit(&edit_ctx, args).await)
    })
    .await;

    // 2 GB, sparse: PNG magic bytes and nothing else on disk.
    let png_bytes = 2_000 * MB;
    {
        let file = std::fs::File::create(dir.path().join("huge.png")).expect("create");
        (&file).write_all(b"\x89PNG\r\n\x1a\n").expect("write");
        file.set_len(png_bytes).expect("set_len");
    }
    let args = ReadArgs {
        path: "huge.png".into(),
        offset: None,
        limit: None,
    };
    measure("read, PNG magic bytes", png_bytes, async {
        text(read(&ctx, args).await)
    })
    .await;

    // One 200 MB line with the match at its end.
    let line_bytes = 200 * MB;
    {
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(dir.path().join("line.txt")).expect("create"),
        );
        let chunk = vec![b'a'; 1 << 20];
        let mut written = 0u64;
        while written + chunk.len() as u64 <= line_bytes {
            file.write_all(&chunk).expect("write");
            written += chunk.len() as u64;
        }
        file.write_all(b"needle\n").expect("write");
    }
    let args = GrepArgs {
        pattern: "needle".into(),
        path: Some("line.txt".into()),
        glob: None,
        ignore_case: None,
        literal: None,
        context: None,
        limit: None,
    };
    measure("grep, one line", line_bytes, async {
        text(grep(&ctx, args).await)
    })
    .await;
}

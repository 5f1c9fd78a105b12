//! Benchmarks of the file tools. Run with `cargo run --release --example bench_files`.
//!
//! All data is generated at run time in a temporary directory and removed afterwards.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::builtins::edit::{EditArgs, Replacement, apply_edits, edit};
use pi_tools::builtins::read::{ReadArgs, read};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{IntoToolResult, ToolContext};
use tokio_util::sync::CancellationToken;

type Res = Result<(), Box<dyn std::error::Error>>;

fn ctx(env: Arc<dyn ExecutionEnv>) -> ToolContext {
    ToolContext::new("bench", CancellationToken::new()).with_env(env)
}

/// A field of /proc/self/status in KB (Linux only).
fn proc_status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn kb(v: Option<u64>) -> String {
    v.map_or_else(|| "?".to_string(), |v| format!("{v} KB"))
}

fn per_call(total: Duration, n: u32) -> String {
    format!("{:.1} µs", total.as_secs_f64() * 1e6 / f64::from(n))
}

async fn bench_read_3000(dir: &Path, context: &ToolContext) -> Res {
    let text: String = (1..=3000)
        .map(|i| format!("{i:>6}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    std::fs::write(dir.join("three_thousand.txt"), &text)?;
    let n = 200;
    let mut shown = serde_json::Value::Null;
    let start = Instant::now();
    for _ in 0..n {
        let args = ReadArgs::new("three_thousand.txt");
        let out = read(context, args).await?.into_tool_result()?;
        assert!(out.text_content().ends_with("to continue.]"));
        shown = out.details;
    }
    println!(
        "read, 3,000-line file ({} KB), lines {}-{} shown (stopped by {}): {} per call",
        text.len() / 1024,
        shown["startLine"],
        shown["endLine"],
        shown["stoppedBy"],
        per_call(start.elapsed(), n)
    );
    Ok(())
}

async fn bench_read_1gb(dir: &Path, context: &ToolContext) -> Res {
    let path = dir.join("one_gigabyte.txt");
    let line_len = 64usize;
    let block_lines = 16_384u64;
    let mut block = Vec::with_capacity(line_len * block_lines as usize);
    for i in 0..block_lines {
        let prefix = format!("{i:>10} ");
        block.extend_from_slice(prefix.as_bytes());
        block.extend(std::iter::repeat_n(b'x', line_len - prefix.len() - 1));
        block.push(b'\n');
    }
    let blocks = (1u64 << 30) / block.len() as u64;
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        for _ in 0..blocks {
            file.write_all(&block)?;
        }
        file.flush()?;
    }
    drop(block);
    let total_lines = blocks * block_lines;
    let offset = total_lines - 50;
    let rss_before = proc_status_kb("VmRSS:");
    let start = Instant::now();
    let args = ReadArgs {
        offset: Some(offset as i64),
        limit: Some(20),
        ..ReadArgs::new("one_gigabyte.txt")
    };
    let out = read(context, args).await?.into_tool_result()?;
    let elapsed = start.elapsed();
    assert!(out.text_content().ends_with(&format!(
        "[31 more lines in the file. Use offset={} to continue.]",
        offset + 20
    )));
    println!(
        "read, 1 GiB file ({total_lines} lines), 20 lines at offset {offset}: {:.0} ms; RSS before {}, peak RSS of the whole run (VmHWM) {}",
        elapsed.as_secs_f64() * 1e3,
        kb(rss_before),
        kb(proc_status_kb("VmHWM:"))
    );
    std::fs::remove_file(&path)?;
    Ok(())
}

async fn bench_one_replacement(dir: &Path, label: &str, context: &ToolContext) -> Res {
    let text: String = (0..2700)
        .map(|i| format!("let value_{i:05} = compute({i}) + 1;\n"))
        .collect();
    std::fs::write(dir.join("hundred_kb.rs"), &text)?;
    let n = 400u32;
    let start = Instant::now();
    for i in 0..n {
        let (old, new) = if i % 2 == 0 {
            ("compute(1234)", "compute(4321)")
        } else {
            ("compute(4321)", "compute(1234)")
        };
        let args = EditArgs::new("hundred_kb.rs", [Replacement::new(old, new)]);
        edit(context, args).await?;
    }
    println!(
        "edit, one replacement in a {} KB file, whole call incl. read, diff and atomic write ({label}): {} per call",
        text.len() / 1024,
        per_call(start.elapsed(), n)
    );
    Ok(())
}

fn bench_apply_in_memory() {
    let text: String = (0..2700)
        .map(|i| format!("let value_{i:05} = compute({i}) + 1;\n"))
        .collect();
    let edits = [Replacement {
        old_text: "compute(1234)".into(),
        new_text: "compute(4321)".into(),
        replace_all: false,
    }];
    let n = 2000u32;
    let start = Instant::now();
    for _ in 0..n {
        let edited = apply_edits(&text, &edits, "hundred_kb.rs").map(|e| e.content.len());
        assert!(std::hint::black_box(edited).is_ok());
    }
    println!(
        "edit, one replacement in a {} KB text, in memory (locate, splice, numbered diff and patch): {} per call",
        text.len() / 1024,
        per_call(start.elapsed(), n)
    );
}

async fn bench_concurrent_edits(dir: &Path, context: &ToolContext) -> Res {
    let n = 1000;
    let text: String = (0..n).map(|i| format!("item {i:04} = old\n")).collect();
    std::fs::write(dir.join("shared.txt"), &text)?;
    let start = Instant::now();
    let calls = (0..n).map(|i| {
        let context = context.clone();
        tokio::spawn(async move {
            let args = EditArgs::new(
                "shared.txt",
                [Replacement::new(
                    format!("item {i:04} = old"),
                    format!("item {i:04} = new"),
                )],
            );
            edit(&context, args).await.map(|_| ())
        })
    });
    let results = futures::future::join_all(calls).await;
    let elapsed = start.elapsed();
    let failures = results.iter().filter(|r| !matches!(r, Ok(Ok(())))).count();
    let after = std::fs::read_to_string(dir.join("shared.txt"))?;
    let applied = (0..n)
        .filter(|i| after.contains(&format!("item {i:04} = new\n")))
        .count();
    println!(
        "edit, {n} concurrent edits to one file: {:.0} ms in all, {applied} applied, {failures} failed",
        elapsed.as_secs_f64() * 1e3
    );
    assert_eq!(applied, n);
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Res {
    let dir = tempfile::tempdir()?;
    let durable: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()));
    let fast: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()).with_fsync(false));
    bench_read_3000(dir.path(), &ctx(durable.clone())).await?;
    bench_apply_in_memory();
    bench_one_replacement(dir.path(), "fsync on, the default", &ctx(durable.clone())).await?;
    bench_one_replacement(dir.path(), "fsync off", &ctx(fast)).await?;
    bench_concurrent_edits(dir.path(), &ctx(durable.clone())).await?;
    bench_read_1gb(dir.path(), &ctx(durable)).await?;
    Ok(())
}

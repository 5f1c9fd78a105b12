//! Peak memory of the tools on inputs built to exhaust it: edits of a 100 MB file (oldText
//! not found, also in a file of one-character lines, found exactly, found only through
//! normalisation, and a file over `[tool.edit] max_file_bytes`), a read of a 2 GB file that
//! starts with PNG magic bytes, a grep of one 200 MB line, and an MCP session that pipelines
//! 50,000 requests.
//!
//! ```text
//! cargo run --release --example bench_memory
//! ```
//!
//! Each case resets the process's peak resident set (`/proc/self/clear_refs`, Linux) and
//! prints the peak it reached above the resident set before it started.

use std::io::Write;

use pi_tools::config::Config;
use pi_tools::mcp::{McpTool, McpTools, serve_split};
use pi_tools::tool::Registry;
use pi_tools::toolbox::Toolbox;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use pi_tools::builtins::edit::{EditArgs, EditConfig, Replacement, edit};
use pi_tools::builtins::grep::{GrepArgs, grep};
use pi_tools::builtins::read::{ReadArgs, read};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
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
    if file_bytes == 0 {
        println!(
            "{name:<44}                peak +{:>7.1} MB                    {:>6.2} s",
            peak as f64 / MB as f64,
            elapsed.as_secs_f64()
        );
    } else {
        println!(
            "{name:<44} file {:>6} MB  peak +{:>7.1} MB ({:.2}x the file)  {:>6.2} s",
            file_bytes / MB,
            peak as f64 / MB as f64,
            peak as f64 / file_bytes as f64,
            elapsed.as_secs_f64()
        );
    }
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
    ToolContext::new("bench", CancellationToken::new()).with_env(env)
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
    let args = EditArgs::new(
        "big.rs",
        [Replacement::new("this text is nowhere in the file", "x")],
    );
    measure("edit, oldText not found", edit_bytes, async {
        text(edit(&edit_ctx, args).await)
    })
    .await;
    // 100 MB of one-character lines: the worst case for anything kept per line. The text of
    // oldText is at every line, its indentation fits no window (every one is inconsistent).
    {
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(dir.path().join("short.txt")).expect("create"),
        );
        for _ in 0..edit_bytes / 2 {
            file.write_all(b"x\n").expect("write");
        }
    }
    let args = EditArgs::new("short.txt", [Replacement::new("  x\n x\n", "z\n")]);
    measure("edit, not found, one-character lines", edit_bytes, async {
        text(edit(&edit_ctx, args).await)
    })
    .await;
    let args = EditArgs::new(
        "big.rs",
        [Replacement::new(
            "    let value_777 = compute(777, \"text\"); // comment 777\n",
            "    let value_777 = compute(778, \"text\"); // comment 777\n",
        )],
    );
    measure("edit, found exactly", edit_bytes, async {
        text(edit(&edit_ctx, args).await)
    })
    .await;
    // Curly quotes: found only in the normalised form of the file.
    let args = EditArgs::new(
        "big.rs",
        [Replacement::new(
            "let value_999 = compute(999, \u{201C}text\u{201D});",
            "let value_999 = compute(1000, \"text\");",
        )],
    );
    measure("edit, found through normalisation", edit_bytes, async {
        text(edit(&edit_ctx, args).await)
    })
    .await;
    let limited_ctx = ctx.clone().with_tool_config(Arc::new(EditConfig {
        max_file_bytes: Some(50 * MB),
    }));
    let args = EditArgs::new("big.rs", [Replacement::new("value_1 ", "value_one ")]);
    measure("edit, over max_file_bytes (50 MB)", edit_bytes, async {
        text(edit(&limited_ctx, args).await)
    })
    .await;

    // 2 GB, sparse: PNG magic bytes and nothing else on disk.
    let png_bytes = 2_000 * MB;
    {
        let file = std::fs::File::create(dir.path().join("huge.png")).expect("create");
        (&file).write_all(b"\x89PNG\r\n\x1a\n").expect("write");
        file.set_len(png_bytes).expect("set_len");
    }
    let args = ReadArgs::new("huge.png");
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
    let args = GrepArgs::new("needle").within("line.txt");
    measure("grep, one line", line_bytes, async {
        text(grep(&ctx, args).await)
    })
    .await;

    mcp_pipelined(dir.path()).await;
}

/// 50,000 `tools/call` requests of the built-in `read`, written to the server as fast as it
/// takes them while the answers are read: the server must stop reading while
/// `max_concurrency` calls plus its queue are unanswered.
async fn mcp_pipelined(dir: &Path) {
    const REQUESTS: u64 = 50_000;
    std::fs::write(dir.join("small.txt"), "one line\n").expect("write");
    let registry = Registry::from_inventory().expect("registry");
    let registered: Vec<_> = registry.iter().cloned().collect();
    let config = Config::parse("", "bench", &registered).expect("default configuration");
    let env = Arc::new(LocalEnv::new(dir).with_fsync(false));
    let toolbox = Toolbox::new(registered, &config, Extensions::new().with_env(env));
    let tools: McpTools = toolbox
        .agent_tools()
        .into_iter()
        .map(McpTool::new)
        .collect();
    let (client, server) = tokio::io::duplex(64 << 10);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(serve_split(
        tools,
        toolbox.runner_config(),
        server_read,
        server_write,
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    measure("MCP, 50,000 pipelined read calls", 0, async move {
        let writer = tokio::spawn(async move {
            let mut line = serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"}
                }
            })
            .to_string();
            line.push('\n');
            line.push_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
            line.push('\n');
            client_write.write_all(line.as_bytes()).await?;
            for id in 1..=REQUESTS {
                let call = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read","arguments":{{"path":"small.txt"}}}}}}"#
                );
                client_write.write_all(call.as_bytes()).await?;
                client_write.write_all(b"\n").await?;
            }
            client_write.flush().await?;
            Ok::<_, std::io::Error>(client_write)
        });
        let mut answers = BufReader::new(client_read).lines();
        let (mut results, mut errors) = (0u64, 0u64);
        while results + errors < REQUESTS + 1 {
            let Ok(Some(answer)) = answers.next_line().await else {
                break;
            };
            if answer.contains(r#""error""#) || answer.contains(r#""isError":true"#) {
                errors += 1;
            } else {
                results += 1;
            }
        }
        // Closing the input ends the session.
        let client_write = writer.await.expect("writer task").expect("writing requests");
        drop(client_write);
        drop(answers);
        let _ = serving.await;
        format!(
            "{} answers ({} errors) to {REQUESTS} calls and the initialize",
            results + errors,
            errors
        )
    })
    .await;
}

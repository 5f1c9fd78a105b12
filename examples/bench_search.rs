//! Times the grep, find and bash tools in-process on a corpus directory: one warm-up run,
//! then the median of several runs of each query.
//!
//! ```text
//! cargo run --release --example bench_search -- <corpus-dir> [runs]
//! ```
//! (or set `PI_TOOLS_CORPUS`). `scripts/bench-search.sh` fetches the corpus and prints these
//! figures beside `rg` and `fdfind` on the same queries.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::ToolContext;
use pi_tools::builtins::bash::{BashArgs, BashConfig, bash};
use pi_tools::builtins::find::{FindArgs, find};
use pi_tools::builtins::grep::{GrepArgs, grep};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use tokio_util::sync::CancellationToken;

fn grep_args(pattern: &str, glob: Option<&str>, literal: bool, limit: Option<u64>) -> GrepArgs {
    GrepArgs {
        glob: glob.map(Into::into),
        literal: Some(literal),
        limit,
        ..GrepArgs::new(pattern)
    }
}

async fn median<F, Fut>(runs: usize, mut f: F) -> (Duration, String)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let first = f().await; // warm-up
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let _ = f().await;
        times.push(start.elapsed());
    }
    times.sort();
    (times[times.len() / 2], first)
}

fn summary(text: &str) -> String {
    let lines = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('['))
        .count();
    if text.starts_with("No ") {
        "no results".into()
    } else {
        format!("{lines} lines")
    }
}

#[tokio::main]
async fn main() {
    let mut argv = std::env::args().skip(1);
    let Some(corpus) = argv
        .next()
        .or_else(|| std::env::var("PI_TOOLS_CORPUS").ok())
        .map(PathBuf::from)
    else {
        eprintln!("usage: bench_search <corpus-dir> [runs]   (or set PI_TOOLS_CORPUS)");
        std::process::exit(2);
    };
    let runs: usize = argv.next().and_then(|r| r.parse().ok()).unwrap_or(9);
    // The walk and the full scan, without the search index (`bench_index` measures that).
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(&corpus).with_search_index(false));
    let ctx = ToolContext::new("bench", CancellationToken::new()).with_env(env);

    let grep_queries: [(&str, GrepArgs); 3] = [
        (
            "grep zzqqxx_no_such_thing_[0-9]+",
            grep_args("zzqqxx_no_such_thing_[0-9]+", None, false, None),
        ),
        (
            "grep unsafe limit=100",
            grep_args("unsafe", None, false, Some(100)),
        ),
        (
            "grep -F 'fn main' glob=*.rs",
            grep_args("fn main", Some("*.rs"), true, None),
        ),
    ];
    for (name, args) in grep_queries {
        let (t, text) = median(runs, || {
            let (ctx, args) = (ctx.clone(), args.clone());
            async move {
                match grep(&ctx, args).await {
                    Ok(out) => out.content[0].as_text().unwrap_or("").to_string(),
                    Err(e) => e.message().to_string(),
                }
            }
        })
        .await;
        println!(
            "{name}\t{:.1}\t{}",
            t.as_secs_f64() * 1000.0,
            summary(&text)
        );
    }
    for pattern in ["*.rs", "**/tests/**/*.rs"] {
        let (t, text) = median(runs, || {
            let ctx = ctx.clone();
            async move {
                let args = FindArgs::new(pattern);
                match find(&ctx, args).await {
                    Ok(out) => out.content[0].as_text().unwrap_or("").to_string(),
                    Err(e) => e.message().to_string(),
                }
            }
        })
        .await;
        println!(
            "find {pattern}\t{:.1}\t{}",
            t.as_secs_f64() * 1000.0,
            summary(&text)
        );
    }
    let (t, _) = median(runs, || {
        let ctx = ctx.clone();
        async move {
            let args = BashArgs::new("echo hi");
            bash(&ctx, &BashConfig::default(), args)
                .await
                .map(|o| format!("{:?}", o.content))
                .unwrap_or_default()
        }
    })
    .await;
    println!("bash echo hi (tool)\t{:.1}\t", t.as_secs_f64() * 1000.0);
    let (t, _) = median(runs, || async {
        let out = tokio::process::Command::new("/bin/bash")
            .args(["-c", "echo hi"])
            .current_dir(&corpus)
            .output()
            .await;
        out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    })
    .await;
    println!(
        "bash echo hi (direct spawn)\t{:.1}\t",
        t.as_secs_f64() * 1000.0
    );
}

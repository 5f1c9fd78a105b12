//! The search index against today's full scan and ripgrep, in one run on one corpus: a rare
//! identifier, a rare regex, a common word with a limit, and a pattern the index cannot
//! narrow; the index's build time and memory; and a search right after a change: a file
//! edited in place (read again), a file created (its directory listed again), a directory
//! created (the whole tree walked again, as every search does without notifications).
//!
//! ```text
//! cargo run --release --example bench_index -- <corpus-dir> [runs]
//! ```
//! `scripts/bench-index.sh` fetches the rustc corpus and runs it. Prints a Markdown table
//! (median of `runs` after a warm-up; ms).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::ToolContext;
use pi_tools::builtins::grep::{GrepArgs, grep, search_index_stats};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use tokio_util::sync::CancellationToken;

fn ctx(env: LocalEnv) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(env);
    ToolContext::new("bench", CancellationToken::new()).with_env(env)
}

async fn grep_once(ctx: &ToolContext, args: &GrepArgs) -> (Duration, String) {
    let start = Instant::now();
    let text = match grep(ctx, args.clone()).await {
        Ok(out) => out.content[0].as_text().unwrap_or("").to_string(),
        Err(e) => e.message().to_string(),
    };
    (start.elapsed(), text)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// ripgrep's time to its first line of output and to its end (medians).
fn rg_median(corpus: &Path, args: &[&str], runs: usize) -> (Duration, Duration) {
    let once = || {
        let start = Instant::now();
        let mut child = Command::new("rg")
            .args(args)
            .current_dir(corpus)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("rg runs (apt-get install ripgrep)");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = Vec::new();
        let _ = out.read_until(b'\n', &mut line);
        let first = start.elapsed();
        let _ = out.read_to_end(&mut Vec::new());
        let _ = child.wait();
        (first, start.elapsed())
    };
    once();
    let (mut firsts, mut ends) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (f, e) = once();
        firsts.push(f);
        ends.push(e);
    }
    (median(firsts), median(ends))
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// The process's resident memory and its peak so far, in bytes (Linux).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn corpus_bytes(dir: &Path) -> (u64, u64) {
    let (mut bytes, mut files) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => {
                    bytes += e.metadata().map_or(0, |m| m.len());
                    files += 1;
                }
                _ => {}
            }
        }
    }
    (bytes, files)
}

fn mb(b: u64) -> String {
    format!("{:.0} MB", b as f64 / 1e6)
}

#[tokio::main]
async fn main() {
    let mut argv = std::env::args().skip(1);
    let Some(corpus) = argv
        .next()
        .or_else(|| std::env::var("PI_TOOLS_CORPUS").ok())
        .map(PathBuf::from)
    else {
        eprintln!("usage: bench_index <corpus-dir> [runs]   (or set PI_TOOLS_CORPUS)");
        std::process::exit(2);
    };
    let runs: usize = argv.next().and_then(|r| r.parse().ok()).unwrap_or(9);
    let rare = std::env::var("PI_TOOLS_BENCH_RARE")
        .unwrap_or_else(|_| "suggest_constraining_type_param".into());
    let rare_regex = std::env::var("PI_TOOLS_BENCH_RARE_REGEX")
        .unwrap_or_else(|_| r"fn\s+check_\w+_crate_level".into());
    let indexed = ctx(LocalEnv::new(&corpus));
    let scanned = ctx(LocalEnv::new(&corpus).with_search_index(false));

    let (corpus_size, corpus_files) = corpus_bytes(&corpus);
    let (rss_before, _) = memory();
    let stats = search_index_stats(&corpus, Duration::from_secs(600)).expect("the index builds");
    let (rss_after, peak) = memory();
    println!(
        "corpus: {corpus_files} files, {}; index: {} files, built in {} ms, {} held \
         (process resident memory {} before the build, {} after, peak {}); notifications: {}\n",
        mb(corpus_size),
        stats.files,
        stats.build_time.as_millis(),
        mb(stats.bytes as u64),
        mb(rss_before),
        mb(rss_after),
        mb(peak),
        stats.watched,
    );

    let common = GrepArgs {
        limit: Some(100),
        ..GrepArgs::new("unsafe")
    };
    let queries: [(&str, GrepArgs, Vec<&str>); 4] = [
        (
            "rare identifier",
            GrepArgs::new(&rare),
            vec!["-n", "--hidden", &rare],
        ),
        (
            "rare regex",
            GrepArgs::new(&rare_regex),
            vec!["-n", "--hidden", &rare_regex],
        ),
        (
            "common word, limit 100",
            common,
            vec!["-n", "--hidden", "-m", "100", "unsafe"],
        ),
        (
            "no trigram (`[A-Z][a-z]+Q\\d`)",
            GrepArgs::new(r"[A-Z][a-z]+Q\d"),
            vec!["-n", "--hidden", r"[A-Z][a-z]+Q\d"],
        ),
    ];
    println!(
        "| query | indexed grep (ms) | full-scan grep (ms) | rg first line (ms) | rg all (ms) | rg / indexed |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, args, rg_args) in &queries {
        // The two take turns, so a change in the machine's load weighs on both alike.
        let (_, text_index) = grep_once(&indexed, args).await;
        let (_, text_scan) = grep_once(&scanned, args).await;
        let (mut t_index, mut t_scan) = (Vec::new(), Vec::new());
        for run in 0..runs {
            // Each goes first in every other round.
            if run % 2 == 0 {
                t_index.push(grep_once(&indexed, args).await.0);
                t_scan.push(grep_once(&scanned, args).await.0);
            } else {
                t_scan.push(grep_once(&scanned, args).await.0);
                t_index.push(grep_once(&indexed, args).await.0);
            }
        }
        let (t_index, t_scan) = (median(t_index), median(t_scan));
        assert_eq!(
            text_index, text_scan,
            "{name}: the index changed the result"
        );
        let (rg_first, rg_all) = rg_median(&corpus, rg_args, runs);
        println!(
            "| {name} | {} | {} | {} | {} | {:.0}x |",
            ms(t_index),
            ms(t_scan),
            ms(rg_first),
            ms(rg_all),
            rg_all.as_secs_f64() / t_index.as_secs_f64()
        );
    }

    // A search right after a change: a file appended to in place (re-read alone), and a new
    // file (the index walks the tree again to find it).
    let args = GrepArgs::new(&rare);
    let (mut edited, mut created, mut walked) = (Vec::new(), Vec::new(), Vec::new());
    let probe_dir = corpus.join("zz_index_bench_dir");
    let target = first_file(&corpus);
    let original = std::fs::read(&target).expect("read");
    let probe = corpus.join("zz_index_bench_probe.txt");
    for i in 0..runs.max(1) {
        let mut changed = original.clone();
        changed.extend_from_slice(format!("\n{rare} {i}\n").as_bytes());
        std::fs::write(&target, &changed).expect("write");
        let (t, text) = grep_once(&indexed, &args).await;
        assert!(text.contains(&format!("{rare} {i}")), "the change is found");
        edited.push(t);
        std::fs::write(&target, &original).expect("restore");
        std::fs::write(&probe, format!("{rare} probe {i}\n")).expect("write");
        let (t, text) = grep_once(&indexed, &args).await;
        assert!(text.contains("probe"), "the new file is found");
        created.push(t);
        std::fs::remove_file(&probe).expect("remove");
        let _ = grep_once(&indexed, &args).await;
        // A new directory: the index walks the whole tree and compares every file's
        // identity (what every search costs without notifications).
        std::fs::create_dir(&probe_dir).expect("mkdir");
        std::fs::write(probe_dir.join("f.txt"), format!("{rare} in a dir {i}\n")).expect("write");
        let (t, text) = grep_once(&indexed, &args).await;
        assert!(
            text.contains("in a dir"),
            "the new directory's file is found"
        );
        walked.push(t);
        std::fs::remove_dir_all(&probe_dir).expect("remove");
        let _ = grep_once(&indexed, &args).await;
    }
    println!(
        "| rare identifier right after a file was edited | {} | | | | |",
        ms(median(edited))
    );
    println!(
        "| rare identifier right after a file was created | {} | | | | |",
        ms(median(created))
    );
    println!(
        "| rare identifier right after a directory was created (the tree walked again) | {} | | | | |",
        ms(median(walked))
    );
    let stats = search_index_stats(&corpus, Duration::from_secs(1)).expect("stats");
    println!(
        "\nafter the run: index {} held, {} searches answered, {} walks of the tree",
        mb(stats.bytes as u64),
        stats.searches_narrowed,
        stats.rescans
    );
}

/// The first regular file under `dir` in name order, to edit and restore.
fn first_file(dir: &Path) -> PathBuf {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .next()
        .expect("a file at the corpus's top")
}

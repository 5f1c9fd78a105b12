//! The cost of the sandbox per command: `echo hi` through `LocalEnv::exec` with the sandbox
//! off, in workspace-write mode (with `.git` read-only, the default, and with `git =
//! "commit"`, whose guard checks git's redirect files after every call), and without
//! network; median and 90th percentile of many runs after a warm-up. The workspace is a git
//! repository, so its mounts (the command's own user and mount namespace) are part of the
//! cost. Also the session's start (resolving the policy: finding the repositories beneath
//! the workspace). Given a directory, the workspace is that directory instead (it is only
//! read; `echo hi` runs in it); given `make ENTRIES REPOS`, a repository made for the run
//! holding about ENTRIES files and directories (ten files a directory) and REPOS
//! repositories below its top (`git init`), removed at the end.
//!
//! With `BENCH_SANDBOX_HOLD_MB=N`, the benchmarking process first fills N MB of memory and
//! holds it, as a gateway serving many sessions does: starting a command must not cost more
//! in a bigger process.
//!
//! Beside the wall-clock times, the CPU time a call took (this process and its children,
//! user and system, from `getrusage`): on a shared machine whose other tenants stretch the
//! wall clock by milliseconds, it is the steadier figure to compare side by side.
//!
//! ```text
//! cargo run --release --example bench_sandbox -- [runs] [dir | make ENTRIES REPOS]
//! ```

use std::time::{Duration, Instant};

use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecRequest, ExecutionEnv, GitAccess, SandboxMode, SandboxPolicy};
use tokio_util::sync::CancellationToken;

async fn time_calls(env: &LocalEnv, runs: usize) -> Vec<Duration> {
    let request = ExecRequest {
        command: "echo hi".into(),
        cwd: env.cwd().to_path_buf(),
        timeout: None,
        env: Vec::new(),
    };
    let mut times = Vec::with_capacity(runs);
    for i in 0..=runs {
        let start = Instant::now();
        let outcome = env
            .exec(request.clone(), CancellationToken::new(), Box::new(|_| {}))
            .await
            .expect("echo runs");
        assert_eq!(outcome.exit_code, Some(0), "echo failed");
        if i > 0 {
            times.push(start.elapsed());
        }
    }
    times.sort();
    times
}

/// The CPU time (user and system) of this process and its waited-for children so far.
fn cpu_time() -> Duration {
    let of = |who| {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut usage) };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        tv(usage.ru_utime) + tv(usage.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let hold_mb: usize = std::env::var("BENCH_SANDBOX_HOLD_MB")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let held: Vec<Vec<u8>> = (0..hold_mb).map(|i| vec![i as u8 | 1; 1 << 20]).collect();
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let args: Vec<String> = std::env::args().skip(2).collect();
    let made = std::env::temp_dir().join(format!("pi-tools-bench-sandbox-{}", std::process::id()));
    let (dir, given) = match args.as_slice() {
        [] => {
            std::fs::create_dir_all(made.join(".git/hooks"))?;
            std::fs::write(made.join(".git/config"), "[core]\n")?;
            (made, false)
        }
        [make, entries, repos] if make == "make" => {
            let (Ok(entries), Ok(repos)) = (entries.parse(), repos.parse()) else {
                eprintln!("usage: bench_sandbox [runs] [dir | make ENTRIES REPOS]");
                std::process::exit(2);
            };
            make_tree(&made, entries, repos)?;
            (made, false)
        }
        [dir] => (std::path::PathBuf::from(dir), true),
        _ => {
            eprintln!("usage: bench_sandbox [runs] [dir | make ENTRIES REPOS]");
            std::process::exit(2);
        }
    };
    let cases = [
        ("off", SandboxPolicy::off()),
        (
            "workspace-write",
            SandboxPolicy::new(SandboxMode::WorkspaceWrite),
        ),
        (
            "workspace-write, git = \"commit\"",
            SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_git(GitAccess::Commit),
        ),
        (
            "workspace-write, network off",
            SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(false),
        ),
        (
            "workspace-write, nothing protected",
            SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_protected(Vec::<String>::new()),
        ),
    ];
    println!(
        "`echo hi` per call in {}, {runs} runs each, {hold_mb} MB held (ms)",
        dir.display()
    );
    println!("| sandbox | session start | median | p90 | CPU per call |");
    println!("|---|---|---|---|---|");
    let mut base = None;
    let mut cpu_base = None;
    for (name, policy) in cases {
        let start = Instant::now();
        let env = LocalEnv::new(&dir).with_sandbox(policy)?;
        let start = ms(start.elapsed());
        let cpu_before = cpu_time();
        let times = time_calls(&env, runs).await;
        let cpu = ms(cpu_time() - cpu_before) / (runs + 1) as f64;
        let median = ms(times[times.len() / 2]);
        let p90 = ms(times[times.len() * 9 / 10]);
        let added = base.map_or(String::new(), |b: f64| format!(" ({:+.2})", median - b));
        let cpu_added = cpu_base.map_or(String::new(), |b: f64| format!(" ({:+.2})", cpu - b));
        base.get_or_insert(median);
        cpu_base.get_or_insert(cpu);
        println!("| {name} | {start:.1} | {median:.2}{added} | {p90:.2} | {cpu:.2}{cpu_added} |");
    }
    if !given {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::hint::black_box(&held);
    Ok(())
}

/// A repository at `dir` holding about `entries` files and directories, ten files a
/// directory in groups of a hundred directories, and `repos` repositories below its top.
fn make_tree(dir: &std::path::Path, entries: usize, repos: usize) -> std::io::Result<()> {
    let git_init = |at: &std::path::Path| -> std::io::Result<()> {
        std::fs::create_dir_all(at)?;
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(at)
            .status()?;
        if !status.success() {
            return Err(std::io::Error::other("git init failed"));
        }
        Ok(())
    };
    git_init(dir)?;
    let dirs = entries.div_ceil(11);
    for n in 0..dirs {
        let sub = dir.join(format!("d{}/e{}", n / 100, n % 100));
        std::fs::create_dir_all(&sub)?;
        for f in 0..10 {
            std::fs::write(sub.join(format!("f{f}.txt")), "")?;
        }
    }
    for n in 0..repos {
        git_init(&dir.join(format!(
            "d{}/e{}/repo",
            n % dirs.div_ceil(100).max(1),
            n % 100
        )))?;
    }
    Ok(())
}

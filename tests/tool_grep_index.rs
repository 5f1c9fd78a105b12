//! grep and find through the search index against full scans and walks: a seeded random run of edits,
//! creations, deletions, renames, ignore-rule changes and `git checkout`s, made through the
//! write and edit tools, through bash and directly on disk, each followed by searches whose
//! results (text and details) must equal a full scan's exactly, and (every tenth round,
//! where ripgrep is installed) name the files `rg` names. CI runs 100 rounds (a few
//! seconds); `PI_TOOLS_INDEX_ROUNDS` and `PI_TOOLS_INDEX_SEED` run more, or replay a seed.
#![cfg(feature = "builtins")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use pi_tools::ToolContext;
use pi_tools::builtins::bash::{BashArgs, BashConfig, bash};
use pi_tools::builtins::edit::{EditArgs, Replacement, edit};
use pi_tools::builtins::find::{FindArgs, find};
use pi_tools::builtins::grep::{GrepArgs, grep, search_index_stats};
use pi_tools::builtins::write::{WriteArgs, write};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, SearchIndex, WithEnv};
use pi_tools::search;
use tokio_util::sync::CancellationToken;

/// A small deterministic generator (xorshift), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "alpha",
    "Bravo",
    "charlie",
    "DELTA",
    "echo_7",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet_12",
    "kilo",
    "lima",
    "Mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "rare_token",
    "fn parse_args",
    "a.b(c",
    "straße",
    "\u{212A}elvin",
];

const DIRS: &[&str] = &[
    "", "src", "src/deep", "docs", ".hidden", "ignored", "other/x",
];
const NAMES: &[&str] = &["a.rs", "b.rs", "c.txt", "d.md", "e.log", "F.rs", "g"];

fn text(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..1 + rng.below(6) {
        for i in 0..1 + rng.below(5) {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(rng.pick::<&str>(WORDS));
        }
        out.push_str(if rng.below(8) == 0 { "\r\n" } else { "\n" });
    }
    match rng.below(20) {
        // A NUL byte makes the rest of the file binary to the searcher.
        0 => {
            let mut at = out.len() / 2;
            while !out.is_char_boundary(at) {
                at -= 1;
            }
            out.insert(at, '\0');
        }
        1 => out.insert(0, '\u{FEFF}'),
        _ => {}
    }
    out
}

fn rel_path(rng: &mut Rng) -> String {
    let (dir, name) = (rng.pick(DIRS), rng.pick(NAMES));
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The files under `dir` (outside `.git`), relative.
fn files(dir: &Path) -> Vec<String> {
    fn walk(top: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                walk(top, &path, out);
            } else if let Ok(rel) = path.strip_prefix(top) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        status.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&status.stderr)
    );
}

fn ctx(env: LocalEnv) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(env);
    ToolContext::new("call", CancellationToken::new()).with_env(env)
}

/// One random search.
fn search(rng: &mut Rng) -> GrepArgs {
    let mut a = GrepArgs::new(*rng.pick(&[
        "rare_token",
        "kilo",
        "juliet_1[0-9]",
        "(oscar|papa) quebec",
        "delta",
        "fn\\s+parse_\\w+",
        "a.b(c",
        "STRASSE",
        "kelvin",
        "echo_7\\b",
        "hotel india",
        ".",
        "zz_absent_zz",
    ]));
    a.ignore_case = Some(rng.below(3) == 0);
    a.literal = Some(a.pattern == "a.b(c" || rng.below(6) == 0);
    if rng.below(4) == 0 {
        a.context = Some(rng.below(3) as u64);
    }
    if rng.below(3) == 0 {
        a.limit = Some(1 + rng.below(6) as u64);
    }
    match rng.below(6) {
        0 => a.glob = Some("*.rs".into()),
        1 => a.path = Some("src".into()),
        2 => a.path = Some("src/deep".into()),
        _ => {}
    }
    a
}

/// One random find.
fn find_args(rng: &mut Rng) -> FindArgs {
    let mut a = FindArgs::new(*rng.pick(&["*.rs", "**/deep/*", "*/", "g", "*", ".*", "src/**"]));
    if rng.below(4) == 0 {
        a.path = Some("src".into());
    }
    if rng.below(4) == 0 {
        a.limit = Some(1 + rng.below(5) as u64);
    }
    a
}

async fn find_text(ctx: &ToolContext, a: FindArgs) -> String {
    match find(ctx, a).await {
        Ok(out) => format!(
            "{}\n{:?}",
            out.content[0].as_text().expect("text"),
            out.details.expect("details")
        ),
        Err(e) => format!("error: {}", e.message()),
    }
}

async fn grep_text(ctx: &ToolContext, a: GrepArgs) -> String {
    match grep(ctx, a).await {
        Ok(out) => format!(
            "{}\n{:?}",
            out.content[0].as_text().expect("text"),
            out.details.expect("details")
        ),
        Err(e) => format!("error: {}", e.message()),
    }
}

/// The files with a match, by ripgrep (`None` when it is not installed), leaving out files
/// with a NUL byte (ripgrep and grep treat binary files differently).
fn rg_files(dir: &Path, a: &GrepArgs) -> Option<Vec<String>> {
    let mut cmd = Command::new("rg");
    cmd.args(["-l", "--hidden", "--no-messages", "-g", "!.git"])
        .current_dir(dir);
    if a.ignore_case == Some(true) {
        cmd.arg("-i");
    }
    if a.literal == Some(true) {
        cmd.arg("-F");
    }
    let out = cmd.arg("-e").arg(&a.pattern).output().ok()?;
    let mut files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|f| !has_nul(&dir.join(f)))
        .collect();
    files.sort();
    Some(files)
}

fn has_nul(path: &Path) -> bool {
    fs::read(path).is_ok_and(|b| b.contains(&0))
}

/// The files a grep result names, without files holding a NUL byte.
fn grep_files(dir: &Path, text: &str) -> Vec<String> {
    let mut files: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let (file, rest) = l.split_once(':')?;
            let (number, _) = rest.split_once(':')?;
            number.parse::<u64>().is_ok().then(|| file.to_owned())
        })
        .filter(|f| !has_nul(&dir.join(f)))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// One random change, through a tool, bash, git or the file system directly.
async fn change(rng: &mut Rng, dir: &Path, tools: &ToolContext) {
    let path = rel_path(rng);
    let full = dir.join(&path);
    match rng.below(14) {
        0 | 1 => {
            write(tools, WriteArgs::new(&path, text(rng)))
                .await
                .expect("write");
        }
        2 => {
            // Replaces a line that occurs once in the file.
            let Ok(old) = fs::read_to_string(&full) else {
                return;
            };
            let lines: Vec<&str> = old.lines().filter(|l| !l.is_empty()).collect();
            let unique: Vec<&&str> = lines
                .iter()
                .filter(|l| old.matches(**l).count() == 1)
                .collect();
            if unique.is_empty() {
                return;
            }
            let line = rng.pick(&unique).to_string();
            let new = text(rng).trim_end().to_string();
            let _ = edit(tools, EditArgs::new(&path, [Replacement::new(line, new)])).await;
        }
        3 | 4 => {
            let other = rel_path(rng);
            let cmd = match rng.below(5) {
                0 => format!(
                    "mkdir -p \"$(dirname '{path}')\" && printf '%s\\n' '{}' >> '{path}'",
                    rng.pick(WORDS).replace('\'', "")
                ),
                1 => format!(
                    "mkdir -p \"$(dirname '{other}')\" && mv -f '{path}' '{other}' 2>/dev/null; true"
                ),
                2 => format!("rm -f '{path}'"),
                3 => format!("sed -i 's/kilo/rare_token/' '{path}' 2>/dev/null; true"),
                _ => format!("rm -rf '{}'", rng.pick(&["src/deep", "docs", "other"])),
            };
            bash(tools, &BashConfig::default(), BashArgs::new(cmd))
                .await
                .expect("bash");
        }
        5..=7 => {
            fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            fs::write(&full, text(rng)).expect("write");
        }
        8 => {
            use std::io::Write;
            if let Ok(mut f) = fs::OpenOptions::new().append(true).open(&full) {
                f.write_all(text(rng).as_bytes()).expect("append");
            }
        }
        9 => {
            let to = dir.join(rel_path(rng));
            fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            let _ = fs::rename(&full, &to);
        }
        10 => {
            let _ = fs::remove_file(&full);
        }
        11 => {
            let from = dir.join(rng.pick(&["src/deep", "docs", "other/x"]));
            let to = dir.join(rng.pick(&["moved", "docs2", "src/deep2"]));
            let _ = fs::rename(&from, &to);
        }
        12 => {
            let rules = *rng.pick(&["*.log\nignored/\n", "*.log\n", "ignored/\n*.md\n", ""]);
            let at = if rng.below(2) == 0 {
                ".gitignore"
            } else {
                "src/.ignore"
            };
            let _ = fs::write(dir.join(at), rules);
        }
        _ => {
            if rng.below(2) == 0 {
                git(dir, &["add", "-A"]);
                git(dir, &["commit", "-qm", "round", "--allow-empty"]);
            }
            let branch = *rng.pick(&["main", "other"]);
            git(dir, &["checkout", "-qf", branch]);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexed_searches_equal_full_scans_through_random_changes() {
    let rounds: usize = std::env::var("PI_TOOLS_INDEX_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(100);
    let seed: u64 = std::env::var("PI_TOOLS_INDEX_SEED")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0x5eed_1de7);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir: PathBuf = tmp.path().join("repo");
    fs::create_dir(&dir).expect("mkdir");
    let mut rng = Rng(seed);
    for _ in 0..30 {
        let full = dir.join(rel_path(&mut rng));
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(full, text(&mut rng)).expect("write");
    }
    fs::write(dir.join(".gitignore"), "*.log\nignored/\n").expect("write");
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "one"]);
    git(&dir, &["checkout", "-qb", "other"]);
    for _ in 0..10 {
        let full = dir.join(rel_path(&mut rng));
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(full, text(&mut rng)).expect("write");
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "two"]);
    git(&dir, &["checkout", "-q", "main"]);

    let indexed = ctx(LocalEnv::new(&dir));
    let scanned = ctx(LocalEnv::new(&dir).with_search_index(false));
    let tools = ctx(LocalEnv::new(&dir)
        .with_search_index(false)
        .with_fsync(false));
    let built = search_index_stats(&dir, Duration::from_secs(30)).expect("the index is built");
    assert!(built.files > 10, "{built:?}");

    for round in 0..rounds {
        change(&mut rng, &dir, &tools).await;
        for _ in 0..3 {
            let a = search(&mut rng);
            let what = format!(
                "round {round} (seed {seed}), {a:?}, files {:?}",
                files(&dir)
            );
            let want = grep_text(&scanned, a.clone()).await;
            let got = grep_text(&indexed, a).await;
            assert_eq!(got, want, "{what}");
        }
        // Every tenth round, the files with a match against ripgrep's, where it is installed.
        if round % 10 == 0 {
            let mut a = search(&mut rng);
            (a.path, a.glob, a.context, a.limit) = (None, None, None, Some(10_000));
            if let Some(want) = rg_files(&dir, &a) {
                let got = grep_text(&indexed, a.clone()).await;
                assert_eq!(
                    grep_files(&dir, &got),
                    want,
                    "round {round}, {a:?} against rg"
                );
            }
        }
        let a = find_args(&mut rng);
        let what = format!("round {round} (seed {seed}), {a:?}");
        let want = find_text(&scanned, a.clone()).await;
        assert_eq!(find_text(&indexed, a).await, want, "{what}");
    }
    let stats = search_index_stats(&dir, Duration::from_secs(1)).expect("stats");
    assert!(stats.watched, "{stats:?}");
    // Most searches were answered by the index (the rest could not be narrowed).
    assert!(stats.searches_narrowed as usize > rounds, "{stats:?}");
}

/// Unmounts a bind mount when the test ends, however it ends.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Issue 46, finding 4: a file system mounted on a directory of the tree during a session
/// (`mount --bind SRC tree/d/e`) sends no notification. grep through the index must still
/// find what the mount shows, a file made later in its source, and agree again after the
/// unmount: each search equals a full scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bind_mount_beneath_the_tree_is_seen_by_indexed_searches() {
    if !rustix::process::geteuid().is_root() {
        eprintln!(
            "a_bind_mount_beneath_the_tree_is_seen_by_indexed_searches: skipped: mounting needs root"
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = std::fs::canonicalize(tmp.path())
        .expect("canonical")
        .join("tree");
    let src = dir.with_file_name("src");
    fs::create_dir_all(dir.join("d/e")).expect("mkdir");
    fs::create_dir_all(&src).expect("mkdir");
    fs::write(dir.join("a.txt"), "bindword_one in the tree\n").expect("write");
    fs::write(src.join("b.txt"), "bindword_one in the source\n").expect("write");
    let indexed = ctx(LocalEnv::new(&dir));
    let scanned = ctx(LocalEnv::new(&dir).with_search_index(false));
    search_index_stats(&dir, Duration::from_secs(30)).expect("the index is built");
    let same = |pattern: &'static str| {
        let (indexed, scanned) = (&indexed, &scanned);
        async move {
            let got = grep_text(indexed, GrepArgs::new(pattern)).await;
            let want = grep_text(scanned, GrepArgs::new(pattern)).await;
            assert_eq!(got, want, "{pattern}");
            got
        }
    };
    assert!(!same("bindword_one").await.contains("d/e/b.txt"));

    let status = Command::new("mount")
        .args(["--bind"])
        .arg(&src)
        .arg(dir.join("d/e"))
        .status()
        .expect("mount runs");
    assert!(status.success(), "mount --bind failed");
    let mounted = Mounted(dir.join("d/e"));
    assert!(same("bindword_one").await.contains("d/e/b.txt"));
    // A file made later in the mount's source, seen through the mount.
    fs::write(src.join("c.txt"), "bindword_two, later\n").expect("write");
    assert!(same("bindword_two").await.contains("d/e/c.txt"));

    drop(mounted);
    let after = same("bindword_one").await;
    assert!(!after.contains("d/e/"), "{after}");
    assert_eq!(
        search_index_stats(&dir, Duration::from_secs(1)).map(|s| s.watched),
        Some(true)
    );
}

/// Issue 49: a one-shot grep (one search in a session, as `pi-tools run` or `call` makes
/// it) starts no index build to compete with its own scan and be thrown away; a second
/// search of the directory starts one, and once it is built the searches go through it. A
/// long-lived session (`SearchIndex::Always`, the MCP server's) starts it at the first
/// search; `Off` never does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_grep_starts_no_index_and_a_second_search_uses_one() {
    let tree = |files: usize| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = fs::canonicalize(tmp.path()).expect("canonical");
        for i in 0..files {
            let text = if i == 7 {
                "the needle_49 is here\n"
            } else {
                "hay\n"
            };
            fs::write(dir.join(format!("f{i:03}.txt")), text).expect("write");
        }
        (tmp, dir)
    };
    let (_tmp, dir) = tree(40);
    let session = ctx(LocalEnv::new(&dir));
    let first = grep_text(&session, GrepArgs::new("needle_49")).await;
    assert!(first.starts_with("f007.txt:1: the needle_49"), "{first}");
    assert!(
        !search::index_exists(&dir),
        "a one-shot grep started an index build"
    );

    let second = grep_text(&session, GrepArgs::new("needle_49")).await;
    assert_eq!(second, first);
    assert!(
        search::index_exists(&dir),
        "a second search of the directory started no index"
    );
    let built = search_index_stats(&dir, Duration::from_secs(30)).expect("the index is built");
    let third = grep_text(&session, GrepArgs::new("needle_49")).await;
    assert_eq!(third, first);
    let used = search_index_stats(&dir, Duration::from_secs(1)).expect("stats");
    assert_eq!(
        used.searches_narrowed,
        built.searches_narrowed + 1,
        "the search after the build did not go through the index"
    );

    let (_tmp, long_lived) = tree(5);
    let server = ctx(LocalEnv::new(&long_lived).with_search_index(SearchIndex::Always));
    find_text(&server, FindArgs::new("*.txt")).await;
    assert!(search::index_exists(&long_lived));

    let (_tmp, off) = tree(5);
    let never = ctx(LocalEnv::new(&off).with_search_index(SearchIndex::Off));
    for _ in 0..3 {
        grep_text(&never, GrepArgs::new("needle_49")).await;
    }
    assert!(!search::index_exists(&off));
}

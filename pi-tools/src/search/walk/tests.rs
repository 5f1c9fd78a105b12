//! The walk against ripgrep's sorted walker, and its ignore rules, globs, odd names and
//! cancellation.

use super::*;

fn glob(p: &str) -> PathGlob {
    PathGlob::new(p).expect("valid glob")
}

fn base(path: &Path) -> WalkBase {
    WalkBase::open(&Roots::default(), path).expect("open the walk's root")
}

/// A tree with many directories and ignore rules at several levels: `.gitignore` and
/// `.ignore` files (with negations and directory-only rules), a `.git` directory with an
/// `info/exclude`, hidden files, an ignore file above the walk's root, and a symlink.
fn deep_tree() -> tempfile::TempDir {
    let top = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let path = top.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(".gitignore", "*.above\n");
    write("root/.gitignore", "*.log\n/build/\nskipdir/\n!keep.log\n");
    write("root/.git/info/exclude", "*.excluded\n");
    write("root/.git/HEAD", "ref: refs/heads/main\n");
    write("root/.hidden", "h");
    for a in 0..6 {
        for b in 0..5 {
            for c in 0..4 {
                let dir = format!("root/d{a}/e{b}/f{c}");
                write(&format!("{dir}/x.rs"), "fn main() {}\n");
                write(&format!("{dir}/y.log"), "log");
                write(&format!("{dir}/keep.log"), "kept");
                write(&format!("{dir}/z.excluded"), "ex");
                write(&format!("{dir}/w.above"), "ab");
                write(&format!("{dir}/tests/t{c}.rs"), "#[test] fn t() {}\n");
                if c == 1 {
                    write(&format!("{dir}/.ignore"), "tests/\n!*.log\n");
                    write(&format!("{dir}/g/.gitignore"), "*.rs\n");
                    write(&format!("{dir}/g/h/i.rs"), "x");
                    write(&format!("{dir}/g/h/j.txt"), "x");
                }
                if c == 2 {
                    write(&format!("{dir}/skipdir/s.rs"), "x");
                    write(&format!("{dir}/build/b.rs"), "not anchored here");
                }
            }
        }
    }
    write("root/build/out.rs", "anchored: ignored");
    write("root/Build/out.rs", "other case: kept");
    #[cfg(unix)]
    std::os::unix::fs::symlink(top.path().join("root/d0"), top.path().join("root/link"))
        .expect("symlink");
    top
}

/// A relative path as text with `/` separators.
fn relative_string(rel: &Path) -> String {
    let text = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

fn collect(
    root: &Path,
    helpers: usize,
    help_after: usize,
    stop_after: Option<usize>,
) -> (Vec<(String, bool)>, WalkEnd) {
    let mut seen = Vec::new();
    let end = walk(
        &base(root),
        &CancellationToken::new(),
        helpers,
        help_after,
        None,
        &mut Skipped::default(),
        |e| {
            assert_eq!(e.path(), root.join(e.rel), "path and rel agree");
            seen.push((e.rel.to_owned(), e.is_dir));
            if stop_after.is_some_and(|n| seen.len() >= n) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    (seen, end)
}

/// The same walk by ripgrep's own sorted walker, configured as ours behaves.
fn oracle(root: &Path) -> Vec<(String, bool)> {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.depth() > 0)
        .map(|e| {
            let rel = relative_string(e.path().strip_prefix(root).expect("below root"));
            (rel, e.file_type().is_some_and(|t| t.is_dir()))
        })
        .collect()
}

#[test]
fn every_helper_count_walks_exactly_as_ripgreps_sorted_walker() {
    let top = deep_tree();
    let root = top.path().join("root");
    let expected = oracle(&root);
    assert!(expected.len() > 500, "{}", expected.len());
    for helpers in [0, 1, 2, 3, 8] {
        for help_after in [0, 1, 100] {
            let (seen, end) = collect(&root, helpers, help_after, None);
            assert_eq!(end, WalkEnd::Completed);
            assert_eq!(seen, expected, "{helpers} helpers after {help_after}");
        }
    }
    // Below the top too, where the rules of the directories above still apply.
    let sub = root.join("d1");
    let (seen, _) = collect(&sub, 2, 0, None);
    assert_eq!(seen, oracle(&sub));
}

/// On a real tree: `PI_TOOLS_CORPUS=<dir> cargo test -p pi-tools --lib -- --ignored corpus`.
#[test]
#[ignore = "needs PI_TOOLS_CORPUS (see scripts/bench-search.sh)"]
fn the_corpus_is_walked_exactly_as_ripgreps_sorted_walker() {
    let root = PathBuf::from(std::env::var("PI_TOOLS_CORPUS").expect("PI_TOOLS_CORPUS"));
    let expected = oracle(&root);
    assert!(!expected.is_empty(), "the corpus is empty");
    for helpers in [0, 1, 3] {
        let (seen, _) = collect(&root, helpers, 0, None);
        assert_eq!(seen.len(), expected.len());
        assert!(seen == expected, "{helpers} helpers");
    }
}

#[test]
fn a_glob_selects_what_is_visited_and_the_rest_is_still_walked() {
    let top = deep_tree();
    let root = top.path().join("root");
    for pattern in ["**/tests/**/*.rs", "*.log", "e1/", "/d0/e0/*"] {
        let glob = glob(pattern);
        let expected: Vec<_> = oracle(&root)
            .into_iter()
            .filter(|(rel, is_dir)| glob.is_match(rel, *is_dir))
            .collect();
        assert!(!expected.is_empty(), "{pattern}");
        for helpers in [0, 2] {
            let mut seen = Vec::new();
            walk(
                &base(&root),
                &CancellationToken::new(),
                helpers,
                0,
                Some(&glob),
                &mut Skipped::default(),
                |e| {
                    seen.push((e.rel.to_owned(), e.is_dir));
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(seen, expected, "{pattern} with {helpers} helpers");
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn names_that_are_not_utf8_keep_their_bytes_in_the_path() {
    use std::os::unix::ffi::OsStrExt;
    let top = tempfile::tempdir().expect("tempdir");
    let odd = OsStr::from_bytes(b"caf\xe9");
    std::fs::create_dir(top.path().join(odd)).expect("mkdir");
    std::fs::write(top.path().join(odd).join("x.txt"), "x").expect("write");
    std::fs::write(top.path().join("b.txt"), "b").expect("write");
    std::fs::write(top.path().join(OsStr::from_bytes(b"z\xff.txt")), "z").expect("write");
    std::fs::write(top.path().join("d.txt"), "d").expect("write");
    let mut seen = Vec::new();
    let root = base(top.path());
    let skipped = &mut Skipped::default();
    walk(&root, &CancellationToken::new(), 0, 0, None, skipped, |e| {
        assert!(std::fs::symlink_metadata(e.path()).is_ok(), "{}", e.rel);
        seen.push(e.rel.to_owned());
        ControlFlow::Continue(())
    });
    assert_eq!(
        seen,
        [
            "b.txt",
            "caf\u{fffd}",
            "caf\u{fffd}/x.txt",
            "d.txt",
            "z\u{fffd}.txt"
        ]
    );
}

#[test]
fn a_cancelled_walk_stops_and_says_so() {
    let top = deep_tree();
    let cancel = CancellationToken::new();
    let mut seen = 0;
    let root = base(&top.path().join("root"));
    let skipped = &mut Skipped::default();
    let end = walk(&root, &cancel, 2, 0, None, skipped, |_| {
        seen += 1;
        if seen == 10 {
            cancel.cancel();
        }
        ControlFlow::Continue(())
    });
    assert_eq!(end, WalkEnd::Cancelled);
    assert!(seen < 10 + CANCEL_CHECK_EVERY, "{seen}");
}

#[test]
fn a_git_worktree_file_leads_to_the_common_exclude_file() {
    let top = tempfile::tempdir().expect("tempdir");
    let main = top.path().join("main");
    std::fs::create_dir_all(main.join(".git/info")).expect("mkdir");
    std::fs::write(main.join(".git/info/exclude"), "*.tmp\n").expect("write");
    let admin = main.join(".git/worktrees/wt");
    std::fs::create_dir_all(&admin).expect("mkdir");
    std::fs::write(admin.join("commondir"), "../..\n").expect("write");
    let wt = top.path().join("wt");
    std::fs::create_dir_all(&wt).expect("mkdir");
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).expect("write");
    std::fs::write(wt.join("a.tmp"), "x").expect("write");
    std::fs::write(wt.join("b.rs"), "x").expect("write");
    let (seen, _) = collect(&wt, 1, 0, None);
    assert_eq!(seen, vec![("b.rs".to_string(), false)]);
}

#[test]
fn a_deep_tree_is_walked_sorted_with_every_ignore_rule_and_the_same_twice() {
    let top = deep_tree();
    let root = top.path().join("root");
    let (first, end) = collect(&root, 2, 0, None);
    assert_eq!(end, WalkEnd::Completed);
    let rels: Vec<&str> = first.iter().map(|(r, _)| r.as_str()).collect();
    assert!(rels.contains(&".hidden"));
    assert!(rels.contains(&"d0/e0/f0/keep.log"), "negated in .gitignore");
    assert!(rels.contains(&"d0/e0/f1/y.log"), "re-included by .ignore");
    assert!(rels.contains(&"Build/out.rs"));
    assert!(
        rels.contains(&"d0/e0/f2/build/b.rs"),
        "`/build/` is anchored"
    );
    assert!(rels.contains(&"d0/e0/f1/g/h/j.txt"));
    #[cfg(unix)]
    assert!(
        first.contains(&("link".to_string(), false)),
        "symlinks not followed"
    );
    for gone in [
        ".git",
        "build",
        "d0/e0/f0/y.log",
        "d0/e0/f0/z.excluded",
        "d0/e0/f0/w.above",
        "d0/e0/f1/tests",
        "d0/e0/f1/g/h/i.rs",
        "d0/e0/f2/skipdir",
    ] {
        assert!(!rels.contains(&gone), "{gone} should be ignored");
    }
    // Depth first, each directory's entries sorted by name.
    let pos = |r: &str| rels.iter().position(|x| *x == r).expect(r);
    assert!(pos("d0/e4/f3/x.rs") < pos("d1"));
    assert!(pos("d0/e0/f0/keep.log") < pos("d0/e0/f0/tests"));
    assert!(pos("d0/e0/f0/tests/t0.rs") < pos("d0/e0/f0/x.rs"));
    let (second, _) = collect(&root, 1, 0, None);
    assert_eq!(first, second);
    for n in [1, 100, first.len() - 1] {
        let (prefix, end) = collect(&root, 2, 0, Some(n));
        assert_eq!(end, WalkEnd::Stopped);
        assert_eq!(prefix, first[..n]);
    }
}

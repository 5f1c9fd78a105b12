//! The index's candidates against full scans, with and without notifications: files
//! rewritten in place (also with the same size, at once), created, removed and renamed
//! directly on disk, each followed by searches that must find exactly what a full scan finds.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use grep_regex::RegexMatcherBuilder;
use tokio_util::sync::CancellationToken;

use super::{Index, query_for};
use crate::env::local::Roots;
use crate::search::scan::{SearchSpec, search, search_listed};
use crate::search::walk::WalkBase;

fn spec(root: &Path, pattern: &str, ignore_case: bool) -> SearchSpec {
    SearchSpec {
        root: root.to_path_buf(),
        roots: Arc::new(Roots::default()),
        single_file: false,
        matcher: RegexMatcherBuilder::new()
            .case_insensitive(ignore_case)
            .line_terminator(Some(b'\n'))
            .build(pattern)
            .expect("pattern"),
        glob: None,
        context: 0,
        limit: 1000,
        max_lines: usize::MAX,
        max_bytes: usize::MAX,
    }
}

/// The files with matches and their lines: by a full scan, and through the index (`None`
/// when the index did not answer).
type Found = Vec<(String, Vec<u64>)>;

fn both(index: &Index, root: &Path, pattern: &str, ignore_case: bool) -> (Found, Option<Found>) {
    let spec = spec(root, pattern, ignore_case);
    let cancel = CancellationToken::new();
    let lines = |o: crate::search::scan::SearchOutcome| -> Found {
        o.files
            .into_iter()
            .map(|f| (f.rel, f.lines.iter().map(|l| l.number).collect()))
            .collect()
    };
    let full = lines(search(&spec, &cancel));
    let query = query_for(pattern, false, ignore_case);
    let indexed = index.candidates(root, &query, None).map(|files| {
        let base = WalkBase::open(&spec.roots, root).expect("open");
        lines(search_listed(&spec, &base, &cancel, files))
    });
    (full, indexed)
}

fn run(watch: bool) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("tree");
    std::fs::create_dir_all(root.join("d")).expect("mkdir");
    for i in 0..20 {
        std::fs::write(root.join(format!("d/f{i}.txt")), format!("plain {i}\n")).expect("write");
    }
    let index = Index::start(root.clone(), Arc::new(Roots::default()), watch);
    let stats = index.wait_ready(Duration::from_secs(20)).expect("built");
    assert_eq!(
        (stats.files, stats.watched),
        (20, watch && cfg!(target_os = "linux"))
    );
    let mut answered = 0;
    for round in 0..60u32 {
        let n = round % 20;
        let path = root.join(format!("d/f{n}.txt"));
        match round % 5 {
            // Same size as before, right after the last search read the index.
            0 => std::fs::write(&path, format!("needl {n}\n")).expect("write"),
            1 => std::fs::write(&path, format!("needle {n}\n")).expect("write"),
            2 => std::fs::write(root.join(format!("d/new{round}.txt")), "NEEDLE new\n")
                .expect("write"),
            3 => {
                let _ = std::fs::rename(&path, root.join(format!("d/moved{round}.txt")));
            }
            _ => {
                let _ = std::fs::remove_file(root.join(format!("d/new{}.txt", round - 2)));
            }
        }
        for (pattern, ignore_case) in [("needle", false), ("needle", true), ("plain 1\\d", false)] {
            let (full, indexed) = both(&index, &root, pattern, ignore_case);
            if let Some(indexed) = indexed {
                assert_eq!(indexed, full, "round {round}, {pattern}");
                answered += 1;
            }
        }
    }
    assert_eq!(answered, 180);
}

#[test]
fn candidates_match_full_scans_with_notifications() {
    run(true);
}

#[test]
fn candidates_match_full_scans_by_walking_without_notifications() {
    run(false);
}

#[test]
fn sessions_with_one_working_directory_share_one_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let roots = Arc::new(Roots::default());
    let a = super::for_root(tmp.path(), &roots);
    let b = super::for_root(tmp.path(), &Arc::new(Roots::default()));
    assert!(Arc::ptr_eq(&a, &b));
    let other = tempfile::tempdir().expect("tempdir");
    assert!(!Arc::ptr_eq(&a, &super::for_root(other.path(), &roots)));
}

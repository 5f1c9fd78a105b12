//! The remote cache of uploaded helpers against a real sshd: processes uploading the same
//! build at once all get the remote server, and the cache keeps the helper uploaded now and
//! the two other helpers used last, and nothing else of its own.
#![cfg(all(feature = "ssh", feature = "cli"))]

use support::ssh as ssh_support;

use std::path::Path;
use std::time::{Duration, SystemTime};

use pi_tools::env::remote::SshEnv;
use ssh_support::{Sshd, sftp_server};

/// Sets `path`'s modification time to `ago` before now (through a file opened for reading:
/// a helper still running cannot be opened for writing).
fn age(path: &Path, ago: Duration) {
    std::fs::File::open(path)
        .expect("open")
        .set_modified(SystemTime::now() - ago)
        .expect("set the modification time");
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the cache")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_uploads_at_once_all_serve_and_the_cache_keeps_three_helpers() {
    // A home of this test's own, so the cache starts empty and its planted files are ours.
    let home = tempfile::tempdir().expect("tempdir");
    let cache = home.path().join(".cache/pi-tools");
    std::fs::create_dir_all(&cache).expect("cache");
    let day = Duration::from_secs(24 * 60 * 60);
    for (days, name) in [(4, "old-a"), (3, "old-b"), (2, "old-c"), (1, "old-d")] {
        let path = cache.join(format!("pi-tools-0.0.1-{name}"));
        std::fs::write(&path, "#!/bin/sh\nexit 1\n").expect("an older helper");
        age(&path, day * days);
    }
    std::fs::write(cache.join(".pi-tools-lost.1.0.tmp"), "half").expect("stale upload");
    age(
        &cache.join(".pi-tools-lost.1.0.tmp"),
        Duration::from_secs(2 * 60 * 60),
    );
    std::fs::write(cache.join(".pi-tools-running.2.0.tmp"), "half").expect("live upload");
    std::fs::create_dir(cache.join("pi-tools-a-directory")).expect("a directory");
    std::fs::write(cache.join("notes.txt"), "mine").expect("a file of the user's");
    age(&cache.join("notes.txt"), day * 30);

    let set_home = format!("SetEnv HOME={}", home.path().display());
    let sftp = format!(
        "Subsystem sftp {} -d {}",
        sftp_server(),
        home.path().display()
    );
    let Some(sshd) = Sshd::start_with(&[&set_home, &sftp]) else {
        return;
    };
    let helper = env!("CARGO_BIN_EXE_cli-under-test");
    let dir = tempfile::tempdir().expect("tempdir");
    // Three environments find no helper and upload the same build at once: each one's start
    // script must find a whole, executable file, whichever upload was renamed last.
    let connect = || async {
        let target = sshd.target().with_upload_helper(Some(helper.into()));
        let env = SshEnv::connect(target, dir.path()).await.expect("connect");
        let served = env.uses_remote_server().await;
        (env, served)
    };
    let (a, b, c) = tokio::join!(connect(), connect(), connect());
    assert_eq!((a.1, b.1, c.1), (true, true, true), "every upload serves");
    drop((a, b, c));

    let ours: Vec<String> = names(&cache)
        .into_iter()
        .filter(|n| n.starts_with("pi-tools-0") && !n.contains("-old-"))
        .collect();
    assert_eq!(ours.len(), 1, "one helper of this build: {ours:?}");
    let ours = cache.join(&ours[0]);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&ours).expect("helper").permissions(),
    );
    assert_eq!(mode & 0o777, 0o755);
    let mut expected = vec![
        ".pi-tools-running.2.0.tmp".to_string(),
        "notes.txt".to_string(),
        "pi-tools-0.0.1-old-c".to_string(),
        "pi-tools-0.0.1-old-d".to_string(),
        "pi-tools-a-directory".to_string(),
        ours.file_name().unwrap().to_string_lossy().into_owned(),
    ];
    expected.sort();
    assert_eq!(names(&cache), expected);

    // A cached helper is touched when it is used, so the eviction counts its last use.
    age(&ours, day * 10);
    let target = sshd.target().with_upload_helper(Some(helper.into()));
    let env = SshEnv::connect(target, dir.path()).await.expect("connect");
    assert!(env.uses_remote_server().await);
    let used = std::fs::metadata(&ours)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert!(
        SystemTime::now().duration_since(used).expect("past") < Duration::from_secs(60),
        "the helper was touched when used"
    );
    assert_eq!(names(&cache), expected, "no upload, nothing removed");
}

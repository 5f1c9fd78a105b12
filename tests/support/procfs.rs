//! Counting a test's processes in /proc: each test starts `sleep <tag>` with a tag no other
//! test uses, then counts the live processes whose command line holds it.

use std::sync::atomic::{AtomicU32, Ordering};

/// A `sleep` argument no other test uses, so its processes can be counted in /proc.
pub fn tag() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "300.{}{:03}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live (not zombie) processes whose command line holds `tag`.
pub fn alive(tag: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, r)| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        let holds = cmdline.split(|&b| b == 0).any(|arg| arg == tag.as_bytes());
        if holds && !zombie {
            found.push(pid);
        }
    }
    found
}

/// The processes whose command line (its arguments joined by spaces) contains `marker`,
/// zombies included.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// Polls `count` until it is `want` or five seconds have passed, and returns the last count:
/// a process just started may not have exec'd its command yet, one just killed may not be
/// reaped yet.
pub async fn settle(want: usize, count: impl Fn() -> usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let n = count();
        if n == want || std::time::Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// [`settle`], for a test without a runtime.
pub fn settle_blocking(want: usize, count: impl Fn() -> usize) -> usize {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime for the wait")
        .block_on(settle(want, count))
}

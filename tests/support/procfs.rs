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

/// The TCP ports process `pid` listens on (IPv4 and IPv6), read from its descriptors and
/// `/proc/<pid>/net/tcp{,6}`: a server told to listen on port 0 picks its own, so no other
/// test can take the port between choosing it and binding it.
pub fn listening_ports(pid: u32) -> Vec<u16> {
    let sockets: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter_map(|target| {
                    let target = target.to_string_lossy().into_owned();
                    let inode = target.strip_prefix("socket:[")?.strip_suffix(']')?;
                    Some(inode.to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut ports = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            // `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …`
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if *state == "0A"
                && sockets.contains(*inode)
                && let Some(port) = local
                    .rsplit_once(':')
                    .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok())
            {
                ports.push(port);
            }
        }
    }
    ports
}

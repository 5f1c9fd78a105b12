//! A process's own memory figures, for the benchmarks that measure a peak.

/// A field of this process's `/proc/self/status` in bytes (`VmHWM`, `VmRSS`); 0 when it
/// cannot be read.
pub fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

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

/// This example started again as `pi-tools mcp` in `dir` with the configuration
/// `config`, its standard input and output piped, told to write its peak to `peak_file`
/// (through the environment variable `peak_var`) when it ends.
pub fn spawn_gateway(
    dir: &std::path::Path,
    config: &std::path::Path,
    peak_var: &str,
    peak_file: &std::path::Path,
) -> std::io::Result<std::process::Child> {
    let _ = std::fs::remove_file(peak_file);
    std::process::Command::new(std::env::current_exe()?)
        .arg("mcp")
        .arg("--cwd")
        .arg(dir)
        .arg("--config")
        .arg(config)
        .env(peak_var, peak_file)
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
}

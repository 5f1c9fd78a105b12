//! The network filter: a seccomp program that makes `socket()` fail with EPERM for every
//! family but `AF_UNIX` (local pipes and sockets keep working, TCP, UDP, raw and netlink
//! sockets do not), and refuses io_uring, which can create sockets without `socket()`.

use std::collections::BTreeMap;
use std::io;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The compiled program, built once per process (the child only installs it).
pub(super) fn network_filter() -> io::Result<&'static BpfProgram> {
    static PROGRAM: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| compile().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the sandbox cannot build its network filter ({e}); set [sandbox] network = true to run commands without it"
                ),
            )
        })
}

fn compile() -> Result<BpfProgram, seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let not_unix = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![not_unix.clone()]);
    #[cfg(target_arch = "x86_64")]
    {
        // The x32 ABI numbers the same call with bit 30 set; close that door too.
        const X32: i64 = 0x4000_0000;
        rules.insert(X32 | libc::SYS_socket, vec![not_unix]);
    }
    for always in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(always, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}

/// Installs `program` on the calling thread (the child, just before `exec`). Sets
/// `no_new_privs` first, as seccomp requires of an unprivileged process.
pub(super) fn install(program: &BpfProgram) -> io::Result<()> {
    seccompiler::apply_filter(program).map_err(|_| io::Error::last_os_error())
}

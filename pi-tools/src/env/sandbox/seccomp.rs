//! The seccomp filters a command runs under, one program per combination:
//!
//! - **network off**: `socket()` fails with EPERM for every family but `AF_UNIX` (local
//!   pipes and sockets keep working, TCP, UDP, raw and netlink sockets do not);
//! - **no set-ID, no file capabilities** (whenever writes are confined): root in the
//!   command's user namespace owns its files as root on the host, so a set-user-ID file or
//!   one with `security.capability` made there would give a later user root. `chmod`,
//!   `fchmod`, `fchmodat(2)`, `open(at)`, `creat` and `mknod(at)` with `S_ISUID` or
//!   `S_ISGID` in the mode fail with EPERM; the extended-attribute setters fail with
//!   EOPNOTSUPP (their name is behind a pointer a filter cannot read; tools that copy
//!   attributes take that as "not supported here"); `openat2` fails with ENOSYS (its mode
//!   is behind a pointer too; callers fall back to `openat`).
//!
//! Both refuse io_uring, which can create sockets and set attributes without those calls.

use std::collections::BTreeMap;
use std::io;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `fchmodat2` (Linux 6.6; the same number on every architecture).
const SYS_FCHMODAT2: i64 = 452;
/// `setxattrat` (Linux 6.13; the same number on every architecture).
const SYS_SETXATTRAT: i64 = 463;

/// The compiled programs for `network` and `setid` (refusing set-ID bits and file
/// capabilities), built once per process (the child only installs them); `None` when there
/// is nothing to refuse.
pub(super) fn filter(network: bool, setid: bool) -> io::Result<Option<&'static [BpfProgram]>> {
    static PROGRAMS: [OnceLock<Result<Vec<BpfProgram>, String>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let at = match (network, setid) {
        (true, false) => return Ok(None),
        (false, false) => 0,
        (true, true) => 1,
        (false, true) => 2,
    };
    PROGRAMS[at]
        .get_or_init(|| compile(network, setid).map_err(|e| e.to_string()))
        .as_ref()
        .map(|programs| Some(programs.as_slice()))
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the sandbox cannot build its seccomp filter ({e}); set [sandbox] mode = \"off\" and network = true to run commands without it"
                ),
            )
        })
}

/// A rule matching when argument `arg` has `bit` set.
fn has_bit(arg: u8, bit: u32) -> Result<SeccompRule, seccompiler::Error> {
    Ok(SeccompRule::new(vec![SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(u64::from(bit)),
        u64::from(bit),
    )?])?)
}

/// Rules matching a set-ID bit in argument `arg`.
fn setid_mode(arg: u8) -> Result<Vec<SeccompRule>, seccompiler::Error> {
    Ok(vec![
        has_bit(arg, libc::S_ISUID)?,
        has_bit(arg, libc::S_ISGID)?,
    ])
}

/// One filter's rules: the calls (with their conditions) that fail with `errno`.
type Refusals = Vec<(i64, Vec<SeccompRule>)>;

fn compile(network: bool, setid: bool) -> Result<Vec<BpfProgram>, seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut groups: Vec<(Refusals, i32)> = Vec::new();
    let mut eperm: Refusals = vec![
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
    ];
    if !network {
        let not_unix = SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?;
        eperm.push((libc::SYS_socket, vec![not_unix]));
    }
    if setid {
        #[cfg(target_arch = "x86_64")]
        eperm.extend([
            (libc::SYS_chmod, setid_mode(1)?),
            (libc::SYS_open, setid_mode(2)?),
            (libc::SYS_creat, setid_mode(1)?),
            (libc::SYS_mknod, setid_mode(1)?),
        ]);
        eperm.extend([
            (libc::SYS_fchmod, setid_mode(1)?),
            (libc::SYS_fchmodat, setid_mode(2)?),
            (SYS_FCHMODAT2, setid_mode(2)?),
            (libc::SYS_openat, setid_mode(3)?),
            (libc::SYS_mknodat, setid_mode(2)?),
        ]);
        let xattrs = [
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            SYS_SETXATTRAT,
        ];
        groups.push((
            xattrs.iter().map(|&n| (n, Vec::new())).collect(),
            libc::EOPNOTSUPP,
        ));
        groups.push((vec![(libc::SYS_openat2, Vec::new())], libc::ENOSYS));
    }
    groups.push((eperm, libc::EPERM));
    // Each errno is a filter of its own (a filter has one answer for what it matches); the
    // kernel runs every filter installed and an errno wins over allowing the call.
    let mut programs = Vec::new();
    for (refusals, errno) in groups {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for (nr, conditions) in refusals {
            #[cfg(target_arch = "x86_64")]
            {
                // The x32 ABI numbers the same call with bit 30 set; close that door too.
                const X32: i64 = 0x4000_0000;
                rules.insert(X32 | nr, conditions.clone());
            }
            rules.insert(nr, conditions);
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )?;
        programs.push(filter.try_into()?);
    }
    Ok(programs)
}

/// Installs `programs` on the calling thread (the child, just before `exec`). Sets
/// `no_new_privs` first, as seccomp requires of an unprivileged process.
pub(super) fn install(programs: &[BpfProgram]) -> io::Result<()> {
    for program in programs {
        seccompiler::apply_filter(program).map_err(|_| io::Error::last_os_error())?;
    }
    Ok(())
}

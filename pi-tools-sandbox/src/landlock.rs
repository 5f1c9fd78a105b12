//! The file-system rules: Landlock handles every write right of the newest ABI this crate
//! knows (the crate drops the rights an older kernel lacks, its best-effort compatibility)
//! and grants them only beneath the writable roots and on a few harmless devices; making
//! a character or block device is granted nowhere. Reads and execution are not handled,
//! so they stay allowed everywhere. Where the kernel offers scoping (ABI 6), signals and
//! connections to abstract Unix sockets cannot reach past the sandbox: a command can
//! signal the processes it started, not one outside.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

/// The ABI whose write rights are requested.
const TARGET_ABI: ABI = ABI::V6;

/// Devices every command may write to (`> /dev/null` must keep working).
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// Creates the ruleset in the parent (opening every root there), so the child only has
/// to call `landlock_restrict_self` on it.
pub(super) fn ruleset(roots: &[PathBuf]) -> io::Result<RulesetCreated> {
    let fail = |e: &dyn std::fmt::Display| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "the sandbox's Landlock rules cannot be built ({e}); fix [sandbox] writable_roots or set [sandbox] mode = \"off\""
            ),
        )
    };
    let handled = AccessFs::from_write(TARGET_ABI);
    let write = handled & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let devices: Vec<&Path> = DEVICES
        .iter()
        .map(Path::new)
        .filter(|p| p.exists())
        .collect();
    Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled)
        .map_err(|e| fail(&e))?
        .scope(Scope::from_all(TARGET_ABI))
        .map_err(|e| fail(&e))?
        .create()
        .map_err(|e| fail(&e))?
        .add_rules(path_beneath_rules(roots, write))
        .map_err(|e| fail(&e))?
        .add_rules(path_beneath_rules(devices, write))
        .map_err(|e| fail(&e))
        .map(|ruleset| ruleset.no_new_privs(true))
}

/// The ruleset's handle, which the child restricts itself with ([`restrict`]); an error
/// when the kernel cannot enforce it.
pub(super) fn into_fd(ruleset: RulesetCreated) -> io::Result<OwnedFd> {
    Option::<OwnedFd>::from(ruleset).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "the kernel has no Landlock to enforce the sandbox's rules; set [sandbox] mode = \"off\" to run commands without it",
        )
    })
}

/// Confines the calling thread (the child) with the ruleset behind `fd`: `no_new_privs`,
/// then `landlock_restrict_self`. Two system calls on a descriptor opened before the child
/// started; no memory is written.
pub(super) fn restrict(fd: &OwnedFd) -> io::Result<()> {
    // A raw system call in rustix too (no errno, no allocation), as the child needs.
    rustix::thread::set_no_new_privs(true)?;
    // rustix has no Landlock calls, so this one stays libc's.
    // SAFETY: landlock_restrict_self takes plain integers.
    unsafe {
        if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

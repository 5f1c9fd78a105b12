//! The file-system rules: Landlock handles every write right of the newest ABI this crate
//! knows (the crate drops the rights an older kernel lacks, its best-effort compatibility)
//! and grants them only beneath the writable roots and on a few harmless devices; making
//! a character or block device is granted nowhere. Reads and execution are not handled,
//! so they stay allowed everywhere. Where the kernel offers scoping (ABI 6), signals and
//! connections to abstract Unix sockets cannot reach past the sandbox: a command can
//! signal the processes it started, not one outside.

use std::io;
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

/// Confines the calling process (the child) with `ruleset`.
pub(super) fn restrict(ruleset: RulesetCreated) -> io::Result<()> {
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != landlock::RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::ENOSYS)),
        Err(_) => Err(io::Error::last_os_error()),
    }
}

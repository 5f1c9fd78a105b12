//! Dropping every capability where no user namespace can be made: the child empties its
//! bounding, ambient, inheritable, permitted and effective sets and locks root's special
//! treatment off, so neither it nor anything it executes (`no_new_privs` is set by Landlock)
//! holds a capability in the host's user namespace.

use std::io;

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP` and `SECBIT_NO_CAP_AMBIENT_RAISE` with their
/// locks, and `SECBIT_KEEP_CAPS` locked off: uid 0 gains nothing at `exec`.
const SECURE_BITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;

#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Whether this process holds any capability (root usually does); read once.
pub(super) fn held() -> bool {
    static HELD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HELD.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .filter_map(|l| {
                l.strip_prefix("CapPrm:")
                    .or_else(|| l.strip_prefix("CapEff:"))
            })
            .any(|v| u64::from_str_radix(v.trim(), 16) != Ok(0))
            || rustix::process::geteuid().is_root()
    })
}

/// In the child, before [`drop_all`]: an IPC namespace of its own, so the host's System V
/// IPC objects are out of reach, where the process may make one (root may, without a user
/// namespace).
pub(super) fn own_ipc_namespace() {
    // SAFETY: unshare takes flags only.
    unsafe {
        libc::unshare(libc::CLONE_NEWIPC);
    }
}

/// In the child: drops every capability for good. Only plain system calls (safe after
/// `fork`).
pub(super) fn drop_all() -> io::Result<()> {
    // libc's: rustix has these prctls, but its `Capability` names only the capabilities it
    // knows, and this drops every number up to 63, including ones newer than it.
    // SAFETY: prctl and capset with values and pointers to data on this stack.
    unsafe {
        // While CAP_SETPCAP is still held; best effort, the empty sets below are what counts.
        libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0);
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && *libc::__errno_location() == libc::EINVAL
            {
                break;
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let header = Header {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header, none.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

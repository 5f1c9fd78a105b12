//! What the running kernel can enforce, found once per process, and the report
//! `pi-tools check` prints.

use std::sync::OnceLock;

/// The kernel features the sandbox is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSupport {
    /// The Landlock ABI version the kernel offers (0: no Landlock).
    pub landlock_abi: u32,
    /// Seccomp filters can be installed.
    pub seccomp: bool,
    /// Unprivileged user and mount namespaces can be created (needed to keep protected
    /// paths read-only inside writable roots).
    pub user_namespaces: bool,
    /// The operating system's name, for messages (`Linux`, or where none of the above
    /// exists, e.g. `macos`).
    pub os: &'static str,
}

impl KernelSupport {
    /// What this machine's kernel supports (probed once, then remembered).
    pub fn probe() -> KernelSupport {
        static PROBED: OnceLock<KernelSupport> = OnceLock::new();
        PROBED.get_or_init(probe_now).clone()
    }

    /// Nothing at all: what a kernel without any of the features looks like.
    pub fn none() -> KernelSupport {
        KernelSupport {
            landlock_abi: 0,
            seccomp: false,
            user_namespaces: false,
            os: std::env::consts::OS,
        }
    }

    /// The Landlock ABI that scopes signals and abstract Unix sockets (Linux 6.12).
    pub const SCOPING_ABI: u32 = 6;

    /// One line per feature, e.g. `Landlock: ABI 7`, `seccomp: available`.
    pub fn report(&self) -> Vec<String> {
        let yes_no = |b: bool| if b { "available" } else { "not available" };
        vec![
            if self.landlock_abi == 0 {
                format!("Landlock: not available ({})", self.os)
            } else {
                format!("Landlock: ABI {}", self.landlock_abi)
            },
            format!("seccomp: {}", yes_no(self.seccomp)),
            format!("user namespaces: {}", yes_no(self.user_namespaces)),
        ]
    }

    /// What a sandbox that confines writes cannot enforce on this kernel though it runs,
    /// one sentence each (empty when it enforces everything).
    pub fn gaps(&self) -> Vec<String> {
        let mut gaps = Vec::new();
        if (1..Self::SCOPING_ABI).contains(&self.landlock_abi) {
            gaps.push(format!(
                "signals and abstract Unix sockets are not scoped (Landlock ABI {} here; scoping needs ABI {}, Linux 6.12): a command can signal a process of the same user outside the sandbox and connect to its abstract sockets",
                self.landlock_abi,
                Self::SCOPING_ABI
            ));
        }
        if self.landlock_abi > 0 && !self.user_namespaces {
            gaps.push(
                "no user namespace can be made: commands run with every capability dropped instead, and protected paths that exist (such as .git) make every command fail".to_owned(),
            );
        }
        gaps
    }
}

#[cfg(target_os = "linux")]
fn probe_now() -> KernelSupport {
    // LANDLOCK_CREATE_RULESET_VERSION: returns the ABI version without creating anything.
    // rustix has no Landlock calls, so this one stays a raw system call.
    // SAFETY: a read-only query with a null attribute pointer, as the man page prescribes.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    // PR_GET_SECCOMP fails (EINVAL) on a kernel built without seccomp.
    let seccomp = rustix::thread::secure_computing_mode().is_ok();
    KernelSupport {
        landlock_abi: u32::try_from(abi).unwrap_or(0),
        seccomp,
        user_namespaces: user_namespaces(),
        os: "Linux",
    }
}

/// Tried for real where commands can run (see `mounts::namespaces_work`).
#[cfg(all(target_os = "linux", feature = "process"))]
fn user_namespaces() -> bool {
    crate::mounts::namespaces_work()
}

/// Without the process runtime, from the kernel's switches.
#[cfg(all(target_os = "linux", not(feature = "process")))]
fn user_namespaces() -> bool {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_owned());
    let root = rustix::process::geteuid().is_root();
    // A switch the kernel does not have is no restriction.
    let allows = |p: &str, allowed: &str| match read(p) {
        Ok(v) => v == allowed,
        Err(_) => true,
    };
    read("/proc/sys/user/max_user_namespaces").is_ok_and(|n| n != "0")
        && (root || allows("/proc/sys/kernel/unprivileged_userns_clone", "1"))
        && (root
            || allows(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                "0",
            ))
}

#[cfg(not(target_os = "linux"))]
fn probe_now() -> KernelSupport {
    KernelSupport::none()
}

//! [`Confinement`]: a resolved policy turned into what the child applies before `exec`
//! (a child made by `clone`, see `exec/spawn.rs`, or by `fork`). Everything that allocates
//! or opens paths happens in the parent; the child only makes system calls, in this order:
//! its own user namespace (or, where none can be made, every capability dropped), the
//! mount namespace (protected paths), Landlock (writes, device nodes, signals and abstract
//! sockets), seccomp (network, set-ID bits and file capabilities). Every descendant
//! inherits all of it.

use std::io;
#[cfg(target_os = "linux")]
use std::path::PathBuf;

use crate::policy::{Sandbox, SandboxMode};
use crate::probe::KernelSupport;

#[cfg(target_os = "linux")]
use crate::{landlock, mounts::MountPlan, privileges, seccomp};

/// How the command is kept from the host's privileges.
#[cfg(target_os = "linux")]
enum Isolation {
    /// A user namespace of its own (with the protected paths' mounts, if any).
    Namespaces(MountPlan),
    /// No user namespace can be made: every capability is dropped instead.
    DropCapabilities,
}

/// The confinement of one command, ready to be installed on its `Command`: the namespaces
/// it is made in, its Landlock ruleset and its seccomp filter, applied in the child before
/// `exec`. [`exec::run`](crate::exec::run) makes one for every command it runs in a
/// [`Sandbox`]; a program that starts a process of its own (a server it talks to) installs
/// one on its `Command` with [`install`](Self::install).
pub struct Confinement {
    #[cfg(target_os = "linux")]
    isolation: Option<Isolation>,
    /// The session's Landlock ruleset, as a handle of this command's own.
    #[cfg(target_os = "linux")]
    ruleset: Option<std::os::fd::OwnedFd>,
    #[cfg(target_os = "linux")]
    filter: Option<&'static seccompiler::BpfProgram>,
}

impl Confinement {
    /// What the child must do for `sandbox`, or `None` when it confines nothing. Fails,
    /// with a sentence naming the mode, what the kernel lacks and the setting to change,
    /// when the kernel cannot enforce the policy: nothing runs unconfined silently.
    pub fn prepare(sandbox: &Sandbox) -> io::Result<Option<Confinement>> {
        sandbox.wake()?;
        if sandbox.mode == SandboxMode::Off && sandbox.network {
            return Ok(None);
        }
        let kernel = sandbox.kernel.clone().unwrap_or_else(KernelSupport::probe);
        unenforceable(sandbox, &kernel)?;

        Self::build(sandbox, &kernel)
    }

    #[cfg(target_os = "linux")]
    fn build(sandbox: &Sandbox, kernel: &KernelSupport) -> io::Result<Option<Confinement>> {
        let confine_writes = sandbox.mode != SandboxMode::Off;
        Ok(Some(Confinement {
            isolation: if !confine_writes {
                None
            } else if kernel.user_namespaces {
                // Outside the writable roots Landlock refuses writes already.
                let protected: Vec<&PathBuf> = sandbox
                    .protected
                    .iter()
                    .filter(|p| sandbox.roots.iter().any(|r| p.starts_with(r)))
                    .collect();
                Some(Isolation::Namespaces(MountPlan::new(
                    &sandbox.anchors,
                    &protected,
                    &sandbox.in_place,
                    &sandbox.roots,
                    sandbox.shm.as_deref().map(crate::PrivateTemp::path),
                )?))
            } else if privileges::held() {
                Some(Isolation::DropCapabilities)
            } else {
                None
            },
            ruleset: if confine_writes {
                Some(landlock::into_fd(Self::ruleset(sandbox, kernel)?)?)
            } else {
                None
            },
            filter: seccomp::filter(sandbox.network, confine_writes)?,
        }))
    }

    /// The session's Landlock ruleset (built at its first command), as a handle of this
    /// command's own.
    #[cfg(target_os = "linux")]
    fn ruleset(
        sandbox: &Sandbox,
        kernel: &KernelSupport,
    ) -> io::Result<::landlock::RulesetCreated> {
        let mut held = sandbox.landlock.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ruleset) = &*held {
            return ruleset.try_clone();
        }
        // The session's /dev/shm, where it is mounted (in a mount namespace).
        let shm = (kernel.user_namespaces)
            .then(|| sandbox.shm.as_deref().map(|s| s.path().to_path_buf()))
            .flatten();
        let roots: Vec<PathBuf> = sandbox.roots.iter().cloned().chain(shm).collect();
        let ruleset = landlock::ruleset(&roots)?;
        let copy = ruleset.try_clone()?;
        *held = Some(ruleset);
        Ok(copy)
    }

    #[cfg(not(target_os = "linux"))]
    fn build(_sandbox: &Sandbox, _kernel: &KernelSupport) -> io::Result<Option<Confinement>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the sandbox needs Linux; set [sandbox] mode = \"off\" and network = true",
        ))
    }

    /// Makes `command` apply the confinement in its child, after `fork` and before `exec`.
    pub fn install(self, command: &mut tokio::process::Command) {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: the closure only makes system calls on data prepared before fork.
            unsafe {
                command.pre_exec(move || self.apply_forked());
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = command;
    }

    /// In a forked child: makes the namespaces, then confines it.
    #[cfg(target_os = "linux")]
    fn apply_forked(&self) -> io::Result<()> {
        if let Some(Isolation::Namespaces(plan)) = &self.isolation {
            plan.apply()?;
        }
        self.confine()
    }

    /// The namespaces a child started by `clone` is made in ([`enter_cloned`] and
    /// [`confine`] do the rest); none without a user namespace.
    ///
    /// [`enter_cloned`]: Self::enter_cloned
    /// [`confine`]: Self::confine
    #[cfg(target_os = "linux")]
    pub(crate) fn clone_flags(&self) -> libc::c_int {
        match &self.isolation {
            Some(Isolation::Namespaces(plan)) => plan.namespace_flags(),
            _ => 0,
        }
    }

    /// In a child started by `clone` with [`clone_flags`](Self::clone_flags), which shares
    /// this process's memory until it calls `exec`: the maps and mounts of its namespaces
    /// ([`confine`](Self::confine) comes after). Only system calls on data prepared before;
    /// no memory written but the child's own stack.
    #[cfg(target_os = "linux")]
    pub(crate) fn enter_cloned(&self) -> io::Result<()> {
        match &self.isolation {
            Some(Isolation::Namespaces(plan)) => plan.apply_inside(),
            _ => Ok(()),
        }
    }

    /// In the child, once in its namespaces: without a user namespace, every capability
    /// dropped; then Landlock and seccomp. Only system calls on data prepared before.
    #[cfg(target_os = "linux")]
    pub(crate) fn confine(&self) -> io::Result<()> {
        if let Some(Isolation::DropCapabilities) = &self.isolation {
            // While the capability to make one is still held (root has it; a process with
            // only some capabilities may not, and keeps the host's IPC).
            privileges::own_ipc_namespace();
            privileges::drop_all()?;
        }
        if let Some(ruleset) = &self.ruleset {
            landlock::restrict(ruleset)?;
        }
        if let Some(program) = self.filter {
            seccomp::install(program)?;
        }
        Ok(())
    }
}

/// The error for a policy `kernel` cannot enforce, if it cannot.
fn unenforceable(sandbox: &Sandbox, kernel: &KernelSupport) -> io::Result<()> {
    let mut lacks = Vec::new();
    let mut settings = Vec::new();
    if sandbox.mode != SandboxMode::Off {
        if kernel.landlock_abi == 0 {
            lacks.push(format!(
                "{} has no Landlock (it needs Linux 5.13 or later with Landlock enabled)",
                kernel.os
            ));
            settings.push("mode = \"off\"");
        } else if !kernel.user_namespaces
            && sandbox
                .protected
                .iter()
                .any(|p| std::fs::symlink_metadata(p).is_ok())
        {
            lacks.push(
                "user namespaces are not available, so the protected paths cannot be kept read-only"
                    .to_owned(),
            );
            settings.push("protected = []");
        }
    }
    if sandbox.mode != SandboxMode::Off && kernel.landlock_abi > 0 && !kernel.seccomp {
        lacks.push(format!(
            "{} has no seccomp filters, which keep commands from making set-user-ID files",
            kernel.os
        ));
        settings.push("mode = \"off\"");
    }
    if !sandbox.network && !kernel.seccomp {
        lacks.push(format!("{} has no seccomp filters", kernel.os));
        settings.push("network = true");
    }
    if lacks.is_empty() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "The sandbox cannot be enforced, so the command was not run: the configuration asks for mode \"{}\" with network {}, but {}. Run on a kernel that has it, or loosen the sandbox with {} in the [sandbox] section of the configuration.",
            sandbox.mode,
            if sandbox.network { "on" } else { "off" },
            lacks.join(", and "),
            settings.join(" and ")
        ),
    ))
}

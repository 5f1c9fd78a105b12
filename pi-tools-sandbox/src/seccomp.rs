//! The seccomp filter a command runs under, one program per combination:
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
//!
//! The program is built here, instruction by instruction, and installed with seccompiler.
//! seccompiler's own builder gives a filter one answer (so three programs for three errnos)
//! and tests a bit only as "masked value equals", twice per mode, each call listed twice
//! (x32): 347 instructions. The kernel checks and compiles each instruction at every
//! install, once per command: on a 2-core virtual machine those three programs cost about
//! 1.3 ms a command, a 50-instruction one 0.3 ms. This one is about 45: one `jset` per
//! mode, calls that share an answer share its instructions, and the x32 bit is cleared once
//! so each call is listed once.

use std::io;
use std::sync::OnceLock;

use seccompiler::{BpfProgram, sock_filter};

/// `fchmodat2` (Linux 6.6; the same number on every architecture).
const SYS_FCHMODAT2: i64 = 452;
/// `setxattrat` (Linux 6.13; the same number on every architecture).
const SYS_SETXATTRAT: i64 = 463;

/// The architecture the filter accepts (`AUDIT_ARCH_*`); a call made under another (a
/// 32-bit call from a 64-bit process) kills the process, as its numbers mean other calls.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 243 | 0x8000_0000 | 0x4000_0000;

/// The x32 ABI numbers the same calls with this bit set (x86_64 only).
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `n` (little-endian).
const fn arg_low(n: u32) -> u32 {
    16 + 8 * n
}

/// The set-ID bits of a mode.
const SET_ID: u32 = libc::S_ISUID | libc::S_ISGID;

/// The compiled program for `network` and `setid` (refusing set-ID bits and file
/// capabilities), built once per process (the child only installs it); `None` when there is
/// nothing to refuse.
pub(super) fn filter(network: bool, setid: bool) -> io::Result<Option<&'static BpfProgram>> {
    static PROGRAMS: [OnceLock<Result<BpfProgram, String>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let at = match (network, setid) {
        (true, false) => return Ok(None),
        (false, false) => 0,
        (true, true) => 1,
        (false, true) => 2,
    };
    PROGRAMS[at]
        .get_or_init(|| compile(network, setid))
        .as_ref()
        .map(Some)
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the sandbox cannot build its seccomp filter ({e}); set [sandbox] mode = \"off\" and network = true to run commands without it"
                ),
            )
        })
}

/// What a group of calls gets.
enum Answer {
    /// Always this errno.
    Refuse(i32),
    /// EPERM when argument `n` holds a set-ID bit.
    RefuseSetIdMode(u32),
    /// EPERM unless argument `n` equals `value`.
    RefuseUnless(u32, u32),
}

impl Answer {
    /// The instructions that answer, each path ending in a return (the call's number is no
    /// longer in the accumulator after them).
    fn code(&self) -> Vec<sock_filter> {
        match *self {
            Answer::Refuse(errno) => vec![ret(errno_action(errno))],
            Answer::RefuseSetIdMode(n) => vec![
                load(arg_low(n)),
                jump(libc::BPF_JSET, SET_ID, 0, 1),
                ret(errno_action(libc::EPERM)),
                ret(libc::SECCOMP_RET_ALLOW),
            ],
            Answer::RefuseUnless(n, value) => vec![
                load(arg_low(n)),
                jump(libc::BPF_JEQ, value, 0, 1),
                ret(libc::SECCOMP_RET_ALLOW),
                ret(errno_action(libc::EPERM)),
            ],
        }
    }
}

/// The groups of calls the program answers for `network` and `setid`.
fn groups(network: bool, setid: bool) -> Vec<(Vec<i64>, Answer)> {
    let mut groups = vec![(
        vec![
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ],
        Answer::Refuse(libc::EPERM),
    )];
    if !network {
        groups.push((
            vec![libc::SYS_socket],
            Answer::RefuseUnless(0, libc::AF_UNIX as u32),
        ));
    }
    if setid {
        let mut mode_1 = vec![libc::SYS_fchmod];
        let mut mode_2 = vec![libc::SYS_fchmodat, SYS_FCHMODAT2, libc::SYS_mknodat];
        #[cfg(target_arch = "x86_64")]
        {
            mode_1.extend([libc::SYS_chmod, libc::SYS_creat, libc::SYS_mknod]);
            mode_2.push(libc::SYS_open);
        }
        groups.extend([
            (mode_1, Answer::RefuseSetIdMode(1)),
            (mode_2, Answer::RefuseSetIdMode(2)),
            (vec![libc::SYS_openat], Answer::RefuseSetIdMode(3)),
            (
                vec![
                    libc::SYS_setxattr,
                    libc::SYS_lsetxattr,
                    libc::SYS_fsetxattr,
                    SYS_SETXATTRAT,
                ],
                Answer::Refuse(libc::EOPNOTSUPP),
            ),
            (vec![libc::SYS_openat2], Answer::Refuse(libc::ENOSYS)),
        ]);
    }
    groups
}

/// The program: the architecture's check, the call's number (x32's bit cleared), then for
/// each group its numbers (a match jumps to the group's answer, a miss falls through to the
/// next number, past the answer after the last), and whatever matched nothing is allowed.
fn compile(network: bool, setid: bool) -> Result<BpfProgram, String> {
    let mut program = vec![
        load(ARCH),
        jump(libc::BPF_JEQ, AUDIT_ARCH, 1, 0),
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        load(NR),
    ];
    #[cfg(target_arch = "x86_64")]
    program.push(stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, !X32_BIT));
    for (numbers, answer) in groups(network, setid) {
        let code = answer.code();
        let count = numbers.len();
        for (i, nr) in numbers.into_iter().enumerate() {
            let nr = u32::try_from(nr).map_err(|_| format!("system call number {nr}"))?;
            let to_answer = count - 1 - i;
            let past_answer = if i + 1 == count { code.len() } else { 0 };
            program.push(jump(
                libc::BPF_JEQ,
                nr,
                u8::try_from(to_answer).map_err(|_| "a group too large".to_owned())?,
                u8::try_from(past_answer).map_err(|_| "an answer too long".to_owned())?,
            ));
        }
        program.extend(code);
    }
    program.push(ret(libc::SECCOMP_RET_ALLOW));
    Ok(program)
}

fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

/// `A = seccomp_data[offset]` (32 bits).
fn load(offset: u32) -> sock_filter {
    stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

fn jump(test: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: (libc::BPF_JMP | test | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn ret(action: u32) -> sock_filter {
    stmt(libc::BPF_RET | libc::BPF_K, action)
}

fn errno_action(errno: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (errno.unsigned_abs() & libc::SECCOMP_RET_DATA)
}

/// Installs `program` on the calling thread (the child, just before `exec`). Sets
/// `no_new_privs` first, as seccomp requires of an unprivileged process.
pub(super) fn install(program: &BpfProgram) -> io::Result<()> {
    seccompiler::apply_filter(program).map_err(|_| io::Error::last_os_error())
}

#[cfg(test)]
mod tests {
    //! Each refusal and each thing let through, by real system calls in a forked child
    //! under the filter (numbers with x32's bit as well, where the kernel has x32).

    use super::*;

    /// A system call with raw arguments; its errno, or 0.
    fn call(nr: i64, args: [i64; 4]) -> i32 {
        // SAFETY: the calls below get valid paths or invalid descriptors.
        let rc = unsafe { libc::syscall(nr, args[0], args[1], args[2], args[3]) };
        if rc < 0 {
            io::Error::last_os_error().raw_os_error().unwrap_or(-1)
        } else {
            if nr == libc::SYS_socket || nr == libc::SYS_openat {
                // SAFETY: closes the descriptor just made.
                unsafe { libc::close(rc as i32) };
            }
            0
        }
    }

    /// Runs the cases under the filter for `(network, setid)` in a forked child; returns
    /// the cases whose errno was not the expected one. The child allocates nothing (this
    /// process has other threads): it writes each errno to a pipe.
    fn under_filter(
        network: bool,
        setid: bool,
        cases: &[(&str, i64, [i64; 4], i32)],
    ) -> Vec<String> {
        let program = compile(network, setid).expect("the program builds");
        assert!(program.len() < 64, "{} instructions", program.len());
        let (mut read, write) = std::io::pipe().expect("a pipe");
        // SAFETY: the child only makes system calls and writes to the pipe, then _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&write);
            let installed = install(&program).is_ok();
            for (_, nr, args, _) in cases {
                let got: i32 = if installed { call(*nr, *args) } else { -2 };
                // SAFETY: writes four bytes from this stack to the pipe.
                unsafe { libc::write(fd, got.to_ne_bytes().as_ptr().cast(), 4) };
            }
            // SAFETY: ends the forked child at once.
            unsafe { libc::_exit(0) };
        }
        drop(write);
        let mut bytes = Vec::new();
        use std::io::Read;
        read.read_to_end(&mut bytes).expect("the report");
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(
            bytes.len(),
            cases.len() * 4,
            "the child answered every case"
        );
        cases
            .iter()
            .zip(bytes.chunks(4))
            .filter_map(|((name, _, _, want), got)| {
                let got = i32::from_ne_bytes(got.try_into().expect("four bytes"));
                (got != *want).then(|| format!("{name}: errno {got}, expected {want}"))
            })
            .collect()
    }

    #[test]
    fn set_id_modes_attributes_openat2_and_io_uring_are_refused_and_the_rest_goes_through() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = |name: &str| {
            let c = std::ffi::CString::new(dir.path().join(name).as_os_str().as_encoded_bytes())
                .expect("a path");
            // Leaked: the child reads it after fork.
            c.into_raw() as i64
        };
        let file = path("f");
        std::fs::write(dir.path().join("f"), "").expect("a file");
        let fifo = path("fifo");
        let created = path("created");
        let at = libc::AT_FDCWD as i64;
        let (perm, unsupported, nosys) = (libc::EPERM, libc::EOPNOTSUPP, libc::ENOSYS);
        let name = c"user.x".as_ptr() as i64;
        let mut cases = vec![
            (
                "fchmodat 4755",
                libc::SYS_fchmodat,
                [at, file, 0o4755, 0],
                perm,
            ),
            (
                "fchmodat 2755",
                libc::SYS_fchmodat,
                [at, file, 0o2755, 0],
                perm,
            ),
            ("fchmodat 755", libc::SYS_fchmodat, [at, file, 0o755, 0], 0),
            ("fchmodat2 6755", SYS_FCHMODAT2, [at, file, 0o6755, 0], perm),
            ("fchmod 4755", libc::SYS_fchmod, [-1, 0o4755, 0, 0], perm),
            (
                "fchmod 755",
                libc::SYS_fchmod,
                [-1, 0o755, 0, 0],
                libc::EBADF,
            ),
            (
                "openat 4755",
                libc::SYS_openat,
                [at, created, (libc::O_CREAT | libc::O_WRONLY) as i64, 0o4755],
                perm,
            ),
            (
                "openat 644",
                libc::SYS_openat,
                [at, created, (libc::O_CREAT | libc::O_WRONLY) as i64, 0o644],
                0,
            ),
            (
                "mknodat fifo 644",
                libc::SYS_mknodat,
                [at, fifo, (libc::S_IFIFO | 0o644) as i64, 0],
                0,
            ),
            (
                "mknodat 4755",
                libc::SYS_mknodat,
                [at, path("n"), (libc::S_IFREG | 0o4755) as i64, 0],
                perm,
            ),
            (
                "setxattr",
                libc::SYS_setxattr,
                [file, name, name, 1],
                unsupported,
            ),
            (
                "lsetxattr",
                libc::SYS_lsetxattr,
                [file, name, name, 1],
                unsupported,
            ),
            (
                "fsetxattr",
                libc::SYS_fsetxattr,
                [-1, name, name, 1],
                unsupported,
            ),
            ("openat2", libc::SYS_openat2, [at, file, 0, 0], nosys),
            (
                "io_uring_setup",
                libc::SYS_io_uring_setup,
                [1, 0, 0, 0],
                perm,
            ),
            (
                "socket unix",
                libc::SYS_socket,
                [libc::AF_UNIX as i64, libc::SOCK_STREAM as i64, 0, 0],
                0,
            ),
        ];
        #[cfg(target_arch = "x86_64")]
        cases.extend([
            ("chmod 4755", libc::SYS_chmod, [file, 0o4755, 0, 0], perm),
            ("chmod 644", libc::SYS_chmod, [file, 0o644, 0, 0], 0),
            ("creat 2755", libc::SYS_creat, [created, 0o2755, 0, 0], perm),
            (
                "mknod 4755",
                libc::SYS_mknod,
                [path("m"), (libc::S_IFREG | 0o4755) as i64, 0, 0],
                perm,
            ),
            (
                "open 4755",
                libc::SYS_open,
                [created, (libc::O_CREAT | libc::O_WRONLY) as i64, 0o4755, 0],
                perm,
            ),
        ]);
        let inet = (
            "socket inet",
            libc::SYS_socket,
            [libc::AF_INET as i64, libc::SOCK_DGRAM as i64, 0, 0],
            0,
        );
        let mut with_network = cases.clone();
        with_network.push(inet);
        assert_eq!(
            under_filter(true, true, &with_network),
            Vec::<String>::new()
        );
        for made in ["fifo", "created"] {
            std::fs::remove_file(dir.path().join(made)).expect("made by the first run");
        }
        let mut without = cases;
        without.push((inet.0, inet.1, inet.2, perm));
        assert_eq!(under_filter(false, true, &without), Vec::<String>::new());
        // Network off alone: modes and attributes are not its business.
        assert_eq!(
            under_filter(
                false,
                false,
                &[
                    ("socket inet", inet.1, inet.2, perm),
                    (
                        "fchmodat 4755 allowed",
                        libc::SYS_fchmodat,
                        [at, file, 0o4755, 0],
                        0
                    ),
                    (
                        "io_uring_setup",
                        libc::SYS_io_uring_setup,
                        [1, 0, 0, 0],
                        perm
                    ),
                ]
            ),
            Vec::<String>::new()
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_numbers_get_the_same_answers() {
        let program = compile(true, true).expect("the program builds");
        // The x32 number of fchmodat with a set-ID mode must reach the same refusal: run the
        // program on both numbers with a tiny interpreter of the instructions used here.
        let run = |nr: u32, args: [u32; 4]| -> u32 {
            let data = |offset: u32| -> u32 {
                match offset {
                    NR => nr,
                    ARCH => AUDIT_ARCH,
                    o if o >= 16 && (o - 16) % 8 == 0 => args[((o - 16) / 8) as usize],
                    _ => 0,
                }
            };
            let (mut pc, mut a) = (0usize, 0u32);
            loop {
                let ins = &program[pc];
                let code = u32::from(ins.code);
                pc += 1;
                if code == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS {
                    a = data(ins.k);
                } else if code == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K {
                    a &= ins.k;
                } else if code == libc::BPF_RET | libc::BPF_K {
                    return ins.k;
                } else {
                    let taken = match code & 0xf0 {
                        t if t == libc::BPF_JEQ => a == ins.k,
                        t if t == libc::BPF_JSET => a & ins.k != 0,
                        other => panic!("instruction {other:#x} not expected"),
                    };
                    pc += usize::from(if taken { ins.jt } else { ins.jf });
                }
            }
        };
        let fchmodat = libc::SYS_fchmodat as u32;
        let refused = errno_action(libc::EPERM);
        assert_eq!(run(fchmodat, [0, 0, 0o4755, 0]), refused);
        assert_eq!(run(fchmodat | X32_BIT, [0, 0, 0o4755, 0]), refused);
        assert_eq!(
            run(fchmodat | X32_BIT, [0, 0, 0o755, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(libc::SYS_read as u32 | X32_BIT, [0; 4]),
            libc::SECCOMP_RET_ALLOW
        );
    }
}

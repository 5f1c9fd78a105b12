//! A real OpenSSH server for tests: `sshd -D -e -f <generated config>` on 127.0.0.1 and a
//! free port, with a generated host key, a generated client key in its `AuthorizedKeysFile`,
//! and a client config (`ssh -F`) whose alias `pi-tools-test` reaches it with strict host
//! key checking against a generated known_hosts file. The server is killed when the value
//! is dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pi_tools::env::remote::SshTarget;

/// The alias of the test server in the generated client config.
pub const ALIAS: &str = "pi-tools-test";

/// A running sshd and the files a client needs to reach it.
pub struct Sshd {
    child: Option<Child>,
    dir: tempfile::TempDir,
    pub port: u16,
    config: PathBuf,
}

fn sshd_binary() -> Option<PathBuf> {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "pi-tools-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success(), "ssh-keygen failed");
}

/// The SFTP server sshd runs (`internal-sftp` where no sftp-server program is installed), for
/// a `Subsystem sftp` line of one's own (e.g. with `-d DIR`: the home the client sees).
pub fn sftp_server() -> String {
    [
        "/usr/lib/openssh/sftp-server",
        "/usr/libexec/sftp-server",
        "/usr/lib/ssh/sftp-server",
    ]
    .iter()
    .find(|p| Path::new(p).is_file())
    .map_or("internal-sftp".to_string(), |p| p.to_string())
}

/// The remote home of the servers of this test process: `pi-tools-ssh-home-<pid>` in the
/// temporary directory, shared by the process's servers so a helper is uploaded once per
/// run. The homes of processes that have ended are removed when the first server starts.
pub fn test_home() -> PathBuf {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let base = std::env::temp_dir();
        if let Ok(entries) = std::fs::read_dir(&base) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(pid) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix("pi-tools-ssh-home-"))
                    .and_then(|p| p.parse::<u32>().ok())
                else {
                    continue;
                };
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let home = base.join(format!("pi-tools-ssh-home-{}", std::process::id()));
        std::fs::create_dir_all(&home).expect("the remote home of the test servers");
        home
    })
    .clone()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Sshd {
    /// Starts a server, or returns `None` (with a message) where no sshd is installed, so the
    /// caller can skip; `.ci/run` installs openssh-server, so CI never skips.
    pub fn start() -> Option<Sshd> {
        Sshd::start_with(&[])
    }

    /// [`start`](Self::start), with `extra` lines in the server's config (a `Subsystem`
    /// line replaces the default one).
    pub fn start_with(extra: &[&str]) -> Option<Sshd> {
        let Some(sshd) = sshd_binary() else {
            eprintln!("skipped: no sshd installed (apt-get install openssh-server)");
            return None;
        };
        // Privilege separation needs this directory when sshd runs as root.
        let _ = std::fs::create_dir_all("/run/sshd");
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys"))
            .expect("authorized_keys");
        let host_pub = std::fs::read_to_string(d.join("host_key.pub")).expect("host key");
        let port = free_port();
        let sftp = sftp_server();
        let mut config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nPidFile {pid}\n\
             AuthorizedKeysFile {ak}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nStrictModes no\nUsePAM no\nPermitRootLogin yes\n\
             LogLevel ERROR\nMaxSessions 100\nMaxStartups 100\n",
            hk = d.join("host_key").display(),
            pid = d.join("sshd.pid").display(),
            ak = d.join("authorized_keys").display(),
        );
        // The remote user's home is a test directory, never the developer's: their shell's
        // start files (a version manager's rehash that waits a minute for a lock a killed
        // connection left behind, a banner) stay out of the tests, and the uploaded helpers
        // are removed by the next run instead of piling up in the real home.
        let home = test_home();
        if !extra.iter().any(|l| l.starts_with("SetEnv HOME=")) {
            config.push_str(&format!("SetEnv HOME={}\n", home.display()));
        }
        if !extra.iter().any(|l| l.starts_with("Subsystem")) {
            config.push_str(&format!("Subsystem sftp {sftp} -d {}\n", home.display()));
        }
        for line in extra {
            config.push_str(line);
            config.push('\n');
        }
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_pub}"),
        )
        .expect("known_hosts");
        let config = d.join("ssh_config");
        std::fs::write(
            &config,
            format!(
                "Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {kh}\n  \
                 StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n",
                user = user(),
                key = d.join("client_key").display(),
                kh = d.join("known_hosts").display(),
            ),
        )
        .expect("ssh_config");
        let mut server = Sshd {
            child: None,
            dir,
            port,
            config,
        };
        server.spawn(&sshd);
        Some(server)
    }

    fn spawn(&mut self, sshd: &Path) {
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(self.dir.path().join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("sshd starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut probe) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                // An identification line before closing, so the server does not log the probe
                // as a failed key exchange.
                use std::io::Write;
                let _ = probe.write_all(b"SSH-2.0-pi-tools-probe\r\n");
                break;
            }
            assert!(Instant::now() < deadline, "sshd did not start listening");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the listening server (connections already made live on in their own sshd
    /// processes, as with a real server).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let sshd = sshd_binary().expect("sshd");
        self.spawn(&sshd);
    }

    /// Kills every sshd process serving a connection of this server (their parent is the
    /// listener), as a dropped network connection would end them.
    pub fn kill_connections(&self) {
        let Some(child) = &self.child else { return };
        let listener = child.id();
        for pid in descendants(listener) {
            // SAFETY: plain kill(2) of a process we found as our server's descendant.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }

    /// The listening server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The processes under this sshd (its connections' processes) whose command line
    /// contains `marker`.
    pub fn served_by(&self, marker: &str) -> Vec<u32> {
        let Some(listener) = self.pid() else {
            return Vec::new();
        };
        let under = descendants(listener);
        crate::procfs::processes_with(marker)
            .into_iter()
            .filter(|pid| under.contains(pid))
            .collect()
    }

    /// The target for the alias, with the generated config.
    pub fn target(&self) -> SshTarget {
        let mut target = SshTarget::new(ALIAS);
        target.config_file = Some(self.config.clone());
        target
    }

    /// The generated client config file (`ssh -F`).
    pub fn config_file(&self) -> &Path {
        &self.config
    }

    /// The directory holding the generated keys and configs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill_connections();
        self.stop();
    }
}

/// Every process whose parent chain leads to `root` (not `root` itself).
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The fields after the command's closing parenthesis: state, ppid, ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let _state = fields.next();
        if let Some(ppid) = fields.next().and_then(|p| p.parse::<u32>().ok()) {
            parent_of.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        for &(pid, ppid) in &parent_of {
            if ppid == p && !found.contains(&pid) {
                found.push(pid);
            }
        }
        i += 1;
    }
    found.remove(0);
    found
}

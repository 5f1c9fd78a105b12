//! [`SandboxPolicy`]: what commands and the file tools may write, and whether commands may
//! reach the network; resolved once against the file system so the kernel's rules and the
//! in-process check agree.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use crate::git::{GitAccess, Repository, enclosing_submodules};
use crate::git_config;
use crate::git_guard::GitGuard;
use crate::git_protect::{self, NestedPaths};
use crate::git_trees;
use crate::path::{canonical_lenient_sync, follow_final_links, lexical_join};
use crate::plant_guard::PlantGuard;
use crate::probe::KernelSupport;
use crate::protected::{DEFAULT_PROTECTED, is_git_entry};
use crate::shared;
use crate::tempdir::PrivateTemp;

/// How far the sandbox confines writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// No confinement: commands and file tools write wherever the process can.
    Off,
    /// Nothing may be written (except `/dev/null` and its kin).
    ReadOnly,
    /// Writes only inside the writable roots, minus the protected paths.
    #[default]
    WorkspaceWrite,
}

impl SandboxMode {
    /// The spelling used in the configuration: `off`, `read-only`, `workspace-write`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(SandboxMode::Off),
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            other => Err(format!(
                "`{other}` is not a sandbox mode; use \"off\", \"read-only\" or \"workspace-write\""
            )),
        }
    }
}

/// What commands (and a program's own file writes) may write, and whether commands may open
/// network sockets. [`resolve`](Self::resolve) makes the [`Sandbox`] that enforces it;
/// every command run in it is confined in the child before it starts, and every descendant
/// inherits the confinement. (In pi-tools, `env::local::LocalEnv::with_sandbox` takes one.)
///
/// ```no_run
/// use pi_tools_sandbox::{SandboxMode, SandboxPolicy};
/// let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite)
///     .with_network(false)
///     .with_writable_roots(["/home/me/project"]);
/// let sandbox = policy.resolve("/home/me/project".as_ref())?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SandboxPolicy {
    pub(super) mode: SandboxMode,
    pub(super) network: bool,
    pub(super) writable_roots: Option<Vec<PathBuf>>,
    pub(super) protected: Vec<PathBuf>,
    pub(super) git: GitAccess,
    pub(super) private_tmp: bool,
    #[cfg_attr(not(feature = "process"), allow(dead_code))]
    pub(super) kernel: Option<KernelSupport>,
}

impl SandboxPolicy {
    /// A policy in `mode`, network on, writable roots defaulting to the working directory,
    /// the default protected paths and a private `TMPDIR`.
    pub fn new(mode: SandboxMode) -> Self {
        SandboxPolicy {
            mode,
            network: true,
            writable_roots: None,
            protected: DEFAULT_PROTECTED.iter().map(PathBuf::from).collect(),
            git: GitAccess::default(),
            private_tmp: true,
            kernel: None,
        }
    }

    /// No confinement at all.
    pub fn off() -> Self {
        SandboxPolicy::new(SandboxMode::Off)
    }

    /// Whether commands may create network sockets (anything but Unix sockets).
    pub fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    /// The directories writes are allowed in (relative ones are taken from the working
    /// directory). Without this, the working directory.
    pub fn with_writable_roots<I, P>(mut self, roots: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.writable_roots = Some(roots.into_iter().map(Into::into).collect());
        self
    }

    /// Paths, relative to each writable root, that stay read-only (default
    /// [`DEFAULT_PROTECTED`]). `.git/…` entries follow a `.git` file to the repository's
    /// git directory, as in a worktree.
    pub fn with_protected<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.protected = paths.into_iter().map(Into::into).collect();
        self
    }

    /// How commands may use the `.git` of a repository at the top of a writable root
    /// (default [`GitAccess::ReadOnly`]; see [the safety document](https://github.com/pi-tools/pi-tools/blob/main/docs/safety.md)).
    pub fn with_git(mut self, git: GitAccess) -> Self {
        self.git = git;
        self
    }

    /// Whether commands get a private temporary directory of their own as `TMPDIR`
    /// (default `true`; never in read-only mode).
    pub fn with_private_tmp(mut self, private_tmp: bool) -> Self {
        self.private_tmp = private_tmp;
        self
    }

    /// Replaces what the kernel is found to support, so a caller (or a test) can see the
    /// policy fail closed on a kernel that lacks what it needs.
    pub fn with_kernel_support(mut self, kernel: KernelSupport) -> Self {
        self.kernel = Some(kernel);
        self
    }

    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// Whether commands may reach the network.
    pub fn network(&self) -> bool {
        self.network
    }

    /// Resolves the policy against `cwd`: canonical writable roots (plus the git directory a
    /// worktree's `.git` file points to), the protected paths that exist, and the private
    /// temporary directory. Fails when a writable root does not exist.
    pub fn resolve(&self, cwd: &Path) -> io::Result<Sandbox> {
        let mut resolved = Sandbox {
            mode: self.mode,
            network: self.network,
            roots: Vec::new(),
            protected: Arc::from([]),
            in_place: Arc::from([]),
            anchors: Vec::new(),
            git: self.git,
            git_read_only: Vec::new(),
            repositories: Vec::new(),
            git_guard: None,
            plant_guard: None,
            tmp: None,
            shm: None,
            kernel: self.kernel.clone(),
            // Alike in every session of the workspace: one copy for them all.
            note: self.describe().map(shared::text),
            #[cfg(all(target_os = "linux", feature = "process"))]
            landlock: Arc::default(),
        };
        if self.mode != SandboxMode::WorkspaceWrite {
            return Ok(resolved);
        }
        let given = self
            .writable_roots
            .clone()
            .unwrap_or_else(|| vec![PathBuf::from(".")]);
        for root in given {
            let path = cwd.join(&root);
            let canonical = fs::canonicalize(&path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "the sandbox's writable root {} cannot be used ({e}); create it or fix [sandbox] writable_roots",
                        path.display()
                    ),
                )
            })?;
            push_unique(&mut resolved.roots, canonical);
        }
        // What a command could plant where nothing is there to mount on: the protected
        // paths outside git's, at the top of each root (absolute entries as they are).
        let mut plantable = Vec::new();
        let mut protected = Vec::new();
        let mut in_place = Vec::new();
        for root in &resolved.roots {
            for relative in self.protected.iter().filter(|p| !is_git_entry(p)) {
                push_unique(&mut plantable, root.join(relative));
            }
        }
        for root in resolved.roots.clone() {
            let repository = Repository::find(&root)?;
            let git_dir = repository.as_ref().map(|r| r.common.clone());
            if let Some(repo) = &repository {
                resolved.git_paths(repo, &mut protected);
                // The hooks and settings files its settings name outside the git directory:
                // read-only where they exist, taken away after a call where one was made,
                // and their directories kept in place.
                let home = std::env::var_os("HOME").map(PathBuf::from);
                let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
                for path in git_config::redirects(repo, home.as_deref(), xdg.as_deref()) {
                    push_unique(&mut plantable, path.clone());
                    push_unique(&mut in_place, path.clone());
                    push_unique(&mut protected, path);
                }
            }
            for relative in &self.protected {
                let target = match (relative.strip_prefix(".git"), &git_dir) {
                    (Ok(rest), Some(dir)) => dir.join(rest),
                    _ => root.join(relative),
                };
                let target = real_location(&target);
                if !is_git_entry(relative) {
                    push_unique(&mut in_place, target.clone());
                }
                if !protected.contains(&target) {
                    protected.push(target);
                }
            }
            resolved.repositories.extend(repository);
        }
        let bare_roots: Vec<PathBuf> = resolved
            .roots
            .iter()
            .filter(|root| {
                !resolved
                    .repositories
                    .iter()
                    .any(|r| &r.root == *root || r.git_dirs().iter().any(|dir| dir == *root))
            })
            .cloned()
            .collect();
        let enclosing: Vec<PathBuf> = bare_roots
            .iter()
            .flat_map(|root| enclosing_submodules(root))
            .collect();
        // Every repository below the top of a root (once per session), protected as the
        // top one is; the guard watches them, and those made later, after every call.
        let walked: Vec<PathBuf> = resolved
            .roots
            .iter()
            .filter(|root| {
                !resolved
                    .repositories
                    .iter()
                    .any(|r| r.git_dirs().iter().any(|dir| root.starts_with(dir)))
            })
            .cloned()
            .collect();
        let tree = git_trees::shared(&walked)?;
        let mut nested = NestedPaths::default();
        {
            let found = tree.lock().unwrap_or_else(|e| e.into_inner());
            for dir in found.repos() {
                git_protect::protect(&mut nested, dir, self.git, &self.protected, &walked);
            }
            // Git directories under another name: their settings and hooks read-only in
            // both modes (the guard watches the rest of them after each call).
            for dir in found.bare() {
                nested.protected.push(dir.join("config"));
                nested.protected.push(dir.join("hooks"));
            }
        }
        for path in nested.protected {
            push_unique(&mut protected, path);
        }
        for path in nested.anchors {
            push_unique(&mut resolved.anchors, path);
        }
        for path in nested.named {
            push_unique(&mut plantable, path.clone());
            push_unique(&mut protected, path);
        }
        resolved.git_read_only.extend(nested.read_only);
        let held = nested.held;
        for dot_git in &enclosing {
            if fs::symlink_metadata(dot_git).is_ok() {
                push_unique(&mut protected, dot_git.clone());
            }
        }
        // Alike in every session of the workspace: one copy for them all.
        resolved.protected = shared::paths(protected);
        resolved.in_place = shared::paths(in_place);
        let guard = GitGuard::new(
            resolved.repositories.clone(),
            bare_roots,
            enclosing,
            tree,
            held,
            self.git,
        );
        if !guard.is_empty() {
            resolved.git_guard = Some(Arc::new(guard));
        }
        resolved.plant_guard = PlantGuard::new(&resolved.roots, &plantable).map(Arc::new);
        if self.private_tmp {
            let tmp = PrivateTemp::create()?;
            push_unique(&mut resolved.roots, tmp.path().to_path_buf());
            resolved.tmp = Some(Arc::new(tmp));
            resolved.shm = PrivateTemp::create_shm().map(Arc::new);
        }
        Ok(resolved)
    }
}

impl Default for SandboxPolicy {
    /// Off: nothing is confined unless asked to.
    fn default() -> Self {
        SandboxPolicy::off()
    }
}

/// A [`SandboxPolicy`] resolved against one working directory: the canonical roots and
/// protected paths, the private temporary directories and the guards of one session
/// (formerly `ResolvedSandbox`). Clones share the session.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub(super) mode: SandboxMode,
    pub(super) network: bool,
    /// Canonical directories writes are allowed in.
    pub(super) roots: Vec<PathBuf>,
    /// Canonical paths under the roots that stay read-only (some may not exist yet);
    /// shared by the sandboxes that resolved the same list.
    pub(super) protected: Arc<[PathBuf]>,
    /// The protected paths of the list (not git's, which the git guard follows wherever a
    /// repository is moved) whose directories below their root are anchored when they
    /// exist, so none of them can be renamed away and replaced.
    pub(super) in_place: Arc<[PathBuf]>,
    /// `.git` directories that are bind-mounted onto themselves so they cannot be moved
    /// away and replaced by a copy with other hooks.
    pub(super) anchors: Vec<PathBuf>,
    /// How commands may use `.git`.
    pub(super) git: GitAccess,
    /// The git directories (and worktree `.git` files) kept read-only by `git = "read-only"`.
    git_read_only: Vec<PathBuf>,
    /// The repositories at the top of the writable roots.
    repositories: Vec<Repository>,
    /// What undoes redirect files after each call.
    pub(super) git_guard: Option<Arc<GitGuard>>,
    /// What undoes files created at protected paths that did not exist.
    pub(super) plant_guard: Option<Arc<PlantGuard>>,
    pub(super) tmp: Option<Arc<PrivateTemp>>,
    /// The directory mounted on commands' `/dev/shm` (in `/dev/shm`), if any: writable
    /// for commands there, not a writable root (the file tools do not write to it).
    pub(super) shm: Option<Arc<PrivateTemp>>,
    #[cfg_attr(not(feature = "process"), allow(dead_code))]
    pub(super) kernel: Option<KernelSupport>,
    /// What the model is told this sandbox allows (see `describe.rs`).
    pub(super) note: Option<Arc<str>>,
    /// The Landlock ruleset, built at the first command and shared by the session's
    /// commands (each child restricts itself with a copy of its handle): its roots do
    /// not change during a session. A sleeping session lets it go.
    #[cfg(all(target_os = "linux", feature = "process"))]
    pub(super) landlock: Arc<std::sync::Mutex<Option<::landlock::RulesetCreated>>>,
}

impl Sandbox {
    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// Whether commands may reach the network.
    pub fn network(&self) -> bool {
        self.network
    }

    /// The canonical writable directories (empty unless workspace-write).
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The canonical protected paths.
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }

    /// The private temporary directory commands get as `TMPDIR`, if any.
    pub fn tmp_dir(&self) -> Option<&Path> {
        self.tmp.as_deref().map(PrivateTemp::path)
    }

    /// How commands may use `.git`.
    pub fn git(&self) -> GitAccess {
        self.git
    }

    /// Whether `.git` is read-only for commands (there is a repository and `git =
    /// "read-only"`).
    pub fn git_is_read_only(&self) -> bool {
        !self.git_read_only.is_empty()
    }

    /// Adds what `repo` needs: with `git = "read-only"`, its `.git` (file or directory), its
    /// git directories and its submodules' `.git` read-only; with `git = "commit"`, its
    /// git directories writable (a worktree's are outside the workspace) and anchored, its
    /// `.git` file, the submodules' `.git` and git directories read-only.
    fn git_paths(&mut self, repo: &Repository, protected: &mut Vec<PathBuf>) {
        let existing = |p: &&PathBuf| fs::symlink_metadata(p).is_ok();
        let worktree = repo.dot_git != repo.git_dir;
        if worktree {
            push_unique(protected, repo.dot_git.clone());
        }
        match self.git {
            GitAccess::ReadOnly => {
                for dir in repo.git_dirs() {
                    push_unique(protected, dir.to_path_buf());
                    self.git_read_only.push(dir.to_path_buf());
                }
                if worktree {
                    self.git_read_only.push(repo.dot_git.clone());
                }
            }
            GitAccess::Commit => {
                if worktree {
                    push_unique(&mut self.roots, repo.git_dir.clone());
                    push_unique(&mut self.roots, repo.common.clone());
                } else {
                    self.anchors.push(repo.dot_git.clone());
                }
                if worktree {
                    self.anchors.push(repo.common.clone());
                }
                let modules = repo.common.join("modules");
                if modules.exists() {
                    push_unique(protected, modules);
                }
            }
        }
        for dot_git in repo.submodules.iter().filter(existing) {
            push_unique(protected, dot_git.clone());
        }
    }

    /// Refuses a write to `path` that the sandbox would refuse a command, with a sentence a
    /// model can act on. The write and edit tools call this, so they answer as bash would.
    pub fn check_write(&self, path: &Path) -> io::Result<()> {
        match self.mode {
            SandboxMode::Off => Ok(()),
            SandboxMode::ReadOnly => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} cannot be written: the sandbox is read-only ([sandbox] mode = \"read-only\"), so no file may be changed.",
                    path.display()
                ),
            )),
            SandboxMode::WorkspaceWrite => {
                let real = real_location(path);
                if let Some(git) = self.git_read_only.iter().find(|p| real.starts_with(p)) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} cannot be written: {} is read-only in the sandbox ([sandbox] git = \"read-only\"), so that nothing can make a later git command run other code. Leave it as it is; to let commands and the file tools commit, set [sandbox] git = \"commit\" in the configuration.",
                            path.display(),
                            git.display()
                        ),
                    ));
                }
                if self.repositories.iter().any(|r| r.is_redirect(&real)) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} cannot be written: it is one of git's settings, hooks or redirect files (such as commondir), which could make a later git command outside the sandbox run other code. Leave it as it is.",
                            path.display()
                        ),
                    ));
                }
                if self.in_other_git_dir(&real) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} cannot be written: it is inside a .git that git may read for this workspace (a nested repository, a submodule's, or a repository made during the session), where a setting or hook could make a later git command outside the sandbox run other code. Leave it as it is.",
                            path.display()
                        ),
                    ));
                }
                if let Some(protected) = self.protected.iter().find(|p| real.starts_with(p)) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} cannot be written: {} is protected by the sandbox, because another program (git, pi-tools itself, a shell extension, an editor or an agent) may load or run it by itself later, outside any sandbox. Leave it as it is and tell the user what you wanted to change there: they can change it themselves.",
                            path.display(),
                            protected.display()
                        ),
                    ));
                }
                if self.roots.iter().any(|r| real.starts_with(r)) {
                    return Ok(());
                }
                Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} cannot be written: the sandbox allows writes only in {} ([sandbox] writable_roots). Write inside them instead.",
                        path.display(),
                        self.roots
                            .iter()
                            .map(|r| r.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        }
    }
}

impl Sandbox {
    /// Whether `real` is in a `.git` (any case) beneath a writable root, other than the one
    /// at the top of a root that had a repository when the policy was resolved (which the
    /// rules above cover): git reads it once a gitlink, a submodule or a `git init` makes
    /// it part of the workspace's repository, whenever that happens.
    fn in_other_git_dir(&self, real: &Path) -> bool {
        self.roots.iter().any(|root| {
            let Ok(rel) = real.strip_prefix(root) else {
                return false;
            };
            let known = self.repositories.iter().any(|r| &r.root == root);
            rel.components()
                .enumerate()
                .any(|(at, c)| c.as_os_str().eq_ignore_ascii_case(".git") && !(at == 0 && known))
        })
    }
}

fn push_unique(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// The real location of `path`, by the environment's one path algorithm: its final symbolic
/// links followed, then canonical, or for a path that does not exist yet its nearest existing
/// ancestor canonicalised plus the rest. When that cannot be worked out (a link loop, a
/// directory that cannot be searched), the path's lexical form is used instead: the check is
/// then made on what the path says, and the write itself fails in the file layer with the
/// real reason.
pub(super) fn real_location(path: &Path) -> PathBuf {
    follow_final_links(path)
        .and_then(|followed| canonical_lenient_sync(&followed))
        .unwrap_or_else(|_| {
            let components: Vec<Component<'_>> = path.components().collect();
            lexical_join(Path::new(""), &components)
        })
}

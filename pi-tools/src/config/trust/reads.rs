//! The files a configuration makes pi-tools read or run besides itself: a mounted server's
//! script and token file, a declared tool's program, an SSH identity and configuration.
//! Trust covers their content too, so changing one of them revokes it as changing the file
//! does.

use std::path::{Path, PathBuf};

use crate::config::{Config, EnvSettings, ServerTransport};
use crate::declared::spec::{ArgTemplate, DeclaredAction, Piece};

/// The files `config` (read from a file in `dir`) names, resolved against `dir` (a
/// server's or tool's own `cwd` first), sorted and without repeats. An argument counts
/// when it names an existing regular file there: a script (`python3 server.py`), a program
/// given by its path (`./tool.sh`). A program looked up in `PATH` (`node`, `npx`) is the
/// machine's, not the project's, and is not included.
pub fn files_read(config: &Config, dir: &Path) -> Vec<PathBuf> {
    files_named(config, dir, false)
}

/// [`files_read`], and besides the files that exist, every argument written as a path
/// (holding a `/`) that names nothing yet: what the sandbox keeps a command from making, so
/// that a mounted server started later does not run a script a command wrote there.
pub(crate) fn files_to_protect(config: &Config, dir: &Path) -> Vec<PathBuf> {
    files_named(config, dir, true)
}

fn files_named(config: &Config, dir: &Path, missing_paths: bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut named = |base: &Path, arg: &str| {
        if arg.is_empty() || arg.starts_with('-') {
            return;
        }
        let path = base.join(arg);
        let wanted = if arg.contains('/') {
            path.is_file() || (missing_paths && std::fs::symlink_metadata(&path).is_err())
        } else {
            path.is_file()
        };
        if wanted && !files.contains(&path) {
            files.push(path);
        }
    };
    for server in &config.servers {
        match &server.transport {
            ServerTransport::Stdio { command, cwd, .. } => {
                let base = cwd
                    .as_ref()
                    .map_or_else(|| dir.to_path_buf(), |c| dir.join(c));
                for (i, arg) in command.iter().enumerate() {
                    // The program itself counts only when given as a path.
                    if i > 0 || arg.contains('/') {
                        named(&base, arg);
                    }
                }
            }
            ServerTransport::Http { token_file, .. } => {
                if let Some(file) = token_file {
                    named(dir, &file.to_string_lossy());
                }
            }
        }
    }
    for tool in &config.declared {
        let base = tool
            .cwd
            .as_ref()
            .map_or_else(|| dir.to_path_buf(), |c| dir.join(c));
        if let DeclaredAction::Command(args) = &tool.action {
            for (i, arg) in args.iter().enumerate() {
                let ArgTemplate::Text(pieces) = arg else {
                    continue;
                };
                if let [Piece::Literal(text)] = pieces.as_slice()
                    && (i > 0 || text.contains('/'))
                {
                    named(&base, text);
                }
            }
        }
    }
    if let EnvSettings::Ssh(ssh) = &config.env {
        for file in [&ssh.identity_file, &ssh.ssh_config].into_iter().flatten() {
            named(dir, &file.to_string_lossy());
        }
    }
    files.sort();
    files
}

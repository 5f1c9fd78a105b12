//! `pi-tools check`: validates a configuration against the registered tools and summarises
//! what it sets up.

use std::process::ExitCode;

use crate::config::trust::TrustStore;
use crate::config::{Config, ConfigSource};
use crate::env::KernelSupport;
use crate::toolbox::Toolbox;

use super::check_schemas::{lines as schema_lines, schema_findings};
use super::mounted::Need;
use super::{CheckArgs, Failure, emit, setup};
use crate::mount::ServerReport;

pub(super) async fn check(args: CheckArgs, source: &ConfigSource) -> Result<ExitCode, Failure> {
    // Consent first: an untrusted file is refused here, before any server it names starts.
    let (_, trust) = source
        .load_trusted(&setup::registered()?, TrustStore::from_env().as_ref())
        .map_err(|e| Failure::general(e.to_string()))?;
    let (toolbox, mounts) = setup::describing_toolbox(source, Need::Active).await?;
    let servers = mounts.report().await;
    mounts.end().await;
    let findings = schema_findings(&toolbox);
    if args.strict_catalog && !findings.left_out.is_empty() {
        return Err(Failure::general(format!(
            "{} tools cannot be expressed in some dialect (--strict-catalog makes that an error; without it they are left out of that dialect only):\n{}",
            findings.left_out.len(),
            findings.left_out.join("\n")
        )));
    }
    let mut text = summary(source, &toolbox);
    text.push_str(&format!("\ntrust: {trust}"));
    for line in server_lines(&servers)
        .into_iter()
        .chain(schema_lines(&findings))
    {
        text.push('\n');
        text.push_str(&line);
    }
    emit::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The protected paths: the defaults in short (all of them are in docs/safety.md), then
/// the file's own.
fn protected_report(sandbox: &crate::config::SandboxSettings) -> String {
    let defaults = crate::env::sandbox::DEFAULT_PROTECTED;
    let own: Vec<String> = sandbox
        .protected
        .iter()
        .filter(|p| {
            !defaults
                .iter()
                .any(|d| p.as_path() == std::path::Path::new(d))
        })
        .map(|p| p.display().to_string())
        .collect();
    let mut parts = Vec::new();
    if sandbox.default_protected {
        parts.push(format!(
            "the {} defaults (git's hooks and settings, pi-tools.toml, .envrc, .mcp.json, editor, agent and build tool settings, shell start files)",
            defaults.len()
        ));
    }
    if !own.is_empty() {
        parts.push(own.join(", "));
    }
    if parts.is_empty() {
        "(none: default_protected = false)".to_owned()
    } else {
        parts.join(" and ")
    }
}

/// One line per mounted server: its name, transport, state and tool count.
fn server_lines(servers: &[ServerReport]) -> Vec<String> {
    servers
        .iter()
        .map(|s| {
            let tools = s
                .tools
                .map_or_else(|| "no tools".to_owned(), |n| format!("{n} tools"));
            // A failure's standard error lines follow, indented.
            let state = s.state.to_string().replace('\n', "\n    ");
            format!("mcp server {} ({}): {tools}, {state}", s.name, s.transport)
        })
        .collect()
}

/// A few lines saying which configuration applies and what it sets up.
fn summary(source: &ConfigSource, toolbox: &Toolbox) -> String {
    let config = toolbox.config();
    let list = |names: Vec<String>| {
        if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join(", ")
        }
    };
    let registered: Vec<String> = toolbox
        .registered()
        .iter()
        .map(|t| t.spec().name.to_owned())
        .collect();
    let mut lines = vec![
        format!("{}: ok", config.origin),
        format!("configuration: {source}"),
        format!("active tools: {}", list(toolbox.active_names())),
        format!("registered tools: {}", list(registered)),
        format!("execution: {}", config.execution),
        format!(
            "max concurrency: {}",
            config
                .max_concurrency
                .map_or_else(|| "unbounded".to_owned(), |n| n.to_string())
        ),
        format!(
            "timeout per call: {}",
            config
                .timeout
                .map_or_else(|| "none".to_owned(), |t| seconds(t.as_secs()))
        ),
    ];
    lines.extend(mode_overrides(config));
    lines.push(super::policy::summary(&config.policy));
    lines.push(format!(
        "allowed roots: {}",
        config.allowed_roots.as_ref().map_or_else(
            || "(no confinement)".to_owned(),
            |roots| list(roots.iter().map(|r| r.display().to_string()).collect())
        )
    ));
    lines.push(client_roots_report(config).to_owned());
    lines.extend(env_report(&config.env));
    lines.extend(sandbox_report(config, &KernelSupport::probe()));
    lines.join("\n")
}

/// How `pi-tools mcp` combines the roots a client lists with `[paths] allowed_roots`.
fn client_roots_report(config: &crate::config::Config) -> &'static str {
    match (&config.env, &config.allowed_roots) {
        (crate::config::EnvSettings::Ssh(_), _) => {
            "client roots (mcp): not followed over SSH (they name directories of the client's machine)"
        }
        (_, Some(_)) => "client roots (mcp): not followed; [paths] allowed_roots wins",
        (_, None) => {
            "client roots (mcp): the roots a client lists confine the file tools and the sandbox's writes (over stdio and HTTP); a client without roots gets the working directory over HTTP"
        }
    }
}

/// Where the tools work and, over SSH, how commands will run there and what that costs.
fn env_report(env: &crate::config::EnvSettings) -> Vec<String> {
    let crate::config::EnvSettings::Ssh(ssh) = env else {
        return vec!["environment: this machine".to_owned()];
    };
    let version = env!("CARGO_PKG_VERSION");
    let served = format!(
        "commands over SSH: one long-lived pi-tools process on {host} serves every command, \
         grep and find (its {shell}'s startup files run once, when it starts: commands get \
         {env})",
        host = ssh.host,
        shell = if ssh.login_shell {
            "login shell"
        } else {
            "shell"
        },
        env = if ssh.login_shell {
            "a login shell's PATH and variables; login_shell = false for a plain SSH command's"
        } else {
            "a plain SSH command's PATH and variables (login_shell = false)"
        },
    );
    vec![
        format!(
            "environment: {} over SSH, in {}",
            ssh.host,
            ssh.cwd.display()
        ),
        if ssh.upload_helper.unwrap_or(super::setup::UPLOAD_HELPER) {
            format!(
                "{served}; pi-tools {version} on its PATH, else this binary, uploaded once to \
                 ~/.cache/pi-tools there (same OS and architecture only; {why})",
                why = if ssh.upload_helper.is_some() {
                    "upload_helper = true"
                } else {
                    "upload_helper is true by default: set upload_helper = false in [env] not \
                     to upload"
                }
            )
        } else {
            format!(
                "{served}, when pi-tools {version} is on its PATH; else each command opens an \
                 SSH session of its own, which runs the remote shell's startup files every time \
                 (often 0.1 to 0.3 s a call), and grep and find read the tree over SFTP \
                 (upload_helper = false: remove it, as it defaults to true, to avoid that)"
            )
        },
    ]
}

/// What `[sandbox]` asks for, what this kernel offers, and whether commands will run.
fn sandbox_report(config: &Config, kernel: &KernelSupport) -> Vec<String> {
    let sandbox = &config.sandbox;
    let list = |paths: &[std::path::PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let roots = match (&sandbox.writable_roots, &config.allowed_roots) {
        (Some(roots), _) | (None, Some(roots)) => list(roots),
        (None, None) => ".".to_owned(),
    };
    let mut lines = vec![format!(
        "sandbox: mode {}, network {}",
        sandbox.mode,
        if sandbox.network { "on" } else { "off" }
    )];
    if sandbox.mode == crate::env::SandboxMode::WorkspaceWrite {
        lines.push(format!(
            "sandbox writable roots: {roots} and a private TMPDIR"
        ));
        lines.push(format!("sandbox git: {}", sandbox.git));
        lines.push(format!("sandbox protected: {}", protected_report(sandbox)));
    }
    lines.extend(kernel.report().into_iter().map(|l| format!("kernel {l}")));
    let needs_landlock = sandbox.mode != crate::env::SandboxMode::Off;
    let enforceable =
        (!needs_landlock || kernel.landlock_abi > 0) && (sandbox.network || kernel.seccomp);
    if enforceable && needs_landlock {
        lines.extend(
            kernel
                .gaps()
                .into_iter()
                .map(|gap| format!("sandbox cannot enforce: {gap}")),
        );
    }
    lines.push(if enforceable {
        "sandbox: enforceable on this kernel".to_owned()
    } else {
        "sandbox: NOT enforceable on this kernel: bash calls will fail until [sandbox] is loosened or the kernel supports it".to_owned()
    });
    lines
}

/// One line per tool whose execution mode the configuration overrides.
fn mode_overrides(config: &Config) -> Vec<String> {
    config
        .tools
        .iter()
        .filter_map(|(name, settings)| Some(format!("mode of {name}: {}", settings.mode?)))
        .collect()
}

/// `1 second`, `180 seconds`.
fn seconds(n: u64) -> String {
    if n == 1 {
        "1 second".to_owned()
    } else {
        format!("{n} seconds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(text, "pi-tools.toml", &[]).expect("valid")
    }

    #[test]
    fn the_environment_report_says_how_commands_run_over_ssh_and_what_it_costs() {
        assert_eq!(env_report(&config("").env), ["environment: this machine"]);
        let report =
            env_report(&config("[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"/srv\"\n").env);
        assert_eq!(report[0], "environment: box over SSH, in /srv");
        assert!(
            report[1].starts_with(
                "commands over SSH: one long-lived pi-tools process on box serves every command"
            ),
            "{report:?}"
        );
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            report[1].ends_with(&format!(
                "; pi-tools {version} on its PATH, else this binary, uploaded once to \
                 ~/.cache/pi-tools there (same OS and architecture only; upload_helper is true \
                 by default: set upload_helper = false in [env] not to upload)"
            )),
            "{report:?}"
        );
        let ssh = |extra: &str| {
            env_report(
                &config(&format!(
                    "[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"/srv\"\n{extra}"
                ))
                .env,
            )
        };
        let uploading = ssh("upload_helper = true\n");
        assert!(
            uploading[1].ends_with("(same OS and architecture only; upload_helper = true)"),
            "{uploading:?}"
        );
        let not = ssh("upload_helper = false\n");
        assert!(
            not[1].ends_with(&format!(
                ", when pi-tools {version} is on its PATH; else each command opens an SSH \
                 session of its own, which runs the remote shell's startup files every time \
                 (often 0.1 to 0.3 s a call), and grep and find read the tree over SFTP \
                 (upload_helper = false: remove it, as it defaults to true, to avoid that)"
            )),
            "{not:?}"
        );
        assert!(
            report[1].contains("commands get a login shell's PATH and variables"),
            "{report:?}"
        );
        let plain = env_report(
            &config("[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"/srv\"\nlogin_shell = false\n")
                .env,
        );
        assert!(
            plain[1].contains("commands get a plain SSH command's PATH and variables"),
            "{plain:?}"
        );
    }

    #[test]
    fn the_sandbox_report_says_what_is_asked_and_what_the_kernel_offers() {
        let kernel = KernelSupport {
            landlock_abi: 7,
            seccomp: true,
            user_namespaces: true,
            os: "Linux",
        };
        assert_eq!(
            sandbox_report(&config("[sandbox]\nnetwork = false\n"), &kernel),
            [
                "sandbox: mode workspace-write, network off",
                "sandbox writable roots: . and a private TMPDIR",
                "sandbox git: read-only",
                "sandbox protected: the 33 defaults (git's hooks and settings, pi-tools.toml, .envrc, .mcp.json, editor, agent and build tool settings, shell start files)",
                "kernel Landlock: ABI 7",
                "kernel seccomp: available",
                "kernel user namespaces: available",
                "sandbox: enforceable on this kernel",
            ]
        );
        let old = KernelSupport {
            landlock_abi: 5,
            user_namespaces: false,
            ..kernel.clone()
        };
        assert_eq!(
            sandbox_report(&config(""), &old)[6..],
            [
                "kernel user namespaces: not available",
                "sandbox cannot enforce: signals and abstract Unix sockets are not scoped (Landlock ABI 5 here; scoping needs ABI 6, Linux 6.12): a command can signal a process of the same user outside the sandbox and connect to its abstract sockets",
                "sandbox cannot enforce: no user namespace can be made: commands run with every capability dropped instead, and protected paths that exist (such as .git) make every command fail",
                "sandbox: enforceable on this kernel",
            ]
        );
        let none = KernelSupport {
            os: "Linux",
            ..KernelSupport::none()
        };
        assert_eq!(
            sandbox_report(&config("[sandbox]\nmode = \"read-only\"\n"), &none),
            [
                "sandbox: mode read-only, network on",
                "kernel Landlock: not available (Linux)",
                "kernel seccomp: not available",
                "kernel user namespaces: not available",
                "sandbox: NOT enforceable on this kernel: bash calls will fail until [sandbox] is loosened or the kernel supports it",
            ]
        );
    }
}

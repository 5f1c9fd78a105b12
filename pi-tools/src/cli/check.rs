//! `pi-tools check`: validates a configuration against the registered tools and summarises
//! what it sets up.

use std::process::ExitCode;

use crate::config::{Config, ConfigSource};
use crate::toolbox::Toolbox;

use super::{Failure, emit, setup};

pub(super) fn check(source: &ConfigSource) -> Result<ExitCode, Failure> {
    let toolbox = setup::describing_toolbox(source)?;
    emit::print(&summary(source, &toolbox))?;
    Ok(ExitCode::SUCCESS)
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
        .map(|t| t.name().to_owned())
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
    lines.push(format!(
        "allowed roots: {}",
        config.allowed_roots.as_ref().map_or_else(
            || "(no confinement)".to_owned(),
            |roots| list(roots.iter().map(|r| r.display().to_string()).collect())
        )
    ));
    lines.join("\n")
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

//! `pi-tools prompt`: the system prompt's sections for the active tools.

use std::process::ExitCode;

use crate::config::ConfigSource;

use super::{Failure, emit, setup};

pub(super) fn prompt(config: &ConfigSource) -> Result<ExitCode, Failure> {
    let toolbox = setup::describing_toolbox(config)?;
    emit::print(&toolbox.prompt().to_string())?;
    Ok(ExitCode::SUCCESS)
}

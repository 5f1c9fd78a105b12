//! `pi-tools prompt`: the system prompt's sections for the active tools.

use std::process::ExitCode;

use super::{ConfigArg, Failure, emit, setup};

pub(super) fn prompt(args: ConfigArg) -> Result<ExitCode, Failure> {
    let toolbox = setup::describing_toolbox(args.config.as_deref())?;
    emit::print(&toolbox.prompt().to_string())?;
    Ok(ExitCode::SUCCESS)
}

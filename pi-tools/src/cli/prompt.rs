//! `pi-tools prompt`: the system prompt's sections for the active tools.

use std::process::ExitCode;

use crate::config::ConfigSource;

use super::mounted::Need;
use super::{Failure, emit, setup};

pub(super) async fn prompt(config: &ConfigSource) -> Result<ExitCode, Failure> {
    let (toolbox, mounts) = setup::describing_toolbox(config, Need::Active).await?;
    mounts.end().await;
    emit::print(&toolbox.prompt().to_string())?;
    Ok(ExitCode::SUCCESS)
}

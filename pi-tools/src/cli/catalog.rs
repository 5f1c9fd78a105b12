//! `pi-tools catalog`: the tools documented as Markdown, JSON or one HTML page.

use std::process::ExitCode;

use crate::config::ConfigSource;

use super::mounted::Need;
use super::{CatalogArgs, CatalogFormat, Failure, emit, setup};

pub(super) async fn catalog(args: CatalogArgs, config: &ConfigSource) -> Result<ExitCode, Failure> {
    let (toolbox, mounts) = setup::describing_toolbox(config, Need::ActiveOrAll(args.all)).await?;
    mounts.end().await;
    let catalog = toolbox.catalog(args.all).with_title(args.title);
    let text = match args.format {
        CatalogFormat::Markdown => catalog.to_markdown_at(args.heading_level),
        CatalogFormat::Json => emit::json(&catalog.to_json()),
        CatalogFormat::Html => catalog.to_html(),
    };
    emit::write(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

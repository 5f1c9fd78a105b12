//! `pi-tools catalog`: the tools documented as Markdown, JSON or one HTML page.

use std::process::ExitCode;

use super::{CatalogArgs, CatalogFormat, Failure, emit, setup};

pub(super) fn catalog(args: CatalogArgs) -> Result<ExitCode, Failure> {
    let toolbox = setup::describing_toolbox(args.config.config.as_deref())?;
    let catalog = toolbox.catalog(args.all);
    let text = match args.format {
        CatalogFormat::Markdown => catalog.to_markdown(),
        CatalogFormat::Json => emit::json(&catalog.to_json()),
        CatalogFormat::Html => catalog.to_html(),
    };
    emit::write(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

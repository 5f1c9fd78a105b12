//! `pi-tools completions SHELL` and `pi-tools man`: generated from the command-line
//! definition itself, so they never drift from it.

use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, CompletionsArgs, Failure, ManArgs, emit};

pub(super) fn completions(args: CompletionsArgs, bin_name: &str) -> Result<ExitCode, Failure> {
    let mut command = Cli::command().name(bin_name.to_owned());
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, bin_name, &mut script);
    emit::write(args.output.as_deref(), &text(script, "completion script")?)?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn man(args: ManArgs, bin_name: &str) -> Result<ExitCode, Failure> {
    let command = Cli::command().name(bin_name.to_owned());
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|e| Failure::general(format!("cannot render the man page ({e})")))?;
    emit::write(args.output.as_deref(), &text(page, "man page")?)?;
    Ok(ExitCode::SUCCESS)
}

fn text(bytes: Vec<u8>, what: &str) -> Result<String, Failure> {
    String::from_utf8(bytes)
        .map_err(|e| Failure::general(format!("the generated {what} is not UTF-8 ({e})")))
}

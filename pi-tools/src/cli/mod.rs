//! The `pi-tools` command line: run a batch of tool calls, and describe the tools (catalog,
//! prompt, provider schemas, configuration check, MCP server).
//!
//! The binary knows no tool by name: it works with whatever `#[tool]` functions are linked
//! into it. A crate with tools of its own gets the same command line, with its tools
//! included, by calling [`main`] from its own `main`:
//!
//! ```no_run
//! /// Says hello.
//! #[pi_tools::tool]
//! async fn hello(name: String) -> Result<String, String> {
//!     Ok(format!("Hello, {name}!"))
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     pi_tools::cli::main()
//! }
//! ```

mod call;
mod catalog;
mod check;
mod emit;
mod failure;
mod input;
mod jsonl;
mod live;
mod mcp;
mod prompt;
mod run;
mod schema;
mod setup;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::dialect::Dialect;

use failure::Failure;

/// Runs the command line on the process's arguments and returns its exit code.
///
/// Call it from a synchronous `main`: it builds its own Tokio runtime.
pub fn main() -> ExitCode {
    run_from(std::env::args_os())
}

/// Runs the command line on `args` (the first one is the program name) and returns its exit
/// code, printing to the process's standard output and error.
///
/// Call it from synchronous code: it builds its own Tokio runtime.
pub fn run_from(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with code 0, usage errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return Failure::general(format!(
                "cannot start the async runtime ({e}); check the process's thread and file limits"
            ))
            .report();
        }
    };
    let result = runtime.block_on(dispatch(cli.command));
    // Tools that ignore cancellation must not keep the process alive after the batch.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}

async fn dispatch(command: Command) -> Result<ExitCode, Failure> {
    match command {
        Command::Run(args) => run::run(args).await,
        Command::Catalog(args) => catalog::catalog(args),
        Command::Prompt(args) => prompt::prompt(args),
        Command::Schema(args) => schema::schema(args),
        Command::Check(args) => check::check(args),
        Command::Mcp(args) => mcp::mcp(args).await,
        Command::Call(args) => call::call(args).await,
    }
}

/// Tools for LLM agents: run a batch of tool calls, and describe the registered tools.
#[derive(Debug, Parser)]
#[command(name = "pi-tools", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Execute one batch of tool calls and show its events.
    Run(RunArgs),
    /// Document the tools as Markdown, JSON or one HTML page.
    Catalog(CatalogArgs),
    /// Print the system prompt's "Available tools" and "Guidelines" sections.
    Prompt(ConfigArg),
    /// Print the tools' wire descriptions for a provider, as a JSON array.
    Schema(SchemaArgs),
    /// Validate a configuration and summarise it.
    Check(ConfigArg),
    /// Serve the active tools over MCP on standard input and output.
    Mcp(McpArgs),
    /// Run one registered tool (active or not) and print its result message as one JSON
    /// line (the SSH environment runs grep and find on the remote machine this way).
    Call(CallArgs),
}

#[derive(Debug, Args)]
struct CallArgs {
    /// The tool's name.
    name: String,
    /// The tool's arguments, as one JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// The directory the tool works in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

/// The configuration file option every subcommand shares.
#[derive(Debug, Args)]
struct ConfigArg {
    /// The configuration file (pi-tools.toml); the embedded default applies without it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print every event as one JSON object a line, then `{"type":"batch_end",…}`.
    #[arg(long)]
    json: bool,
    /// The batch: a JSON array of `{id, name, arguments}` or an assistant message with
    /// `toolCall` blocks; `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct CatalogArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The output format.
    #[arg(long, value_enum, default_value_t = CatalogFormat::Markdown)]
    format: CatalogFormat,
    /// Document every registered tool, not only the active ones.
    #[arg(long)]
    all: bool,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// How the catalog is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CatalogFormat {
    /// One section per tool.
    Markdown,
    /// The same data as JSON.
    Json,
    /// One self-contained page with a filter box.
    Html,
}

#[derive(Debug, Args)]
struct SchemaArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The provider's dialect.
    #[arg(long, value_parser = dialect_parser())]
    dialect: Dialect,
    /// Describe every registered tool, not only the active ones.
    #[arg(long)]
    all: bool,
}

#[derive(Debug, Args)]
struct McpArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

fn dialect_parser() -> impl clap::builder::TypedValueParser<Value = Dialect> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Dialect::ALL.map(Dialect::as_str))
        .try_map(|name| name.parse::<Dialect>())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}

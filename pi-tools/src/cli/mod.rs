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

mod approve;
mod call;
mod catalog;
mod check;
mod check_schemas;
mod color;
mod completions;
mod emit;
mod failure;
mod follow;
mod input;
mod jsonl;
mod live;
mod mcp;
mod mounted;
mod policy;
mod prompt;
mod reload;
mod run;
mod schema;
mod setup;
mod trust;
mod watch;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::ConfigSource;
use crate::dialect::Dialect;

use color::ColorChoice;
use failure::Failure;

/// Runs the command line on the process's arguments and returns its exit code.
///
/// Call it from a synchronous `main`: it builds its own Tokio runtime. A binary that serves
/// the command line passes it every argument: it starts its own binary again for hidden
/// subcommands (`env-guard`, which ends a server's leftover processes when the server dies).
pub fn main() -> ExitCode {
    run_from(std::env::args_os())
}

/// Runs the command line on `args` (the first one is the program name) and returns its exit
/// code, printing to the process's standard output and error.
///
/// Call it from synchronous code: it builds its own Tokio runtime.
pub fn run_from(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with code 0, usage errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    // This binary runs `env-guard`: what must not outlive the process may get a guard.
    crate::env::guard::enable();
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
    let globals = Globals {
        config: ConfigSource::from_process(cli.config.as_deref()),
        color: cli.color,
        bin_name: bin_name(args.first()),
    };
    let result = runtime.block_on(dispatch(cli.command, &globals));
    // Tools that ignore cancellation must not keep the process alive after the batch.
    runtime.shutdown_background();
    crate::env::guard::finish();
    match result {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}

/// What every subcommand may need besides its own arguments.
struct Globals {
    /// Where the configuration comes from.
    config: ConfigSource,
    /// `--color`.
    color: ColorChoice,
    /// The name this program was called by (for completions and the man page).
    bin_name: String,
}

async fn dispatch(command: Command, globals: &Globals) -> Result<ExitCode, Failure> {
    let config = &globals.config;
    match command {
        Command::Run(args) => run::run(args, config, globals.color).await,
        Command::Catalog(args) => catalog::catalog(args, config).await,
        Command::Prompt => prompt::prompt(config).await,
        Command::Schema(args) => schema::schema(args, config).await,
        Command::Check(args) => check::check(args, config).await,
        Command::Mcp(args) => mcp::mcp(args, config).await,
        Command::Policy(args) => policy::policy(args, config),
        Command::Completions(args) => completions::completions(args, &globals.bin_name),
        Command::Man(args) => completions::man(args, &globals.bin_name),
        Command::Call(args) => call::call(args, config).await,
        Command::Trust(args) => trust::trust(args),
        Command::EnvServer(args) => call::env_server(args).await,
        Command::EnvGuard(args) => call::env_guard(args).await,
    }
}

/// The program's file name without directory or extension; `pi-tools` when unknown.
fn bin_name(arg0: Option<&OsString>) -> String {
    arg0.map(std::path::Path::new)
        .and_then(std::path::Path::file_stem)
        .and_then(|stem| stem.to_str())
        .filter(|stem| !stem.is_empty())
        .unwrap_or("pi-tools")
        .to_owned()
}

/// Tools for LLM agents: run a batch of tool calls, and describe the registered tools.
#[derive(Debug, Parser)]
#[command(name = "pi-tools", version, about, long_about = None)]
struct Cli {
    /// The configuration file. Without it: $PI_TOOLS_CONFIG, then ./pi-tools.toml, then
    /// the embedded default.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// When to colour the output: `auto` colours a terminal unless NO_COLOR is set or
    /// TERM=dumb.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
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
    Prompt,
    /// Print the tools' wire descriptions for a provider, as a JSON array.
    Schema(SchemaArgs),
    /// Validate the configuration, say which file it is, and summarise it.
    Check(CheckArgs),
    /// Serve the active tools over MCP on standard input and output.
    ///
    /// The tools the configuration file declares follow the file while the server runs:
    /// save it and the clients are told of the new tools. The rest of the file applies at
    /// the next start.
    Mcp(McpArgs),
    /// Preview what `[policy]` decides for a call.
    Policy(policy::PolicyArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page (roff).
    Man(ManArgs),
    /// Trust a configuration file found in a working directory (its exact content and the
    /// files it reads), so that what it loosens or runs takes effect; `--list`, `--revoke`.
    Trust(trust::TrustArgs),
    /// Run one registered tool (active or not) and print its result message as one JSON
    /// line.
    Call(CallArgs),
    /// Serve this machine's commands and tool calls over standard input and output to an
    /// SSH environment on another machine (it starts this itself), until the input ends.
    #[command(hide = true)]
    EnvServer(EnvServerArgs),
    /// Wait until standard input ends (the env-server that started this is gone), then
    /// kill every process its commands left.
    #[command(hide = true)]
    EnvGuard(EnvGuardArgs),
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

#[derive(Debug, Args)]
struct EnvServerArgs {
    /// Print the version and link protocol this binary serves, and exit.
    #[arg(long)]
    check: bool,
}

#[derive(Debug, Args)]
struct EnvGuardArgs {
    /// The mark of the server whose commands' processes to kill.
    mark: String,
}

/// Where the tools of `run` and `mcp` work: a local directory, or one on another machine.
#[derive(Debug, Args)]
struct WorkspaceArgs {
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "ssh")]
    cwd: Option<PathBuf>,
    /// Work on another machine over SSH, in the absolute directory PATH there; HOST may be an
    /// alias of the ssh config. Overrides [env]'s host, port and cwd.
    #[arg(long, value_name = "[USER@]HOST[:PORT]/PATH")]
    ssh: Option<String>,
    /// An ssh config file to use instead of ~/.ssh/config (`ssh -F`), with --ssh or
    /// [env] kind = "ssh".
    #[arg(long, value_name = "FILE")]
    ssh_config: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Print every event as one JSON object a line, then `{"type":"batch_end",…}` (on
    /// standard error with --dialect).
    #[arg(long)]
    json: bool,
    /// Read FILE as this provider's reply (its JSON body, or its saved event stream), run its
    /// calls, and print on standard output exactly the JSON to append to the conversation:
    /// an array of messages (openai), of items (openai-responses), or one message (anthropic)
    /// or content (gemini). Events and the results as a person reads them go to standard
    /// error. openai-strict is openai whose tools are strict: a `null` optional means absent.
    #[arg(long, value_name = "PROVIDER", value_parser = reply_dialect_parser())]
    dialect: Option<Dialect>,
    /// The batch: a JSON array of `{id, name, arguments}` or an assistant message with
    /// `toolCall` blocks (with --dialect, the provider's reply); `-` or nothing reads
    /// standard input.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct CatalogArgs {
    /// The output format.
    #[arg(long, value_enum, default_value_t = CatalogFormat::Markdown)]
    format: CatalogFormat,
    /// Document every registered tool, not only the active ones.
    #[arg(long)]
    all: bool,
    /// The title (HTML page title and top heading).
    #[arg(long, value_name = "TEXT", default_value = crate::catalog::DEFAULT_TITLE)]
    title: String,
    /// Markdown only: the level of the top heading (tools are one level below), so the
    /// catalog embeds in another document.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    heading_level: u8,
    /// Write to this file instead of standard output (`-` is standard output).
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
    /// The provider's dialect.
    #[arg(long, value_parser = dialect_parser())]
    dialect: Dialect,
    /// Describe every registered tool, not only the active ones.
    #[arg(long)]
    all: bool,
    /// Print nothing and fail when the dialect cannot express some tool, instead of leaving
    /// that tool out (each one left out is reported on standard error either way).
    #[arg(long)]
    strict_catalog: bool,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Fail when some dialect cannot express an active tool, instead of reporting it.
    #[arg(long)]
    strict_catalog: bool,
}

#[derive(Debug, Args)]
struct McpArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8808; path /mcp) instead of
    /// standard input and output.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// A file whose content is the bearer token HTTP clients must send (default: the
    /// PI_TOOLS_MCP_TOKEN environment variable; required beyond loopback addresses).
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// Another accepted `Host` (besides localhost, 127.0.0.1, ::1 and the listen address).
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,
    /// Another accepted browser `Origin`, such as https://app.example.com:443.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Serve HTTP requests without sessions: every request is served by the server's one
    /// stateless environment, whose background jobs last until the server stops.
    #[arg(long, requires = "http")]
    stateless: bool,
    /// Close an HTTP session idle this many seconds, ending its jobs (default: sessions do
    /// not expire by time; they end on DELETE, or when `[mcp] max_sessions` needs room).
    #[arg(long, value_name = "SECS", requires = "http")]
    session_idle_secs: Option<u64>,
}

#[derive(Debug, Args)]
struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ManArgs {
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn dialect_parser() -> impl clap::builder::TypedValueParser<Value = Dialect> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Dialect::ALL.map(Dialect::as_str))
        .try_map(|name| name.parse::<Dialect>())
}

/// The dialects whose replies `run --dialect` reads (every one but MCP's), each with what it
/// reads.
fn reply_dialect_parser() -> impl clap::builder::TypedValueParser<Value = Dialect> {
    use clap::builder::{PossibleValue, TypedValueParser};
    let help = |dialect: Dialect| match dialect {
        Dialect::Mcp => "",
        Dialect::OpenAi => "OpenAI Chat Completions: a `ChatCompletion`, or its chunk stream",
        Dialect::OpenAiStrict => {
            "OpenAI Chat Completions with strict tools: `null` for an optional parameter is absent"
        }
        Dialect::OpenAiResponses => "OpenAI Responses: a `response`, or its event stream",
        Dialect::Anthropic => "Anthropic Messages: a `message`, or its event stream",
        Dialect::Gemini => {
            "Gemini `generateContent`: a `GenerateContentResponse`, or its `alt=sse` stream"
        }
    };
    let values = Dialect::ALL
        .into_iter()
        .filter(|d| d.has_replies())
        .map(move |d| PossibleValue::new(d.as_str()).help(help(d)));
    clap::builder::PossibleValuesParser::new(values).try_map(|name| name.parse::<Dialect>())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}

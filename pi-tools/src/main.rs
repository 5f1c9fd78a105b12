//! The `pi-tools` binary: the command line over every tool registered in this crate.

fn main() -> std::process::ExitCode {
    pi_tools::cli::main()
}

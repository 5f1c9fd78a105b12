//! The `pi-tools` command line, built in this package so the binary tests can run it
//! (`CARGO_BIN_EXE_cli-under-test`) with the features under test.

fn main() -> std::process::ExitCode {
    pi_tools::cli::main()
}

//! The MCP Streamable HTTP client requests the HTTP benchmarks share: a POST with the
//! session's headers, and the answer to one request, as a JSON body or an event stream.

use serde_json::Value;

/// Any failure, with its message.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// POSTs `body` to the MCP endpoint `url`, in `session` when given.
pub async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<reqwest::Response, Error> {
    let mut request = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-06-18");
    }
    Ok(request.send().await?)
}

/// The answer to request `id`: the JSON body, or a `data:` line of the event stream.
pub async fn answer(response: reqwest::Response, id: u64) -> Result<Value, Error> {
    let status = response.status();
    let body = response.text().await?;
    if !status.is_success() {
        return Err(format!("the server answered {status}: {body}").into());
    }
    if let Ok(value) = serde_json::from_str::<Value>(&body) {
        return Ok(value);
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == id)
        .ok_or_else(|| format!("no answer to request {id} in: {body}").into())
}

/// The `main` of a benchmark that spawns itself as the server: the `pi-tools` command line
/// when started as `mcp` (or as the `env-guard` the command line starts of its own binary),
/// else the benchmark: `parse` reads its arguments (a usage error exits with 2), `run` runs
/// it on a runtime, and a failure is printed after `name`.
pub fn bench_main<O, F>(
    name: &str,
    parse: impl FnOnce() -> Result<O, String>,
    run: impl FnOnce(O) -> F,
) -> std::process::ExitCode
where
    F: std::future::Future<Output = Result<(), Error>>,
{
    use std::process::ExitCode;
    if matches!(
        std::env::args().nth(1).as_deref(),
        Some("mcp" | "env-guard")
    ) {
        return pi_tools::cli::main();
    }
    let options = match parse() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{name}: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

//! The command line run as a separate process: `run`, `catalog`, `schema` and the rest,
//! the file tools across processes, `mcp` over stdio and HTTP, and `--ssh`.

mod cli;
mod declared;
mod declared_json;
mod file_processes;
mod mcp_binary;
mod mcp_http;
mod mcp_http_descriptors;
mod mcp_http_era_jobs;
mod mcp_http_eras;
mod mcp_http_floods;
mod mcp_http_jobs;
mod mcp_http_lives;
mod mcp_http_log_lines;
mod mcp_http_proxies;
mod mcp_http_questions;
mod mcp_http_resources;
mod mcp_http_resume;
mod mcp_http_scale;
mod mcp_http_sdk_v1;
mod mcp_http_sdk_v2;
mod mcp_http_sdk_v2_tasks;
mod mcp_http_sessions;
#[cfg(feature = "cli")]
mod mcp_http_support;
mod mcp_http_wakes;
mod mcp_reload;
mod mcp_stdio;
mod mount;
mod sandbox_host;
mod ssh_cli;
mod ssh_leftovers;

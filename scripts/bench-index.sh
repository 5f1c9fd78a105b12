#!/usr/bin/env bash
# Benchmarks grep's search index against grep's full scan and ripgrep in one run, on the
# rustc corpus: a rare identifier, a rare regex, a common word with a limit, a pattern the
# index cannot narrow; the index's build time and memory; a search right after a change.
#   usage: scripts/bench-index.sh [RUNS]
# The corpus comes from scripts/corpus.sh, or from $PI_TOOLS_CORPUS when set (then set
# PI_TOOLS_BENCH_RARE and PI_TOOLS_BENCH_RARE_REGEX to a name and a regex rare in it).
# rg is installed with apt when missing. The benchmark appends to one file of the corpus
# and creates one, and restores both.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-9}

corpus=${PI_TOOLS_CORPUS:-}
if [ -z "$corpus" ]; then
  corpus=$(bash scripts/corpus.sh)
fi
[ -d "$corpus" ] || { echo "corpus not found: $corpus" >&2; exit 1; }

if ! command -v rg >/dev/null; then
  apt-get install -y ripgrep >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1
    apt-get install -y ripgrep >/dev/null
  }
fi

cargo build --quiet --release -p pi-tools-examples --no-default-features --features builtins \
  --example bench_index
target/release/examples/bench_index "$corpus" "$runs"

#!/usr/bin/env bash
# Benchmarks grep, find and bash (the tool calls themselves, in-process) against the rg and
# fdfind command-line tools on the same queries, and prints a side-by-side table in ms
# (median of several runs after a warm-up).
#   usage: scripts/bench-search.sh [RUNS]
# The corpus (rustc 1.63 source, 36,743 files) comes from scripts/corpus.sh, or from
# $PI_TOOLS_CORPUS when set. rg and fdfind are installed with apt when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-9}

corpus=${PI_TOOLS_CORPUS:-}
if [ -z "$corpus" ]; then
  corpus=$(bash scripts/corpus.sh)
fi
[ -d "$corpus" ] || { echo "corpus not found: $corpus" >&2; exit 1; }

if ! command -v rg >/dev/null || ! command -v fdfind >/dev/null; then
  apt-get install -y ripgrep fd-find >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1
    apt-get install -y ripgrep fd-find >/dev/null
  }
fi

cargo build --quiet --release --example bench_search
ours=$(target/release/examples/bench_search "$corpus" "$runs")

# Median wall time in ms of a command run in the corpus (one warm-up run first).
cli_ms() {
  local times=() i start end
  (cd "$corpus" && "$@" >/dev/null 2>&1) || true
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    (cd "$corpus" && "$@" >/dev/null 2>&1) || true
    end=$(date +%s%N)
    times+=($(((end - start) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

ours_ms() { printf '%s\n' "$ours" | awk -F'\t' -v q="$1" '$1 == q {print $2}'; }
ours_what() { printf '%s\n' "$ours" | awk -F'\t' -v q="$1" '$1 == q {print $3}'; }

row() { printf '| %-34s | %10s | %-12s | %-34s | %10s |\n' "$@"; }
row "query" "ours (ms)" "ours shows" "CLI" "CLI (ms)"
row "---" "---" "---" "---" "---"
q='grep zzqqxx_no_such_thing_[0-9]+'
row "$q" "$(ours_ms "$q")" "$(ours_what "$q")" "rg (full scan)" "$(cli_ms rg 'zzqqxx_no_such_thing_[0-9]+')"
q='grep unsafe limit=100'
row "$q" "$(ours_ms "$q")" "$(ours_what "$q")" "rg --sort path unsafe | head -100" "$(cli_ms sh -c 'rg --sort path unsafe | head -100')"
q="grep -F 'fn main' glob=*.rs"
row "$q" "$(ours_ms "$q")" "$(ours_what "$q")" "rg -F 'fn main' -g '*.rs'" "$(cli_ms rg -F 'fn main' -g '*.rs')"
q='find *.rs'
row "$q" "$(ours_ms "$q")" "$(ours_what "$q")" "fdfind --glob '*.rs' (no limit)" "$(cli_ms fdfind --glob '*.rs')"
q='find **/tests/**/*.rs'
row "$q" "$(ours_ms "$q")" "$(ours_what "$q")" "fdfind -p --glob '**/tests/**/*.rs'" "$(cli_ms fdfind -p --glob '**/tests/**/*.rs')"
q='bash echo hi (tool)'
row "$q" "$(ours_ms "$q")" "" "bash -c 'echo hi' (spawned in-process)" "$(ours_ms 'bash echo hi (direct spawn)')"

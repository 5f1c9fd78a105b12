#!/usr/bin/env bash
# A one-shot grep as a script runs it (`pi-tools call grep`, one whole process each time) of
# a rare identifier over the rustc corpus, against `rg`: wall, user and system seconds per
# run, the binaries taking turns. Compare two builds by naming both (issue 49: a one-shot
# grep must start no index build).
#   usage: scripts/bench-one-shot-grep.sh RUNS PI_TOOLS_BINARY... [rg]
# The corpus comes from scripts/corpus.sh, or from $PI_TOOLS_CORPUS when set (then set
# PI_TOOLS_BENCH_RARE to a name rare in it).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${PI_TOOLS_CORPUS:-$(scripts/corpus.sh)}
rare=${PI_TOOLS_BENCH_RARE:-suggest_constraining_type_param}
runs=$1
shift
TIMEFORMAT='%R %U %S'
for i in $(seq "$runs"); do
  for bin in "$@"; do
    if [ "$bin" = rg ]; then
      t=$( { time rg -n "$rare" "$corpus" > /dev/null; } 2>&1 )
    else
      t=$( { time "$bin" call grep --cwd "$corpus" --args "{\"pattern\":\"$rare\"}" > /dev/null; } 2>&1 )
    fi
    echo "$i $bin $t"
  done
done

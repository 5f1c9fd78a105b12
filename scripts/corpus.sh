#!/usr/bin/env bash
# The search benchmarks' corpus: the rustc 1.63 source tree from Debian's rust-src package
# (36,743 files, about 129 MB of text; 22,331 .rs files), fetched with apt, checked against
# its pinned sha256, and unpacked. Prints the tree's root. A second run only prints it.
#   usage: scripts/corpus.sh [DIR]   (default: $PI_TOOLS_CORPUS_DIR, else ~/.cache/pi-tools-corpus)
set -euo pipefail
dir=${1:-${PI_TOOLS_CORPUS_DIR:-$HOME/.cache/pi-tools-corpus}}
root="$dir/root/usr/src/rustc-1.63.0"
if [ -f "$dir/.done" ] && [ -d "$root" ]; then
  echo "$root"
  exit 0
fi
mkdir -p "$dir"
cd "$dir"
package=rust-src_1.63.0+dfsg1-2_all.deb
sum=410b8c6d464cabbe5fb3154ab8c3d374980dd597fbe7e3b7bb3ed8dd1bf11e25
if ! [ -f "$package" ]; then
  if ! apt-get download rust-src=1.63.0+dfsg1-2 >/dev/null 2>&1; then
    apt-get update >/dev/null 2>&1
    apt-get download rust-src=1.63.0+dfsg1-2 >/dev/null
  fi
fi
echo "$sum  $package" | sha256sum -c --quiet - >&2
rm -rf root
dpkg-deb -x "$package" root
touch .done
echo "$root"

#!/usr/bin/env bash
# The three published crates compile from their .crate files alone, without one compiler
# warning, as a user's crate depending on them would compile them: every file a module or an
# `include_str!` needs must be in the package.
#
# `cargo package` verifies each package by building it (code and all) as a workspace of its
# own; that is minutes on two cores. Whether the package holds everything is settled when the
# compiler has read it, so this checks instead: the packages that `cargo package --no-verify`
# made (in the target directory's `package/`) are unpacked into one workspace whose registry
# dependencies on each other are patched to the unpacked copies (what cargo's own
# verification does with a local registry), and `cargo check` reads them with the default
# features, in the caller's target directory (the lints' dependencies are checked already).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$root/$target
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
published=(pi-tools pi-tools-derive pi-tools-sandbox)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
members=""
patches=""
for crate in "${published[@]}"; do
  file=$target/package/$crate-$version.crate
  [[ -f $file ]] || {
    echo "$file is missing: run \`cargo package --workspace --no-verify\` first" >&2
    exit 1
  }
  # Their times are now (`-m`): cargo keys a path package by its path inside the workspace,
  # the same in every run, so an earlier check of older sources would otherwise count as
  # current.
  tar -xzmf "$file" -C "$work"
  members+="\"$crate-$version\", "
  patches+="$crate = { path = \"$crate-$version\" }"$'\n'
done
cat >"$work/Cargo.toml" <<EOF
[workspace]
resolver = "3"
members = [${members%, }]

[patch.crates-io]
$patches
EOF
# The versions the tests ran with (cargo drops what this workspace does not use).
cp Cargo.lock "$work/Cargo.lock"

log=$(mktemp)
status=0
(cd "$work" && CARGO_TARGET_DIR=$target cargo check --workspace --lib --bins --offline 2>&1) | tee "$log" || status=$?
# A compiler warning points at its source line; cargo's own notes do not.
if grep -A4 '^warning' "$log" | grep -qE '^ +--> '; then
  echo "the packaged crates compile with warnings (above): gate the code on the features that use it" >&2
  status=1
fi
rm -f "$log"
exit "$status"

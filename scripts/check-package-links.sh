#!/usr/bin/env bash
# Every link in what the three published crates ship (their READMEs, the Markdown files they
# include, and the rustdoc in their sources) is absolute or names a file inside the package.
# The crate registry shows the package's README as the crate page and docs.rs shows the
# rustdoc; from there, a relative link into the repository's other folders (docs/, examples/)
# leads nowhere. Both forms of a Markdown link are read: inline (`[text](target)`, images
# too) and reference definitions (`[label]: target`, which rustdoc uses most).
#
# With directories as arguments, checks every .md and .rs file under each instead of the
# packages' file lists (how the tests give it a package with broken links).
set -euo pipefail
cd "$(dirname "$0")/.."

problems=0

# `LINE:TARGET` for every link target of the Markdown text (or the doc comments of Rust source) in $1.
links() {
  awk -v rust="$([[ $1 == *.rs ]] && echo 1)" '
    rust {
      # Only documentation comments are rendered: the text after `///` or `//!`.
      if (!match($0, /^[ \t]*(\/\/\/|\/\/!) ?/)) next
      $0 = substr($0, RLENGTH + 1)
    }
    {
      text = $0
      while (match(text, /\]\([^) ]+\)/)) {
        print FNR ":" substr(text, RSTART + 2, RLENGTH - 3)
        text = substr(text, RSTART + RLENGTH)
      }
      if (match($0, /^ ? ? ?\[[^]]+\]:[ \t]*/)) {
        target = substr($0, RLENGTH + 1)
        sub(/[ \t].*$/, "", target)
        gsub(/^<|>$/, "", target)
        if (target != "") print FNR ":" target
      }
    }' "$1"
}

check_file() {
  local package=$1 file=$2 path=$1/$2 line target
  while IFS=: read -r line target; do
    target=${target%%#*}
    case "$target" in
      "" | http://* | https://* | mailto:*) continue ;;
    esac
    # Rustdoc's intra-doc links name items (`crate::env::LocalEnv`, `Self::run`,
    # `macro@crate::tool`, `Toolbox`), not files.
    if [[ "$target" == *::* || "$target" == *@* || ("$target" != */* && "$target" != *.*) ]]; then
      continue
    fi
    local resolved
    resolved=$(realpath -m "$(dirname "$path")/$target")
    if [[ "$resolved" != "$(realpath "$package")"/* || ! -e "$resolved" ]]; then
      echo "$path:$line: the link \`$target\` leads outside the $package package; make it absolute (https://…) or point at a file inside it" >&2
      problems=$((problems + 1))
    fi
  done < <(links "$path")
}

if (($# > 0)); then
  for dir in "$@"; do
    while read -r file; do
      check_file "$dir" "$file"
    done < <(cd "$dir" && find . -type f \( -name '*.md' -o -name '*.rs' \) | sed 's#^\./##' | sort)
  done
else
  for package in pi-tools pi-tools-derive pi-tools-sandbox; do
    while read -r file; do
      if [[ -f "$package/$file" && ("$file" == *.md || "$file" == *.rs) ]]; then
        check_file "$package" "$file"
      fi
    done < <(cargo package -p "$package" --list --allow-dirty 2>/dev/null)
  done
fi
if ((problems > 0)); then
  echo "$problems link(s) in the published packages lead nowhere" >&2
  exit 1
fi
echo "every link in the published packages is absolute or inside its package"

#!/usr/bin/env bash
# Every link in what the two published crates ship (their READMEs, the Markdown files they
# include, and the rustdoc in their sources) is absolute or names a file inside the package.
# The crate registry shows the package's README as the crate page and docs.rs shows the
# rustdoc; from there, a relative link into the repository's other folders (docs/, examples/)
# leads nowhere.
set -euo pipefail
cd "$(dirname "$0")/.."

problems=0
check_file() {
  local package=$1 file=$2 path=$1/$2 line target
  while IFS=: read -r line target; do
    target=${target#\](}
    target=${target%)}
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
  done < <(
    if [[ "$file" == *.rs ]]; then
      # Only documentation comments are rendered.
      grep -nE '^\s*(///|//!).*\]\(' "$path" | while IFS=: read -r n text; do
        grep -oE '\]\([^) ]+\)' <<<"$text" | sed "s/^/$n:/"
      done
    else
      grep -noE '\]\([^) ]+\)' "$path"
    fi
  )
}

for package in pi-tools pi-tools-derive; do
  while read -r file; do
    if [[ -f "$package/$file" && ("$file" == *.md || "$file" == *.rs) ]]; then
      check_file "$package" "$file"
    fi
  done < <(cargo package -p "$package" --list --allow-dirty 2>/dev/null)
done
if ((problems > 0)); then
  echo "$problems link(s) in the published packages lead nowhere" >&2
  exit 1
fi
echo "every link in the published packages is absolute or inside its package"

#!/usr/bin/env bash
# The layers of docs/architecture.md, checked against the code: each folder of
# pi-tools/src may use (`crate::NAME`, outside comments) only the folders its row names,
# and the sandbox crate depends on nothing of pi-tools. Prints every arrow that goes the
# wrong way and fails if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
src=pi-tools/src

# folder: the folders it may use. `text` is the kernel's (`core::text`, re-exported at the
# root); names that are no folder (root re-exports such as `crate::execute_tool_calls`)
# are not arrows.
declare -A allowed=(
  [core]=""
  [tool]="core"
  [truncate]=""
  [env]="core"
  [dialect]="core tool"
  [search]="core env"
  [command]="core env tool truncate"
  [policy]="core env tool dialect"
  [session]="core env policy"
  [prompt]="core env tool"
  [provider]="core dialect"
  [toml_read]="core"
  # config/ uses declared/spec/ only (checked below).
  [config]="core tool dialect env policy toml_read declared"
  [catalog]="core tool dialect config"
  # declared/ as a whole, its two rows together; the spec's own row is checked below.
  [declared]="core tool env config command toml_read"
  [builtins]="core tool env dialect search command truncate"
  [toolbox]="core tool dialect env policy session prompt catalog config declared"
  [mount]="core tool env config"
  [mcp]="core tool dialect env policy session config toolbox"
)
modules=" core tool truncate env dialect search command policy session prompt provider toml_read config catalog declared builtins toolbox mount mcp cli guide "

wrong=0
for module in "${!allowed[@]}"; do
  if [ -d "$src/$module" ]; then
    files=$(find "$src/$module" -name '*.rs')
  else
    files="$src/$module.rs"
  fi
  # shellcheck disable=SC2086
  used=$(grep -hE 'crate::[a-z_]+' $files | grep -vE '^\s*//|doc = ' | grep -oE 'crate::[a-z_]+' | sed 's/crate:://' | sed "s/^text$/core/" | sort -u || true)
  for name in $used; do
    [ "$name" = "$module" ] && continue
    case "$modules" in *" $name "*) ;; *) continue ;; esac
    case " ${allowed[$module]} " in
      *" $name "*) ;;
      *)
        echo "layers: $module uses $name, which is not below it (docs/architecture.md):" >&2
        # shellcheck disable=SC2086
        grep -nE "crate::$name\b" $files | grep -vE ':\s*//' | head -3 >&2
        wrong=1
        ;;
    esac
  done
done
# env/ in its own layers: the interface (env/ less its local/ and remote/ folders) names
# neither implementation, and local/ and remote/ do not name each other; what both need
# sits in the interface. A name counts as a path to it (`crate::env::local`,
# `super::remote`, `local::LocalEnv`, `{remote::…}`), outside comments.
env_src=$src/env
env_arrow() {
  local what=$1 names=$2
  shift 2
  if grep -HnE "(^|[^A-Za-z0-9_:])(((crate::env|super|self)::)+($names)\b|($names)::)" "$@" |
    grep -vE '^[^:]+:[0-9]+:\s*//|doc = ' >&2; then
    echo "layers: $what (the lines above); see the env row of docs/architecture.md" >&2
    wrong=1
  fi
}
mapfile -t env_interface < <(find "$env_src" -name '*.rs' -not -path "$env_src/local/*" -not -path "$env_src/remote/*")
mapfile -t env_local < <(find "$env_src/local" -name '*.rs')
mapfile -t env_remote < <(find "$env_src/remote" -name '*.rs')
env_arrow "the env interface names an implementation" 'local|remote' "${env_interface[@]}"
env_arrow "env/local names env/remote" 'remote' "${env_local[@]}"
env_arrow "env/remote names env/local" 'local' "${env_remote[@]}"
# declared/ in its two layers (its rows in docs/architecture.md): the spec (declared/spec/:
# the model and its reader, below config/) uses only core, tool and toml_read, so it names
# neither config/ nor command/ nor the running part (declared/ less spec/, above config/,
# feature `process`); and config/ names declared/ only for its spec.
decl_spec=$src/declared/spec
mapfile -t decl_spec_files < <(find "$decl_spec" -name '*.rs')
spec_used=$(grep -hE 'crate::[a-z_]+' "${decl_spec_files[@]}" | grep -vE '^\s*//|doc = ' | grep -oE 'crate::[a-z_]+(::[a-z_]+)?' | sort -u || true)
for path in $spec_used; do
  name=${path#crate::}
  top=${name%%::*}
  case "$modules" in *" $top "*) ;; *) continue ;; esac
  case " core tool toml_read " in *" $top "*) continue ;; esac
  [ "$name" = "declared::spec" ] && continue
  echo "layers: declared/spec uses $path, which is not below it (docs/architecture.md):" >&2
  grep -nE "$path\b" "${decl_spec_files[@]}" | grep -vE ':\s*//' | head -3 >&2
  wrong=1
done
if grep -HnE "(^|[^A-Za-z0-9_:])(((crate::declared|super|self)::)+run\b|run::)" "${decl_spec_files[@]}" |
  grep -vE '^[^:]+:[0-9]+:\s*//|doc = ' >&2; then
  echo "layers: declared/spec names the running part of declared/ (the lines above); the spec sits below config/" >&2
  wrong=1
fi
if grep -rHnE 'crate::declared\b' "$src/config" | grep -vE '^[^:]+:[0-9]+:\s*//|doc = ' |
  grep -vE 'crate::declared::spec\b' >&2; then
  echo "layers: config/ names declared/ beyond its spec (the lines above); the running part sits above config/" >&2
  wrong=1
fi
if [ -f pi-tools-sandbox/Cargo.toml ] && grep -qE '^pi-tools(-derive)? *=|^pi-tools *= *\{' pi-tools-sandbox/Cargo.toml; then
  echo "layers: pi-tools-sandbox depends on pi-tools; confinement must know nothing of tools" >&2
  wrong=1
fi
if grep -rqE 'crate::mcp|McpTools' "$src/toolbox.rs"; then
  echo "layers: the toolbox names MCP; the server reads the toolbox (McpTools::from), not the other way" >&2
  wrong=1
fi
# The environment has one reader (`env::EnvOf`) beside its one writer (`env::WithEnv`): no
# other module looks it up in the extensions by its type.
if grep -rnE 'get::<[^>]*ExecutionEnv>' "$src" | grep -v "^$src/env/mod.rs:" | grep -vE ':\s*//' >&2; then
  echo "layers: the lines above look the environment up by its type; use env::EnvOf" >&2
  wrong=1
fi
# The session has one reader (`session::SessionOf`) beside its one writer
# (`session::WithSession`): no other module looks it up, or its parts, by type.
if grep -rnE 'get::<[^>]*(Session|ClientRoots|PolicyHook)>' "$src" | grep -v "^$src/session/carry.rs:" | grep -vE ':\s*//' >&2; then
  echo "layers: the lines above look the session or its parts up by type; use session::SessionOf" >&2
  wrong=1
fi
exit $wrong

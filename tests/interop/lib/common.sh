# Shared by run.sh and bench_merge.sh (sourced, not executed).
# shellcheck shell=bash

INTEROP_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() {
  printf '%s: error: %s\n' "${PROG:-interop}" "$*" >&2
  exit 2
}

note() {
  printf '%s: %s\n' "${PROG:-interop}" "$*" >&2
}

require_node() {
  command -v node >/dev/null 2>&1 || die "node not found; install Node.js 18+ (e.g. apt-get install nodejs npm) and retry"
  command -v npm >/dev/null 2>&1 || die "npm not found; install npm and retry"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 18 ] || die "node $(node --version) is too old; Node.js 18+ is required"
}

# npm ci, skipped when node_modules already matches package-lock.json (idempotent and quiet).
ensure_node_modules() {
  require_node
  local stamp="$INTEROP_DIR/node_modules/.scenecrdt-interop-lock"
  local want
  want="$(sha256sum "$INTEROP_DIR/package-lock.json" | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$INTEROP_DIR/node_modules/@dcl/ecs" ]; then
    return 0
  fi
  note "installing @dcl/ecs and its dependencies (npm ci in $INTEROP_DIR)"
  if ! (cd "$INTEROP_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null); then
    die "npm ci failed in $INTEROP_DIR: check registry access (npm ping) and that package-lock.json is committed, then retry"
  fi
  printf '%s\n' "$want" >"$stamp"
}

# Builds ecs-transport/ (the drop-in @dcl/ecs transport): npm ci there when its node_modules
# does not match its package-lock.json, then tsc (a few seconds).
ensure_ecs_transport() {
  require_node
  local dir
  dir="$(cd "$INTEROP_DIR/../.." && pwd)/ecs-transport"
  [ -f "$dir/package-lock.json" ] || die "$dir/package-lock.json is missing: check out the whole repository"
  local stamp="$dir/node_modules/.scenecrdt-lock"
  local want
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }; then
    note "installing TypeScript and @dcl/ecs types (npm ci in $dir)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) ||
      die "npm ci failed in $dir: check registry access (npm ping), then retry"
    printf '%s\n' "$want" >"$stamp"
  fi
  (cd "$dir" && npm run --silent build) || die "building $dir failed (npm run build): see the TypeScript errors above"
}

# Resolves a binary path and checks it exists and is executable.
resolve_binary() {
  local bin="$1"
  [ -n "$bin" ] || die "missing the path to the scenecrdt binary (see --help)"
  [ -e "$bin" ] || die "$bin does not exist: build it first (e.g. cmake --workflow --preset ci, or cmake --preset release && cmake --build --preset release)"
  [ -x "$bin" ] || die "$bin is not executable"
  (cd "$(dirname "$bin")" && printf '%s/%s\n' "$(pwd)" "$(basename "$bin")")
}

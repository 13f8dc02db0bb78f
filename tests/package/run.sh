#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/package/run.sh BUILD_DIR: the installable package end to end (docs/PACKAGING.md).
# Installs BUILD_DIR (a configured and built tree with the tools) to a temporary prefix and
# checks: the installed files (headers of every library folder, only the internal headers
# public ones include, each header compiling alone, scenecrdt.h as strict C11 and C++, a
# library exporting only sc_* symbols; bin/scenecrdt with the project's version, the systemd
# units and scenecrdt.pc); a C consumer and a C++ consumer built with plain cmake
# against the prefix give, for random streams, bit for bit the world matrices, effective
# parents, flags and state hash of `scenecrdt replay --world`; the C consumer with
# COMPONENTS c needs no GLM; the C consumer again built with `cc $(pkg-config --cflags --libs
# scenecrdt)`; the installed `scenecrdt serve` finds the viewer in PREFIX/share/scenecrdt/web;
# C++ (scenecrdt::client) and C (sc_client_*) client consumers see each other's writes
# through it; Python ctypes calls the installed library
# (the client too); and scenecrdt as a
# subproject configures and builds without SQLite, Boost, flatbuffers, nlohmann-json or
# GoogleTest. Exits non-zero on the first failure. Environment: KEEP=1 keeps the work folder.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: tests/package/run.sh BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cli="$build/tools/scenecrdt"
[ -x "$cli" ] || { echo "run.sh: $cli not found: build the tools first" >&2; exit 2; }
[ -f "$build/CMakeCache.txt" ] || { echo "run.sh: $build is not a build tree" >&2; exit 2; }

work=$(mktemp -d)
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "run.sh: work folder $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
prefix="$work/prefix"
step() { printf -- '-- %s\n' "$1"; }
fail() { echo "run.sh: FAILED: $1" >&2; exit 1; }
quiet() { # runs a command, printing its output only when it fails
  local log="$work/log.txt"
  if ! "$@" >"$log" 2>&1; then cat "$log" >&2; fail "$*"; fi
}

# A sanitized build installs sanitized libraries: Python must preload the runtime, and
# leaks of the interpreter itself are not ours.
sanitize=$(sed -n 's/^SCENECRDT_SANITIZE:STRING=//p' "$build/CMakeCache.txt")
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
preload=""
if [[ "$sanitize" == *address* ]]; then
  preload=$("$compiler" -print-file-name=libasan.so)
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi

step "install $build to a temporary prefix"
quiet cmake --install "$build" --prefix "$prefix"
# GNUInstallDirs: lib, lib64, or lib/<multiarch> for a tree configured with prefix /usr.
lib="$prefix/$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")"
for f in "$lib/libscenecrdt.so" "$lib/libscenecrdt.so.1" "$lib/cmake/scenecrdt/scenecrdtConfig.cmake" \
         "$lib/cmake/scenecrdt/scenecrdtConfigVersion.cmake" "$prefix/include/scenecrdt/scenecrdt.h"; do
  [ -e "$f" ] || fail "not installed: ${f#$prefix/}"
done
ls "$lib"/libscenecrdt_protocol.* "$lib"/libscenecrdt_crdt.* "$lib"/libscenecrdt_transform.* \
  "$lib"/libscenecrdt_runtime.* >/dev/null ||
  fail "the C++ libraries are not installed"
[ "$(readlink "$lib/libscenecrdt.so")" = libscenecrdt.so.1 ] || fail "libscenecrdt.so -> .so.1"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ "$("$prefix/bin/scenecrdt" --version)" = "scenecrdt $version" ] ||
  fail "bin/scenecrdt is not installed or does not say version $version"
for f in lib/systemd/system/scenecrdt.service lib/systemd/system/scenecrdt@.service \
         lib/sysusers.d/scenecrdt.conf "${lib#$prefix/}/pkgconfig/scenecrdt.pc"; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done

step "installed headers: every public one, only the private ones they include"
for folder in protocol runtime; do
  for h in "$src/$folder"/*.h; do
    [ -f "$prefix/include/scenecrdt/$folder/$(basename "$h")" ] ||
      fail "$folder/$(basename "$h") is not installed"
  done
done
for h in backoff.h client.h client_options.h url.h; do
  [ -f "$prefix/include/scenecrdt/client/$h" ] || fail "client/$h is not installed"
done
[ ! -e "$prefix/include/scenecrdt/client/internal" ] || fail "client/internal/ was installed"
[ ! -e "$prefix/include/scenecrdt/protocol/session" ] || fail "protocol/session/ was installed"
[ ! -e "$prefix/include/scenecrdt/net" ] || fail "net/ was installed"
for h in $(cd "$prefix/include" && find scenecrdt -name '*.h' | sort); do
  # Every include of ours resolves inside the prefix...
  for inc in $(sed -n 's/^#include "\(scenecrdt\/[^"]*\)".*/\1/p' "$prefix/include/$h"); do
    [ -f "$prefix/include/$inc" ] || fail "$h includes $inc, which is not installed"
  done
  # ...and a private header (any below a library folder: runtime/internal/, runtime/crdt/,
  # ...) is there only because an installed header includes it.
  if [[ "$h" == scenecrdt/*/*/* ]]; then
    grep -rqs "^#include \"$h\"" "$prefix/include" --include='*.h' ||
      fail "$h is installed but no installed header includes it"
  fi
done
for h in $(cd "$prefix/include" && find scenecrdt -name '*.h' ! -name scenecrdt.h | sort); do
  echo "#include <$h>" | quiet g++ -std=c++20 -fsyntax-only -Wall -Wextra -Werror \
    -I "$prefix/include" -x c++ -
done
echo '#include <scenecrdt/scenecrdt.h>' | quiet gcc -std=c11 -fsyntax-only -Wall -Wextra \
  -Wpedantic -Werror -I "$prefix/include" -x c -
echo '#include <scenecrdt/scenecrdt.h>' | quiet g++ -std=c++20 -fsyntax-only -Wall -Wextra \
  -Wpedantic -Werror -Wold-style-cast -I "$prefix/include" -x c++ -
quiet cmake -DLIBRARY="$lib/libscenecrdt.so" -DHEADER="$prefix/include/scenecrdt/scenecrdt.h" \
  -DSONAME=libscenecrdt.so.1 -P "$src/tests/capi/check_exports.cmake"

step "streams and what replay --world says of them"
streams=()
for seed in 1 2 3 4 5 6; do
  python3 "$here/gen_ops.py" "$seed" >"$work/ops$seed.json"
  quiet "$cli" encode "$work/ops$seed.json" -o "$work/ops$seed.dcl"
  streams+=("$work/ops$seed.dcl")
done
for seed in 1 2; do
  quiet "$cli" gen --shape random --entities 300 --seed "$seed" -o "$work/gen$seed.dcl"
  streams+=("$work/gen$seed.dcl")
done
quiet "$cli" encode "$src/tests/data/conflicts.ops.json" -o "$work/conflicts.dcl"
streams+=("$work/conflicts.dcl" "$src/examples/sample_scene.dcl")
for s in "${streams[@]}"; do
  name=$(basename "$s" .dcl)
  "$cli" replay "$s" --world >"$work/$name.world.json" || fail "replay $s"
  python3 "$here/world_text.py" "$work/$name.world.json" >"$work/$name.expected"
done
parked=$(cat "$work"/*.world.json | grep -o '"parked":true' | wc -l)
placeholders=$(cat "$work"/*.world.json | grep -o '"placeholder":true' | wc -l)
[ "$parked" -gt 0 ] && [ "$placeholders" -gt 0 ] ||
  fail "the streams have no parked loop or no placeholder ($parked, $placeholders)"

export CMAKE_PREFIX_PATH="$prefix"
step "C consumer (find_package, scenecrdt::c, C11)"
quiet cmake -S "$here/consumer_c" -B "$work/consumer_c"
quiet cmake --build "$work/consumer_c"
for s in "${streams[@]}"; do
  "$work/consumer_c/consumer_c" "$s" "$work/$(basename "$s" .dcl).expected" ||
    fail "consumer_c on $s"
done

# Built with SCENECRDT_SHARED, libscenecrdt.so links the shared C++ libraries, so the `c`
# component loads them (and GLM) too (docs/PACKAGING.md).
if [ "$(sed -n 's/^SCENECRDT_SHARED:BOOL=//p' "$build/CMakeCache.txt")" != ON ]; then
  step "C consumer with COMPONENTS c and GLM unavailable"
  quiet cmake -S "$here/consumer_c" -B "$work/consumer_c_only" -DCONSUMER_C_ONLY=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_glm=ON
  quiet cmake --build "$work/consumer_c_only"
  "$work/consumer_c_only/consumer_c" "$work/ops1.dcl" "$work/ops1.expected" ||
    fail "consumer_c (COMPONENTS c)"
fi

step "C consumer built with pkg-config (cc \$(pkg-config --cflags --libs scenecrdt))"
export PKG_CONFIG_PATH="$lib/pkgconfig"
[ "$(pkg-config --modversion scenecrdt)" = "$version" ] || fail "scenecrdt.pc: not version $version"
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into words
quiet cc -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/consumer_c/main.c" \
  $(pkg-config --cflags --libs scenecrdt) -Wl,-rpath,"$lib" -o "$work/consumer_pc"
"$work/consumer_pc" "$work/ops3.dcl" "$work/ops3.expected" || fail "consumer_pc (pkg-config)"
unset PKG_CONFIG_PATH

step "C++ consumers (find_package, scenecrdt::runtime; scenecrdt::crdt alone)"
quiet cmake -S "$here/consumer_cxx" -B "$work/consumer_cxx"
quiet cmake --build "$work/consumer_cxx"
for s in "${streams[@]}"; do
  "$work/consumer_cxx/consumer_cxx" "$s" "$work/$(basename "$s" .dcl).expected" ||
    fail "consumer_cxx on $s"
  "$work/consumer_cxx/consumer_crdt" "$s" "$work/$(basename "$s" .dcl).expected" ||
    fail "consumer_crdt on $s"
done

step "the installed scenecrdt serve, its viewer assets found under its prefix"
# A tree built without scripts/build_web.sh installs no viewer: a stand-in page then.
web="$prefix/share/scenecrdt/web"
if [ ! -f "$web/view.html" ]; then
  mkdir -p "$web" && echo "<!-- stand-in viewer page -->" >"$web/view.html"
fi
"$prefix/bin/scenecrdt" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$work/serve" \
  --no-fsync 2>"$work/serve.log" &
server_pid=$!
cleanup_server() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
trap 'cleanup_server; cleanup' EXIT
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's|^scenecrdt serve: listening tcp://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
    "$work/serve.log" | head -1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log" >&2; fail "scenecrdt serve did not start"; }
url="tcp://127.0.0.1:$port"
http=""
for _ in $(seq 1 100); do
  http=$(sed -n 's|^scenecrdt serve: viewer http://127\.0\.0\.1:\([0-9]*\)/ (assets \(.*\))$|\1 \2|p' \
    "$work/serve.log" | head -1)
  [ -n "$http" ] && break
  sleep 0.1
done
[ "${http#* }" = "$web" ] || { cat "$work/serve.log" >&2; fail "serve's default web root is not $web"; }
curl -sf "http://127.0.0.1:${http%% *}/web/view.html" | cmp -s - "$web/view.html" ||
  fail "GET /web/view.html is not $web/view.html"

step "client consumers (scenecrdt::client in C++, sc_client_* in C) against the server"
quiet cmake -S "$here/consumer_client" -B "$work/consumer_client"
quiet cmake --build "$work/consumer_client"
"$work/consumer_client/client_cxx" "$url" pkg 700 2.5 || fail "client_cxx"
"$work/consumer_client/client_c" "$url" pkg 700 2.5 || fail "client_c (a write by client_cxx)"

step "Python ctypes"
for s in "$work/ops2.dcl" "$work/gen1.dcl"; do
  LD_PRELOAD="$preload" python3 "$here/ctypes_check.py" "$lib/libscenecrdt.so" "$s" \
    "$work/$(basename "$s" .dcl).world.json" "$url" || fail "ctypes_check.py on $s"
done
cleanup_server

step "scenecrdt as a subproject: libraries only, no server dependencies"
unset CMAKE_PREFIX_PATH
quiet cmake -S "$here/consumer_subdir" -B "$work/consumer_subdir" -DSCENECRDT_SOURCE_DIR="$src" \
  -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_FlatBuffers=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
quiet cmake --build "$work/consumer_subdir" --target consumer_subdir -j 2
"$work/consumer_subdir/consumer_subdir" || fail "consumer_subdir"

echo "run.sh: package checks passed (${#streams[@]} streams)"

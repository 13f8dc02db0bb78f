#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian packages (docs/PACKAGING.md "Debian packages"): a release build installed
# under /usr, split by CPack into scenecrdt (server and command line, viewer, systemd units),
# libscenecrdt1 (the C ABI library) and libscenecrdt-dev (headers, static C++ libraries, CMake
# package, pkg-config), with Depends from dpkg-shlibdeps. The viewer's assets come from
# build/web (built first with scripts/build_web.sh when missing), or from --web DIR (a copy
# that nothing rewrites while this runs: scripts/test.sh builds the packages in the background).
# Usage: bash scripts/package.sh [--build-dir DIR] [--jobs N] [--web DIR]
#   (default build/package; the .deb files land in DIR/packages)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build/package
jobs=$(nproc)
web=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --build-dir) build=${2:?--build-dir needs a folder}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --web) web=$(cd "${2:?--web needs a folder}" && pwd); shift 2 ;;
    *) echo "scripts/package.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in cmake cpack dpkg-deb dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "scripts/package.sh: $tool is missing: run bash scripts/deps.sh" >&2; exit 1; }
done

if [ -n "$web" ]; then
  [ -f "$web/view.html" ] && [ -f "$web/scenecrdt.wasm" ] ||
    { echo "scripts/package.sh: $web holds no viewer (view.html, scenecrdt.wasm)" >&2; exit 2; }
fi
[ -n "$web" ] || web=$root/build/web
if [ ! -f "$web/view.html" ] || [ ! -f "$web/scenecrdt.wasm" ]; then
  echo "scripts/package.sh: no viewer in build/web: bash scripts/build_web.sh"
  bash scripts/build_web.sh --quiet
fi

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# The release preset (no tests), installed under /usr, without the benchmarks; the viewer
# is required (SCENECRDT_REQUIRE_WEB) so that no package ships without it.
cmake --preset release -B "$build" -DCMAKE_INSTALL_PREFIX=/usr \
  -DSCENECRDT_BUILD_BENCHMARKS=OFF -DSCENECRDT_BUILD_PYTHON=OFF -DSCENECRDT_WEB_DIR="$web" -DSCENECRDT_REQUIRE_WEB=ON \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs"
rm -rf "$build/packages"
(cd "$build" && cpack --config CPackConfig.cmake >/dev/null)
echo "scripts/package.sh: packages in $build/packages:"
for deb in "$build"/packages/*.deb; do
  printf '  %-44s %8s bytes  Depends: %s\n' "$(basename "$deb")" "$(stat -c %s "$deb")" \
    "$(dpkg-deb -f "$deb" Depends)"
done

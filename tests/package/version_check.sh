#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/package/version_check.sh BUILD_DIR [DEB...]: one version everywhere (docs/PACKAGING.md
# "Version"). project(VERSION) in CMakeLists.txt is the source; `scenecrdt --version`, the
# CMake package (scenecrdtConfigVersion.cmake), scenecrdt.pc, the Debian packages' version
# (CPackConfig.cmake and each DEB given), the npm packages (client-web, ecs-transport: package.json
# and package-lock.json) and the newest release of CHANGELOG.md must all say it.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: tests/package/version_check.sh BUILD_DIR [DEB...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
status=0
version=$(sed -n 's/^project(scenecrdt VERSION \([0-9][0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  { echo "version_check: no project(scenecrdt VERSION x.y.z ...) in CMakeLists.txt" >&2; exit 1; }
check() { # check WHAT FOUND
  if [ "$2" = "$version" ]; then
    printf '  %-52s %s\n' "$1" "$2"
  else
    printf '  %-52s %s  MISMATCH (CMakeLists.txt says %s)\n' "$1" "${2:-<none>}" "$version" >&2
    status=1
  fi
}
echo "version_check: project(VERSION) $version"
check "scenecrdt --version" "$("$build/tools/scenecrdt" --version | sed -n 's/^scenecrdt //p')"
check "scenecrdtConfigVersion.cmake" \
  "$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/scenecrdtConfigVersion.cmake")"
check "scenecrdt.pc" "$(sed -n 's/^Version: //p' "$build/scenecrdt.pc")"
check "CPackConfig.cmake (the .deb version)" \
  "$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")"
for pkg in client-web ecs-transport; do
  for f in package.json package-lock.json; do
    check "$pkg/$f" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
      "$src/$pkg/$f")"
  done
done
# The first "## [x.y.z]" heading after "## [Unreleased]" (Keep a Changelog).
check "CHANGELOG.md newest release" \
  "$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' "$src/CHANGELOG.md" | head -1)"
for deb in "$@"; do
  check "$(basename "$deb") Version (without -release)" \
    "$(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//')"
done
[ "$status" = 0 ] && echo "version_check: all agree on $version"
exit "$status"

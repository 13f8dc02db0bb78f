#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages scenecrdt needs. Idempotent and quiet when all are present.
set -euo pipefail

# What the C++ build and its GoogleTest suites need (`--build` installs only these, so that
# scripts/test.sh can start compiling while the rest installs in the background).
BUILD_PACKAGES=(
  build-essential cmake ninja-build clang-format
  libboost-dev libglm-dev libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev libsqlite3-dev
  nlohmann-json3-dev
  nodejs
  pkg-config redis-server libhiredis-dev
  libssl-dev openssl
  libzstd-dev
  prometheus-cpp-dev
  libtomlplusplus-dev libcli11-dev
  pybind11-dev python3-dev python3-pytest python3-hypothesis python3-numpy
  dpkg-dev file systemd curl
)
# The fuzzers (clang), the browser side (emscripten, chromium) and the C# binding (mono).
LATER_PACKAGES=(
  clang libclang-rt-14-dev
  emscripten chromium
  mono-mcs mono-runtime
)
case "${1:-}" in
  --build) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  "") PACKAGES=("${BUILD_PACKAGES[@]}" "${LATER_PACKAGES[@]}") ;;
  -h | --help)
    echo "Usage: bash scripts/deps.sh [--build]   (--build: only what the C++ build and ctest need)"
    exit 0 ;;
  *) echo "scripts/deps.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# npm ships inside NodeSource's nodejs; Debian's own nodejs needs the npm package.
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "scenecrdt: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "scenecrdt: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; then
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

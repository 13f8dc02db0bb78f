#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fills one folder with what scripts/perf_suite.sh needs on a machine without the build or
# Debian's packages (docs/PERFORMANCE.md): the release `scenecrdt` and `propagation_bench`,
# `redis-server` (from PATH, for the cluster rows), the shared libraries `ldd` names for them
# in DIR/lib (glibc's own libraries excepted: the target needs glibc >= this machine's), a
# self-signed TLS certificate for 127.0.0.1 in DIR/tls (when openssl is here) and a copy of
# perf_suite.sh. Then, on the target: bash DIR/perf_suite.sh --bin-dir DIR
# usage: scripts/perf_bundle.sh DIR [BUILD_DIR (default build/release)]
set -euo pipefail
if [[ $# -lt 1 || $1 == --help || $1 == -h ]]; then
  sed -n 3,9p "$0" | sed 's/^# \{0,1\}//'
  [[ $# -lt 1 ]] && exit 2 || exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
build=${2:-$root/build/release}
sc=$build/tools/scenecrdt
pb=$build/tools/bench/propagation_bench
[[ -x $sc ]] || {
  echo "perf_bundle: no $sc; build it: cmake --preset release && cmake --build --preset" \
    "release --target scenecrdt propagation_bench" >&2
  exit 2
}
mkdir -p "$out/lib" "$out/tls"
bins=("$sc")
[[ -x $pb ]] && bins+=("$pb") || echo "perf_bundle: no $pb: the propagation rows will be skipped" >&2
redis=$(command -v redis-server || true)
[[ -n $redis ]] && bins+=("$redis") || echo "perf_bundle: no redis-server: the cluster row will be skipped" >&2
for b in "${bins[@]}"; do
  cp -L "$b" "$out/"
  # "libx.so.1 => /path (addr)": copy /path, except glibc's (they must match the target's loader).
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    case $(basename "$lib") in
      libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | \
        ld-linux*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
done
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
    -keyout "$out/tls/key.pem" -out "$out/tls/cert.pem" -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
else
  echo "perf_bundle: no openssl: the TLS row will be skipped" >&2
fi
cp "$root/scripts/perf_suite.sh" "$out/"
ldd --version | head -1 | sed 's/^/built against: /' >"$out/GLIBC"
echo "perf_bundle: $out ($(du -sh "$out" | cut -f1)): $(ls "$out" | tr '\n' ' ')"
echo "perf_bundle: on the target: bash $out/perf_suite.sh --bin-dir $out"

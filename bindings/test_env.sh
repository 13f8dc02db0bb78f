# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # `build` comes from, `preload` goes to, the sourcing script
# Sourced by bindings/csharp/run_tests.sh and bindings/python/run_tests.sh (needs `build` set to
# the build folder): the elapsed-time stamp, a temporary work folder removed at exit together
# with the scene server a script started (`server_pid`), `fail`, and `preload`: the ASan and
# libstdc++ runtimes a sanitized build's library needs loaded first into mono or python.
# Extra ASAN_OPTIONS for the host runtime may be given in `asan_extra` (e.g. mono's own SEGV
# handler); the interpreter's allocations are not ours, so leaks are never checked.
start_ms=$(( $(date +%s%N) / 1000000 ))
elapsed() { local ms=$(( $(date +%s%N) / 1000000 - start_ms )); printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100)); }
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "run_tests.sh: FAILED: $1" >&2; exit 1; }

preload=""
if grep -q '^SCENECRDT_SANITIZE:STRING=.*address' "$build/CMakeCache.txt" 2>/dev/null; then
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  # libstdc++ too: ASan's __cxa_throw interceptor must find it at start-up.
  preload="$("$compiler" -print-file-name=libasan.so) $("$compiler" -print-file-name=libstdc++.so)"
  export ASAN_OPTIONS="detect_leaks=0${asan_extra:+:$asan_extra}${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi

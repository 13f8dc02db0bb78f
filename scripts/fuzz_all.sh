#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds every libFuzzer target that has a seed folder in tools/fuzz/corpus/ (clang, preset
# "fuzz") and runs each for a bounded time, FUZZ_JOBS targets at once (default: the number of
# cores). A crash stops the script with exit 1 and names the reproducer file.
# Environment: FUZZ_SECONDS (default 20) per target, FUZZ_JOBS (default nproc).
# Usage: bash scripts/fuzz_all.sh [TARGET...]   (default: every folder in tools/fuzz/corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--help" ]; then
  sed -n '3,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
seconds=${FUZZ_SECONDS:-20}
jobs=${FUZZ_JOBS:-$(nproc)}
if [ $# -gt 0 ]; then targets="$*"; else targets=$(ls tools/fuzz/corpus); fi

cmake --preset fuzz >/dev/null
# shellcheck disable=SC2086
cmake --build --preset fuzz --target $targets

results=$(mktemp -d)
run_one() {
  local target=$1 work status=0
  work=$(mktemp -d)
  mkdir "$work/corpus"
  "build/fuzz/tools/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=4096 -artifact_prefix="$work/" "$work/corpus" "tools/fuzz/corpus/$target" \
    >"$work/log" 2>&1 || status=$?
  {
    echo "-- $target"
    grep -E "^(stat::number_of_executed_units|Done)" "$work/log" || true
  } >"$results/$target.summary"
  if [ "$status" -ne 0 ]; then
    {
      tail -n 60 "$work/log"
      echo "fuzz target $target failed (exit $status); the input is in $work" \
        "(reproduce: build/fuzz/tools/fuzz/$target FILE)"
    } >"$results/$target.failed"
  else
    rm -rf "$work"
  fi
}

running=0
for target in $targets; do
  run_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

cat "$results"/*.summary
if ls "$results"/*.failed >/dev/null 2>&1; then
  cat "$results"/*.failed >&2
  rm -rf "$results"
  exit 1
fi
rm -rf "$results"
echo "fuzz: $(echo "$targets" | wc -w) targets ran ${seconds}s each without a failure"

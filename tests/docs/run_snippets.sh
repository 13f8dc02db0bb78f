#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every C, C++, JavaScript, TypeScript and shell snippet of the repository's markdown
# (README.md, docs/, the folder READMEs) against BUILD and one live `scenecrdt serve`, lists the
# ones marked skip with their reasons, and fails with file:line on any that fails (docs/SNIPPETS.md).
# Usage: bash tests/docs/run_snippets.sh BUILD [--strict] [--only TEXT] [--keep]
#   --strict: a missing prerequisite (client-web/dist, node_modules) fails instead of being listed.
set -euo pipefail
case "${1:-}" in
  "" | -h | --help) sed -n '3,7p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ]; exit ;;
esac
build=$1
shift
exec python3 "$(dirname "$0")/snippets.py" --build "$build" "$@"

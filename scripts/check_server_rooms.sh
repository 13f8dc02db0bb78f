#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Owns the include direction between the server's rooms (server/README.md): every
# `#include "scenecrdt/server/<room>/..."` in a file of server/ must name its own room or a room
# below it in ORDER. Run by ctest (ServerRoomsIncludeDirection); `--self-test` checks that an
# upward include is caught.
# Usage: check_server_rooms.sh [SERVER_DIR] | --self-test
set -euo pipefail

# The allowed order, top to bottom: each room may include its own files and those of the levels
# below it, never one above or one beside it. Rooms in one level are separated by '|'.
# "server" is server.h and server.cc; "context" is context.h (ServerContext: what scenes,
# sessions, transports and web routes share, storage's CommitLog and Persistence among it, so
# it sits above cluster/ and storage/); "config" is config.h; both are directly in server/;
# every other room is a subfolder.
ORDER=(server transport "sessions|web" scene context cluster storage config auth observability)

# The level of a room, or -1 when the order does not name it.
level_of() {
  local i
  for i in "${!ORDER[@]}"; do
    if [[ "|${ORDER[$i]}|" == *"|$1|"* ]]; then
      echo "$i"
      return
    fi
  done
  echo -1
}

# The room of a path relative to server/ ("scene/scene.h" -> scene, "context.h" -> context).
room_of() {
  case "$1" in
    */*) echo "${1%%/*}" ;;
    server.h | server.cc) echo server ;;
    context.h) echo context ;;
    *) echo config ;;
  esac
}

check() {
  local dir=$1 bad=0 file rel room level line target troom tlevel
  while IFS= read -r file; do
    rel=${file#"$dir"/}
    room=$(room_of "$rel")
    level=$(level_of "$room")
    if [[ $level -lt 0 ]]; then
      echo "server/$rel: room '$room' is not in ORDER (scripts/check_server_rooms.sh)" >&2
      bad=1
      continue
    fi
    while IFS= read -r line; do
      target=${line#*\"scenecrdt/server/}
      target=${target%%\"*}
      troom=$(room_of "$target")
      [[ $troom == "$room" ]] && continue
      tlevel=$(level_of "$troom")
      if [[ $tlevel -le $level ]]; then
        echo "server/$rel: includes server/$target: room '$room' may not include '$troom'" >&2
        bad=1
      fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"scenecrdt/server/' "$file" || true)
  done < <(find "$dir" -type f \( -name '*.h' -o -name '*.cc' \) | sort)
  if [[ $bad -ne 0 ]]; then
    echo "check_server_rooms: upward includes found; the order, top to bottom: ${ORDER[*]}" \
         "(server/README.md has the rooms)" >&2
    return 1
  fi
  echo "check_server_rooms: every include of server/ goes down (${ORDER[*]})"
}

# Self-test: FILE (relative to a tree) including HEADER must be refused; `what` names the case.
expect_caught() {  # TREE FILE HEADER WHAT
  mkdir -p "$(dirname "$1/$2")"
  printf '#include "scenecrdt/server/%s"\n' "$3" > "$1/$2"
  if check "$1" > /dev/null 2>&1; then
    echo "self-test: $4 was not caught" >&2
    return 1
  fi
  rm "$1/$2"
}

self_test() {
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/scene" "$tmp/sessions"
  printf '#include "scenecrdt/server/context.h"\n' > "$tmp/scene/scene.h"
  printf '#include "scenecrdt/server/scene/scene.h"\n' > "$tmp/sessions/session.h"
  check "$tmp" > /dev/null || { echo "self-test: a downward tree was refused" >&2; return 1; }
  expect_caught "$tmp" scene/scene.cc sessions/session.h "scene -> sessions" || return 1
  expect_caught "$tmp" storage/persistence.cc context.h "storage -> context" || return 1
  expect_caught "$tmp" web/routes.cc sessions/session.h \
    "an include between rooms of one level" || return 1
  echo "check_server_rooms: self-test passed"
}

if [[ ${1:-} == --self-test ]]; then
  self_test
else
  check "${1:-$(cd "$(dirname "$0")/.." && pwd)/server}"
fi

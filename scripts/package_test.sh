#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages end to end (docs/PACKAGING.md "Debian packages"): builds them with
# scripts/package.sh (or takes DIR's), then checks each one's files, that together they hold
# exactly what `cmake --install` installs, their Version and Depends (every shared library an
# ELF file needs comes from a package in Depends), the maintainer scripts, the systemd units
# (`systemd-analyze verify` clean, `security --offline=true` exposure below 2.0), the C ABI
# through pkg-config and find_package against the extracted -dev package, and runs the
# extracted binary (`dpkg -x` into a scratch root) with the shipped config file (--print-config;
# flags override its data and listeners) on a temporary data folder: serve starts
# and finds its viewer, /healthz answers, a `send` then `pull` round trip gives replay's state
# hash, SIGTERM stops it cleanly. Its own build folder, temporary folders and free ports: it
# can run beside the other suites.
# Usage: bash scripts/package_test.sh [--packages BUILD_DIR]   (BUILD_DIR: a package.sh
#   build folder with its packages/; default: run scripts/package.sh into build/package)
# Environment: KEEP=1 keeps the scratch folder.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=""
case "${1:-}" in
  -h | --help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --packages) build=$(cd "${2:?--packages needs the build folder}" && pwd) ;;
  "") ;;
  *) echo "scripts/package_test.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  if [ "${KEEP:-0}" = 1 ]; then echo "package_test: scratch folder $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
step() { printf -- '-- %s\n' "$1"; }
fail() { echo "package_test: FAILED: $1" >&2; exit 1; }

if [ -z "$build" ]; then
  step "build the packages (scripts/package.sh)"
  bash scripts/package.sh --build-dir build/package
  build=$src/build/package
fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=usr/lib/$multiarch
deb() { echo "$build/packages/${1}_${version}-1_${arch}.deb"; }
server=$(deb scenecrdt) lib=$(deb libscenecrdt1) dev=$(deb libscenecrdt-dev)
for d in "$server" "$lib" "$dev"; do [ -f "$d" ] || fail "no $(basename "$d") in $build/packages"; done
[ "$(find "$build/packages" -maxdepth 1 -name '*.deb' | wc -l)" = 3 ] ||
  fail "$build/packages holds other packages than these three: $(ls "$build/packages")"

step "versions agree (tests/package/version_check.sh)"
bash tests/package/version_check.sh "$build" "$server" "$lib" "$dev" >"$work/version.txt" ||
  { cat "$work/version.txt"; fail "versions differ"; }

step "the files of each package"
files() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./||; s|/$||' | grep -v '^$' | sort; }
files "$server" >"$work/server.txt"
files "$lib" >"$work/lib.txt"
files "$dev" >"$work/dev.txt"
has() { # has LIST PATH...: each PATH is in the list
  local list=$1; shift
  for p in "$@"; do grep -qxF "$p" "$work/$list.txt" || fail "$list package lacks $p"; done
}
has server usr/bin/scenecrdt usr/share/scenecrdt/web/view.html usr/share/scenecrdt/web/viewer.js \
  usr/share/scenecrdt/web/scenecrdt.js usr/share/scenecrdt/web/scenecrdt.wasm \
  usr/lib/systemd/system/scenecrdt.service "usr/lib/systemd/system/scenecrdt@.service" \
  usr/lib/sysusers.d/scenecrdt.conf usr/share/doc/scenecrdt/copyright
has lib "$libdir/libscenecrdt.so.1" usr/share/doc/libscenecrdt1/copyright
has dev usr/include/scenecrdt/scenecrdt.h usr/include/scenecrdt/runtime/runtime.h \
  usr/include/scenecrdt/client/client.h "$libdir/libscenecrdt.so" "$libdir/libscenecrdt_runtime.a" \
  "$libdir/libscenecrdt_protocol.a" "$libdir/libscenecrdt_client.a" \
  "$libdir/cmake/scenecrdt/scenecrdtConfig.cmake" "$libdir/cmake/scenecrdt/scenecrdtConfigVersion.cmake" \
  "$libdir/pkgconfig/scenecrdt.pc" usr/share/doc/libscenecrdt-dev/copyright
! grep -E '^usr/(include|lib/.*\.a$)|\.so$' "$work/server.txt" "$work/lib.txt" >"$work/bad.txt" ||
  fail "development files outside libscenecrdt-dev: $(cat "$work/bad.txt")"
! grep -E '^usr/(bin|lib/systemd|share/scenecrdt)' "$work/lib.txt" "$work/dev.txt" >"$work/bad.txt" ||
  fail "server files outside scenecrdt: $(cat "$work/bad.txt")"
# Under /etc: exactly the config file (and its folders), a conffile of scenecrdt.
! grep -E '^etc/' "$work/server.txt" "$work/lib.txt" "$work/dev.txt" |
  grep -vxE "$work/server.txt:etc(/scenecrdt(/scenecrdt\.toml)?)?" >"$work/bad.txt" ||
  fail "a file under /etc other than etc/scenecrdt/scenecrdt.toml: $(cat "$work/bad.txt")"
has server etc/scenecrdt/scenecrdt.toml
dpkg-deb --ctrl-tarfile "$server" | tar -xO ./conffiles 2>/dev/null | grep -qx /etc/scenecrdt/scenecrdt.toml ||
  fail "/etc/scenecrdt/scenecrdt.toml is not a conffile of scenecrdt"

step "the packages hold exactly what cmake --install installs, each file once"
DESTDIR="$work/all" cmake --install "$build" >/dev/null
(cd "$work/all" && find . ! -type d | sed 's|^\./||' | sort) >"$work/installed.txt"
for list in server lib dev; do
  dpkg-deb -c "$(eval echo "\$$list")" | grep -v '^d' | awk '{print $6}' | sed 's|^\./||'
done | sort >"$work/packaged.txt"
[ -z "$(uniq -d "$work/packaged.txt")" ] || fail "in two packages: $(uniq -d "$work/packaged.txt")"
diff "$work/installed.txt" "$work/packaged.txt" >"$work/diff.txt" ||
  fail "installed but not packaged (<) or packaged but not installed (>) (give each install() a COMPONENT: server, lib or dev; cmake/scenecrdt_cpack.cmake):
$(cat "$work/diff.txt")"

step "Depends: each needed shared library comes from a package listed"
for d in "$server" "$lib" "$dev"; do
  name=$(dpkg-deb -f "$d" Package)
  depends=$(dpkg-deb -f "$d" Depends)
  echo "   $name: $depends"
  rm -rf "$work/x" && dpkg -x "$d" "$work/x"
  while IFS= read -r f; do
    file -b "$f" | grep -q '^ELF' || continue
    for soname in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [ -e "$work/x/$libdir/$soname" ] && continue  # inside this package
      # The package installed here that ships .../<multiarch>/<soname> (the runtime package).
      owner=$( (dpkg -S "$soname" 2>/dev/null || true) | grep "/$multiarch/$soname\$" | head -1 |
        cut -d: -f1)
      [ -n "$owner" ] || fail "$name: ${f#"$work"/x/} needs $soname, which no installed package ships"
      [[ ", $depends," == *", $owner "* || ", $depends," == *", $owner,"* ]] ||
        fail "$name: ${f#"$work"/x/} needs $soname from $owner, which Depends does not name"
    done
  done < <(find "$work/x" -type f)
done
dev_depends=$(dpkg-deb -f "$dev" Depends)
[[ "$dev_depends" == *"libscenecrdt1 (= $version-1)"* ]] ||
  fail "libscenecrdt-dev does not depend on libscenecrdt1 (= $version-1): $dev_depends"
for p in libglm-dev libflatbuffers-dev; do
  [[ "$dev_depends" == *"$p"* ]] || fail "libscenecrdt-dev does not depend on $p"
done
dpkg-deb -f "$server" Depends | grep -q 'libsqlite3-0' || fail "scenecrdt does not depend on libsqlite3-0"

step "maintainer scripts"
dpkg-deb -e "$server" "$work/control-server"
for s in postinst prerm postrm; do
  [ -x "$work/control-server/$s" ] || fail "scenecrdt has no executable $s"
  sh -n "$work/control-server/$s" || fail "scenecrdt $s: syntax"
done
grep -q 'systemd-sysusers scenecrdt.conf' "$work/control-server/postinst" ||
  fail "postinst does not create the system user"
dpkg-deb -e "$lib" "$work/control-lib"
grep -q "^libscenecrdt 1 libscenecrdt1" "$work/control-lib/shlibs" || fail "libscenecrdt1: no shlibs entry"

root=$work/root
for d in "$server" "$lib" "$dev"; do dpkg -x "$d" "$root"; done
bin=$root/usr/bin/scenecrdt

step "systemd units: verify, security exposure below 2.0; the system user"
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing: bash scripts/deps.sh"
# What postinst runs (systemd-sysusers scenecrdt.conf), on the scratch root's own /etc.
mkdir -p "$root/etc" && touch "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow"
systemd-sysusers --root="$root" scenecrdt.conf >/dev/null 2>&1 ||
  fail "systemd-sysusers scenecrdt.conf failed on the scratch root"
grep -q '^scenecrdt:x:[0-9]*:[0-9]*:.*:/var/lib/scenecrdt:' "$root/etc/passwd" ||
  fail "systemd-sysusers did not create the system user scenecrdt: $(cat "$root/etc/passwd")"
units=$root/usr/lib/systemd/system
grep -qx "ExecStart=/usr/bin/scenecrdt serve --config /etc/scenecrdt/scenecrdt.toml" \
  "$units/scenecrdt.service" ||
  fail "scenecrdt.service does not start /usr/bin/scenecrdt serve --config /etc/scenecrdt/scenecrdt.toml"
grep -q "^ExecStart=/usr/bin/scenecrdt serve --config /etc/scenecrdt/scenecrdt.toml --data /var/lib/scenecrdt/%i " \
  "$units/scenecrdt@.service" || fail "scenecrdt@.service does not start serve --config on the shipped file"
mkdir -p "$work/units"
# verify checks that ExecStart's program exists: point it at the extracted one.
sed "s|/usr/bin/scenecrdt|$bin|" "$units/scenecrdt.service" >"$work/units/scenecrdt.service"
sed "s|/usr/bin/scenecrdt|$bin|" "$units/scenecrdt@.service" >"$work/units/scenecrdt@check.service"
(cd "$work/units" && systemd-analyze verify ./scenecrdt.service ./scenecrdt@check.service) \
  >"$work/verify.txt" 2>&1 || { cat "$work/verify.txt"; fail "systemd-analyze verify"; }
[ ! -s "$work/verify.txt" ] || { cat "$work/verify.txt"; fail "systemd-analyze verify warns"; }
for u in scenecrdt.service scenecrdt@check.service; do
  exposure=$(cd "$work/units" && systemd-analyze security --offline=true "./$u" 2>/dev/null |
    sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
  echo "   $u: exposure $exposure"
  awk -v e="$exposure" 'BEGIN { exit !(e != "" && e < 2.0) }' || fail "$u: exposure '$exposure' is not below 2.0"
done

step "the C ABI from the extracted packages: pkg-config and find_package"
export LD_LIBRARY_PATH=$root/$libdir
"$bin" gen --shape random --entities 200 --seed 3 -o "$work/scene.dcl"
"$bin" replay "$work/scene.dcl" --world >"$work/scene.world.json"
python3 tests/package/world_text.py "$work/scene.world.json" >"$work/scene.expected"
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into words
cc -std=c11 -Wall -Wextra -Werror tests/package/consumer_c/main.c \
  $(PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs scenecrdt) \
  -o "$work/consumer_pc" || fail "cc \$(pkg-config --cflags --libs scenecrdt)"
"$work/consumer_pc" "$work/scene.dcl" "$work/scene.expected" || fail "consumer_pc"
cmake -S tests/package/consumer_c -B "$work/consumer_c" -DCMAKE_PREFIX_PATH="$root/usr" \
  -DCONSUMER_C_ONLY=ON >"$work/cmake.txt" 2>&1 && cmake --build "$work/consumer_c" >>"$work/cmake.txt" 2>&1 ||
  { cat "$work/cmake.txt"; fail "find_package(scenecrdt COMPONENTS c) against the -dev package"; }
"$work/consumer_c/consumer_c" "$work/scene.dcl" "$work/scene.expected" || fail "consumer_c"

step "the extracted scenecrdt serve on a temporary data folder"
[ "$("$bin" --version)" = "scenecrdt $version" ] || fail "scenecrdt --version: $("$bin" --version)"
# The shipped config file, with flags for what must differ here (they override its keys).
conf=$root/etc/scenecrdt/scenecrdt.toml
"$bin" serve --config "$conf" --print-config >"$work/print.toml" ||
  fail "serve --config $conf --print-config"
grep -qx 'data = "/var/lib/scenecrdt"' "$work/print.toml" || fail "the shipped config does not say data = /var/lib/scenecrdt"
grep -qx "web-root = \"$root/usr/share/scenecrdt/web\"" "$work/print.toml" ||
  fail "--print-config: web-root is not the extracted viewer: $(grep web-root "$work/print.toml")"
"$bin" serve --config "$conf" --data "$work/data" --print-config | grep -qx "data = \"$work/data\"" ||
  fail "--data does not override the config file's data"
"$bin" serve --config "$conf" --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$work/data" 2>"$work/serve.log" &
server_pid=$!
tcp="" http=""
for _ in $(seq 1 300); do
  tcp=$(sed -n 's|^scenecrdt serve: listening tcp://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$work/serve.log")
  http=$(sed -n 's|^scenecrdt serve: viewer http://127\.0\.0\.1:\([0-9]*\)/ (assets \(.*\))$|\1 \2|p' \
    "$work/serve.log")
  [ -n "$tcp" ] && [ -n "$http" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$tcp" ] && [ -n "$http" ] || { cat "$work/serve.log" >&2; fail "serve did not start"; }
[ "${http#* }" = "$root/usr/share/scenecrdt/web" ] ||
  fail "serve looks for its viewer in ${http#* }, not $root/usr/share/scenecrdt/web"
http=${http%% *}
curl -sf --max-time 5 "http://127.0.0.1:$http/healthz" >/dev/null || fail "/healthz"
curl -sf --max-time 5 "http://127.0.0.1:$http/web/scenecrdt.wasm" |
  cmp -s - "$root/usr/share/scenecrdt/web/scenecrdt.wasm" || fail "GET /web/scenecrdt.wasm"
"$bin" send --server "tcp://127.0.0.1:$tcp" --scene pkg --timeout 20 "$work/scene.dcl" \
  >"$work/send.txt" 2>&1 || { cat "$work/send.txt"; fail "send"; }
"$bin" pull --server "tcp://127.0.0.1:$tcp" --scene pkg --timeout 20 >"$work/pull.json" ||
  fail "pull"
state_hash() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stateHash"])' "$1"; }
[ "$(state_hash "$work/pull.json")" = "$(state_hash "$work/scene.world.json")" ] ||
  fail "pull's stateHash differs from replay's"
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" = 0 ] && grep -q '^scenecrdt serve: stopped cleanly$' "$work/serve.log" ||
  { cat "$work/serve.log" >&2; fail "serve did not stop cleanly (exit $status)"; }

echo "package_test: passed; package sizes:"
for d in "$server" "$lib" "$dev"; do
  printf '  %-44s %9s bytes (installed %s KiB)\n' "$(basename "$d")" "$(stat -c %s "$d")" \
    "$(dpkg-deb -f "$d" Installed-Size)"
done

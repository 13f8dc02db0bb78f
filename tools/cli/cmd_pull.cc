// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt pull`: join a scene, apply its snapshot, print the state JSON of `replay`.
#include <algorithm>
#include <cstdio>

#include "scenecrdt/replay/state_json.h"
#include "scenecrdt/replay/world_json.h"
#include "tools/cli/client_common.h"
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp =
    R"(usage: scenecrdt pull --server URL --scene NAME [--token T] [--world]
                      [--interest X,Y,Z,R | --interest-follow E,R]

Joins a scene, applies the snapshot the server sends, prints the state as one JSON object
(the same document as 'scenecrdt replay', stateHash included) and exits. Pulling a scene and
replaying everything that was sent to it give the same stateHash.

options:
  --server URL     tcp://HOST:PORT, ws://HOST:PORT or ws://HOST:PORT/scene/NAME
                   (URL,URL,...: the nodes of one cluster, tried in turn: fail-over)
  --scene NAME     the scene (not needed when the URL names it)
  --token T        the token, when the server runs with --auth
  --ca FILE        CA certificates (PEM) for tls:// and wss:// (default: the
                   system trust store)
  --timeout SEC    give up after SEC (default 10)
  --world          also add the "world" array of 'replay --world' (effective parents,
                   loop parking, placeholders and column-major localToWorld matrices)
  --interest X,Y,Z,R
                   receive only the entities within R metres of (X,Y,Z), their
                   ancestors and the entities without a Transform (docs/INTEREST.md):
                   the partial replica is printed, stateHash is its hash
  --interest-follow E,R
                   the same around entity E's world position (none yet: empty view)

exit status: 0 ok; 1 refused or the connection failed; 2 bad usage.
)";
}  // namespace

int RunPull(Args args) {
  ArgScanner scan("pull", args);
  if (scan.Help()) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  ClientFlags flags;
  bool have_flags = ReadClientFlags(scan, "pull", flags);
  have_flags = ReadInterestFlags(scan, "pull", flags) && have_flags;
  const bool world = scan.Flag("--world");
  if (!scan.Finish() || !have_flags) return kExitBadInput;
  auto c = JoinScene("pull", flags, "scenecrdt-pull");
  if (!c) return kExitCheckFailed;
  // The entities the snapshot carried: every register's, tombstone's and append set's.
  const runtime::CrdtStore& store = c->store();
  std::vector<protocol::EntityId> entities;
  for (const runtime::RegisterView& r : store.SortedRegisters()) entities.push_back(r.entity);
  for (const auto& t : store.SortedTombstones()) {
    entities.push_back(protocol::MakeEntityId(t.number, t.version));
  }
  for (const auto& a : store.SortedAppendSets()) entities.push_back(a.entity);
  std::sort(entities.begin(), entities.end());
  entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
  std::string out;
  replay::AppendStateJsonBody(store, entities, out);
  if (world) {
    c->Update();
    out += ',';
    replay::AppendWorldJson(c->runtime().transforms(), out);
  }
  out += "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  c->Stop();
  return kExitOk;
}

}  // namespace scenecrdt::cli

// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt replay`: applies DCL streams to an empty CrdtStore (in order or in a seeded
// permutation) and prints the final state as one JSON object.
#include <algorithm>
#include <cstdio>

#include "runtime/crdt_store.h"
#include "tools/cli/commands.h"
#include "tools/cli/state_json.h"
#include "tools/cli/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp = R"(usage: scenecrdt replay FILE... [--shuffle SEED]

Applies the DCL CRDT streams (FILE... in order, '-' for stdin) to an empty store with the
@dcl/ecs 7.28 merge rules and prints the final state as one JSON object:
  {"transforms":[{"entity","number","version","timestamp","position","rotation","scale",
                  "parent","dataHex"}...],
   "deletedTransforms":[...], "components":[...], "deletedComponents":[...],
   "appendValues":[...], "entities":[{"entity","number","version","state"}...],
   "stateHash":"<sha-256 of the canonical state>"}
Lists are sorted by (component, entity); `entities` holds every entity id a message carried,
with the state @dcl/ecs's getEntityState would report. See docs/CLI.md and docs/CRDT.md.

options:
  --shuffle SEED  apply all messages in a seeded random permutation instead (the final state
                  must not change: that is the CRDT contract)

exit status: 0 ok; 2 malformed input (file, byte offset and reason on stderr) or bad usage.
)";
}  // namespace

int RunReplay(Args args) {
  ArgScanner scan("replay", args);
  if (scan.Help()) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  const auto shuffle = scan.U64("--shuffle");
  const auto files = scan.Positionals();
  if (!scan.Finish()) return kExitBadInput;
  if (files.empty()) {
    PrintMessage("replay", "needs at least one FILE; see 'scenecrdt replay --help'");
    return kExitBadInput;
  }
  LoadError load_error;
  auto loaded = LoadStreams(files, &load_error);
  if (!loaded.has_value()) {
    PrintLoadError("replay", load_error);
    return kExitBadInput;
  }
  std::vector<protocol::CrdtMessage> messages = std::move(loaded->messages);
  if (shuffle) {
    SplitMix64 rng(*shuffle);
    SeededShuffle(messages, rng);
  }
  runtime::CrdtStore store;
  std::vector<protocol::EntityId> entities;
  entities.reserve(messages.size());
  for (const protocol::CrdtMessage& m : messages) {
    (void)store.Merge(m);
    if (protocol::IsKnownType(m.type)) entities.push_back(m.entity);
  }
  std::sort(entities.begin(), entities.end());
  entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
  std::string out;
  AppendStateJsonBody(store, entities, out);
  out += "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace scenecrdt::cli

// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt replay`: applies DCL streams to an empty CrdtStore (in order or in a seeded
// permutation) and prints the final state as one JSON object.
#include <algorithm>
#include <cstdio>

#include "scenecrdt/runtime/runtime.h"
#include "tools/cli/commands.h"
#include "tools/cli/state_json.h"
#include "tools/cli/stream_files.h"
#include "tools/cli/world_json.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp =
    R"(usage: scenecrdt replay FILE... [--shuffle SEED] [--world] [--threads N]

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
  --world         also run the transform runtime and add
                  "world":[{"entity","parent","parked","placeholder","localToWorld":[16]}...]
                  for every entity with a Transform and every placeholder: `parent` is the
                  effective parent (0 = root; loop members are parked at root), the matrix is
                  column-major
  --threads N     propagation threads for --world (1 or 2; the result is bit-identical)

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
  const bool world = scan.Flag("--world");
  const uint64_t threads = scan.U64("--threads").value_or(1);
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
  if (threads < 1 || threads > 2) {
    PrintMessage("replay", "--threads takes 1 or 2");
    return kExitBadInput;
  }
  runtime::Runtime replica;
  std::vector<protocol::EntityId> entities;
  entities.reserve(messages.size());
  for (const protocol::CrdtMessage& m : messages) {
    (void)replica.ApplyMessage(m);
    if (protocol::IsKnownType(m.type)) entities.push_back(m.entity);
  }
  std::sort(entities.begin(), entities.end());
  entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
  std::string out;
  AppendStateJsonBody(replica.store(), entities, out);
  if (world) {
    replica.Update(runtime::UpdateOptions{static_cast<int>(threads)});
    out += ',';
    AppendWorldJson(replica.transforms(), out);
  }
  out += "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace scenecrdt::cli

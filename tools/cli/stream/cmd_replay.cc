// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt replay`: applies DCL streams to an empty CrdtStore (in order, streamed in
// bounded memory, or in a seeded permutation of the held input) and prints the final state as one
// JSON object.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "scenecrdt/replay/chunked_text.h"
#include "scenecrdt/replay/split_mix64.h"
#include "scenecrdt/replay/state_json.h"
#include "scenecrdt/replay/world_json.h"
#include "scenecrdt/runtime/runtime.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/stream/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Applies the DCL CRDT streams (FILE... in order, '-' for stdin) to an empty store with the
@dcl/ecs 7.28 merge rules and prints the final state as one JSON object:
  {"transforms":[{"entity","number","version","timestamp","position","rotation","scale",
                  "parent","dataHex"}...],
   "deletedTransforms":[...], "components":[...], "deletedComponents":[...],
   "appendValues":[...], "entities":[{"entity","number","version","state"}...],
   "stateHash":"<sha-256 of the canonical state>"}
Lists are sorted by (component, entity); `entities` holds every entity id a message carried,
with the state @dcl/ecs's getEntityState would report. See docs/CLI.md and docs/CRDT.md.

In order, the files are read window by window (8 MiB) and never held: memory is the merged
state plus the set of entity ids seen, whatever the recording's size.
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 2 malformed input (file, byte offset and reason on stderr), input over
--max-memory-mb with --shuffle, bad usage, or stdout cannot be written.
)";

// Every entity id the messages carried, in memory proportional to the distinct ids: the first
// version seen of each number in a flat table (one compare per message on the common path),
// other versions in a hash set.
class EntityIdSet {
 public:
  void Insert(protocol::EntityId e) {
    const uint32_t number = protocol::EntityNumber(e);
    const uint32_t tagged = protocol::EntityVersion(e) + 1;
    uint32_t& first = first_version_[number];
    if (first == tagged) return;
    if (first == 0) {
      first = tagged;
      return;
    }
    others_.insert(e);
  }
  std::vector<protocol::EntityId> Sorted() const {
    std::vector<protocol::EntityId> out;
    for (uint32_t number = 0; number < first_version_.size(); ++number) {
      if (first_version_[number] != 0) out.push_back(((first_version_[number] - 1) << 16) | number);
    }
    // One version per number (the common case) comes out sorted already.
    if (others_.empty() && std::is_sorted(out.begin(), out.end())) return out;
    out.insert(out.end(), others_.begin(), others_.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  std::vector<uint32_t> first_version_ = std::vector<uint32_t>(65536, 0);
  std::unordered_set<protocol::EntityId> others_;
};

// Bounds the Runtime's change feed (one entry per Transform change until Update()) while a
// long recording streams in: past this many entries the world is brought up to date.
constexpr std::size_t kMaxPendingChanges = std::size_t{1} << 20;

}  // namespace

int RunReplay(Args args) {
  CliApp app("replay", kAbout, kFooter);
  std::optional<uint64_t> shuffle, max_memory_mb, threads_given;
  bool world = false;
  std::vector<std::string> files;
  app.U64("--shuffle", "SEED",
          "apply all messages in a seeded random permutation instead (the final state\n"
          "must not change: that is the CRDT contract). This holds the whole input: the\n"
          "file bytes plus 48 bytes per message, bounded by --max-memory-mb",
          &shuffle);
  app.U64("--max-memory-mb", "M",
          "bound of the held input of --shuffle (default 2048); past it replay stops\n"
          "with exit status 2 and says so",
          &max_memory_mb);
  app.Flag(
      "--world",
      "also run the transform runtime and add\n"
      "\"world\":[{\"entity\",\"parent\",\"parked\",\"placeholder\",\"localToWorld\":[16]}...]\n"
      "for every entity with a Transform and every placeholder: `parent` is the\n"
      "effective parent (0 = root; loop members are parked at root), the matrix is\n"
      "column-major",
      &world);
  app.U64("--threads", "N", "propagation threads for --world (1 or 2; the result is bit-identical)",
          &threads_given);
  app.Positionals("FILE", "the DCL streams, applied in order ('-' for stdin)", &files);
  if (auto status = app.Parse(args)) return *status;
  const uint64_t threads = threads_given.value_or(1);
  if (files.empty()) {
    PrintMessage("replay", "needs at least one FILE; see 'scenecrdt replay --help'");
    return kExitBadInput;
  }
  if (threads < 1 || threads > 2) {
    PrintMessage("replay", "--threads takes 1 or 2");
    return kExitBadInput;
  }
  const auto max_bytes = MaxMemoryBytes("replay", max_memory_mb);
  if (!max_bytes) return kExitBadInput;
  // --world needs the Runtime (its change feed drives propagation); the state alone, the store.
  runtime::Runtime replica;
  runtime::CrdtStore plain_store;
  const runtime::UpdateOptions update{static_cast<int>(threads)};
  EntityIdSet entities;
  auto note = [&](const protocol::CrdtMessage& m, const runtime::MergeResult&) {
    if (protocol::IsKnownType(m.type)) entities.Insert(m.entity);
  };
  LoadError load_error;
  if (shuffle) {
    auto loaded = LoadStreams(files, &load_error, *max_bytes);
    if (!loaded.has_value()) {
      PrintLoadError("replay", load_error);
      return kExitBadInput;
    }
    std::vector<protocol::CrdtMessage>& messages = loaded->messages;
    replay::SplitMix64 rng(*shuffle);
    replay::SeededShuffle(messages, rng);
    for (const protocol::CrdtMessage& m : messages) {
      note(m, world ? replica.ApplyMessage(m) : plain_store.Merge(m));
    }
  } else {
    auto merged = MergeFiles(
        files,
        [&](std::span<const uint8_t> window) -> Result<void> {
          if (!world) return plain_store.MergeStream(window, protocol::DecodeOptions{}, note);
          Result<void> r = replica.ApplyCrdt(window, protocol::DecodeOptions{}, note);
          if (replica.store().transform_changes().size() > kMaxPendingChanges) {
            replica.Update(update);
          }
          return r;
        },
        &load_error);
    if (!merged.has_value()) {
      PrintLoadError("replay", load_error);
      return kExitBadInput;
    }
  }
  const std::vector<protocol::EntityId> ids = entities.Sorted();
  // Streamed to stdout a chunk at a time as it is produced: the text is never held. Written
  // to the descriptor directly: stdio would split each chunk into two write()s.
  std::fflush(stdout);
  int write_error = 0;  // errno of the first failed write()
  replay::ChunkedText out([&write_error](std::string_view chunk) {
    while (!chunk.empty() && write_error == 0) {
      const ssize_t n = ::write(STDOUT_FILENO, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) write_error = n < 0 ? errno : EIO;
      if (n > 0) chunk.remove_prefix(static_cast<std::size_t>(n));
    }
  });
  replay::WriteStateJsonBody(world ? replica.store() : plain_store, ids, out);
  if (world) {
    replica.Update(update);
    std::string world_json = ",";
    replay::AppendWorldJson(replica.transforms(), world_json);
    out.Put(world_json);
  }
  out.Put("}\n");
  out.Flush();
  if (write_error != 0) {
    PrintMessage("replay", std::string("cannot write the state to stdout: ") +
                               std::strerror(write_error) + " (disk full, or a closed pipe?)");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace scenecrdt::cli

// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt bench`: quick throughput measurements on the user's own streams
// (`bench merge FILE`), generation of the standard benchmark stream (`bench stream`), and
// dispatch to `bench propagate` (cmd_bench_propagate.cc).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/testing/bench_streams.h"
#include "tools/cli/bench/cmd_bench_propagate.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/stream/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kMergeAbout =
    R"(Decodes FILE and merges every message into a fresh CrdtStore, N times, and reports the
best run: messages, seconds, messages per second (one core). FILE is held in memory so the
figure has no I/O in it.
)";
constexpr const char* kStreamAbout =
    R"(Writes the standard decode+merge benchmark stream: U Transform PUTs for each of N
entities (numbers from 512; above 65024 the version field is used), in a seeded random order
with equal-timestamp ties.
)";
constexpr const char* kHelpTail =
    R"(Use a release build (`cmake --preset release`) for meaningful figures.

exit status: 0 ok; 2 malformed FILE, FILE over --max-memory-mb, bad usage, or OUT cannot be
written.
)";

// `bench merge`'s declarations (its --help is part of `bench --help`).
struct MergeCli {
  CliApp app{"bench", kMergeAbout, ""};
  std::optional<uint64_t> repeat, max_memory_mb;
  bool json = false;
  std::vector<std::string> files;
  MergeCli() {
    app.SetUsageName("bench merge");
    app.U64("--repeat", "N", "merge N times, report the best (default 5)", &repeat);
    app.Flag("--json", "print {\"messages\":N,\"seconds\":S,\"messagesPerSecond\":R}", &json);
    app.U64("--max-memory-mb", "M", "the most of FILE held in memory (default 2048)",
            &max_memory_mb);
    app.Positionals("FILE", "the DCL stream to merge", &files);
  }
};

// `bench stream`'s declarations.
struct StreamCli {
  CliApp app{"bench", kStreamAbout, ""};
  std::optional<std::string> output;
  std::optional<uint64_t> entities, updates, seed;
  StreamCli() {
    app.SetUsageName("bench stream");
    app.Value("--output,-o", "OUT", "where to write the stream (required)", &output);
    app.U64("--entities", "N", "entities (default 65024)", &entities);
    app.U64("--updates", "U", "Transform PUTs per entity (default 16)", &updates);
    app.U64("--seed", "S", "the order's seed (default 7)", &seed);
  }
};

int RunMerge(Args args) {
  MergeCli cli;
  if (auto status = cli.app.Parse(args)) return *status;
  const uint64_t repeat = std::max<uint64_t>(1, cli.repeat.value_or(5));
  const bool json = cli.json;
  const auto& max_memory_mb = cli.max_memory_mb;
  const auto& files = cli.files;
  if (files.size() != 1) {
    PrintMessage("bench", "merge takes one FILE; see 'scenecrdt bench --help'");
    return kExitBadInput;
  }
  const auto max_bytes = MaxMemoryBytes("bench", max_memory_mb);
  if (!max_bytes) return kExitBadInput;
  // The merge is timed on the file held in memory (no I/O in the figure): held whole, bounded.
  bool over = false;
  auto bytes = ReadBounded(files[0], *max_bytes, &over);
  if (over) {
    PrintMessage("bench", "'" + files[0] + "' is larger than --max-memory-mb " +
                              std::to_string(*max_bytes >> 20) +
                              ": raise it (bench merge holds the file to time the merge alone)");
    return kExitBadInput;
  }
  if (!bytes.has_value()) {
    PrintError("bench", "cannot read '" + files[0] + "'", bytes.error());
    return kExitBadInput;
  }
  double best = 1e300;
  uint64_t messages = 0;
  for (uint64_t i = 0; i < repeat; ++i) {
    runtime::CrdtStore store;
    const auto start = std::chrono::steady_clock::now();
    auto stats = store.MergeStream(*bytes);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!stats.has_value()) {
      PrintError("bench", "malformed stream", stats.error());
      if (LooksLikeJsonText(*bytes)) PrintJsonLinesHint("bench");
      return kExitBadInput;
    }
    messages = stats->messages;
    best = std::min(best, seconds);
  }
  const double rate = best > 0 ? static_cast<double>(messages) / best : 0;
  if (json) {
    nlohmann::ordered_json out;
    out["messages"] = messages;
    out["seconds"] = std::round(best * 1e6) / 1e6;
    out["messagesPerSecond"] = static_cast<uint64_t>(std::llround(rate));
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("merge: %llu messages in %.3f ms (best of %llu): %.1f M messages/s\n",
                static_cast<unsigned long long>(messages), best * 1e3,
                static_cast<unsigned long long>(repeat), rate / 1e6);
  }
  return kExitOk;
}

int RunStream(Args args) {
  StreamCli cli;
  if (auto status = cli.app.Parse(args)) return *status;
  const auto& output = cli.output;
  const uint64_t entities = cli.entities.value_or(65024);
  const uint64_t updates = cli.updates.value_or(16);
  const uint64_t seed = cli.seed.value_or(7);
  if (!output || entities == 0 || updates == 0 || entities * updates > (1ull << 26)) {
    PrintMessage("bench", "stream needs -o OUT and 1 <= entities * updates <= 67108864");
    return kExitBadInput;
  }
  const auto bytes = testing::MakeTransformPutStream(static_cast<uint32_t>(entities),
                                                     static_cast<uint32_t>(updates), seed);
  if (auto w = WriteOutput(*output, bytes); !w.has_value()) {
    PrintError("bench", "cannot write '" + *output + "'", w.error());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

int RunBench(Args args) {
  // `bench --help` (or `bench NAME --help`): every benchmark's help, from its declarations.
  const bool help = args.empty() || std::find(args.begin(), args.end(), "--help") != args.end() ||
                    std::find(args.begin(), args.end(), "-h") != args.end();
  if (help) {
    std::fputs((MergeCli().app.Help() + "\n" + StreamCli().app.Help() + "\n" +
                BenchPropagateHelp(kHelpTail))
                   .c_str(),
               stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const Args rest = args.subspan(1);
  if (args[0] == "merge") return RunMerge(rest);
  if (args[0] == "stream") return RunStream(rest);
  if (args[0] == "propagate") return RunBenchPropagate(rest);
  PrintMessage("bench", "unknown benchmark; see 'scenecrdt bench --help'");
  return kExitBadInput;
}

}  // namespace scenecrdt::cli

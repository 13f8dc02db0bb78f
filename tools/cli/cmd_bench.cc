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
#include "tools/cli/cmd_bench_propagate.h"
#include "tools/cli/commands.h"
#include "tools/cli/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp =
    R"(usage: scenecrdt bench merge FILE [--repeat N] [--json] [--max-memory-mb M]
       scenecrdt bench stream -o OUT [--entities N] [--updates U] [--seed S]
)";
constexpr const char* kHelpBody = R"(
merge   decodes FILE and merges every message into a fresh CrdtStore, N times (default 5),
        and reports the best run: messages, seconds, messages per second (one core).
        --json prints {"messages":N,"seconds":S,"messagesPerSecond":R}. FILE is held in
        memory so the figure has no I/O in it: at most --max-memory-mb (default 2048).
stream  writes the standard decode+merge benchmark stream: U Transform PUTs (default 16)
        for each of N entities (default 65024, numbers from 512; above 65024 the version
        field is used), in a seeded random order with equal-timestamp ties.
)";
constexpr const char* kHelpTail = R"(
Use a release build (`cmake --preset release`) for meaningful figures.

exit status: 0 ok; 2 malformed FILE, FILE over --max-memory-mb, bad usage, or OUT cannot be
written.
)";

int RunMerge(ArgScanner& scan) {
  const uint64_t repeat = std::max<uint64_t>(1, scan.U64("--repeat").value_or(5));
  const bool json = scan.Flag("--json");
  const auto max_memory_mb = scan.U64("--max-memory-mb");
  const auto files = scan.Positionals();
  if (!scan.Finish()) return kExitBadInput;
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

int RunStream(ArgScanner& scan) {
  const auto output = scan.Value("--output", "-o");
  const uint64_t entities = scan.U64("--entities").value_or(65024);
  const uint64_t updates = scan.U64("--updates").value_or(16);
  const uint64_t seed = scan.U64("--seed").value_or(7);
  if (!scan.Finish()) return kExitBadInput;
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
  ArgScanner scan("bench", args.empty() ? args : args.subspan(1));
  // `bench --help`: the first argument is the benchmark name, which the scanner skips.
  const bool help_first = !args.empty() && (args[0] == "--help" || args[0] == "-h");
  if (scan.Help() || help_first || args.empty()) {
    std::fputs(kHelp, stdout);
    std::fputs(kBenchPropagateUsage, stdout);
    std::fputs(kHelpBody, stdout);
    std::fputs(kBenchPropagateHelp, stdout);
    std::fputs(kHelpTail, stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  if (args[0] == "merge") return RunMerge(scan);
  if (args[0] == "stream") return RunStream(scan);
  if (args[0] == "propagate") return RunBenchPropagate(scan);
  PrintMessage("bench", "unknown benchmark; see 'scenecrdt bench --help'");
  return kExitBadInput;
}

}  // namespace scenecrdt::cli

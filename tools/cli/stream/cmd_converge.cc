// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt converge`: applies seeded random delivery schedules (permutations,
// duplicates, held-back redeliveries) of the given streams and checks that every schedule
// ends in the same state hash; shrinks and reports a diverging schedule.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "scenecrdt/replay/replica_sim.h"
#include "scenecrdt/replay/split_mix64.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/progress.h"
#include "tools/cli/stream/schedule_shrink.h"
#include "tools/cli/stream/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Checks the CRDT contract on real traffic: the messages of FILE... ('-' for stdin) are applied
to fresh stores under N seeded random schedules, and every schedule must end in the state
hash of in-order application.
A schedule is a random permutation in which each message is also delivered a second time
with probability P (--duplicate) and each message is held back with probability P
(--redeliver) and delivered only after all the others.

With --replicas K, each schedule simulates K replicas (full runtimes) and one server
exchanging the messages: each message is originated by a random replica; links reorder,
duplicate (--duplicate) and lose transmissions that are then retransmitted (--drop);
replicas are cut off for a while and resume from their last contiguous scene sequence
(--partition); replicas join late from a snapshot (--late-join); replicas render frames at
random moments. Every replica must end with the in-order state hash AND bitwise-equal world
matrices, effective parents and parked flags.
)";
constexpr const char* kFooter =
    R"(output: a progress line on stderr when it is a terminal, then on stdout either
`converged: N schedules, hash H` or, on divergence, the diverging seed, the shrunk
schedule (message indices) and the difference between the two final states (with
--replicas: the first replica that differs and how).

exit status: 0 every schedule converged; 1 a schedule diverged; 2 malformed input, input over
--max-memory-mb, or bad usage.
)";

using Schedule = std::vector<uint32_t>;  // indices into the message list

std::string StateText(const std::vector<protocol::CrdtMessage>& messages, const Schedule& s) {
  runtime::CrdtStore store;
  for (uint32_t i : s) (void)store.Merge(messages[i]);
  return store.CanonicalText();
}

runtime::Sha256::Digest ApplyHash(const std::vector<protocol::CrdtMessage>& messages,
                                  const Schedule& s) {
  runtime::CrdtStore store;
  for (uint32_t i : s) (void)store.Merge(messages[i]);
  return store.StateHash();
}

// In-order application of the distinct messages a schedule delivers: the expected state.
Schedule Canonical(Schedule s) {
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

Schedule MakeSchedule(std::size_t count, uint64_t seed, double duplicate, double redeliver) {
  replay::SplitMix64 rng(seed);
  Schedule now, later;
  for (uint32_t i = 0; i < count; ++i) {
    (rng.Chance(redeliver) ? later : now).push_back(i);
    if (rng.Chance(duplicate)) now.push_back(i);
  }
  replay::SeededShuffle(now, rng);
  replay::SeededShuffle(later, rng);
  now.insert(now.end(), later.begin(), later.end());
  return now;
}

// Prints lines present in one text but not the other.
void PrintDifference(const std::string& expected, const std::string& got) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t end = text.find('\n', pos);
      out.push_back(text.substr(pos, end - pos));
      pos = end + 1;
    }
    return out;
  };
  const auto a = lines(expected);
  const auto b = lines(got);
  for (const auto& l : a) {
    if (std::find(b.begin(), b.end(), l) == b.end()) std::printf("  - %s\n", l.c_str());
  }
  for (const auto& l : b) {
    if (std::find(a.begin(), a.end(), l) == a.end()) std::printf("  + %s\n", l.c_str());
  }
}

int RunReplicaTrials(const std::vector<protocol::CrdtMessage>& messages, uint64_t trials,
                     uint64_t seed, const replay::SimOptions& options,
                     const std::optional<std::string>& failure_out) {
  std::vector<uint32_t> all(messages.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto start = std::chrono::steady_clock::now();
  Progress progress("converge");
  uint64_t deliveries = 0;
  for (uint64_t t = 0; t < trials; ++t) {
    progress.Update(t, trials);
    const replay::SimResult r = replay::RunReplicaSchedule(messages, all, seed + t, options);
    deliveries += r.deliveries;
    if (r.converged) continue;
    progress.Done();
    std::printf("diverged: seed %llu, %u replicas: %s\n", static_cast<unsigned long long>(seed + t),
                options.replicas, r.failure.c_str());
    const std::vector<uint32_t> shrunk = ShrinkSchedule(all, [&](const std::vector<uint32_t>& s) {
      return !replay::RunReplicaSchedule(messages, s, seed + t, options).converged;
    });
    const replay::SimResult again = replay::RunReplicaSchedule(messages, shrunk, seed + t, options);
    std::printf("shrunk to %zu messages (indices):", shrunk.size());
    for (uint32_t i : shrunk) std::printf(" %u", i);
    std::printf("\n  %s\n", again.failure.c_str());
    std::printf("reproduce: scenecrdt converge %s --replicas %u --seed %llu --trials 1\n",
                failure_out ? failure_out->c_str() : "<the same files>", options.replicas,
                static_cast<unsigned long long>(seed + t));
    if (failure_out) {
      std::vector<uint8_t> bytes;
      for (uint32_t i : shrunk) protocol::AppendMessage(messages[i], bytes);
      if (auto w = WriteOutput(*failure_out, bytes); !w.has_value()) {
        PrintError("converge", "cannot write '" + *failure_out + "'", w.error());
      } else {
        std::printf("wrote the shrunk messages to %s\n", failure_out->c_str());
      }
    }
    return kExitCheckFailed;
  }
  progress.Done();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  runtime::CrdtStore store;
  for (const auto& m : messages) (void)store.Merge(m);
  std::printf(
      "converged: %llu schedules, %u replicas + server, hash %s, world matrices bitwise equal "
      "(%zu messages, %llu deliveries, %.2f s)\n",
      static_cast<unsigned long long>(trials), options.replicas, store.StateHashHex().c_str(),
      messages.size(), static_cast<unsigned long long>(deliveries), seconds);
  return kExitOk;
}

}  // namespace

int RunConverge(Args args) {
  CliApp app("converge", kAbout, kFooter);
  std::optional<uint64_t> trials_given, seed_given, max_memory_mb, replicas;
  std::optional<double> duplicate_given, redeliver_given, drop, partition, late_join;
  std::optional<std::string> failure_out;
  std::vector<std::string> files;
  app.U64("--trials", "N", "schedules to try (default 1000)", &trials_given);
  app.U64("--seed", "S", "base seed; schedule i uses seed S+i (default 1)", &seed_given);
  app.Double("--duplicate", "P", "duplication probability, 0..1 (default 0.1)", &duplicate_given);
  app.Double("--redeliver", "P", "hold-back probability, 0..1 (default 0.1)", &redeliver_given);
  app.Value("--failure-out", "F", "on divergence, write the shrunk schedule there as a DCL stream",
            &failure_out);
  app.U64("--max-memory-mb", "M",
          "bound of the held input (default 2048): schedules permute the whole input,\n"
          "so it is held (the file bytes plus 48 bytes per message); past the bound\n"
          "converge stops with exit status 2 and says so. Each trial's stores hold\n"
          "the merged state on top.",
          &max_memory_mb);
  app.U64("--replicas", "K", "simulate K replicas (1..64) and a server (see above)", &replicas);
  app.Double("--drop", "P", "with --replicas: loss probability per transmission (default 0.1)",
             &drop);
  app.Double("--partition", "P",
             "with --replicas: probability that a replica is partitioned (default 0.2)",
             &partition);
  app.Double("--late-join", "P",
             "with --replicas: probability that a replica joins late (default 0.2)", &late_join);
  app.Positionals("FILE", "the DCL streams ('-' for stdin)", &files);
  if (auto status = app.Parse(args)) return *status;
  const uint64_t trials = trials_given.value_or(1000);
  const uint64_t seed = seed_given.value_or(1);
  const double duplicate = duplicate_given.value_or(0.1);
  const double redeliver = redeliver_given.value_or(0.1);
  replay::SimOptions sim;
  sim.duplicate = duplicate;
  sim.drop = drop.value_or(sim.drop);
  sim.partition = partition.value_or(sim.partition);
  sim.late_join = late_join.value_or(sim.late_join);
  if (files.empty()) {
    PrintMessage("converge", "needs at least one FILE; see 'scenecrdt converge --help'");
    return kExitBadInput;
  }
  auto probability = [](double p) { return p >= 0 && p <= 1; };
  if (!probability(duplicate) || !probability(redeliver) || !probability(sim.drop) ||
      !probability(sim.partition) || !probability(sim.late_join) || sim.drop > 0.9) {
    PrintMessage("converge", "probabilities must be in 0..1 (and --drop at most 0.9); see --help");
    return kExitBadInput;
  }
  if (replicas && (*replicas < 1 || *replicas > 64)) {
    PrintMessage("converge", "--replicas takes 1..64");
    return kExitBadInput;
  }
  const auto max_bytes = MaxMemoryBytes("converge", max_memory_mb);
  if (!max_bytes) return kExitBadInput;
  LoadError load_error;
  auto loaded = LoadStreams(files, &load_error, *max_bytes);
  if (!loaded.has_value()) {
    PrintLoadError("converge", load_error);
    return kExitBadInput;
  }
  const std::vector<protocol::CrdtMessage>& messages = loaded->messages;
  if (replicas) {
    sim.replicas = static_cast<uint32_t>(*replicas);
    return RunReplicaTrials(messages, trials, seed, sim, failure_out);
  }
  Schedule in_order(messages.size());
  for (uint32_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  const runtime::Sha256::Digest expected = ApplyHash(messages, in_order);

  const auto start = std::chrono::steady_clock::now();
  Progress progress("converge");
  for (uint64_t t = 0; t < trials; ++t) {
    progress.Update(t, trials);
    const Schedule schedule = MakeSchedule(messages.size(), seed + t, duplicate, redeliver);
    if (ApplyHash(messages, schedule) == expected) continue;
    progress.Done();
    std::printf("diverged: schedule seed %llu (%zu deliveries) ends in another state\n",
                static_cast<unsigned long long>(seed + t), schedule.size());
    auto diverges = [&](const Schedule& s) {
      return ApplyHash(messages, s) != ApplyHash(messages, Canonical(s));
    };
    const Schedule shrunk = ShrinkSchedule(schedule, diverges);
    std::printf("shrunk to %zu deliveries (message indices in delivery order):", shrunk.size());
    for (uint32_t i : shrunk) std::printf(" %u", i);
    std::printf("\nstate difference (- in-order, + this schedule):\n");
    PrintDifference(StateText(messages, Canonical(shrunk)), StateText(messages, shrunk));
    if (failure_out) {
      std::vector<uint8_t> bytes;
      for (uint32_t i : shrunk) protocol::AppendMessage(messages[i], bytes);
      if (auto w = WriteOutput(*failure_out, bytes); !w.has_value()) {
        PrintError("converge", "cannot write '" + *failure_out + "'", w.error());
      } else {
        std::printf("wrote the shrunk schedule to %s (replay it with 'scenecrdt replay')\n",
                    failure_out->c_str());
      }
    }
    return kExitCheckFailed;
  }
  progress.Done();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("converged: %llu schedules, hash %s (%zu messages, %.2f s)\n",
              static_cast<unsigned long long>(trials), runtime::Sha256::ToHex(expected).c_str(),
              messages.size(), seconds);
  return kExitOk;
}

}  // namespace scenecrdt::cli

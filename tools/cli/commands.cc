// SPDX-License-Identifier: Apache-2.0
// Owns the subcommand table.
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

std::span<const Command> AllCommands() {
  static constexpr Command kCommands[] = {
      {"decode", "DCL CRDT stream -> JSON lines", RunDecode},
      {"encode", "JSON lines -> DCL CRDT stream", RunEncode},
      {"replay", "DCL streams -> final CRDT state (JSON)", RunReplay},
      {"converge", "random delivery schedules must reach one state hash", RunConverge},
      {"gen", "benchmark scene shapes -> DCL stream of Transform PUTs", RunGen},
      {"inspect", "effective tree with local/world positions; --svg drawing", RunInspect},
      {"serve", "scene server: TCP/WebSocket, fan-out, SQLite durability, auth", RunServe},
      {"db-salvage", "copy what reads cleanly from a damaged server database", RunDbSalvage},
      {"backup", "online copy of a server's database (SQLite backup API)", RunBackup},
      {"restore", "put a backup in place in a stopped server's --data", RunRestore},
      {"send", "send DCL streams to a scene; wait until durable", RunSend},
      {"pull", "join a scene and print its state (JSON, as replay)", RunPull},
      {"own", "give an entity to a principal (admin; --authority owner)", RunOwn},
      {"watch", "live tree view of a scene", RunWatch},
      {"record", "record a scene's changes as a DCL stream + receive-time index", RunRecord},
      {"load", "loopback load generator with latency percentiles", RunLoad},
      {"bench", "throughput of decode+merge on a stream", RunBench},
  };
  return kCommands;
}

}  // namespace scenecrdt::cli

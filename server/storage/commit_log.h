// SPDX-License-Identifier: Apache-2.0
// Owns CommitLog: the one interface a scene has to durability (docs/SERVER.md "Persistence",
// docs/CLUSTER.md "Server integration"): where its committed changes go, and, for a log that
// several servers share, where its stored state and the changes written elsewhere come from.
// Two implementations: Persistence (storage/persistence.h, SQLite, written by this server only)
// and ClusterNode (cluster/cluster_node.h, Redis Streams shared by every node).
//
// A scene submits each flush as one CommitJob and waits for its `done` before the next (so a
// log holds at most one job per scene). On a shared log a scene is also a LoggedScene: the log
// loads its state (before anyone is welcomed), then hands it every entry other writers append,
// and tells it where its own flushes landed (positions number the scene's sequences). Nothing
// here names a scene class: the scene room implements LoggedScene (scene/scene.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/storage/correction_mark.h"

namespace scenecrdt::server {

struct CommitJob {
  std::string scene;
  std::vector<uint8_t> dcl;  // changed registers/tombstones/append sets, current values
  // Owner rows changed since the last commit (docs/AUTHORITY.md): (entity number, principal),
  // "" = no owner any more. Written in the same transaction as `dcl`.
  std::vector<std::pair<uint32_t, std::string>> owners;
  // The corrections `dcl` carries (a shared log marks them; SQLite ignores them).
  std::vector<CorrectionMark> corrections;
  std::function<void(bool)> done;  // runs on the log's thread: post, do not block
};

// Cluster ownership (docs/AUTHORITY.md "Cluster"): a principal's first writes of entity numbers
// nobody owns yet, held back from the scene until the shared log decided, in stream order,
// whether the principal may own them. `numbers`: per entity number, the DCL messages held.
struct ClaimResult {
  bool ok = false;             // false: Redis failed, nothing decided (refuse all)
  cluster::StreamId position;  // the decision's place: the claim entry, or the stream's end
  std::vector<std::pair<uint32_t, std::string>> lost;  // numbers owned by someone else: owner
};
struct ClaimJob {
  std::string scene;
  std::string principal;
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> numbers;
  std::function<void(ClaimResult)> done;  // runs on the log's thread: post, do not block
};
using OwnerRows = std::vector<std::pair<uint32_t, std::string>>;

// A scene as a shared log sees it. Each call may come from any thread (the log's): the scene
// posts to its strand. Positions are stream IDs of the shared log (cluster/stream_id.h).
class LoggedScene {
 public:
  virtual const std::string& name() const = 0;
  // The scene's stored state: `chunks` (snapshot, then the tail) merge, everything up to
  // `last` is in them; `ids[i]` is the position chunk i covers (a resume from any of them
  // gets a delta). Joins held meanwhile are welcomed afterwards.
  // `owners`: the scene's owner table (authority on; read after the state, so at least as new).
  virtual void LogLoaded(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                         cluster::StreamId last, OwnerRows owners) = 0;
  // The load failed: held joins are closed with kUnavailable; the next join loads again.
  virtual void LogLoadFailed(std::string why) = 0;
  // Other writers' entries (chunks, decoded once by the read loop: nothing decodes them again),
  // read up to position `last` (zero: a snapshot reload, no position). `posted_bytes` go back
  // to the log (SharedLog::Consumed) once merged.
  // `owners`: the owner rows of every entry read (own ones too), in stream order.
  // `corrections`: the corrections the chunks carry (their `k` fields), by chunk index.
  virtual void LogEntries(std::vector<cluster::DecodedChunk> chunks, cluster::StreamId last,
                          std::size_t posted_bytes, OwnerRows owners,
                          std::vector<CorrectionMark> corrections) = 0;
  // The flush in flight is in the log with (last) position `id` (called before its done).
  virtual void LogAppended(cluster::StreamId id) = 0;
  // Authority on, after a snapshot reload (LogEntries with a zero `last`): the rows of the
  // trimmed entries are in no entry any more, so the log's whole owner table, read after the
  // snapshot (at least as new; the rows of later entries come again with them), replaces the
  // scene's, in order with the entries posted (docs/AUTHORITY.md "Cluster").
  virtual void LogOwners(OwnerRows owners) = 0;

 protected:
  virtual ~LoggedScene() = default;  // owned as its concrete type (the scene registry's)
};

class SharedLog;

class CommitLog {
 public:
  virtual ~CommitLog() = default;
  // Where committed changes go: `job.done(true)` once durable, `done(false)` when not (the
  // scene keeps its acks and submits again). Thread-safe.
  virtual void Submit(CommitJob job) = 0;
  // The current failure episode of the log's own storage (storage_health.h): a scene tells
  // each writer once per episode that its commits fail. 0 for a shared log (a scene on it
  // says so once per outage, whatever the episode).
  virtual uint64_t failure_episode() const { return 0; }
  // The log as several servers share it (scenes load from it and receive other writers'
  // changes), or nullptr for a log this server alone writes (SQLite: the registry loads a
  // scene before it exists, and nothing comes from elsewhere).
  virtual SharedLog* shared() { return nullptr; }
};

// Where remote changes come from. Any thread.
class SharedLog : public CommitLog {
 public:
  SharedLog* shared() final { return this; }
  // `scene` is hosted from now on: its state is loaded (LogLoaded / LogLoadFailed), then its
  // entries are followed (LogEntries). `scene` stays alive until Unfollow.
  virtual void Follow(LoggedScene& scene) = 0;
  // The registry evicted `scene` (quiescent): nothing is handed to it any more.
  virtual void Unfollow(LoggedScene& scene) = 0;
  // Loads `scene` again after a failed load (its next join asks).
  virtual void RequestLoad(LoggedScene& scene) = 0;
  // Decides a scene's claims (ClaimJob) in stream order; `job.done` always runs.
  virtual void Claim(ClaimJob job) = 0;
  // Entries handed to a scene (LogEntries' `posted_bytes`) were merged or dropped.
  virtual void Consumed(std::size_t posted_bytes) = 0;
  // Whether the log holds anything of `scene`; an error when it cannot tell now (`why` gets
  // its text). Bounded by the log's timeouts; calls are serialised.
  virtual Result<bool> SceneStored(std::string_view scene, std::string* why) = 0;
};

}  // namespace scenecrdt::server

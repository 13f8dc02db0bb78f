// SPDX-License-Identifier: Apache-2.0
// Owns the cluster half of Scene (docs/CLUSTER.md "Server integration"): joins held until the
// scene is loaded from Redis, other nodes' entries merged and fanned out as local writes, the
// stream positions that give the scene sequence its cluster-wide meaning, the typed
// `unavailable` notice while Redis refuses the scene's flushes, and the end of an evicted scene
// (entries posted before the node stopped following it are released, not merged).
#include "scenecrdt/server/scene/scene.h"

namespace scenecrdt::server {

bool Scene::HoldJoin(const std::shared_ptr<SceneMember>& session, bool can_write,
                     std::optional<uint64_t> resume) {
  if (loaded_) return false;
  if (held_joins_.size() >= ctx_.config().limits.max_sessions_per_scene) {
    session->PostClose(ErrorCode::kSceneFull, "the scene has its maximum number of sessions");
    return true;
  }
  held_joins_.push_back({session, can_write, resume});
  if (!load_requested_) {
    load_requested_ = true;
    ctx_.commits().shared()->RequestLoad(*this);
  }
  return true;
}

bool Scene::ClusterIdle() const { return !sync_ || (!load_requested_ && held_joins_.empty()); }

void Scene::Retire(std::function<void()> then) {
  // Called on the strand (from the registry's quiescence check), so nothing of the scene runs
  // meanwhile; whatever is queued behind runs before `then` (a strand is FIFO).
  retired_ = true;
  net::asio::post(strand_, std::move(then));
}

void Scene::LogLoaded(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                      cluster::StreamId last) {
  net::asio::post(strand_, [this, chunks = std::move(chunks), ids = std::move(ids), last] {
    const protocol::DecodeOptions decode;
    bool marked = false;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const std::string& c = chunks[i];
      const auto bytes = std::span(reinterpret_cast<const uint8_t*>(c.data()), c.size());
      if (c.empty()) {
        // The empty state before a tail without snapshot: nothing to merge, a mark all the same.
      } else if (auto r = store_.MergeStream(bytes, decode); !r.has_value()) {
        ctx_.log().Write("cluster", "scene=%s load_merge_error=%s", name_.c_str(),
                         r.error().detail);
      }
      // One mark per loaded piece: everything up to ids[i] is merged now, and what follows
      // changes the store after this point (ClusterSceneSync keeps the newest kMaxMarks).
      if (i < ids.size()) {
        if (!marked) {
          sync_->Reset(ids[i], store_.sequence());
        } else {
          sync_->NoteRead(ids[i], store_.sequence(), store_.sequence());
        }
        marked = true;
      }
    }
    // What was loaded is in Redis already: nothing to append, nothing to fan out yet. Its size
    // counts towards --max-scene-bytes (the bytes that rebuilt it: an upper bound).
    uint64_t loaded_bytes = 0;
    for (const std::string& c : chunks) loaded_bytes += c.size();
    bytes_.Reset(loaded_bytes);
    flushed_ = durable_ = store_.sequence();
    if (!marked) {
      sync_->Reset(last, store_.sequence());
    } else {
      sync_->NoteRead(last, store_.sequence(), store_.sequence());
    }
    loaded_ = true;
    load_requested_ = false;
    std::vector<HeldJoin> held;
    held.swap(held_joins_);
    for (HeldJoin& j : held) Join(std::move(j.session), j.can_write, j.resume);
  });
}

void Scene::LogLoadFailed(std::string why) {
  net::asio::post(strand_, [this, why = std::move(why)] {
    load_requested_ = false;
    std::vector<HeldJoin> held;
    held.swap(held_joins_);
    for (HeldJoin& j : held) {
      j.session->PostClose(ErrorCode::kUnavailable,
                           "the scene cannot be loaded from Redis now (" + why + "); retry");
    }
  });
}

void Scene::LogEntries(std::vector<std::string> chunks, cluster::StreamId last,
                       std::size_t posted_bytes) {
  net::asio::post(strand_, [this, chunks = std::move(chunks), last, posted_bytes] {
    if (retired_) {
      ctx_.commits().shared()->Consumed(posted_bytes);  // evicted: the entries are in Redis
      return;
    }
    Metrics& metrics = ctx_.metrics();
    // Nothing of ours is waiting to be appended: the merged entries are in Redis already, so
    // the durable point moves with them. Otherwise the next flush carries them again, which
    // last-write-wins makes harmless.
    const bool idle = !commit_in_flight_ && durable_ == store_.sequence();
    const uint64_t before = store_.sequence();
    const protocol::DecodeOptions decode;
    const uint64_t cap = ctx_.config().limits.max_scene_bytes;
    const uint64_t bytes_before = bytes_.bytes();
    std::vector<protocol::CrdtMessage> messages;
    for (const std::string& c : chunks) {
      const auto bytes = std::span(reinterpret_cast<const uint8_t*>(c.data()), c.size());
      // Other nodes' writes count towards --max-scene-bytes like local ones (an upper bound
      // of their growth), but are never refused: they are in Redis already, and every node
      // must merge them to converge. What the cap refuses is this node's writers' growth.
      messages.clear();
      (void)protocol::DecodeStream(bytes, decode,
                                   [&](const protocol::CrdtMessage& m) { messages.push_back(m); });
      bytes_.Add(SceneBytes::Growth(store_, messages));
      auto r = store_.MergeStream(bytes, decode,
                                  [&](const protocol::CrdtMessage&, const runtime::MergeResult& m) {
                                    metrics.CountMerge(m.outcome);
                                  });
      if (!r.has_value()) {
        ctx_.log().Write("cluster", "scene=%s remote_merge_error=%s", name_.c_str(),
                         r.error().detail);
      }
    }
    if (cap != 0 && bytes_before <= cap && bytes_.bytes() > cap) {
      // From here this node refuses its writers' growth (scene_too_large), not other nodes'.
      ctx_.log().Write("cluster", "scene=%s over_max_scene_bytes=%llu by=other_nodes bytes=%llu",
                       name_.c_str(), static_cast<unsigned long long>(cap),
                       static_cast<unsigned long long>(bytes_.bytes()));
    }
    if (idle) durable_ = store_.sequence();
    if (!last.is_zero() && loaded_) sync_->NoteRead(last, store_.sequence(), durable_);
    if (store_.sequence() != before) {
      mixed_writers_ = true;
      ScheduleFlush();
    }
    ctx_.commits().shared()->Consumed(posted_bytes);
  });
}

void Scene::LogAppended(cluster::StreamId id) {
  net::asio::post(strand_, [this, id] { sync_->NoteAppended(id, durable_); });
}

void Scene::NotifyUnavailable() {
  if (unavailable_notified_) return;
  unavailable_notified_ = true;
  // Frame sequence 0: the notice refuses no frame, so clients keep theirs and wait for acks.
  std::vector<uint64_t> told;
  for (const PendingAck& a : pending_acks_) {
    if (std::find(told.begin(), told.end(), a.session_id) != told.end()) continue;
    told.push_back(a.session_id);
    if (Member* m = FindMember(a.session_id)) {
      m->session->PostRefusal(ErrorCode::kUnavailable,
                              "Redis is unreachable: writes are held, not acknowledged", 0);
    }
  }
  ctx_.log().Write("cluster", "scene=%s unavailable=held writers=%zu", name_.c_str(), told.size());
}

}  // namespace scenecrdt::server

// SPDX-License-Identifier: Apache-2.0
// Owns the replica/server network simulation of `converge --replicas K` (see replica_sim.h).
//
// Model. Replica r originates its share of the messages (applies locally, sends to the server).
// Links deliver each transmission after a random delay (so they reorder), sometimes twice, and
// sometimes lose it; a lost transmission is retransmitted later (at-least-once), except while
// the link is partitioned. The server merges what arrives and forwards every state change to
// the other joined replicas, tagging each transmission with a per-link counter and the scene
// sequence, as the session protocol does. A replica resumes after a partition from the scene
// sequence of its contiguous prefix of received transmissions and resends what the server has
// not acknowledged. A late joiner starts from a snapshot.
#include "scenecrdt/replay/replica_sim.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <queue>
#include <set>

#include "scenecrdt/replay/split_mix64.h"
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::replay {
namespace {

constexpr uint32_t kServer = 0xFFFFFFFFu;

struct Event {
  uint64_t time;
  uint64_t order;  // tie-break: events at the same time run in creation order
  enum class Kind : uint8_t {
    kOriginate,
    kToServer,
    kToReplica,
    kAck,
    kPartition,
    kReconnect,
    kJoin
  };
  Kind kind;
  uint32_t replica;
  uint32_t message;         // index into messages (kOriginate, kToServer, kAck) or into blobs
  uint64_t counter;         // per-link transmission counter (kToReplica)
  uint64_t scene_sequence;  // server sequence this transmission brings the replica to
  bool retransmission_allowed;
  friend bool operator>(const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.order > b.order;
  }
};

struct Replica {
  runtime::Runtime runtime;
  bool joined = false;
  bool connected = true;
  uint64_t join_time = 0;
  uint64_t next_counter = 1;                 // server side: next transmission counter on the link
  uint64_t contiguous = 0;                   // replica side: all counters <= this were received
  uint64_t resume_sequence = 0;              // scene sequence of the contiguous prefix
  std::set<uint64_t> received;               // counters above the prefix
  std::map<uint64_t, uint64_t> sequence_of;  // counter -> scene sequence (above the prefix)
  std::set<uint32_t> unacked;                // messages originated here, not yet acknowledged
};

class Simulation {
 public:
  Simulation(const std::vector<protocol::CrdtMessage>& messages, uint64_t seed,
             const SimOptions& options)
      : messages_(messages), rng_(seed), options_(options), replicas_(options.replicas) {}

  SimResult Run(const std::vector<uint32_t>& subset) {
    const uint64_t span = 10 * (subset.size() + 1);
    for (uint32_t r = 0; r < replicas_.size(); ++r) {
      Replica& rep = replicas_[r];
      if (r > 0 && rng_.Chance(options_.late_join)) {
        rep.join_time = rng_.Below(span);
        Push(rep.join_time, Event::Kind::kJoin, r, 0, 0, 0, false);
      } else {
        rep.joined = true;
      }
      if (rng_.Chance(options_.partition)) {
        const uint64_t start = rep.join_time + rng_.Below(span);
        Push(start, Event::Kind::kPartition, r, 0, 0, 0, false);
        Push(start + 1 + rng_.Below(span / 2 + 1), Event::Kind::kReconnect, r, 0, 0, 0, false);
      }
    }
    for (std::size_t k = 0; k < subset.size(); ++k) {
      const uint32_t origin = static_cast<uint32_t>(rng_.Below(replicas_.size()));
      const uint64_t at = std::max<uint64_t>(10 * k + rng_.Below(10), replicas_[origin].join_time);
      Push(at, Event::Kind::kOriginate, origin, subset[k], 0, 0, false);
    }
    while (!queue_.empty()) {
      const Event e = queue_.top();
      queue_.pop();
      now_ = e.time;
      Handle(e);
    }
    return Check(subset);
  }

 private:
  void Push(uint64_t time, Event::Kind kind, uint32_t replica, uint32_t message, uint64_t counter,
            uint64_t scene_sequence, bool retransmit) {
    queue_.push(Event{time, order_++, kind, replica, message, counter, scene_sequence, retransmit});
  }

  // Sends a transmission over a link: delayed, maybe duplicated, maybe lost and retransmitted.
  void Transmit(Event::Kind kind, uint32_t replica, uint32_t message, uint64_t counter,
                uint64_t scene_sequence) {
    const uint64_t delay = 1 + rng_.Below(40);
    if (rng_.Chance(options_.drop)) {
      // Lost: the sender times out and retransmits (with its own fate).
      Push(now_ + delay + 20 + rng_.Below(40), kind, replica, message, counter, scene_sequence,
           true);
      return;
    }
    Push(now_ + delay, kind, replica, message, counter, scene_sequence, false);
    if (rng_.Chance(options_.duplicate)) {
      Push(now_ + 1 + rng_.Below(60), kind, replica, message, counter, scene_sequence, false);
    }
  }

  bool LinkUp(uint32_t replica) const {
    return replicas_[replica].joined && replicas_[replica].connected;
  }

  void Handle(const Event& e) {
    Replica* rep = e.replica == kServer ? nullptr : &replicas_[e.replica];
    switch (e.kind) {
      case Event::Kind::kOriginate:
        ++deliveries_;
        (void)rep->runtime.ApplyMessage(messages_[e.message]);
        MaybeFrame(*rep);
        rep->unacked.insert(e.message);
        if (LinkUp(e.replica)) Transmit(Event::Kind::kToServer, e.replica, e.message, 0, 0);
        break;
      case Event::Kind::kToServer: {
        if (e.retransmission_allowed) {  // a retransmission: resend if the link is up
          if (LinkUp(e.replica)) Transmit(Event::Kind::kToServer, e.replica, e.message, 0, 0);
          break;
        }
        if (!LinkUp(e.replica)) break;  // lost in the partition; resent on reconnect
        ++deliveries_;
        const runtime::MergeResult result = server_.Merge(messages_[e.message]);
        Transmit(Event::Kind::kAck, e.replica, e.message, 0, 0);
        if (!runtime::ChangedState(result.outcome)) break;
        for (uint32_t r = 0; r < replicas_.size(); ++r) {
          if (r == e.replica || !LinkUp(r)) continue;
          Forward(r, e.message);
        }
        break;
      }
      case Event::Kind::kAck:
        if (e.retransmission_allowed) {
          if (LinkUp(e.replica)) Transmit(Event::Kind::kAck, e.replica, e.message, 0, 0);
          break;
        }
        if (LinkUp(e.replica)) rep->unacked.erase(e.message);
        break;
      case Event::Kind::kToReplica: {
        if (e.retransmission_allowed) {
          if (LinkUp(e.replica)) {
            Transmit(Event::Kind::kToReplica, e.replica, e.message, e.counter, e.scene_sequence);
          }
          break;
        }
        if (!LinkUp(e.replica)) break;
        ++deliveries_;
        if (e.message & kBlobBit) {
          (void)rep->runtime.ApplyCrdt(blobs_[e.message & ~kBlobBit]);
        } else {
          (void)rep->runtime.ApplyMessage(messages_[e.message]);
        }
        Received(*rep, e.counter, e.scene_sequence);
        MaybeFrame(*rep);
        break;
      }
      case Event::Kind::kPartition:
        rep->connected = false;
        break;
      case Event::Kind::kReconnect:
        rep->connected = true;
        Resync(e.replica, rep->resume_sequence);
        break;
      case Event::Kind::kJoin:
        rep->joined = true;
        Resync(e.replica, 0);
        break;
    }
  }

  void Forward(uint32_t r, uint32_t message) {
    Replica& rep = replicas_[r];
    Transmit(Event::Kind::kToReplica, r, message, rep.next_counter++, server_.sequence());
  }

  // Reconnect / join: the server sends what changed since `since` (a snapshot for 0); the
  // replica resends what the server has not acknowledged.
  void Resync(uint32_t r, uint64_t since) {
    Replica& rep = replicas_[r];
    std::vector<uint8_t> bytes;
    server_.ExportChangesSince(since, bytes);
    // The link restarts: counters before the resync are abandoned.
    rep.received.clear();
    rep.sequence_of.clear();
    rep.contiguous = rep.next_counter - 1;
    blobs_.push_back(std::move(bytes));
    Transmit(Event::Kind::kToReplica, r, kBlobBit | static_cast<uint32_t>(blobs_.size() - 1),
             rep.next_counter++, server_.sequence());
    for (uint32_t m : rep.unacked) Transmit(Event::Kind::kToServer, r, m, 0, 0);
  }

  void Received(Replica& rep, uint64_t counter, uint64_t scene_sequence) {
    if (counter <= rep.contiguous) return;
    rep.received.insert(counter);
    rep.sequence_of[counter] = scene_sequence;
    while (!rep.received.empty() && *rep.received.begin() == rep.contiguous + 1) {
      rep.contiguous = *rep.received.begin();
      rep.resume_sequence = std::max(rep.resume_sequence, rep.sequence_of[rep.contiguous]);
      rep.sequence_of.erase(rep.contiguous);
      rep.received.erase(rep.received.begin());
    }
  }

  void MaybeFrame(Replica& rep) {
    if (rng_.Chance(options_.frame)) rep.runtime.Update();
  }

  SimResult Check(const std::vector<uint32_t>& subset) {
    SimResult result;
    result.deliveries = deliveries_;
    runtime::Runtime reference;
    for (uint32_t i : subset) (void)reference.ApplyMessage(messages_[i]);
    reference.Update();
    const std::string expected = reference.store().StateHashHex();
    if (server_.StateHashHex() != expected) {
      result.converged = false;
      result.failure = "the server's state hash differs from in-order application";
      return result;
    }
    const auto nodes = reference.transforms().Nodes();
    for (uint32_t r = 0; r < replicas_.size(); ++r) {
      Replica& rep = replicas_[r];
      rep.runtime.Update();
      if (rep.runtime.store().StateHashHex() != expected) {
        result.converged = false;
        result.failure = "replica " + std::to_string(r) + " ends with another state hash";
        return result;
      }
      const auto got = rep.runtime.transforms().Nodes();
      if (got.size() != nodes.size()) {
        result.converged = false;
        result.failure = "replica " + std::to_string(r) + " has another effective tree";
        return result;
      }
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const glm::mat4& a = reference.world_matrices()[nodes[i].index];
        const glm::mat4& b = rep.runtime.world_matrices()[got[i].index];
        if (got[i].entity != nodes[i].entity ||
            got[i].effective_parent != nodes[i].effective_parent ||
            got[i].parked != nodes[i].parked || std::memcmp(&a, &b, sizeof a) != 0) {
          result.converged = false;
          result.failure = "replica " + std::to_string(r) + ": entity " +
                           std::to_string(nodes[i].entity) +
                           " has another parent, flag or world matrix (bitwise)";
          return result;
        }
      }
    }
    return result;
  }

  static constexpr uint32_t kBlobBit = 0x80000000u;

  const std::vector<protocol::CrdtMessage>& messages_;
  SplitMix64 rng_;
  SimOptions options_;
  std::vector<Replica> replicas_;
  runtime::CrdtStore server_;
  std::vector<std::vector<uint8_t>> blobs_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  uint64_t now_ = 0;
  uint64_t order_ = 0;
  uint64_t deliveries_ = 0;
};

}  // namespace

SimResult RunReplicaSchedule(const std::vector<protocol::CrdtMessage>& messages,
                             const std::vector<uint32_t>& subset, uint64_t seed,
                             const SimOptions& options) {
  Simulation sim(messages, seed, options);
  return sim.Run(subset);
}

}  // namespace scenecrdt::replay

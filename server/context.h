// SPDX-License-Identifier: Apache-2.0
// Owns ServerContext: what scenes and sessions share (io_context, configuration, auth,
// metrics, persistence), and the SharedFrame currency of the fan-out. The registries belong to
// the rooms above (scene/scenes.h, sessions/session_registry.h): the Server hands them out.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "scenecrdt/net/net.h"
#include "scenecrdt/server/auth/access_control.h"
#include "scenecrdt/server/auth/origin_policy.h"
#include "scenecrdt/server/config.h"
#include "scenecrdt/server/observability/event_log.h"
#include "scenecrdt/server/observability/metrics.h"

namespace scenecrdt::server {

// storage/ (a room below this one: scripts/check_server_rooms.sh): declared, not included, so
// that the files that share the context do not parse SQLite's and the commit log's headers.
class CommitLog;
class Persistence;

// One encoded, size-prefixed envelope frame, built once and shared by every session queue
// that sends it (a broadcast is encoded once, never once per session).
using SharedFrame = std::shared_ptr<const std::vector<uint8_t>>;

inline SharedFrame MakeShared(std::vector<uint8_t> bytes) {
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class ServerContext {
 public:
  virtual ~ServerContext() = default;
  virtual net::asio::io_context& ioc() = 0;
  virtual const ServerConfig& config() const = 0;
  // Who may join which scene (the --auth table, signed access tokens, or open mode).
  virtual const AccessControl& auth() const = 0;
  // Which browser pages may send requests (--allowed-origins).
  virtual const OriginPolicy& origins() const = 0;
  virtual Metrics& metrics() = 0;
  virtual const EventLog& log() const = 0;
  virtual Persistence& persistence() = 0;
  // Where scenes send their flushes and, with --redis, where their state and other nodes'
  // changes come from: SQLite, or the cluster's Redis streams (storage/commit_log.h).
  virtual CommitLog& commits() = 0;
  virtual uint64_t incarnation() const = 0;
  // The bound listener ports (0: that listener is off); hints for peers on the wrong port.
  virtual uint16_t tcp_port() const = 0;
  virtual uint16_t http_port() const = 0;
};

}  // namespace scenecrdt::server

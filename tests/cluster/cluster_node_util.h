// SPDX-License-Identifier: Apache-2.0
// Owns the helpers the `serve --redis` tests share: a node's config on a test redis-server, a
// client joined to a scene (waited for), a node's scene reaching a state hash, a stream's
// length, and an --auth file with a write token "w" and a read token "r" for every scene.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "scenecrdt/client/client.h"
#include "scenecrdt/server/config.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {

server::ServerConfig NodeConfig(const RedisTestServer& redis, uint32_t compact_ms = 0,
                                uint32_t retain_ms = 10000);
// A client of `url` joined to `scene` (its state applied), or a failed expectation.
std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     std::optional<uint64_t> resume = std::nullopt,
                                     const std::string& token = {});
// Waits until the node's copy of `scene` has `hash` (nodes merge others' entries
// asynchronously, from their read loop).
bool NodeReaches(TestServer& node, const std::string& scene, const std::string& hash);
uint64_t StreamLength(const RedisTestServer& redis, const std::string& scene);
// `dir`/auth.json: token "w" writes every scene, token "r" reads every scene.
std::string WriteAuth(const std::string& dir);
// One series of the node's GET /metrics (-1 when absent).
double NodeMetric(TestServer& node, const std::string& series);

}  // namespace scenecrdt::testing

// SPDX-License-Identifier: Apache-2.0
// Owns the client tests' in-process server: a scenecrdt server on 127.0.0.1 ephemeral ports
// with its data in a scratch directory, restartable on the same data (a new incarnation), and
// helpers to read a scene's state hash and replay streams.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/server.h"

namespace scenecrdt::client::test {

class TestServer {
 public:
  TestServer() {
    config_.http_listen = "127.0.0.1:0";
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "scenecrdt-client-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) dir_ = tmpl;
  }
  ~TestServer() {
    Stop();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // The config Start() uses; tests may change it before.
  server::ServerConfig& config() { return config_; }

  // Starts (or restarts, on the same data) the server; false when it could not.
  bool Start() {
    Stop();
    if (dir_.empty()) return false;
    config_.tcp_listen = "127.0.0.1:0";
    config_.data_dir = dir_;
    config_.fsync = false;
    server_ = std::make_unique<server::Server>(config_);
    return server_->Start(false).has_value();
  }
  void Stop() {
    if (!server_) return;
    server_->RequestStop();
    server_->Wait();
    server_.reset();
  }

  server::Server& get() { return *server_; }
  uint16_t tcp_port() const { return server_->tcp_port(); }
  std::string tcp_url() const { return "tcp://127.0.0.1:" + std::to_string(tcp_port()); }
  std::string ws_url() const { return "ws://127.0.0.1:" + std::to_string(server_->http_port()); }

  // The scene's state hash (empty store's hash when it does not exist yet).
  std::string SceneHash(const std::string& scene) {
    std::string hash = runtime::CrdtStore().StateHashHex();
    server_->InspectScene(
        scene, [&](const runtime::CrdtStore& store, uint64_t) { hash = store.StateHashHex(); });
    return hash;
  }
  // The register's timestamp and whether it holds `x` as position.x; {0, false} when absent.
  std::pair<uint32_t, float> TransformOf(const std::string& scene, protocol::EntityId entity) {
    std::pair<uint32_t, float> out{0, 0.0f};
    server_->InspectScene(scene, [&](const runtime::CrdtStore& store, uint64_t) {
      auto r = store.FindRegister(protocol::kTransformComponentId, entity);
      if (r && r->transform) out = {r->timestamp, r->transform->position.x};
    });
    return out;
  }

 private:
  std::string dir_;
  server::ServerConfig config_;
  std::unique_ptr<server::Server> server_;
};

inline std::string ReplayHash(std::span<const uint8_t> stream) {
  runtime::CrdtStore store;
  EXPECT_TRUE(store.MergeStream(stream).has_value());
  return store.StateHashHex();
}

}  // namespace scenecrdt::client::test

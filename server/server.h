// SPDX-License-Identifier: Apache-2.0
// Owns Server: the io_context and its threads, the listeners, the scene and session
// registries, persistence, the demo writer and the graceful stop. `scenecrdt serve` is a thin
// wrapper; tests run it in process on ephemeral ports.
//
// Stop sequence (SIGINT/SIGTERM or RequestStop): stop accepting; stop reading from every
// session; every scene commits what it merged and sends the last acks; every session gets a
// fatal Error kShuttingDown after its queue and is closed; persistence stops; threads join.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/server/cluster/cluster_node.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/demo.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/scene/scene_registry.h"
#include "scenecrdt/server/sessions/session.h"
#include "scenecrdt/server/sessions/session_registry.h"
#include "scenecrdt/server/storage/data_dir_lock.h"
#include "scenecrdt/server/storage/persistence.h"
#include "scenecrdt/server/transport/connection_context.h"
#include "scenecrdt/server/transport/connection_limiter.h"
#include "scenecrdt/server/transport/listener.h"
#include "scenecrdt/server/transport/tls_context.h"
#include "scenecrdt/server/web/scene_directory.h"

namespace scenecrdt::server {

class Server final : public ServerContext {
 public:
  explicit Server(ServerConfig config);
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads --auth and --data, binds the listeners, starts persistence and the io threads.
  // `handle_signals`: SIGINT/SIGTERM call RequestStop. A damaged database is kCorruptData
  // (start_diagnostic() says what SQLite found and how to salvage).
  Result<void> Start(bool handle_signals);
  // Why Start failed, in words (SQLite's text and what to do next); "" when it did not say.
  const std::string& start_diagnostic() const { return start_diagnostic_; }
  // Stored scenes found at start.
  std::size_t stored_scenes() const { return stored_scenes_; }
  // Thread-safe; returns at once. The stop runs in Wait().
  void RequestStop();
  // Blocks until RequestStop, then stops gracefully and joins everything. Returns 0 when
  // every scene was flushed, 1 when a final commit failed.
  int Wait();
  // A longer explanation of the last Start failure (e.g. who holds the data directory); empty
  // when the error's detail says it all.
  const std::string& start_hint() const { return start_hint_; }
  // The connection caps in force (after Start: defaults resolved).
  const ConnectionCaps& connection_caps() const { return limiter_->caps(); }

  // Scenes held in memory now.
  std::size_t num_scenes() const;
  // Evicts idle scenes now (tests; a timer does it every second).
  void SweepIdleScenes() { scenes_->Sweep(); }
  // Reads --tls-cert/--tls-key again for new connections (what SIGHUP does); open sessions
  // keep theirs. False (and a log line) when the files do not load or the certificate is
  // expired or not yet valid (the old ones stay), or without TLS (nothing to reload).
  bool ReloadTls();
  // SIGHUP: reads the --auth table and the --jwt-* keys again (the same paths). On success new
  // joins use them and every joined session is checked again (PostRecheckGrant); on failure
  // the previous credentials stay in use. Logged either way (event "auth_reload").
  bool ReloadAccess();
  // SIGHUP, before the two above: reads the config file again (ServerConfig::reread_config)
  // and applies its reloadable keys (kReloadableKeys: the log level, the credential paths);
  // a change to another key is logged as needing a restart and ignored. Event
  // "config_reload" names what was reloaded. False when the file does not read (nothing of
  // it applies) or without --config.
  bool ReloadConfig();
  bool tls() const { return tls_ != nullptr; }

  // Runs `read` on the scene's strand and waits for it (not from an io thread). False when
  // nothing is stored under `name` (a stored scene is loaded).
  bool InspectScene(const std::string& name,
                    const std::function<void(const runtime::CrdtStore&, uint64_t)>& read);
  // The scene's owner rows (--authority owner; docs/AUTHORITY.md), as InspectScene; nullopt
  // when nothing is stored under `name`.
  std::optional<std::vector<OwnerRow>> SceneOwners(const std::string& name);

  // ---- ServerContext ----
  net::asio::io_context& ioc() override { return ioc_; }
  const ServerConfig& config() const override { return config_; }
  const AccessControl& auth() const override { return auth_; }
  const OriginPolicy& origins() const override { return origins_; }
  Metrics& metrics() override { return metrics_; }
  const EventLog& log() const override { return log_; }
  Persistence& persistence() override { return *persistence_; }
  CommitLog& commits() override {
    return cluster_ ? static_cast<CommitLog&>(*cluster_) : *persistence_;
  }
  // The cluster membership with --redis; nullptr without (the embedded default).
  ClusterNode* cluster() { return cluster_.get(); }
  // The stored scene names for the viewer's list (after Start).
  SceneDirectory* scene_directory() { return directory_.get(); }
  uint64_t incarnation() const override { return persistence_ ? persistence_->incarnation() : 0; }
  uint16_t tcp_port() const override { return tcp_ ? tcp_->port() : 0; }
  uint16_t http_port() const override { return http_ ? http_->port() : 0; }

 private:
  // What the listeners hand each connection (the registries below, the scene directory).
  ConnectionContext Connections();
  // Posts `start(done)` for each item and waits (bounded) until every done ran.
  template <class Items, class Fn>
  bool ForEachAndWait(const Items& items, Fn start, std::chrono::milliseconds timeout);

  ServerConfig config_;
  AccessControl auth_;
  OriginPolicy origins_;
  Metrics metrics_;
  EventLog log_;
  net::asio::io_context ioc_;
  std::optional<net::asio::executor_work_guard<net::asio::io_context::executor_type>> work_;
  std::unique_ptr<DataDirLock> data_lock_;  // held from Start to the end of Wait (no --redis)
  std::string start_hint_;
  std::unique_ptr<Persistence> persistence_;   // without --redis
  std::unique_ptr<ClusterNode> cluster_;       // with --redis (then no SQLite)
  std::unique_ptr<SceneDirectory> directory_;  // reads persistence_ or Redis: declared after
  std::unique_ptr<ConnectionLimiter> limiter_;
  std::unique_ptr<Listener> tcp_;
  std::unique_ptr<Listener> http_;
  std::unique_ptr<net::asio::signal_set> signals_;
  std::unique_ptr<net::asio::signal_set>
      hangup_;  // SIGHUP: ReloadTls, ReloadAccess (always handled)
  std::unique_ptr<TlsContexts> tls_;
  void WaitHangup();
  // Logs the current certificate's validity (`when`: "start", "reload"), sets its gauge and
  // counts (and flags) a certificate outside its validity period.
  void NoteCertificate(const char* when);
  std::vector<std::thread> threads_;

  std::unique_ptr<SceneRegistry> scenes_;
  std::string start_diagnostic_;
  std::size_t stored_scenes_ = 0;

  SessionRegistry sessions_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;
  bool stopped_ = false;

  // Shutdown phases: callbacks of an earlier (timed out) phase are ignored by id.
  std::mutex phase_mu_;
  std::condition_variable phase_cv_;
  uint64_t phase_id_ = 0;
  std::size_t phase_pending_ = 0;

  std::unique_ptr<Demo> demo_;  // --demo
};

}  // namespace scenecrdt::server

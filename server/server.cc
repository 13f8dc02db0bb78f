// SPDX-License-Identifier: Apache-2.0
// Owns starting, running and stopping the server and the registries.
#include "scenecrdt/server/server.h"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/server/cluster/cluster_scene_list.h"
#include "scenecrdt/server/transport/endpoint.h"

namespace scenecrdt::server {

Server::Server(ServerConfig config)
    : config_(std::move(config)),
      log_(config_.log_sink, config_.log_events, config_.log_format, config_.log_level),
      scenes_(std::make_unique<SceneRegistry>(*this)) {}

Server::~Server() {
  if (!threads_.empty() && !stopped_) {
    RequestStop();
    Wait();
  }
}

Result<void> Server::Start(bool handle_signals) {
  if (config_.tls_cert_file.empty() != config_.tls_key_file.empty()) {
    start_hint_ = "give both --tls-cert and --tls-key";
    return MakeError(ErrorCode::kInvalidArgument, "--tls-cert and --tls-key go together");
  }
  if (!config_.tls_cert_file.empty()) {
    auto tls = TlsContexts::Load(config_.tls_cert_file, config_.tls_key_file, start_hint_);
    if (!tls.has_value()) return tls.error();
    tls_ = std::move(tls.value());
    NoteCertificate("start");
  }
  auto access = AccessControl::Load(config_.access, start_hint_);
  if (!access.has_value()) return access.error();
  auth_ = std::move(access.value());
  if (!config_.admin_token_file.empty()) {
    std::ifstream in(config_.admin_token_file, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    std::string token = text.str();
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    if (!in || token.size() < kMinAdminTokenBytes) {
      start_hint_ = "--admin-token-file " + config_.admin_token_file +
                    (in ? " holds fewer than 16 bytes: put a long random token in it (for "
                          "example: openssl rand -hex 32)"
                        : " cannot be read; check the path and permissions");
      return MakeError(ErrorCode::kInvalidArgument, "cannot read the admin token");
    }
    config_.admin_token = std::move(token);
  }
  auto origins = OriginPolicy::Parse(config_.allowed_origins, config_.allowed_hosts);
  if (!origins.has_value()) return origins.error();
  origins_ = std::move(origins.value());
  std::optional<net::tcp::endpoint> tcp_endpoint;
  std::optional<net::tcp::endpoint> http_endpoint;
  for (auto [text, out] : {std::pair{&config_.tcp_listen, &tcp_endpoint},
                           std::pair{&config_.http_listen, &http_endpoint}}) {
    if (text->empty()) continue;
    auto endpoint = ParseEndpoint(*text);
    if (!endpoint.has_value()) return endpoint.error();
    if (auth_.open() && !endpoint->address().is_loopback()) {
      return MakeError(ErrorCode::kUnauthorized,
                       "without --auth or --jwt-* the server only binds loopback addresses");
    }
    if (config_.tls_cert_file.empty() && !config_.insecure_no_tls &&
        !endpoint->address().is_loopback()) {
      start_hint_ =
          "tokens and scene data would cross the network in clear text: give "
          "--tls-cert and --tls-key, or --insecure-no-tls behind a TLS proxy";
      return MakeError(ErrorCode::kInvalidArgument,
                       "without TLS the server only binds loopback addresses");
    }
    *out = endpoint.value();
  }
  if (!config_.redis_url.empty()) {
    // Cluster mode: Redis holds the scenes; they are loaded when first joined (no SQLite,
    // no data directory).
    // In json mode the Redis connections' lines are json lines of the event log too (event
    // "cluster"), so a json log holds nothing else; in text mode they stay as they were.
    cluster::LogSink redis_log;
    if (config_.log_format == LogFormat::kJson) {
      redis_log = [this](std::string_view line) { log_.Message(LogLevel::kWarn, "cluster", line); };
    }
    auto node = ClusterNode::Open(config_, metrics_, std::move(redis_log));
    if (!node.has_value()) return node.error();
    cluster_ = std::move(node.value());
    metrics_.render_extra = [node = cluster_.get()](PrometheusText& out) {
      node->RenderPrometheus(out);
    };
  } else {
    data_lock_ = DataDirLock::Acquire(config_.data_dir, start_hint_);
    if (!data_lock_) return MakeError(ErrorCode::kIo, "cannot lock the data directory");
    PersistenceOptions store_options;
    store_options.dir = config_.data_dir;
    store_options.fsync = config_.fsync;
    store_options.max_db_bytes = config_.max_db_bytes;
    store_options.log = &log_;
    auto persistence = Persistence::Open(store_options, metrics_, &start_diagnostic_);
    if (!persistence.has_value()) return persistence.error();
    persistence_ = std::move(persistence.value());
    // Scenes are loaded when first joined (scene_registry.h); listing them reads every table
    // once more, with every return code checked.
    auto stored = persistence_->ListScenes(&start_diagnostic_);
    if (!stored.has_value()) return stored.error();
    stored_scenes_ = stored->size();
  }
  if (cluster_) {
    auto source = ClusterSceneNames(config_, cluster_->key_prefix());
    if (!source.has_value()) return source.error();
    directory_ = std::make_unique<SceneDirectory>(std::move(source.value()), metrics_, log_);
  } else {
    directory_ = std::make_unique<SceneDirectory>(StoredSceneNames(*persistence_), metrics_, log_);
  }
  const Limits& l = config_.limits;
  limiter_ = std::make_unique<ConnectionLimiter>(
      ConnectionCaps{l.max_connections != 0 ? l.max_connections
                                            : ConnectionsForFds(OpenFileLimit(), l.http_reserve),
                     l.max_connections_per_ip, l.http_reserve});
  metrics_.connections_cap.store(limiter_->caps().max_total, std::memory_order_relaxed);
  metrics_.scenes_cap.store(l.max_scenes_in_memory, std::memory_order_relaxed);
  if (tcp_endpoint) {
    tcp_ =
        std::make_unique<Listener>(Connections(), ListenerKind::kFramedTcp, *limiter_, tls_.get());
    if (auto r = tcp_->Open(*tcp_endpoint); !r.has_value()) return r.error();
  }
  if (http_endpoint) {
    http_ = std::make_unique<Listener>(Connections(), ListenerKind::kHttp, *limiter_, tls_.get());
    if (auto r = http_->Open(*http_endpoint); !r.has_value()) return r.error();
  }
  if (handle_signals) {
    signals_ = std::make_unique<net::asio::signal_set>(ioc_, SIGINT, SIGTERM);
    signals_->async_wait([this](const net::error_code& ec, int) {
      if (!ec) RequestStop();
    });
    // Always: SIGHUP's default action would end the process without a goodbye to anyone.
    hangup_ = std::make_unique<net::asio::signal_set>(ioc_, SIGHUP);
    WaitHangup();
  }
  if (persistence_) persistence_->Start();
  if (cluster_) cluster_->Start();
  directory_->Start();
  work_.emplace(ioc_.get_executor());
  scenes_->StartSweeper();
  if (tcp_) tcp_->Start();
  if (http_) http_->Start();
  if (config_.demo) {
    demo_ = std::make_unique<Demo>(*this, *scenes_, config_.demo_hz);
    demo_->Start();
  }
  const int threads = std::max(1, config_.threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        // Handlers do not throw (error_code overloads only); if one ever did, log and go on
        // rather than tearing the server down.
        try {
          ioc_.run();
          return;
        } catch (const std::exception& e) {
          log_.Message(LogLevel::kError, "serve", std::string("handler threw: ") + e.what());
        }
      }
    });
  }
  return {};
}

void Server::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_requested_ = true;
  }
  stop_cv_.notify_all();
}

ConnectionContext Server::Connections() {
  return ConnectionContext{*this, *scenes_, sessions_, directory_.get()};
}

template <class Items, class Fn>
bool Server::ForEachAndWait(const Items& items, Fn start, std::chrono::milliseconds timeout) {
  uint64_t phase;
  {
    std::lock_guard<std::mutex> lock(phase_mu_);
    phase = ++phase_id_;
    phase_pending_ = items.size();
  }
  for (const auto& item : items) {
    start(item, [this, phase] {
      std::lock_guard<std::mutex> lock(phase_mu_);
      if (phase_id_ == phase && phase_pending_ > 0 && --phase_pending_ == 0) {
        phase_cv_.notify_all();
      }
    });
  }
  std::unique_lock<std::mutex> lock(phase_mu_);
  return phase_cv_.wait_for(lock, timeout, [&] { return phase_pending_ == 0; });
}

int Server::Wait() {
  {
    std::unique_lock<std::mutex> lock(stop_mu_);
    stop_cv_.wait(lock, [&] { return stop_requested_; });
    if (stopped_) return 0;
  }
  // 1. Stop accepting and writing the demo.
  if (tcp_) tcp_->Stop();
  if (http_) http_->Stop();
  if (directory_) directory_->Stop();  // listings still waiting are answered now
  if (signals_) {
    net::asio::post(ioc_, [this] {
      net::error_code ec;
      signals_->cancel(ec);
      if (hangup_) hangup_->cancel(ec);
    });
  }
  if (demo_) demo_->Stop();
  const std::vector<Scene*> scenes = scenes_->Freeze();
  // 2. No new frames: every frame read so far is already posted to its scene.
  ForEachAndWait(
      sessions_.Live(),
      [](const std::shared_ptr<Session>& s, std::function<void()> done) {
        s->PostStopReading(std::move(done));
      },
      std::chrono::seconds(2));
  // 3. Every scene commits what it merged and releases its acks.
  const bool flushed = ForEachAndWait(
      scenes, [](Scene* s, std::function<void()> done) { s->Flush(std::move(done)); },
      std::chrono::seconds(20));
  if (!flushed) {
    const std::string error = persistence_ ? persistence_->last_error() : std::string();
    log_.Message(LogLevel::kError, "serve",
                 std::string("a final commit did not complete: ") +
                     (!persistence_   ? "Redis did not take it"
                      : error.empty() ? "the commit did not finish within 20 s"
                                      : error.c_str()));
  }
  // 4. Close every session after what it has queued (the acks above included).
  for (const auto& s : sessions_.Live()) {
    s->PostClose(ErrorCode::kShuttingDown, "the server is stopping");
  }
  sessions_.WaitUntilEmpty(std::chrono::seconds(3));
  // 5. Stop the cluster node (its threads post to scene strands), the io threads and the
  // persistence thread.
  if (cluster_) cluster_->Stop();
  work_.reset();
  ioc_.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  if (persistence_) persistence_->Stop();
  data_lock_.reset();
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopped_ = true;
  }
  return flushed ? 0 : 1;
}

void Server::WaitHangup() {
  hangup_->async_wait([this](const net::error_code& ec, int) {
    if (ec) return;
    ReloadConfig();
    ReloadTls();
    ReloadAccess();
    WaitHangup();
  });
}

bool Server::ReloadConfig() {
  if (!config_.reread_config) return false;
  ServerConfig fresh;
  std::vector<std::string> changed;
  std::string why;
  if (!config_.reread_config(fresh, changed, why)) {
    Metrics::Add(metrics_.config_reload_failures);
    log_.Write(LogLevel::kError, "config_reload",
               "ok=no detail=\"%s\" (nothing of the file applied; fix it and send SIGHUP again)",
               why.c_str());
    return false;
  }
  std::string reloaded, restart;
  uint64_t restart_keys = 0;
  // Credentials change in place only between credentials: open mode (loopback only, all may
  // write) to tokens or back is a restart.
  const AccessConfig& a = fresh.access;
  const bool credentials =
      !a.auth_file.empty() || !a.jwt_secret_files.empty() || !a.jwt_public_keys.empty();
  const bool access_in_place = !auth_.open() && credentials;
  for (const std::string& key : changed) {
    const bool reloadable = IsReloadableKey(key) && (key == "log-level" || access_in_place);
    restart_keys += reloadable ? 0 : 1;
    std::string& list = reloadable ? reloaded : restart;
    list += (list.empty() ? "" : ",") + key;
  }
  // The credential paths: ReloadAccess (next) reads them. The level after the line below.
  if (access_in_place) config_.access = fresh.access;
  Metrics::Add(metrics_.config_reloads);
  Metrics::Add(metrics_.config_restart_needed, restart_keys);
  log_.Write(restart.empty() ? LogLevel::kInfo : LogLevel::kWarn, "config_reload",
             "ok=yes reloaded=%s needs_restart=%s%s", reloaded.empty() ? "-" : reloaded.c_str(),
             restart.empty() ? "-" : restart.c_str(),
             restart.empty() ? "" : " (changed in the file, ignored until a restart)");
  config_.log_level = fresh.log_level;
  log_.set_min_level(fresh.log_level);
  return true;
}

bool Server::ReloadTls() {
  if (!tls_) {
    log_.Write(LogLevel::kInfo, "reload", "tls=off detail=%s",
               "nothing to reload: started without --tls-cert");
    return false;
  }
  std::string why;
  const auto reloaded = tls_->Reload(why, WallSeconds());
  if (!reloaded.has_value()) {
    if (reloaded.error().code == ErrorCode::kInvalidArgument) {
      Metrics::Add(metrics_.tls_certificate_invalid);
    }
    log_.Write(LogLevel::kError, "tls_reload",
               "ok=no detail=%s (the previous certificate stays in use)", why.c_str());
    return false;
  }
  Metrics::Add(metrics_.tls_reloads);
  log_.Write(LogLevel::kInfo, "tls_reload",
             "ok=yes cert=%s (new connections use it; open sessions keep theirs)",
             config_.tls_cert_file.c_str());
  NoteCertificate("reload");
  return true;
}

bool Server::ReloadAccess() {
  if (auth_.open()) {
    log_.Write(LogLevel::kInfo, "auth_reload", "ok=no detail=%s",
               "nothing to reload: started without --auth or --jwt-* (open mode)");
    return false;
  }
  std::string why;
  auto fresh = AccessControl::Load(config_.access, why);
  if (!fresh.has_value()) {
    Metrics::Add(metrics_.auth_reload_failures);
    log_.Write(LogLevel::kError, "auth_reload",
               "ok=no detail=\"%s\" (the previous credentials stay in use)", why.c_str());
    return false;
  }
  auth_.Replace(std::move(fresh.value()));
  Metrics::Add(metrics_.auth_reloads);
  const std::vector<std::shared_ptr<Session>> sessions = sessions_.Live();
  for (const auto& s : sessions) s->PostRecheckGrant();
  log_.Write(LogLevel::kInfo, "auth_reload",
             "ok=yes auth_file=%s jwt_keys=%zu sessions_rechecked=%zu (new joins use them; "
             "sessions whose token no longer grants their scene are closed)",
             config_.access.auth_file.empty() ? "-" : config_.access.auth_file.c_str(),
             config_.access.jwt_secret_files.size() + config_.access.jwt_public_keys.size(),
             sessions.size());
  return true;
}

void Server::NoteCertificate(const char* when) {
  const CertificateValidity v = tls_->validity();
  const auto now = WallSeconds();
  const char* state = v.StateAt(now);
  metrics_.tls_certificate_not_after.store(v.not_after.time_since_epoch().count(),
                                           std::memory_order_relaxed);
  const bool valid = std::string_view(state) == "valid";
  if (!valid) Metrics::Add(metrics_.tls_certificate_invalid);
  log_.Write(valid ? LogLevel::kInfo : LogLevel::kWarn, "tls_certificate",
             "when=%s state=%s not_before=%s not_after=%s expires_in_s=%lld warning=%s", when,
             state, UtcText(v.not_before).c_str(), UtcText(v.not_after).c_str(),
             static_cast<long long>((v.not_after - now).count()),
             valid ? "-" : "verifying clients refuse this certificate");
}

std::size_t Server::num_scenes() const { return scenes_->size(); }

bool Server::InspectScene(const std::string& name,
                          const std::function<void(const runtime::CrdtStore&, uint64_t)>& read) {
  return scenes_->WithScene(name, [&](Scene& scene) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    scene.Inspect([&](const runtime::CrdtStore& store, uint64_t seq) {
      read(store, seq);
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  });
}

std::optional<std::vector<OwnerRow>> Server::SceneOwners(const std::string& name) {
  std::optional<std::vector<OwnerRow>> out;
  const bool found = scenes_->WithScene(name, [&](Scene& scene) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    scene.Owners([&](std::vector<OwnerRow> rows) {
      std::lock_guard<std::mutex> lock(mu);
      out = std::move(rows);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  });
  if (!found) return std::nullopt;
  return out;
}

}  // namespace scenecrdt::server

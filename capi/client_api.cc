// SPDX-License-Identifier: Apache-2.0
// Owns struct sc_client and the sc_client_* entry points (docs/C-ABI.md, "Client"): a
// client::Client with reconnect, resume and fail-over on, its replica handed out as a
// read-only sc_runtime view, writes through the client (stamped, sent, resent until acked),
// interpolation on the client's replica. Every entry point catches; an exception that
// interrupted a change marks the handle broken.
#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "scenecrdt/capi/internal/conversions.h"
#include "scenecrdt/capi/internal/runtime_handle.h"
#include "scenecrdt/client/client.h"

struct sc_client {
  explicit sc_client(scenecrdt::client::ClientOptions options)
      : client(std::make_unique<scenecrdt::client::Client>(std::move(options))),
        view(client->runtime()) {}

  std::unique_ptr<scenecrdt::client::Client> client;
  sc_runtime view;  // read-only; the runtime object stays in place across resyncs
  bool broken = false;
};

namespace scenecrdt::capi::internal {
namespace {

int CheckClient(const sc_client* c, const char* function) noexcept {
  if (c == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "client is NULL");
  if (c->broken || c->view.broken) {
    return Fail(SC_E_BROKEN, function,
                "the client failed internally earlier (see that call's error); destroy it");
  }
  return SC_OK;
}

template <class Body>
int GuardClientRead(const sc_client* c, const char* function, Body&& body) noexcept {
  if (const int status = CheckClient(c, function); status != SC_OK) return status;
  try {
    return body(static_cast<const client::Client&>(*c->client));
  } catch (...) {
    return FailFromException(function, false);
  }
}

template <class Body>
int GuardClientWrite(sc_client* c, const char* function, Body&& body) noexcept {
  if (const int status = CheckClient(c, function); status != SC_OK) return status;
  try {
    return body(*c->client);
  } catch (...) {
    c->broken = true;
    return FailFromException(function, true);
  }
}

int ClosedStatus(const client::Client& c, const char* function) {
  const client::ClientError& last = c.last_error();
  if (last.code != ErrorCode::kOk) {
    return Fail(SC_E_CLOSED, function, "the client is closed for good: %s%s: %s; destroy it",
                last.from_server ? "the server refused: " : "", ErrorCodeName(last.code),
                last.text.c_str());
  }
  const Error& e = c.close_error();
  return Fail(SC_E_CLOSED, function, "the client is closed for good: %s%s%s; destroy it",
              e.detail != nullptr && e.detail[0] != '\0' ? e.detail : "closed",
              e.code != ErrorCode::kOk ? " " : "",
              e.code != ErrorCode::kOk ? ErrorCodeName(e.code) : "");
}

// A write's Result as a status.
int WriteStatus(const client::Client& c, const Result<void>& written, const char* function) {
  if (written.has_value()) return SC_OK;
  const Error& e = written.error();
  switch (e.code) {
    case ErrorCode::kNonFiniteTransform:
      return Fail(SC_E_INVALID_ARGUMENT, function, "%s: %s", ErrorCodeName(e.code), e.detail);
    case ErrorCode::kRateLimited:
      return Fail(SC_E_FULL, function, "%s; poll (writes go out when connected), then retry",
                  e.detail);
    case ErrorCode::kIo:
      return ClosedStatus(c, function);
    default:
      return Fail(SC_E_REFUSED, function, "refused: %s: %s", ErrorCodeName(e.code), e.detail);
  }
}

}  // namespace
}  // namespace scenecrdt::capi::internal

using scenecrdt::capi::internal::Fail;
using scenecrdt::capi::internal::GuardClientRead;
using scenecrdt::capi::internal::GuardClientWrite;
using scenecrdt::client::Client;

namespace {

int SetInterest(sc_client* client, const char* function, const scenecrdt::client::Interest& i) {
  return GuardClientWrite(client, function, [&](Client& c) -> int {
    const scenecrdt::Result<void> set = c.SetInterest(i);
    if (!set.has_value()) {
      return Fail(SC_E_INVALID_ARGUMENT, function, "invalid_interest: %s; interest unchanged",
                  set.error().detail);
    }
    return SC_OK;
  });
}

}  // namespace

extern "C" {

sc_client* sc_client_connect(const char* url, const char* scene, const char* token) {
  constexpr const char* kFunction = "sc_client_connect";
  if (url == nullptr) {
    Fail(SC_E_INVALID_ARGUMENT, kFunction, "url is NULL");
    return nullptr;
  }
  try {
    scenecrdt::client::ClientOptions options;
    options.url = url;
    if (scene != nullptr) options.scene = scene;
    if (token != nullptr) options.token = token;
    options.client_name = "libscenecrdt";
    // A renderer survives server restarts and a server that is not up yet.
    options.reconnect.enabled = true;
    options.reconnect.retry_first_connect = true;
    auto handle = std::make_unique<sc_client>(std::move(options));
    const scenecrdt::Result<void> started = handle->client->Start();
    if (!started.has_value()) {
      Fail(SC_E_INVALID_ARGUMENT, kFunction, "%s (url \"%s\")", started.error().detail, url);
      return nullptr;
    }
    return handle.release();
  } catch (...) {
    scenecrdt::capi::internal::FailFromException(kFunction, false);
    return nullptr;
  }
}

void sc_client_destroy(sc_client* client) {
  if (client == nullptr) return;
  try {
    client->client->Stop();
  } catch (...) {
    scenecrdt::capi::internal::FailFromException("sc_client_destroy", false);
  }
  delete client;
}

int sc_client_poll(sc_client* client, uint32_t timeout_ms) {
  constexpr const char* kFunction = "sc_client_poll";
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    if (timeout_ms > 0) c.WaitForInput(std::chrono::milliseconds(timeout_ms));
    const std::size_t frames = c.Poll();
    if (!c.interpolation_enabled()) c.Update();
    if (c.closed()) return scenecrdt::capi::internal::ClosedStatus(c, kFunction);
    return frames > static_cast<std::size_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(frames);
  });
}

int sc_client_state_ready(const sc_client* client) {
  return GuardClientRead(client, "sc_client_state_ready",
                         [](const Client& c) -> int { return c.state_ready() ? 1 : 0; });
}

int sc_client_connected(const sc_client* client) {
  return GuardClientRead(client, "sc_client_connected",
                         [](const Client& c) -> int { return c.synced() ? 1 : 0; });
}

const sc_runtime* sc_client_runtime(const sc_client* client) {
  if (scenecrdt::capi::internal::CheckClient(client, "sc_client_runtime") != SC_OK) {
    return nullptr;
  }
  return &client->view;
}

int sc_client_write_transform(sc_client* client, uint32_t entity, const sc_transform* t) {
  constexpr const char* kFunction = "sc_client_write_transform";
  if (t == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "t is NULL");
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    return scenecrdt::capi::internal::WriteStatus(
        c, c.WriteTransform(entity, scenecrdt::capi::internal::ToTransform(*t)), kFunction);
  });
}

int sc_client_delete_transform(sc_client* client, uint32_t entity) {
  constexpr const char* kFunction = "sc_client_delete_transform";
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    return scenecrdt::capi::internal::WriteStatus(c, c.DeleteTransform(entity), kFunction);
  });
}

int sc_client_delete_entity(sc_client* client, uint32_t entity) {
  constexpr const char* kFunction = "sc_client_delete_entity";
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    return scenecrdt::capi::internal::WriteStatus(c, c.DeleteEntity(entity), kFunction);
  });
}

int sc_client_flush(sc_client* client) {
  constexpr const char* kFunction = "sc_client_flush";
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    if (c.closed()) return scenecrdt::capi::internal::ClosedStatus(c, kFunction);
    (void)c.Flush();
    return SC_OK;
  });
}

int sc_client_set_interest(sc_client* client, float x, float y, float z, float radius) {
  scenecrdt::client::Interest i;
  i.center = {x, y, z};
  i.radius = radius;
  return SetInterest(client, "sc_client_set_interest", i);
}

int sc_client_follow_interest(sc_client* client, uint32_t entity, float radius) {
  scenecrdt::client::Interest i;
  i.follow_entity = entity;
  i.radius = radius;
  return SetInterest(client, "sc_client_follow_interest", i);
}

int sc_client_clear_interest(sc_client* client) {
  return GuardClientWrite(client, "sc_client_clear_interest", [&](Client& c) -> int {
    c.ClearInterest();
    return SC_OK;
  });
}

int sc_client_enable_interpolation(sc_client* client, const sc_interpolation_options* options) {
  constexpr const char* kFunction = "sc_client_enable_interpolation";
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    scenecrdt::runtime::InterpolationOptions converted;
    if (const int status = scenecrdt::capi::internal::OptionsFromC(options, &converted, kFunction);
        status != SC_OK) {
      return status;
    }
    const scenecrdt::Result<void> enabled = c.EnableInterpolation(converted);
    if (!enabled.has_value()) {
      return Fail(SC_E_INVALID_ARGUMENT, kFunction, "%s; interpolation unchanged",
                  enabled.error().detail);
    }
    return SC_OK;
  });
}

int sc_client_disable_interpolation(sc_client* client) {
  return GuardClientWrite(client, "sc_client_disable_interpolation", [](Client& c) -> int {
    c.DisableInterpolation();
    return SC_OK;
  });
}

int sc_client_update_interpolated(sc_client* client, int64_t render_time_us) {
  constexpr const char* kFunction = "sc_client_update_interpolated";
  return GuardClientWrite(client, kFunction, [&](Client& c) -> int {
    const scenecrdt::Result<void> updated = c.UpdateInterpolated(render_time_us);
    if (!updated.has_value()) {
      return Fail(SC_E_INVALID_ARGUMENT, kFunction,
                  "render_time_us %" PRId64 ": %s (within +-2^60 us); nothing updated",
                  render_time_us, updated.error().detail);
    }
    return SC_OK;
  });
}

int sc_client_state(const sc_client* client) {
  return GuardClientRead(client, "sc_client_state", [](const Client& c) -> int {
    return static_cast<int>(c.state());  // the enum's order is the C values'
  });
}

const char* sc_client_state_name(int state) {
  if (state < SC_CLIENT_CONNECTING || state > SC_CLIENT_CLOSED) return "unknown";
  return scenecrdt::client::ClientStateName(static_cast<scenecrdt::client::ClientState>(state));
}

int sc_client_last_error(const sc_client* client, uint32_t* code, char* text, size_t cap,
                         size_t* len) {
  constexpr const char* kFunction = "sc_client_last_error";
  return GuardClientRead(client, kFunction, [&](const Client& c) -> int {
    if (len == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "len is NULL");
    if (text == nullptr && cap != 0) {
      return Fail(SC_E_INVALID_ARGUMENT, kFunction, "text is NULL with cap %zu", cap);
    }
    const scenecrdt::client::ClientError& e = c.last_error();
    std::string line;
    if (e.code != scenecrdt::ErrorCode::kOk) {
      line = std::string(scenecrdt::ErrorCodeName(e.code)) + ": " + e.text;
    }
    if (code != nullptr) *code = static_cast<uint32_t>(e.code);
    *len = line.size() + 1;
    if (*len > cap) {
      return Fail(SC_E_BUFFER_TOO_SMALL, kFunction, "%zu bytes, room for %zu (*len = %zu)", *len,
                  cap, *len);
    }
    std::memcpy(text, line.c_str(), *len);
    return SC_OK;
  });
}

int sc_client_set_give_up(sc_client* client, uint32_t max_attempts, uint32_t deadline_ms) {
  return GuardClientWrite(client, "sc_client_set_give_up", [&](Client& c) -> int {
    c.SetGiveUp(max_attempts, deadline_ms);
    return SC_OK;
  });
}

int sc_client_get_stats(const sc_client* client, sc_client_stats* out) {
  constexpr const char* kFunction = "sc_client_get_stats";
  return GuardClientRead(client, kFunction, [&](const Client& c) -> int {
    const scenecrdt::client::ClientStats s = c.stats();
    sc_client_stats value{};
    value.struct_size = sizeof(sc_client_stats);
    value.current_server = static_cast<uint32_t>(c.current_server());
    value.connects = s.connects;
    value.reconnects = s.reconnects;
    value.failovers = s.failovers;
    value.resumes = s.resumes;
    value.resyncs = s.resyncs;
    value.pending_frames = c.pending_frames();
    value.unsent_writes = c.unsent_writes();
    value.live_frames = s.live_frames;
    value.bytes_received = s.bytes_received;
    value.bytes_sent = s.bytes_sent;
    value.refusals = s.refused_writes;
    // Callers built before `refusals` was appended pass the size up to it.
    return scenecrdt::capi::internal::WriteOutput(value, out, offsetof(sc_client_stats, refusals),
                                                  "sc_client_stats", kFunction);
  });
}

}  // extern "C"

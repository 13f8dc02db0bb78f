// SPDX-License-Identifier: Apache-2.0
// Owns AdminGet: one GET of the server's admin HTTP API (docs/OPERATIONS.md "Admin API") over
// plain http or https, with the admin bearer token, a body bound and a deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace scenecrdt::cli {

// Where the admin API listens: the server's --http listener.
struct AdminEndpoint {
  std::string host;
  std::string port;
  bool tls = false;  // https: the certificate verified against --ca (or the system store)
};

// "HOST:PORT", "http://HOST:PORT" or "https://HOST:PORT" (IPv6 as [ADDR]:PORT); nullopt
// otherwise.
std::optional<AdminEndpoint> ParseAdminEndpoint(std::string_view text);

// GET `target` with "Authorization: Bearer token", within `timeout`: the body of a 200 answer
// (at most `max_body` bytes), else nullopt and `error` says why (the connection, TLS, or the
// server's status and answer). `ca_file`: CA certificates for https (empty: the system store).
std::optional<std::string> AdminGet(const AdminEndpoint& at, const std::string& target,
                                    const std::string& token, const std::string& ca_file,
                                    std::size_t max_body, std::chrono::milliseconds timeout,
                                    std::string& error);

}  // namespace scenecrdt::cli

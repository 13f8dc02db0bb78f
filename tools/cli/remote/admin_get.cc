// SPDX-License-Identifier: Apache-2.0
// Owns AdminGet (tools/cli/remote/admin_get.h): the admin API's GET over http or https.
#include "tools/cli/remote/admin_get.h"

#include <memory>

#include "scenecrdt/client/internal/client_tls.h"
#include "scenecrdt/net/net.h"
#include "scenecrdt/net/tls.h"

namespace scenecrdt::cli {

namespace {

namespace http = net::beast::http;
using TlsStream = net::ssl::stream<net::beast::tcp_stream>;

// Writes the request and reads the answer on `stream`, then reports through `done`.
template <class Stream, class Done>
void Exchange(Stream& stream, http::request<http::empty_body>& req, net::beast::flat_buffer& buffer,
              http::response_parser<http::string_body>& parser, Done done) {
  http::async_write(stream, req,
                    [&stream, &buffer, &parser, done](net::error_code written, std::size_t) {
                      if (written) return done(written);
                      http::async_read(stream, buffer, parser,
                                       [done](net::error_code got, std::size_t) { done(got); });
                    });
}

}  // namespace

std::optional<AdminEndpoint> ParseAdminEndpoint(std::string_view text) {
  AdminEndpoint at;
  if (text.starts_with("https://")) {
    at.tls = true;
    text.remove_prefix(8);
  } else if (text.starts_with("http://")) {
    text.remove_prefix(7);
  }
  if (!text.empty() && text.back() == '/') text.remove_suffix(1);
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return std::nullopt;
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || host.find_first_of("/?#@ ") != std::string_view::npos) return std::nullopt;
  at.host = std::string(host);
  at.port = std::string(port);
  return at;
}

std::optional<std::string> AdminGet(const AdminEndpoint& at, const std::string& target,
                                    const std::string& token, const std::string& ca_file,
                                    std::size_t max_body, std::chrono::milliseconds timeout,
                                    std::string& error) {
  const std::string where = std::string(at.tls ? "https://" : "http://") + at.host + ":" + at.port;
  std::shared_ptr<net::ssl::context> tls_context;
  if (at.tls) {
    auto made = client::MakeTlsContext(ca_file);
    if (!made.has_value()) {
      error = made.error().detail;
      return std::nullopt;
    }
    tls_context = std::move(made).value();
  }
  net::asio::io_context ioc;
  net::tcp::resolver resolver(ioc);
  net::beast::tcp_stream plain(ioc);
  std::optional<TlsStream> tls;
  if (tls_context) tls.emplace(ioc, *tls_context);
  net::beast::tcp_stream& tcp = tls ? tls->next_layer() : plain;
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, at.host + ":" + at.port);
  req.set(http::field::authorization, "Bearer " + token);
  net::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body);
  net::error_code failure = net::asio::error::timed_out;
  bool verify_failed = false;
  const auto done = [&failure](const net::error_code& ec) { failure = ec; };
  resolver.async_resolve(
      at.host, at.port, [&](net::error_code resolved, net::tcp::resolver::results_type r) {
        if (resolved) return done(resolved);
        tcp.async_connect(r, [&](net::error_code connected, const net::tcp::endpoint&) {
          if (connected) return done(connected);
          if (!tls) return Exchange(plain, req, buffer, parser, done);
          client::PrepareClientHandshake(*tls, at.host);
          tls->async_handshake(net::ssl::stream_base::client, [&](net::error_code shaken) {
            if (shaken) {
              verify_failed = client::IsCertificateRefused(shaken);
              return done(shaken);
            }
            Exchange(*tls, req, buffer, parser, done);
          });
        });
      });
  ioc.run_for(timeout);
  if (failure) {
    error = "GET " + target + " on " + where + ": " +
            (verify_failed ? std::string(client::kUntrustedCertificate) : failure.message());
    return std::nullopt;
  }
  const auto& res = parser.get();
  if (res.result_int() != 200) {
    error = "GET " + target + " on " + where + " answered " + std::to_string(res.result_int()) +
            ": " + res.body();
    while (!error.empty() && error.back() == '\n') error.pop_back();
    return std::nullopt;
  }
  return res.body();
}

}  // namespace scenecrdt::cli

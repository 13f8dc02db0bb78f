// SPDX-License-Identifier: Apache-2.0
// Owns the client side of TLS (internal: not installed): the context of tls:// and wss://
// clients and of the admin API's https GET, what every client handshake sets first (SNI and
// the host check) and how a refused certificate is told.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <string_view>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::client {

// The client's TLS context: TLS 1.2 or later, the server's certificate verified against
// `ca_file` (or the system store). Errors name the file.
Result<std::shared_ptr<net::ssl::context>> MakeTlsContext(const std::string& ca_file);

// Before the handshake of `stream` (any net::ssl::stream): SNI names `host` unless it is an IP
// address (RFC 6066), and the server's certificate must name `host` (DNS name or IP address).
template <class SslStream>
void PrepareClientHandshake(SslStream& stream, const std::string& host) {
  net::error_code not_ip;
  net::asio::ip::make_address(host, not_ip);
  if (not_ip) {
    SSL_ctrl(stream.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(host.c_str()));
  }
  stream.set_verify_callback(net::ssl::host_name_verification(host));
}

// True when a handshake failed because the server's certificate was not trusted or not for
// the host (then say kUntrustedCertificate, which tells what to do).
bool IsCertificateRefused(const net::error_code& handshake_error);
inline constexpr std::string_view kUntrustedCertificate =
    "the server's certificate is not trusted or not for this host (a private CA needs --ca FILE)";

}  // namespace scenecrdt::client

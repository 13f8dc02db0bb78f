// SPDX-License-Identifier: Apache-2.0
// Owns the client's TLS context settings and the reading of a refused certificate
// (client/internal/client_tls.h).
#include "scenecrdt/client/internal/client_tls.h"

#include <openssl/err.h>

namespace scenecrdt::client {

Result<std::shared_ptr<net::ssl::context>> MakeTlsContext(const std::string& ca_file) {
  auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_client);
  net::error_code ec;
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                       net::ssl::context::no_tlsv1_1,
                   ec);
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
  } else {
    ctx->load_verify_file(ca_file, ec);
  }
  if (ec) {
    return MakeError(ErrorCode::kIo,
                     "cannot load the CA certificates for TLS (--ca FILE: a PEM file)");
  }
  ctx->set_verify_mode(net::ssl::verify_peer);
  return ctx;
}

bool IsCertificateRefused(const net::error_code& handshake_error) {
  return handshake_error.category() == net::asio::error::get_ssl_category() &&
         ERR_GET_REASON(static_cast<unsigned long>(handshake_error.value())) ==
             SSL_R_CERTIFICATE_VERIFY_FAILED;
}

}  // namespace scenecrdt::client

// SPDX-License-Identifier: Apache-2.0
// Owns building the server's ssl::context from PEM files and swapping it on reload.
#include "scenecrdt/server/tls_context.h"

namespace scenecrdt::server {

std::shared_ptr<net::ssl::context> TlsContexts::Build(const std::string& cert_file,
                                                      const std::string& key_file,
                                                      std::string& why) {
  auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_server);
  net::error_code ec;
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                       net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use,
                   ec);
  if (!ec) ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    why =
        "--tls-cert " + cert_file + ": " + ec.message() + " (a PEM certificate chain, leaf first)";
    return nullptr;
  }
  ctx->use_private_key_file(key_file, net::ssl::context::pem, ec);
  if (ec) {
    why = "--tls-key " + key_file + ": " + ec.message() + " (an unencrypted PEM private key)";
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    why = "--tls-key " + key_file + " does not belong to the certificate in " + cert_file;
    return nullptr;
  }
  return ctx;
}

Result<std::unique_ptr<TlsContexts>> TlsContexts::Load(const std::string& cert_file,
                                                       const std::string& key_file,
                                                       std::string& why) {
  std::unique_ptr<TlsContexts> out(new TlsContexts(cert_file, key_file));
  if (auto r = out->Reload(why); !r.has_value()) return r.error();
  return out;
}

Result<void> TlsContexts::Reload(std::string& why) {
  auto ctx = Build(cert_file_, key_file_, why);
  if (!ctx) return MakeError(ErrorCode::kIo, "cannot load the TLS certificate or key");
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(ctx);
  return {};
}

std::shared_ptr<net::ssl::context> TlsContexts::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

}  // namespace scenecrdt::server

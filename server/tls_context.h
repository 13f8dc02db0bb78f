// SPDX-License-Identifier: Apache-2.0
// Owns TlsContexts: the server side of TLS (--tls-cert, --tls-key): one ssl::context per load
// of the certificate chain and key (TLS 1.2 or later). Reload (SIGHUP) builds a new context for
// connections accepted afterwards; open sessions keep the one they started with (OpenSSL
// counts its references), so a certificate rotation drops nobody (docs/SERVER.md "TLS").
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

class TlsContexts {
 public:
  // Reads both PEM files. On failure the error, and `why` names the file and OpenSSL's reason.
  static Result<std::unique_ptr<TlsContexts>> Load(const std::string& cert_file,
                                                   const std::string& key_file, std::string& why);
  // Reads the files again; on failure the current context stays and `why` says why.
  Result<void> Reload(std::string& why);
  // The context for a new connection. Thread-safe.
  std::shared_ptr<net::ssl::context> current() const;

 private:
  TlsContexts(std::string cert_file, std::string key_file)
      : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)) {}
  static std::shared_ptr<net::ssl::context> Build(const std::string& cert_file,
                                                  const std::string& key_file, std::string& why);

  const std::string cert_file_;
  const std::string key_file_;
  mutable std::mutex mu_;
  std::shared_ptr<net::ssl::context> current_;
};

}  // namespace scenecrdt::server

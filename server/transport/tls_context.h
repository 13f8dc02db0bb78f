// SPDX-License-Identifier: Apache-2.0
// Owns TlsContexts: the server side of TLS (--tls-cert, --tls-key): one ssl::context per load
// of the certificate chain and key (TLS 1.2 or later). Reload (SIGHUP) builds a new context for
// connections accepted afterwards; open sessions keep the one they started with (OpenSSL
// counts its references), so a certificate rotation drops nobody (docs/SERVER.md "TLS").
// The leaf certificate's validity period is read on every load: a reload refuses a
// certificate that is expired or not yet valid (the current one stays); the first load
// accepts it, and the server warns (Server::NoteCertificate).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// The leaf certificate's notBefore .. notAfter, to the second.
struct CertificateValidity {
  std::chrono::sys_seconds not_before;
  std::chrono::sys_seconds not_after;
  // "valid", "expired" or "not_yet_valid" at `now`.
  const char* StateAt(std::chrono::sys_seconds now) const;
};

// "2026-01-31T12:00:00Z".
std::string UtcText(std::chrono::sys_seconds t);

class TlsContexts {
 public:
  // Reads both PEM files. On failure the error, and `why` names the file and OpenSSL's reason.
  // A certificate outside its validity period is loaded (the caller warns).
  static Result<std::unique_ptr<TlsContexts>> Load(const std::string& cert_file,
                                                   const std::string& key_file, std::string& why);
  // Reads the files again; on failure the current context stays and `why` says why. A
  // certificate that is expired or not yet valid at `now` is refused (kInvalidArgument, the
  // state and dates in `why`): every verifying client would refuse it; the current may not be.
  Result<void> Reload(std::string& why, std::chrono::sys_seconds now);
  // The context for a new connection. Thread-safe.
  std::shared_ptr<net::ssl::context> current() const;
  // The validity of the current context's certificate. Thread-safe.
  CertificateValidity validity() const;

 private:
  TlsContexts(std::string cert_file, std::string key_file)
      : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)) {}
  static std::shared_ptr<net::ssl::context> Build(const std::string& cert_file,
                                                  const std::string& key_file,
                                                  CertificateValidity& validity, std::string& why);

  const std::string cert_file_;
  const std::string key_file_;
  mutable std::mutex mu_;
  std::shared_ptr<net::ssl::context> current_;
  CertificateValidity validity_;
};

}  // namespace scenecrdt::server

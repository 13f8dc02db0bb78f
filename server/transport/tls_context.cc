// SPDX-License-Identifier: Apache-2.0
// Owns building the server's ssl::context from PEM files, reading its certificate's validity
// period and swapping the context on reload.
#include "scenecrdt/server/transport/tls_context.h"

#include <openssl/asn1.h>
#include <openssl/x509.h>

#include <cstdio>
#include <ctime>

namespace scenecrdt::server {

namespace {

// An ASN1_TIME as seconds since the epoch (false when OpenSSL cannot read it).
bool ToSysSeconds(const ASN1_TIME* time, std::chrono::sys_seconds& out) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return false;
  out = std::chrono::sys_seconds{std::chrono::seconds{timegm(&tm)}};
  return true;
}

}  // namespace

const char* CertificateValidity::StateAt(std::chrono::sys_seconds now) const {
  if (now >= not_after) return "expired";
  if (now < not_before) return "not_yet_valid";
  return "valid";
}

std::string UtcText(std::chrono::sys_seconds t) {
  const std::time_t seconds = t.time_since_epoch().count();
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[80];  // room for any int fields, so the format can never truncate
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  return text;
}

std::shared_ptr<net::ssl::context> TlsContexts::Build(const std::string& cert_file,
                                                      const std::string& key_file,
                                                      CertificateValidity& validity,
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
  const X509* leaf = SSL_CTX_get0_certificate(ctx->native_handle());
  if (leaf == nullptr || !ToSysSeconds(X509_get0_notBefore(leaf), validity.not_before) ||
      !ToSysSeconds(X509_get0_notAfter(leaf), validity.not_after)) {
    why = "--tls-cert " + cert_file + ": the certificate's validity dates do not read";
    return nullptr;
  }
  return ctx;
}

Result<std::unique_ptr<TlsContexts>> TlsContexts::Load(const std::string& cert_file,
                                                       const std::string& key_file,
                                                       std::string& why) {
  std::unique_ptr<TlsContexts> out(new TlsContexts(cert_file, key_file));
  auto ctx = Build(cert_file, key_file, out->validity_, why);
  if (!ctx) return MakeError(ErrorCode::kIo, "cannot load the TLS certificate or key");
  out->current_ = std::move(ctx);
  return out;
}

Result<void> TlsContexts::Reload(std::string& why, std::chrono::sys_seconds now) {
  CertificateValidity validity;
  auto ctx = Build(cert_file_, key_file_, validity, why);
  if (!ctx) return MakeError(ErrorCode::kIo, "cannot load the TLS certificate or key");
  const std::string state = validity.StateAt(now);
  if (state != "valid") {
    why = "--tls-cert " + cert_file_ + " is " + state + " (valid " + UtcText(validity.not_before) +
          " to " + UtcText(validity.not_after) + ")";
    return MakeError(ErrorCode::kInvalidArgument, "the certificate is outside its validity period");
  }
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(ctx);
  validity_ = validity;
  return {};
}

std::shared_ptr<net::ssl::context> TlsContexts::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

CertificateValidity TlsContexts::validity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return validity_;
}

}  // namespace scenecrdt::server

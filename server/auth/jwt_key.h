// SPDX-License-Identifier: Apache-2.0
// Owns JwtKey: one verification key for signed access tokens (an HS256 secret, or an Ed25519 or
// P-256 public key) and the signature check over OpenSSL 3. The key decides the algorithm: a
// token is only ever checked with the algorithm its key was loaded for (docs/AUTH.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

enum class JwtAlgorithm : uint8_t {
  kHs256,  // HMAC-SHA-256 with a shared secret (RFC 7518 section 3.2)
  kEdDsa,  // Ed25519 (RFC 8037); header `alg` "EdDSA" or "Ed25519"
  kEs256,  // ECDSA P-256 + SHA-256, signature raw r||s (RFC 7518 section 3.4)
};

// The canonical `alg` header value ("HS256", "EdDSA", "ES256").
const char* JwtAlgorithmName(JwtAlgorithm algorithm);
// The algorithm a header `alg` names; nullopt for anything else ("none", "RS256", "hs256", ...).
std::optional<JwtAlgorithm> JwtAlgorithmFromHeader(std::string_view alg);

class JwtKey {
 public:
  static constexpr std::size_t kMinSecretBytes = 32;   // RFC 7518 3.2: at least the hash size
  static constexpr std::size_t kMaxFileBytes = 65536;  // key files above this are refused

  // An HS256 key. Errors: kInvalidArgument when shorter than kMinSecretBytes.
  static Result<JwtKey> FromSecret(std::string_view secret);
  // An HS256 key from a file (--jwt-secret): its bytes less trailing '\r'/'\n' characters.
  // Errors: kIo (unreadable or over kMaxFileBytes), then as FromSecret.
  static Result<JwtKey> FromSecretFile(const std::string& path);
  // An EdDSA or ES256 key from "-----BEGIN PUBLIC KEY-----" PEM text. Errors: kParse (no public
  // key PEM; a private key is refused too), kInvalidArgument (not Ed25519 nor EC P-256).
  static Result<JwtKey> FromPublicKeyPem(std::string_view pem);
  // As FromPublicKeyPem, from a file (--jwt-public-key). Errors: kIo, then as above.
  static Result<JwtKey> FromPublicKeyPemFile(const std::string& path);

  JwtKey(JwtKey&& other) noexcept;
  JwtKey& operator=(JwtKey&& other) noexcept;
  ~JwtKey();

  JwtAlgorithm algorithm() const;
  // True when `signature` (decoded bytes: 32 for HS256, 64 for EdDSA and ES256) signs
  // `signing_input` (the token's "header.payload" text). Any other length is false. HMACs are
  // compared in constant time. Thread-safe: the key is only read.
  bool Verify(std::string_view signing_input, std::span<const uint8_t> signature) const;

 private:
  struct Impl;
  explicit JwtKey(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace scenecrdt::server

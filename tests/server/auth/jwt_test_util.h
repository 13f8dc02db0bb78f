// SPDX-License-Identifier: Apache-2.0
// Owns the JWT and TLS tests' fixtures: keys and certificates made by the `openssl` CLI in a
// temporary directory, and a token signer over the OpenSSL API that is independent of the
// verifier under test (it reads private keys, signs, and turns ES256 DER into raw r||s itself).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/server/auth/jwt_verifier.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {

// Runs `command` with /bin/sh; its stdout, and its exit status in `status` (-1: not run).
std::string RunShell(const std::string& command, int& status);

// A self-signed certificate for localhost and 127.0.0.1 (it is its own CA) and its key, made
// by the openssl CLI in `dir` as NAME.crt and NAME.key (the TLS tests).
struct TestCert {
  std::string cert;
  std::string key;
};
TestCert MakeCert(const std::string& dir, const std::string& name);

// Keys generated once per test binary with the openssl CLI. Paths are PEM files.
class JwtTestKeys {
 public:
  // Generates everything; ok() is false (and error() says why) when a command failed.
  JwtTestKeys();
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_.path(); }

  std::string secret;  // 64 text bytes, also in secret_file followed by "\n"
  std::string secret_file;
  std::string ed25519_private, ed25519_public;
  std::string ed25519_other_private;  // a second key: its signatures must not verify
  std::string ed25519_other_public;   // ... unless this is configured too (key rotation)
  std::string p256_private, p256_public;
  std::string p384_public;  // the wrong curve for ES256
  std::string rsa_public;   // RS256 is not supported

 private:
  std::string Run(const std::string& command);
  TempDir dir_;
  std::string error_;
};

// One JwtTestKeys for the whole test binary, made on first use (key generation takes time).
const JwtTestKeys& SharedJwtTestKeys();

// The raw signature bytes JWS carries: HMAC-SHA-256 of `input` under `secret`.
std::vector<uint8_t> SignHs256(std::string_view secret, std::string_view input);
// Ed25519 (64 bytes) or ECDSA P-256 + SHA-256 with the private key in `private_pem_path`.
// ES256 comes back as raw r||s (64 bytes) unless `der` is true. Empty on failure.
std::vector<uint8_t> SignWithPem(const std::string& private_pem_path, std::string_view input,
                                 bool der = false);
// ECDSA DER signature -> raw r||s, 32 bytes each (what a JWS library must send).
std::vector<uint8_t> EcdsaDerToRaw(const std::vector<uint8_t>& der);

// base64url(header) "." base64url(claims): the signing input.
std::string SigningInput(std::string_view header_json, std::string_view claims_json);
// signing_input "." base64url(signature).
std::string JoinToken(std::string_view signing_input, const std::vector<uint8_t>& signature);

// Seconds since the epoch as a sys_seconds.
inline std::chrono::sys_seconds UnixSeconds(int64_t s) {
  return std::chrono::sys_seconds{std::chrono::seconds{s}};
}

// What the verifier fixtures sign with: the test key of each algorithm.
enum class TestSigner : uint8_t { kHs256, kEdDsa, kEs256 };

inline constexpr int64_t kJwtNow = 1'700'000'000;   // the injected "now" of most tests
inline constexpr int64_t kJwtExp = kJwtNow + 3600;  // a valid expiry
inline constexpr char kHs256Header[] = R"({"alg":"HS256","typ":"JWT"})";
inline constexpr char kEdDsaHeader[] = R"({"alg":"EdDSA","typ":"JWT"})";
inline constexpr char kEs256Header[] = R"({"alg":"ES256","typ":"JWT"})";

// {"sub":"alice","scenes":["lobby","arena"],"role":"write","exp":exp}
std::string ValidClaims(int64_t exp = kJwtExp);

// Fixture for the verifier suites: the shared keys, a signer per algorithm and verifiers.
class JwtFixture : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(keys().ok()) << keys().error(); }
  static const JwtTestKeys& keys() { return SharedJwtTestKeys(); }

  // header.claims signed with the test key of `signer` (whatever alg the header names).
  static std::string Token(TestSigner signer, std::string_view header, std::string_view claims);
  // A valid token of each algorithm, with its default header.
  static std::string ValidToken(TestSigner signer, std::string_view claims = ValidClaims());
  static std::string HeaderFor(TestSigner signer);

  static server::JwtKey SecretKey();
  static server::JwtKey Ed25519Key();
  static server::JwtKey P256Key();
  static server::JwtKey KeyFor(TestSigner signer);
  // A verifier with the one key of `signer` (or several keys), asserting it is created.
  static server::JwtVerifier Verifier(TestSigner signer, server::JwtOptions options = {});
  static server::JwtVerifier Verifier(std::vector<server::JwtKey> keys,
                                      server::JwtOptions options = {});
  static std::chrono::sys_seconds Now(int64_t offset_s = 0) {
    return UnixSeconds(kJwtNow + offset_s);
  }
};

inline constexpr TestSigner kAllSigners[] = {TestSigner::kHs256, TestSigner::kEdDsa,
                                             TestSigner::kEs256};

// Success when `result` is kUnauthorized with exactly `reason` as its detail.
template <class T>
::testing::AssertionResult Refused(const Result<T>& result, std::string_view reason) {
  if (result.has_value()) return ::testing::AssertionFailure() << "accepted, expected " << reason;
  if (result.error().code != ErrorCode::kUnauthorized) {
    return ::testing::AssertionFailure() << "code " << ErrorCodeName(result.error().code);
  }
  if (reason != result.error().detail) {
    return ::testing::AssertionFailure()
           << "reason " << result.error().detail << ", expected " << reason;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace scenecrdt::testing

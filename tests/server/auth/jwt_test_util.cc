// SPDX-License-Identifier: Apache-2.0
// Owns key generation with the openssl CLI and signing with the OpenSSL API for the JWT tests.
#include "tests/server/auth/jwt_test_util.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "scenecrdt/server/auth/jwt_base64url.h"

namespace scenecrdt::testing {

std::string RunShell(const std::string& command, int& status) {
  status = -1;
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int raw = pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

TestCert MakeCert(const std::string& dir, const std::string& name) {
  TestCert out{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
  int status = -1;
  const std::string output = RunShell(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
          out.key + " -out " + out.cert + " 2>&1",
      status);
  EXPECT_EQ(status, 0) << output;
  return out;
}

std::string JwtTestKeys::Run(const std::string& command) {
  if (!error_.empty()) return {};
  int status = -1;
  std::string out = RunShell("(" + command + ") 2>&1", status);
  if (status != 0) error_ = "`" + command + "` failed: " + out;
  return out;
}

JwtTestKeys::JwtTestKeys() {
  if (dir_.path().empty()) {
    error_ = "no temporary directory";
    return;
  }
  const std::string d = dir_.path() + "/";
  secret_file = d + "secret";
  ed25519_private = d + "ed25519.pem";
  ed25519_public = d + "ed25519.pub.pem";
  ed25519_other_private = d + "ed25519-other.pem";
  ed25519_other_public = d + "ed25519-other.pub.pem";
  p256_private = d + "p256.pem";
  p256_public = d + "p256.pub.pem";
  p384_public = d + "p384.pub.pem";
  rsa_public = d + "rsa.pub.pem";
  // 48 random bytes as base64: 64 characters, the text is the secret (docs/AUTH.md).
  Run("openssl rand -base64 48 | tr -d '\\n' > " + secret_file);
  std::ifstream in(secret_file);
  std::getline(in, secret);
  Run("echo >> " + secret_file);
  Run("openssl genpkey -algorithm ed25519 -out " + ed25519_private);
  Run("openssl pkey -in " + ed25519_private + " -pubout -out " + ed25519_public);
  Run("openssl genpkey -algorithm ed25519 -out " + ed25519_other_private);
  Run("openssl pkey -in " + ed25519_other_private + " -pubout -out " + ed25519_other_public);
  Run("openssl ecparam -name prime256v1 -genkey -noout -out " + p256_private);
  Run("openssl pkey -in " + p256_private + " -pubout -out " + p256_public);
  Run("openssl ecparam -name secp384r1 -genkey -noout | openssl pkey -pubout -out " + p384_public);
  Run("openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 | openssl pkey -pubout -out " +
      rsa_public);
  if (ok() && secret.size() != 64) error_ = "unexpected secret length";
}

const JwtTestKeys& SharedJwtTestKeys() {
  static const JwtTestKeys keys;
  return keys;
}

std::vector<uint8_t> SignHs256(std::string_view secret, std::string_view input) {
  std::vector<uint8_t> mac(EVP_MAX_MD_SIZE);
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac.data(), &size);
  mac.resize(size);
  return mac;
}

std::vector<uint8_t> EcdsaDerToRaw(const std::vector<uint8_t>& der) {
  const unsigned char* p = der.data();
  std::unique_ptr<ECDSA_SIG, void (*)(ECDSA_SIG*)> sig(
      d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())), ECDSA_SIG_free);
  if (!sig) return {};
  std::vector<uint8_t> raw(64);
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), raw.data(), 32) != 32 ||
      BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), raw.data() + 32, 32) != 32) {
    return {};
  }
  return raw;
}

std::vector<uint8_t> SignWithPem(const std::string& private_pem_path, std::string_view input,
                                 bool der) {
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new_file(private_pem_path.c_str(), "r"), BIO_free);
  if (!bio) return {};
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!key) return {};
  const bool ec = EVP_PKEY_is_a(key.get(), "EC") == 1;
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t size = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(input.data());
  if (!ctx ||
      EVP_DigestSignInit(ctx.get(), nullptr, ec ? EVP_sha256() : nullptr, nullptr, key.get()) !=
          1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size, data, input.size()) != 1) {
    return {};
  }
  std::vector<uint8_t> sig(size);
  if (EVP_DigestSign(ctx.get(), sig.data(), &size, data, input.size()) != 1) return {};
  sig.resize(size);
  return ec && !der ? EcdsaDerToRaw(sig) : sig;
}

std::string SigningInput(std::string_view header_json, std::string_view claims_json) {
  return server::Base64UrlEncode(header_json) + "." + server::Base64UrlEncode(claims_json);
}

std::string JoinToken(std::string_view signing_input, const std::vector<uint8_t>& signature) {
  return std::string(signing_input) + "." + server::Base64UrlEncode(signature);
}

std::string ValidClaims(int64_t exp) {
  return R"({"sub":"alice","scenes":["lobby","arena"],"role":"write","exp":)" +
         std::to_string(exp) + "}";
}

std::string JwtFixture::Token(TestSigner signer, std::string_view header, std::string_view claims) {
  const std::string input = SigningInput(header, claims);
  switch (signer) {
    case TestSigner::kHs256:
      return JoinToken(input, SignHs256(keys().secret, input));
    case TestSigner::kEdDsa:
      return JoinToken(input, SignWithPem(keys().ed25519_private, input));
    case TestSigner::kEs256:
    default:
      return JoinToken(input, SignWithPem(keys().p256_private, input));
  }
}

std::string JwtFixture::HeaderFor(TestSigner signer) {
  switch (signer) {
    case TestSigner::kHs256:
      return kHs256Header;
    case TestSigner::kEdDsa:
      return kEdDsaHeader;
    case TestSigner::kEs256:
    default:
      return kEs256Header;
  }
}

std::string JwtFixture::ValidToken(TestSigner signer, std::string_view claims) {
  return Token(signer, HeaderFor(signer), claims);
}

server::JwtKey JwtFixture::SecretKey() {
  auto key = server::JwtKey::FromSecret(keys().secret);
  EXPECT_TRUE(key.has_value());
  return std::move(key).value();
}

server::JwtKey JwtFixture::Ed25519Key() {
  auto key = server::JwtKey::FromPublicKeyPemFile(keys().ed25519_public);
  EXPECT_TRUE(key.has_value());
  return std::move(key).value();
}

server::JwtKey JwtFixture::P256Key() {
  auto key = server::JwtKey::FromPublicKeyPemFile(keys().p256_public);
  EXPECT_TRUE(key.has_value());
  return std::move(key).value();
}

server::JwtKey JwtFixture::KeyFor(TestSigner signer) {
  switch (signer) {
    case TestSigner::kHs256:
      return SecretKey();
    case TestSigner::kEdDsa:
      return Ed25519Key();
    case TestSigner::kEs256:
    default:
      return P256Key();
  }
}

server::JwtVerifier JwtFixture::Verifier(TestSigner signer, server::JwtOptions options) {
  std::vector<server::JwtKey> keys;
  keys.push_back(KeyFor(signer));
  return Verifier(std::move(keys), std::move(options));
}

server::JwtVerifier JwtFixture::Verifier(std::vector<server::JwtKey> keys,
                                         server::JwtOptions options) {
  auto verifier = server::JwtVerifier::Create(std::move(keys), std::move(options));
  EXPECT_TRUE(verifier.has_value());
  return std::move(verifier).value();
}

}  // namespace scenecrdt::testing

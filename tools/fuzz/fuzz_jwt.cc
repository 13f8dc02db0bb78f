// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the signed access token verifier (server/auth/jwt_verifier.h). Input: byte 0
// picks the verifier's keys (bits 0-1: HS256, EdDSA, ES256, or all three) and whether the fuzzer
// signs the rest itself (bit 2: the rest is "header.payload", a valid signature by the first key is
// appended, so the claim rules are reached); the rest is the token. Checks (abort() when broken):
// every refusal is kUnauthorized with a known reason; an accepted token carries a signature that
// an independent check (OpenSSL's own base64, re-signing or digest-then-verify) confirms under a
// configured key, and claims that hold at `now`; Check agrees with Verify.
// Fixed, public keys: the HMAC key of RFC 7515 A.1, the Ed25519 key of RFC 8037 A.1, and a P-256
// key made for this target (x, y derived from d), so seeds can carry valid signatures.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/server/auth/authenticator.h"
#include "scenecrdt/server/auth/jwt_base64url.h"
#include "scenecrdt/server/auth/jwt_key.h"
#include "scenecrdt/server/auth/jwt_verifier.h"

using scenecrdt::ErrorCode;
using scenecrdt::server::Base64UrlDecode;
using scenecrdt::server::JwtKey;
using scenecrdt::server::JwtOptions;
using scenecrdt::server::JwtVerifier;
namespace reason = scenecrdt::server::auth_reason;

namespace {

constexpr char kHmacKey[] =
    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
constexpr char kEd25519D[] = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
constexpr char kP256X[] = "eL8LsVZbYoM9hBj82Iob-wmcq_rv4mv7lVx37i9LdhE";
constexpr char kP256Y[] = "iQGLdVGojJLg9yZcf5Fq0DMk4j6ByFsmuSfKxNJAydc";
constexpr char kP256D[] = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X-fCR2dl6_M";
const auto kNow = std::chrono::sys_seconds{std::chrono::seconds{1'700'000'000}};

void Require(bool ok) {
  if (!ok) std::abort();
}

std::vector<uint8_t> FromB64(const char* text) {
  auto bytes = Base64UrlDecode(text);
  Require(bytes.has_value());
  return std::move(bytes).value();
}

using Pkey = std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)>;

std::string PublicPem(EVP_PKEY* pkey) {
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new(BIO_s_mem()), BIO_free);
  Require(bio && PEM_write_bio_PUBKEY(bio.get(), pkey) == 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

Pkey MakeP256() {
  const std::vector<uint8_t> x = FromB64(kP256X), y = FromB64(kP256Y), d = FromB64(kP256D);
  std::vector<uint8_t> point = {0x04};  // uncompressed: 04 || x || y
  point.insert(point.end(), x.begin(), x.end());
  point.insert(point.end(), y.begin(), y.end());
  std::unique_ptr<BIGNUM, void (*)(BIGNUM*)> priv(
      BN_bin2bn(d.data(), static_cast<int>(d.size()), nullptr), BN_free);
  std::unique_ptr<OSSL_PARAM_BLD, void (*)(OSSL_PARAM_BLD*)> bld(OSSL_PARAM_BLD_new(),
                                                                 OSSL_PARAM_BLD_free);
  Require(priv && bld &&
          OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ==
              1 &&
          OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                           point.size()) == 1 &&
          OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv.get()) == 1);
  std::unique_ptr<OSSL_PARAM, void (*)(OSSL_PARAM*)> params(OSSL_PARAM_BLD_to_param(bld.get()),
                                                            OSSL_PARAM_free);
  std::unique_ptr<EVP_PKEY_CTX, void (*)(EVP_PKEY_CTX*)> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr), EVP_PKEY_CTX_free);
  EVP_PKEY* pkey = nullptr;
  Require(params && ctx && EVP_PKEY_fromdata_init(ctx.get()) == 1 &&
          EVP_PKEY_fromdata(ctx.get(), &pkey, EVP_PKEY_KEYPAIR, params.get()) == 1);
  return Pkey(pkey, EVP_PKEY_free);
}

// Standard base64 by OpenSSL, then turned into unpadded base64url: an encoder that shares no
// code with the verifier's decoder.
std::string OpensslBase64Url(const std::vector<uint8_t>& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : (c == '/' ? '_' : c);
  return out;
}

std::vector<uint8_t> Sign(EVP_PKEY* pkey, const EVP_MD* md, std::string_view input) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t size = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(input.data());
  Require(ctx && EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, pkey) == 1 &&
          EVP_DigestSign(ctx.get(), nullptr, &size, in, input.size()) == 1);
  std::vector<uint8_t> sig(size);
  Require(EVP_DigestSign(ctx.get(), sig.data(), &size, in, input.size()) == 1);
  sig.resize(size);
  return sig;
}

struct Fixture {
  std::vector<uint8_t> secret = FromB64(kHmacKey);
  Pkey ed25519{nullptr, EVP_PKEY_free};
  Pkey p256 = MakeP256();
  std::vector<JwtVerifier> verifiers;  // HS256, EdDSA, ES256, all three

  Fixture() {
    const std::vector<uint8_t> d = FromB64(kEd25519D);
    ed25519.reset(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, d.data(), d.size()));
    Require(ed25519 != nullptr);
    const auto make_keys = [&](int kind) {
      std::vector<JwtKey> keys;
      const std::string_view s(reinterpret_cast<const char*>(secret.data()), secret.size());
      if (kind == 0 || kind == 3) keys.push_back(std::move(JwtKey::FromSecret(s)).value());
      if (kind == 1 || kind == 3) {
        keys.push_back(std::move(JwtKey::FromPublicKeyPem(PublicPem(ed25519.get()))).value());
      }
      if (kind == 2 || kind == 3) {
        keys.push_back(std::move(JwtKey::FromPublicKeyPem(PublicPem(p256.get()))).value());
      }
      return keys;
    };
    for (int kind = 0; kind < 4; ++kind) {
      auto v = JwtVerifier::Create(make_keys(kind));
      Require(v.has_value());
      verifiers.push_back(std::move(v).value());
    }
  }

  std::vector<uint8_t> Hmac(std::string_view input) const {
    std::vector<uint8_t> mac(EVP_MAX_MD_SIZE);
    unsigned int size = 0;
    Require(HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                 reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac.data(),
                 &size) != nullptr);
    mac.resize(size);
    return mac;
  }

  // A valid signature of `input` by the key of `kind` (3: HS256), raw as JWS carries it.
  std::vector<uint8_t> ValidSignature(int kind, std::string_view input) const {
    if (kind == 1) return Sign(ed25519.get(), nullptr, input);
    if (kind == 2) {
      const std::vector<uint8_t> der = Sign(p256.get(), EVP_sha256(), input);
      const unsigned char* p = der.data();
      std::unique_ptr<ECDSA_SIG, void (*)(ECDSA_SIG*)> sig(
          d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())), ECDSA_SIG_free);
      std::vector<uint8_t> raw(64);
      Require(sig && BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), raw.data(), 32) == 32 &&
              BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), raw.data() + 32, 32) == 32);
      return raw;
    }
    return Hmac(input);
  }

  // ES256 checked the long way: OpenSSL's base64 decoder, SHA-256 first, then EVP_PKEY_verify.
  bool Es256Holds(std::string_view input, std::string_view sig_text) const {
    if (sig_text.size() != 86) return false;  // 64 bytes are 86 characters
    std::string b64(sig_text);
    for (char& c : b64) c = c == '-' ? '+' : (c == '_' ? '/' : c);
    while (b64.size() % 4 != 0) b64 += '=';
    std::vector<uint8_t> raw(b64.size());
    const int n = EVP_DecodeBlock(raw.data(), reinterpret_cast<const unsigned char*>(b64.data()),
                                  static_cast<int>(b64.size()));
    if (n < 64) return false;
    raw.resize(64);
    // One spelling only: the canonical encoding of the decoded bytes.
    if (OpensslBase64Url(raw) != sig_text) return false;
    std::array<unsigned char, 32> digest{};
    unsigned int digest_size = 0;
    Require(EVP_Digest(input.data(), input.size(), digest.data(), &digest_size, EVP_sha256(),
                       nullptr) == 1);
    std::unique_ptr<ECDSA_SIG, void (*)(ECDSA_SIG*)> sig(ECDSA_SIG_new(), ECDSA_SIG_free);
    BIGNUM* r = BN_bin2bn(raw.data(), 32, nullptr);
    BIGNUM* s = BN_bin2bn(raw.data() + 32, 32, nullptr);
    Require(sig && r && s && ECDSA_SIG_set0(sig.get(), r, s) == 1);
    unsigned char* der = nullptr;
    const int der_size = i2d_ECDSA_SIG(sig.get(), &der);
    std::unique_ptr<EVP_PKEY_CTX, void (*)(EVP_PKEY_CTX*)> ctx(
        EVP_PKEY_CTX_new(p256.get(), nullptr), EVP_PKEY_CTX_free);
    const bool ok = der_size > 0 && ctx && EVP_PKEY_verify_init(ctx.get()) == 1 &&
                    EVP_PKEY_verify(ctx.get(), der, static_cast<std::size_t>(der_size),
                                    digest.data(), digest_size) == 1;
    OPENSSL_free(der);
    return ok;
  }

  // Whether some key of verifier `kind` signed `token`, decided without the verifier's code.
  bool SignedByAConfiguredKey(int kind, std::string_view token) const {
    const std::size_t last = token.rfind('.');
    if (last == std::string_view::npos) return false;
    const std::string_view input = token.substr(0, last);
    const std::string_view sig_text = token.substr(last + 1);
    if ((kind == 0 || kind == 3) && OpensslBase64Url(Hmac(input)) == sig_text) return true;
    // Ed25519 signatures are deterministic: re-signing gives the only valid one.
    if ((kind == 1 || kind == 3) &&
        OpensslBase64Url(Sign(ed25519.get(), nullptr, input)) == sig_text) {
      return true;
    }
    return (kind == 2 || kind == 3) && Es256Holds(input, sig_text);
  }
};

bool KnownReason(std::string_view detail) {
  for (const char* r :
       {reason::kTooLarge, reason::kMalformed, reason::kWrongAlgorithm, reason::kUnsupportedHeader,
        reason::kBadSignature, reason::kExpired, reason::kNotYetValid, reason::kMissingExp,
        reason::kBadTime, reason::kBadSubject, reason::kBadScenes, reason::kBadRole}) {
    if (detail == r) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 8192) return 0;
  static const Fixture fixture;
  const int kind = data[0] & 3;
  const bool sign = (data[0] & 4) != 0;
  std::string token(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (sign) token += "." + OpensslBase64Url(fixture.ValidSignature(kind, token));

  const JwtVerifier& verifier = fixture.verifiers[static_cast<std::size_t>(kind)];
  const auto claims = verifier.Verify(token, kNow);
  const auto grant = verifier.Check(token, "lobby", kNow);
  if (!claims.has_value()) {
    Require(claims.error().code == ErrorCode::kUnauthorized && KnownReason(claims.error().detail));
    Require(!grant.has_value() && std::string_view(grant.error().detail) == claims.error().detail);
    return 0;
  }

  // Accepted: the structure, the signature and every claim rule must hold.
  const JwtOptions& options = verifier.options();
  Require(token.size() <= options.max_token_bytes);
  Require(std::count(token.begin(), token.end(), '.') == 2);
  Require(fixture.SignedByAConfiguredKey(kind, token));
  Require(kNow < claims->expires_at + options.leeway);
  Require(!claims->not_before || kNow >= *claims->not_before - options.leeway);
  Require(!claims->subject.empty() && claims->subject.size() <= 256);
  for (const char c : claims->subject) Require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
  for (const std::string& s : claims->scenes) Require(!s.empty());
  if (claims->Allows("lobby")) {
    Require(grant.has_value() && grant->role == claims->role && grant->subject == claims->subject &&
            grant->expires_at == claims->expires_at + options.leeway);
  } else {
    Require(!grant.has_value() && std::string_view(grant.error().detail) == reason::kMissingGrant);
  }
  return 0;
}

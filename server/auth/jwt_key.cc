// SPDX-License-Identifier: Apache-2.0
// Owns loading JWT verification keys and checking signatures with OpenSSL 3 (EVP interface).
// Every failed OpenSSL call has its error queue cleared here: the queue is per thread, and TLS
// code running later on the same io thread would otherwise read our stale errors as its own.
#include "scenecrdt/server/auth/jwt_key.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace scenecrdt::server {

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* p) const { ECDSA_SIG_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

constexpr std::size_t kHs256Bytes = 32;
constexpr std::size_t kEd25519SignatureBytes = 64;
constexpr std::size_t kEs256SignatureBytes = 64;  // r || s, 32 bytes each, big-endian

Result<std::string> ReadSmallFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return MakeError(ErrorCode::kIo, "the JWT key file is missing or not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kIo, "cannot read the JWT key file");
  std::string text;
  text.resize(JwtKey::kMaxFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return MakeError(ErrorCode::kIo, "cannot read the JWT key file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > JwtKey::kMaxFileBytes) {
    return MakeError(ErrorCode::kIo, "the JWT key file is larger than 64 KiB");
  }
  return text;
}

bool VerifyWithPkey(EVP_PKEY* pkey, const EVP_MD* md, std::span<const uint8_t> signature,
                    std::string_view signing_input) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, pkey) == 1 &&
                  EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                                   reinterpret_cast<const unsigned char*>(signing_input.data()),
                                   signing_input.size()) == 1;
  if (!ok) ERR_clear_error();
  return ok;
}

// JWS carries ECDSA signatures as fixed-width r||s; OpenSSL verifies the DER SEQUENCE form.
bool Es256RawToDer(std::span<const uint8_t> raw, std::vector<uint8_t>& der) {
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(raw.data(), 32, nullptr);
  BIGNUM* s = BN_bin2bn(raw.data() + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    ERR_clear_error();
    return false;
  }
  const int size = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (size <= 0) {
    ERR_clear_error();
    return false;
  }
  der.resize(static_cast<std::size_t>(size));
  unsigned char* out = der.data();
  return i2d_ECDSA_SIG(sig.get(), &out) == size;
}

}  // namespace

struct JwtKey::Impl {
  JwtAlgorithm algorithm = JwtAlgorithm::kHs256;
  std::vector<uint8_t> secret;  // HS256 only
  PkeyPtr pkey;                 // EdDSA and ES256 only

  ~Impl() {
    if (!secret.empty()) OPENSSL_cleanse(secret.data(), secret.size());
  }
};

const char* JwtAlgorithmName(JwtAlgorithm algorithm) {
  switch (algorithm) {
    case JwtAlgorithm::kHs256:
      return "HS256";
    case JwtAlgorithm::kEdDsa:
      return "EdDSA";
    case JwtAlgorithm::kEs256:
      return "ES256";
    default:
      return "unknown";
  }
}

std::optional<JwtAlgorithm> JwtAlgorithmFromHeader(std::string_view alg) {
  // Case-sensitive, as RFC 7515 section 4.1.1 requires: "hs256" or "NONE" name nothing.
  if (alg == "HS256") return JwtAlgorithm::kHs256;
  if (alg == "EdDSA" || alg == "Ed25519") return JwtAlgorithm::kEdDsa;
  if (alg == "ES256") return JwtAlgorithm::kEs256;
  return std::nullopt;
}

JwtKey::JwtKey(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JwtKey::JwtKey(JwtKey&& other) noexcept = default;
JwtKey& JwtKey::operator=(JwtKey&& other) noexcept = default;
JwtKey::~JwtKey() = default;

JwtAlgorithm JwtKey::algorithm() const { return impl_->algorithm; }

Result<JwtKey> JwtKey::FromSecret(std::string_view secret) {
  if (secret.size() < kMinSecretBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "the JWT secret is shorter than 32 bytes");
  }
  auto impl = std::make_unique<Impl>();
  impl->algorithm = JwtAlgorithm::kHs256;
  impl->secret.assign(secret.begin(), secret.end());
  return JwtKey(std::move(impl));
}

Result<JwtKey> JwtKey::FromSecretFile(const std::string& path) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text.has_value()) return text.error();
  std::string_view secret = *text;
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) {
    secret.remove_suffix(1);
  }
  Result<JwtKey> key = FromSecret(secret);
  OPENSSL_cleanse(text->data(), text->size());
  return key;
}

Result<JwtKey> JwtKey::FromPublicKeyPem(std::string_view pem) {
  if (pem.size() > kMaxFileBytes) {
    return MakeError(ErrorCode::kParse, "the JWT public key PEM is larger than 64 KiB");
  }
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr pkey(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!pkey) {
    ERR_clear_error();
    return MakeError(ErrorCode::kParse,
                     "expected a \"BEGIN PUBLIC KEY\" PEM (openssl pkey -pubout) for the JWT key");
  }
  auto impl = std::make_unique<Impl>();
  if (EVP_PKEY_is_a(pkey.get(), "ED25519") == 1) {
    impl->algorithm = JwtAlgorithm::kEdDsa;
  } else if (EVP_PKEY_is_a(pkey.get(), "EC") == 1) {
    std::array<char, 64> group{};
    std::size_t length = 0;
    if (EVP_PKEY_get_group_name(pkey.get(), group.data(), group.size(), &length) != 1) {
      ERR_clear_error();
      return MakeError(ErrorCode::kInvalidArgument, "the JWT EC public key has no named curve");
    }
    const std::string_view name(group.data(), length);
    if (name != "prime256v1" && name != "P-256") {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the JWT EC public key must be on P-256 (prime256v1) for ES256");
    }
    impl->algorithm = JwtAlgorithm::kEs256;
  } else {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the JWT public key must be Ed25519 (EdDSA) or EC P-256 (ES256)");
  }
  impl->pkey = std::move(pkey);
  return JwtKey(std::move(impl));
}

Result<JwtKey> JwtKey::FromPublicKeyPemFile(const std::string& path) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text.has_value()) return text.error();
  return FromPublicKeyPem(*text);
}

bool JwtKey::Verify(std::string_view signing_input, std::span<const uint8_t> signature) const {
  switch (impl_->algorithm) {
    case JwtAlgorithm::kHs256: {
      if (signature.size() != kHs256Bytes) return false;
      std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
      unsigned int mac_size = 0;
      if (!HMAC(EVP_sha256(), impl_->secret.data(), static_cast<int>(impl_->secret.size()),
                reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size(),
                mac.data(), &mac_size) ||
          mac_size != kHs256Bytes) {
        ERR_clear_error();
        return false;
      }
      // The length is public (fixed by the algorithm); the bytes are compared in constant time
      // so the time does not tell how much of a forged MAC was right.
      return CRYPTO_memcmp(mac.data(), signature.data(), kHs256Bytes) == 0;
    }
    case JwtAlgorithm::kEdDsa:
      if (signature.size() != kEd25519SignatureBytes) return false;
      // Ed25519 hashes internally: no digest is named (RFC 8032 PureEdDSA).
      return VerifyWithPkey(impl_->pkey.get(), nullptr, signature, signing_input);
    case JwtAlgorithm::kEs256: {
      if (signature.size() != kEs256SignatureBytes) return false;
      std::vector<uint8_t> der;
      if (!Es256RawToDer(signature, der)) return false;
      return VerifyWithPkey(impl_->pkey.get(), EVP_sha256(), der, signing_input);
    }
    default:
      return false;
  }
}

}  // namespace scenecrdt::server

// SPDX-License-Identifier: Apache-2.0
// The JWT building blocks: the strict base64url codec, the bounded JSON reader, and loading
// verification keys (secret files, public key PEMs made by the openssl CLI, refused key kinds).
#include "scenecrdt/server/auth/jwt_key.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "scenecrdt/server/auth/jwt_base64url.h"
#include "scenecrdt/server/auth/jwt_json.h"
#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using server::Base64UrlDecode;
using server::Base64UrlEncode;
using server::JwtAlgorithm;
using server::JwtKey;
using server::ParseJwtJson;

std::string AsText(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(JwtBase64UrlTest, Validity) {
  // Each invalid spelling, with where it fails.
  const struct {
    const char* text;
    uint64_t offset;
  } cases[] = {
      {"Zg==", 2},    // padding
      {"Zm9/", 3},    // '/' from the standard alphabet
      {"Zm+v", 2},    // '+' from the standard alphabet
      {"Zm 9", 2},    // whitespace
      {"Zm9v\n", 5},  // 4n+1 characters: the length is refused before any character
      {"Zh", 1},      // non-zero unused bits ("Zg" is the canonical spelling of "f")
      {"Zm9", 2},     // non-zero unused bits ("Zm8" is the canonical spelling of "fo")
      {"A", 1},       // 4n+1 characters
      {"AAAAA", 5},   // 4n+1 characters
  };
  for (const auto& c : cases) {
    auto decoded = Base64UrlDecode(c.text);
    ASSERT_FALSE(decoded.has_value()) << c.text;
    EXPECT_EQ(decoded.error().code, ErrorCode::kParse) << c.text;
    EXPECT_EQ(decoded.error().offset, c.offset) << c.text;
  }
  EXPECT_FALSE(Base64UrlDecode(std::string_view("Zm\0v", 4)).has_value());
  EXPECT_FALSE(Base64UrlDecode("Zm9\xff").has_value());
}

TEST(JwtBase64UrlTest, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64UrlEncode(std::string_view(plain)), encoded);
    auto decoded = Base64UrlDecode(encoded);
    ASSERT_TRUE(decoded.has_value()) << encoded;
    EXPECT_EQ(AsText(*decoded), plain);
  }
  // The two characters that differ from standard base64.
  EXPECT_EQ(Base64UrlEncode(std::vector<uint8_t>{0xfb, 0xff}), "-_8");
  EXPECT_EQ(*Base64UrlDecode("-_8"), (std::vector<uint8_t>{0xfb, 0xff}));
}

TEST(JwtBase64UrlTest, EveryByteAndLengthRoundTrips) {
  std::vector<uint8_t> bytes;
  for (int length = 0; length < 300; ++length) {
    const std::string text = Base64UrlEncode(bytes);
    EXPECT_EQ(text.size(), (bytes.size() * 4 + 2) / 3);
    auto decoded = Base64UrlDecode(text);
    ASSERT_TRUE(decoded.has_value()) << length;
    EXPECT_EQ(*decoded, bytes);
    bytes.push_back(static_cast<uint8_t>(length * 37 + 11));
  }
}

TEST(JwtJsonTest, Validity) {
  const char* bad[] = {"",
                       "{",
                       R"({"a":1,"a":2})",
                       R"({"a":{"b":1,"b":1}})",
                       R"([{"x":1,"x":1}])",
                       "{} {}",
                       "\"\xff\"",
                       "[1,]",
                       "{\"a\":01}",
                       "NaN"};
  for (const char* text : bad) {
    auto parsed = ParseJwtJson(text, 8);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kParse) << text;
  }
}

TEST(JwtJsonTest, NulByteIsNotTheEndOfTheText) {
  // nlohmann's own parse stops at a NUL and would read only the claims before it.
  const std::string text("{\"sub\":\"a\"}\0{\"sub\":\"b\"}", 23);
  auto parsed = ParseJwtJson(text, 8);
  ASSERT_FALSE(parsed.has_value());
  EXPECT_STREQ(parsed.error().detail, "not JSON");
}

TEST(JwtJsonTest, DepthCountsObjectsAndArrays) {
  EXPECT_TRUE(ParseJwtJson("1", 2).has_value());
  EXPECT_TRUE(ParseJwtJson(R"({"a":[1]})", 2).has_value());
  EXPECT_FALSE(ParseJwtJson(R"({"a":[[1]]})", 2).has_value());
  EXPECT_FALSE(ParseJwtJson(R"({"a":{"b":{}}})", 2).has_value());
  EXPECT_TRUE(ParseJwtJson(R"({"a":{"b":{}}})", 3).has_value());
  // Depth is about nesting, not about how many containers there are.
  EXPECT_TRUE(ParseJwtJson(R"([[],[],{},[[]],{"a":[]}])", 3).has_value());
  EXPECT_FALSE(ParseJwtJson(std::string(100000, '[') + std::string(100000, ']'), 64).has_value());
}

TEST(JwtJsonTest, SameNameInDifferentObjectsIsNotADuplicate) {
  auto parsed = ParseJwtJson(R"({"a":{"k":1},"b":{"k":2},"c":[{"k":3},{"k":4}],"k":5})", 4);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ((*parsed)["c"][1]["k"], 4);
  EXPECT_EQ((*parsed)["k"], 5);
}

class JwtKeyTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(keys().ok()) << keys().error(); }
  static const JwtTestKeys& keys() { return SharedJwtTestKeys(); }
  static std::string Write(const std::string& name, const std::string& text) {
    const std::string path = keys().dir() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

TEST_F(JwtKeyTest, AlgorithmNames) {
  EXPECT_STREQ(server::JwtAlgorithmName(JwtAlgorithm::kHs256), "HS256");
  EXPECT_STREQ(server::JwtAlgorithmName(JwtAlgorithm::kEdDsa), "EdDSA");
  EXPECT_STREQ(server::JwtAlgorithmName(JwtAlgorithm::kEs256), "ES256");
  EXPECT_EQ(server::JwtAlgorithmFromHeader("EdDSA"), JwtAlgorithm::kEdDsa);
  EXPECT_EQ(server::JwtAlgorithmFromHeader("Ed25519"), JwtAlgorithm::kEdDsa);
  for (const char* alg : {"none", "HS256 ", "hs256", "RS256", "ES384", ""}) {
    EXPECT_FALSE(server::JwtAlgorithmFromHeader(alg).has_value()) << alg;
  }
}

TEST_F(JwtKeyTest, SecretMustBeAtLeast32Bytes) {
  EXPECT_EQ(JwtKey::FromSecret(std::string(31, 's')).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(JwtKey::FromSecret("").error().code, ErrorCode::kInvalidArgument);
  auto key = JwtKey::FromSecret(std::string(32, 's'));
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->algorithm(), JwtAlgorithm::kHs256);
}

TEST_F(JwtKeyTest, SecretFileDropsTrailingNewlines) {
  // The secret file made with `openssl rand -base64 48 > file` ends in "\n": the key is the text.
  auto key = JwtKey::FromSecretFile(keys().secret_file);
  ASSERT_TRUE(key.has_value()) << key.error().detail;
  const std::string input = "header.payload";
  EXPECT_TRUE(key->Verify(input, SignHs256(keys().secret, input)));
  EXPECT_FALSE(key->Verify(input, SignHs256(keys().secret + "\n", input)));
  auto crlf = JwtKey::FromSecretFile(Write("secret-crlf", keys().secret + "\r\n\r\n"));
  ASSERT_TRUE(crlf.has_value());
  EXPECT_TRUE(crlf->Verify(input, SignHs256(keys().secret, input)));
  // Only trailing line breaks go: other whitespace is part of the secret.
  auto spaced = JwtKey::FromSecretFile(Write("secret-space", keys().secret + " \n"));
  ASSERT_TRUE(spaced.has_value());
  EXPECT_FALSE(spaced->Verify(input, SignHs256(keys().secret, input)));
}

TEST_F(JwtKeyTest, SecretFileErrors) {
  EXPECT_EQ(JwtKey::FromSecretFile(keys().dir() + "/missing").error().code, ErrorCode::kIo);
  EXPECT_EQ(JwtKey::FromSecretFile(Write("empty", "")).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(JwtKey::FromSecretFile(Write("newlines", std::string(40, '\n'))).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(JwtKey::FromSecretFile(Write("huge", std::string(65537, 's'))).error().code,
            ErrorCode::kIo);
  EXPECT_EQ(JwtKey::FromSecretFile(keys().dir()).error().code, ErrorCode::kIo);
}

TEST_F(JwtKeyTest, PublicKeysPickTheirAlgorithm) {
  auto ed = JwtKey::FromPublicKeyPemFile(keys().ed25519_public);
  ASSERT_TRUE(ed.has_value()) << ed.error().detail;
  EXPECT_EQ(ed->algorithm(), JwtAlgorithm::kEdDsa);
  auto ec = JwtKey::FromPublicKeyPemFile(keys().p256_public);
  ASSERT_TRUE(ec.has_value()) << ec.error().detail;
  EXPECT_EQ(ec->algorithm(), JwtAlgorithm::kEs256);
  // From memory, too.
  EXPECT_TRUE(JwtKey::FromPublicKeyPem(ReadFile(keys().p256_public)).has_value());
}

TEST_F(JwtKeyTest, RefusesKeysItCannotUseSafely) {
  // A private key where a public one is expected: refused rather than silently derived.
  EXPECT_EQ(JwtKey::FromPublicKeyPemFile(keys().ed25519_private).error().code, ErrorCode::kParse);
  EXPECT_EQ(JwtKey::FromPublicKeyPemFile(keys().p256_private).error().code, ErrorCode::kParse);
  EXPECT_EQ(JwtKey::FromPublicKeyPemFile(keys().rsa_public).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(JwtKey::FromPublicKeyPemFile(keys().p384_public).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(JwtKey::FromPublicKeyPemFile(keys().secret_file).error().code, ErrorCode::kParse);
  EXPECT_EQ(JwtKey::FromPublicKeyPemFile(keys().dir() + "/missing").error().code, ErrorCode::kIo);
  EXPECT_EQ(JwtKey::FromPublicKeyPem("").error().code, ErrorCode::kParse);
  std::string pem = ReadFile(keys().ed25519_public);
  pem.replace(pem.find('\n') + 1, 4, "!!!!");  // not base64 inside the PEM armour
  EXPECT_EQ(JwtKey::FromPublicKeyPem(pem).error().code, ErrorCode::kParse);
}

TEST_F(JwtKeyTest, VerifyChecksLengthBeforeCrypto) {
  auto ed = JwtKey::FromPublicKeyPemFile(keys().ed25519_public);
  ASSERT_TRUE(ed.has_value());
  const std::string input = "a.b";
  const std::vector<uint8_t> sig = SignWithPem(keys().ed25519_private, input);
  ASSERT_EQ(sig.size(), 64u);
  EXPECT_TRUE(ed->Verify(input, sig));
  EXPECT_FALSE(ed->Verify(input, std::span<const uint8_t>(sig).first(63)));
  EXPECT_FALSE(ed->Verify(input, {}));
  EXPECT_FALSE(ed->Verify("a.c", sig));
  // Keys move, and the moved-to key still verifies.
  JwtKey moved = std::move(ed).value();
  EXPECT_TRUE(moved.Verify(input, sig));
}

}  // namespace
}  // namespace scenecrdt::testing

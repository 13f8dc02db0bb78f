// SPDX-License-Identifier: Apache-2.0
// The hostile tokens of issue 14 section 3, one named case per trick: algorithm confusion
// ("none", HS256 keyed with the public key, RS256, another key kind), tampering (bit flips in
// header, payload and signature), structure (parts missing or extra), encoding (padding,
// foreign characters, non-canonical base64url), size and JSON bounds (huge, deep, duplicate
// members, non-objects, invalid UTF-8) and signature shapes (ES256 length, DER instead of raw).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "scenecrdt/server/auth/jwt_base64url.h"
#include "scenecrdt/server/auth/jwt_verifier.h"
#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using server::Base64UrlDecode;
using server::Base64UrlEncode;
using server::JwtOptions;
using server::JwtVerifier;
namespace reason = server::auth_reason;

class JwtTokenTricksTest : public JwtFixture {
 protected:
  struct Parts {
    std::string header, payload, signature;  // the encoded parts
  };
  static Parts Split(const std::string& token) {
    const std::size_t a = token.find('.');
    const std::size_t b = token.find('.', a + 1);
    return {token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1)};
  }
  static std::string Join(const Parts& p) { return p.header + "." + p.payload + "." + p.signature; }
  static std::vector<uint8_t> Decode(const std::string& part) {
    auto bytes = Base64UrlDecode(part);
    EXPECT_TRUE(bytes.has_value());
    return bytes.has_value() ? std::move(bytes).value() : std::vector<uint8_t>{};
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // Refused for any reason, with the unauthorized code (for tricks whose exact reason depends
  // on where a random mutation lands).
  static ::testing::AssertionResult RefusedAtAll(const Result<server::JwtClaims>& result) {
    if (result.has_value()) return ::testing::AssertionFailure() << "accepted";
    if (result.error().code != ErrorCode::kUnauthorized) {
      return ::testing::AssertionFailure() << ErrorCodeName(result.error().code);
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_F(JwtTokenTricksTest, RefusesAlgNone) {
  const std::string input = SigningInput(R"({"alg":"none","typ":"JWT"})", ValidClaims());
  for (const TestSigner signer : kAllSigners) {
    const JwtVerifier verifier = Verifier(signer);
    // The unsecured form (empty signature) and one carrying a valid-looking HMAC.
    EXPECT_TRUE(Refused(verifier.Verify(input + ".", Now()), reason::kWrongAlgorithm));
    EXPECT_TRUE(Refused(verifier.Verify(JoinToken(input, SignHs256(keys().secret, input)), Now()),
                        reason::kWrongAlgorithm));
    for (const char* alg : {"None", "NONE", "nOnE", ""}) {
      const std::string variant =
          SigningInput(std::string(R"({"alg":")") + alg + "\"}", ValidClaims()) + ".";
      EXPECT_TRUE(Refused(verifier.Verify(variant, Now()), reason::kWrongAlgorithm)) << alg;
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesHs256KeyedWithThePublicKey) {
  // The classic confusion: the attacker knows the public key and uses its PEM text (or its
  // bytes without the trailing newline) as an HMAC secret.
  for (const TestSigner signer : {TestSigner::kEdDsa, TestSigner::kEs256}) {
    const std::string pem =
        ReadFile(signer == TestSigner::kEdDsa ? keys().ed25519_public : keys().p256_public);
    const std::string input = SigningInput(kHs256Header, ValidClaims());
    const JwtVerifier verifier = Verifier(signer);
    for (const std::string& secret : {pem, pem.substr(0, pem.size() - 1)}) {
      EXPECT_TRUE(Refused(verifier.Verify(JoinToken(input, SignHs256(secret, input)), Now()),
                          reason::kWrongAlgorithm));
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesRs256AndUnknownAlgorithms) {
  for (const char* alg : {"RS256", "PS256", "HS384", "HS512", "ES384", "ES256K", "EdDSA ", "hs256",
                          "es256", "eddsa", "A128KW", "dir"}) {
    const std::string header = std::string(R"({"alg":")") + alg + "\"}";
    for (const TestSigner signer : kAllSigners) {
      // Signed with the right key, so only the name is wrong.
      EXPECT_TRUE(Refused(Verifier(signer).Verify(Token(signer, header, ValidClaims()), Now()),
                          reason::kWrongAlgorithm))
          << alg;
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesTheAlgorithmOfAnotherKeyKind) {
  EXPECT_TRUE(Refused(Verifier(TestSigner::kEs256).Verify(ValidToken(TestSigner::kEdDsa), Now()),
                      reason::kWrongAlgorithm));
  EXPECT_TRUE(Refused(Verifier(TestSigner::kEdDsa).Verify(ValidToken(TestSigner::kEs256), Now()),
                      reason::kWrongAlgorithm));
  EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256).Verify(ValidToken(TestSigner::kEdDsa), Now()),
                      reason::kWrongAlgorithm));
  // An ES256 header over an Ed25519 signature (both 64 bytes) meets the P-256 key and fails.
  std::vector<server::JwtKey> both;
  both.push_back(Ed25519Key());
  both.push_back(P256Key());
  EXPECT_TRUE(Refused(Verifier(std::move(both))
                          .Verify(Token(TestSigner::kEdDsa, kEs256Header, ValidClaims()), Now()),
                      reason::kBadSignature));
}

TEST_F(JwtTokenTricksTest, RefusesAMissingOrNonStringAlg) {
  for (const char* header : {R"({"typ":"JWT"})", R"({"alg":null})", R"({"alg":256})",
                             R"({"alg":["HS256"]})", R"({"alg":{"name":"HS256"}})", "{}"}) {
    EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256)
                            .Verify(Token(TestSigner::kHs256, header, ValidClaims()), Now()),
                        reason::kMalformed))
        << header;
  }
}

TEST_F(JwtTokenTricksTest, RefusesAChangedPayloadUnderTheOriginalSignature) {
  for (const TestSigner signer : kAllSigners) {
    const JwtVerifier verifier = Verifier(signer);
    Parts p = Split(ValidToken(signer, R"({"sub":"a","scenes":["lobby"],"role":"read","exp":)" +
                                           std::to_string(kJwtExp) + "}"));
    // The attacker's edit: read -> write, signature kept.
    p.payload = Base64UrlEncode(R"({"sub":"a","scenes":["lobby"],"role":"write","exp":)" +
                                std::to_string(kJwtExp) + "}");
    EXPECT_TRUE(Refused(verifier.Verify(Join(p), Now()), reason::kBadSignature));
  }
}

TEST_F(JwtTokenTricksTest, RefusesEveryOneBitFlipInThePayload) {
  for (const TestSigner signer : kAllSigners) {
    const JwtVerifier verifier = Verifier(signer);
    const Parts original = Split(ValidToken(signer));
    const std::vector<uint8_t> bytes = Decode(original.payload);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::vector<uint8_t> flipped = bytes;
      flipped[i] = static_cast<uint8_t>(flipped[i] ^ (1u << (i % 8)));
      Parts p = original;
      p.payload = Base64UrlEncode(flipped);
      EXPECT_TRUE(Refused(verifier.Verify(Join(p), Now()), reason::kBadSignature)) << i;
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesEveryOneBitFlipInTheSignature) {
  for (const TestSigner signer : kAllSigners) {
    const JwtVerifier verifier = Verifier(signer);
    const Parts original = Split(ValidToken(signer));
    const std::vector<uint8_t> bytes = Decode(original.signature);
    for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
      std::vector<uint8_t> flipped = bytes;
      flipped[bit / 8] = static_cast<uint8_t>(flipped[bit / 8] ^ (1u << (bit % 8)));
      Parts p = original;
      p.signature = Base64UrlEncode(flipped);
      EXPECT_TRUE(Refused(verifier.Verify(Join(p), Now()), reason::kBadSignature)) << bit;
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesEveryOneBitFlipInTheHeader) {
  for (const TestSigner signer : kAllSigners) {
    const JwtVerifier verifier = Verifier(signer);
    const Parts original = Split(ValidToken(signer));
    const std::vector<uint8_t> bytes = Decode(original.header);
    for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
      std::vector<uint8_t> flipped = bytes;
      flipped[bit / 8] = static_cast<uint8_t>(flipped[bit / 8] ^ (1u << (bit % 8)));
      Parts p = original;
      p.header = Base64UrlEncode(flipped);
      // Broken JSON, another alg or a bad signature: which one depends on the bit.
      EXPECT_TRUE(RefusedAtAll(verifier.Verify(Join(p), Now()))) << bit;
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesASignatureByAnotherKey) {
  const std::string input = SigningInput(kEdDsaHeader, ValidClaims());
  EXPECT_TRUE(Refused(
      Verifier(TestSigner::kEdDsa)
          .Verify(JoinToken(input, SignWithPem(keys().ed25519_other_private, input)), Now()),
      reason::kBadSignature));
  const std::string hs_input = SigningInput(kHs256Header, ValidClaims());
  std::string other_secret = keys().secret;
  other_secret[0] = other_secret[0] == 'A' ? 'B' : 'A';
  EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256)
                          .Verify(JoinToken(hs_input, SignHs256(other_secret, hs_input)), Now()),
                      reason::kBadSignature));
}

TEST_F(JwtTokenTricksTest, RefusesAKeyEmbeddedInTheHeader) {
  // "jwk"/"jku"/"x5c" never choose the key: the attacker's own key signs, the server's checks.
  const std::string header =
      R"({"alg":"EdDSA","jwk":{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},"jku":"https://evil/keys"})";
  const std::string input = SigningInput(header, ValidClaims());
  EXPECT_TRUE(Refused(
      Verifier(TestSigner::kEdDsa)
          .Verify(JoinToken(input, SignWithPem(keys().ed25519_other_private, input)), Now()),
      reason::kBadSignature));
}

TEST_F(JwtTokenTricksTest, RefusesTruncatedTokens) {
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  const std::string token = ValidToken(TestSigner::kHs256);
  const Parts p = Split(token);
  EXPECT_TRUE(Refused(verifier.Verify("", Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify(p.header, Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify(p.header + "." + p.payload, Now()), reason::kMalformed));
  EXPECT_TRUE(
      Refused(verifier.Verify(p.header + "." + p.payload + ".", Now()), reason::kBadSignature));
  EXPECT_TRUE(
      Refused(verifier.Verify("." + p.payload + "." + p.signature, Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify("..", Now()), reason::kMalformed));
  // A signature cut by whole bytes decodes, but is too short.
  std::vector<uint8_t> cut = Decode(p.signature);
  cut.pop_back();
  EXPECT_TRUE(
      Refused(verifier.Verify(p.header + "." + p.payload + "." + Base64UrlEncode(cut), Now()),
              reason::kBadSignature));
  // Any prefix at all is refused.
  for (std::size_t n = 0; n < token.size(); ++n) {
    EXPECT_TRUE(RefusedAtAll(verifier.Verify(token.substr(0, n), Now()))) << n;
  }
}

TEST_F(JwtTokenTricksTest, RefusesExtraParts) {
  const JwtVerifier verifier = Verifier(TestSigner::kEdDsa);
  const std::string token = ValidToken(TestSigner::kEdDsa);
  EXPECT_TRUE(Refused(verifier.Verify(token + ".", Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify(token + ".e30", Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify("e30." + token, Now()), reason::kMalformed));
  // The five-part JWE shape.
  const Parts p = Split(token);
  EXPECT_TRUE(
      Refused(verifier.Verify(p.header + "." + p.payload + ".AAAA.AAAA." + p.signature, Now()),
              reason::kMalformed));
}

TEST_F(JwtTokenTricksTest, RefusesBase64Padding) {
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  Parts p = Split(ValidToken(TestSigner::kHs256));
  // 32 signature bytes are 43 characters: standard base64 pads them with one '='.
  ASSERT_EQ(p.signature.size(), 43u);
  Parts padded = p;
  padded.signature += "=";
  EXPECT_TRUE(Refused(verifier.Verify(Join(padded), Now()), reason::kMalformed));
  for (std::string* part : {&p.header, &p.payload}) {
    const std::string saved = *part;
    *part += std::string((4 - saved.size() % 4) % 4, '=');
    if (*part == saved) *part += "====";
    EXPECT_TRUE(Refused(verifier.Verify(Join(p), Now()), reason::kMalformed));
    *part = saved;
  }
}

TEST_F(JwtTokenTricksTest, RefusesCharactersOutsideBase64Url) {
  const JwtVerifier verifier = Verifier(TestSigner::kEs256);
  const std::string token = ValidToken(TestSigner::kEs256);
  const std::size_t positions[] = {0, token.find('.') + 3, token.size() - 2};
  for (const char c : std::string("+/= \t\n*%\\\"\x7f\xff\xc3", 14) + std::string(1, '\0')) {
    for (const std::size_t at : positions) {
      std::string bad = token;
      bad[at] = c;
      EXPECT_TRUE(Refused(verifier.Verify(bad, Now()), reason::kMalformed))
          << "char " << static_cast<int>(static_cast<unsigned char>(c)) << " at " << at;
    }
  }
  EXPECT_TRUE(Refused(verifier.Verify(" " + token, Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify(token + "\n", Now()), reason::kMalformed));
  EXPECT_TRUE(Refused(verifier.Verify("Bearer " + token, Now()), reason::kMalformed));
}

TEST_F(JwtTokenTricksTest, RefusesNonCanonicalBase64Url) {
  // The last character of a 43-character part carries 4 data bits and 2 unused bits: setting
  // an unused bit keeps the decoded bytes but makes a second spelling, which is refused.
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  Parts p = Split(ValidToken(TestSigner::kHs256));
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const std::size_t v = alphabet.find(p.signature.back());
  ASSERT_EQ(v & 3u, 0u);
  p.signature.back() = alphabet[v | 1u];
  EXPECT_TRUE(Refused(verifier.Verify(Join(p), Now()), reason::kMalformed));
}

TEST_F(JwtTokenTricksTest, RefusesAHugeTokenBeforeDecoding) {
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  EXPECT_TRUE(Refused(verifier.Verify(std::string(4097, 'A'), Now()), reason::kTooLarge));
  EXPECT_TRUE(Refused(verifier.Verify(std::string(1 << 20, '.'), Now()), reason::kTooLarge));
  // A validly signed token over the limit is refused for its size alone.
  const std::string big =
      ValidToken(TestSigner::kHs256, R"({"sub":"a","scenes":["lobby"],"role":"read","exp":)" +
                                         std::to_string(kJwtExp) + R"(,"pad":")" +
                                         std::string(4000, 'p') + "\"}");
  ASSERT_GT(big.size(), 4096u);
  EXPECT_TRUE(Refused(verifier.Verify(big, Now()), reason::kTooLarge));
  // The limit is inclusive and configurable.
  const std::string token = ValidToken(TestSigner::kHs256);
  JwtOptions exact;
  exact.max_token_bytes = token.size();
  EXPECT_TRUE(Verifier(TestSigner::kHs256, exact).Verify(token, Now()).has_value());
  exact.max_token_bytes = token.size() - 1;
  EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256, exact).Verify(token, Now()), reason::kTooLarge));
}

TEST_F(JwtTokenTricksTest, RefusesANonObjectHeader) {
  for (const char* header : {"[]", R"(["HS256"])", R"("HS256")", "1", "null", "true", "",
                             R"({"alg":"HS256")", R"({"alg":"HS256"} {})", "{'alg':'HS256'}"}) {
    EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256)
                            .Verify(Token(TestSigner::kHs256, header, ValidClaims()), Now()),
                        reason::kMalformed))
        << header;
  }
}

TEST_F(JwtTokenTricksTest, RefusesNonObjectClaims) {
  for (const char* claims :
       {"[]", R"(["sub"])", R"("alice")", "42", "null", "false", "", R"({"sub":"a")", "{} []"}) {
    for (const TestSigner signer : kAllSigners) {
      EXPECT_TRUE(
          Refused(Verifier(signer).Verify(ValidToken(signer, claims), Now()), reason::kMalformed))
          << claims;
    }
  }
}

TEST_F(JwtTokenTricksTest, RefusesDuplicateMembersInTheHeader) {
  // Which duplicate wins differs between libraries: a signer and a verifier could disagree.
  for (const char* header : {R"({"alg":"none","alg":"HS256"})", R"({"alg":"HS256","alg":"HS256"})",
                             R"({"alg":"HS256","alg":"none"})"}) {
    EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256)
                            .Verify(Token(TestSigner::kHs256, header, ValidClaims()), Now()),
                        reason::kMalformed))
        << header;
  }
}

TEST_F(JwtTokenTricksTest, RefusesDuplicateMembersInTheClaims) {
  const std::string exp = std::to_string(kJwtExp);
  const JwtVerifier verifier = Verifier(TestSigner::kEdDsa);
  for (const std::string& claims :
       {R"({"sub":"a","scenes":["x"],"role":"read","role":"write","exp":)" + exp + "}",
        R"({"sub":"a","scenes":["x"],"role":"read","exp":1,"exp":)" + exp + "}",
        R"({"sub":"a","scenes":["x"],"role":"read","exp":)" + exp + R"(,"ctx":{"k":1,"k":2}})"}) {
    EXPECT_TRUE(
        Refused(verifier.Verify(ValidToken(TestSigner::kEdDsa, claims), Now()), reason::kMalformed))
        << claims;
  }
  // The same name in two different objects is not a duplicate.
  const std::string siblings = R"({"sub":"a","scenes":["x"],"role":"read","exp":)" + exp +
                               R"(,"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]})";
  EXPECT_TRUE(verifier.Verify(ValidToken(TestSigner::kEdDsa, siblings), Now()).has_value());
}

TEST_F(JwtTokenTricksTest, RefusesDeepJson) {
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);  // max_json_depth 8
  const auto claims_with = [](int arrays) {
    return R"({"sub":"a","scenes":["x"],"role":"read","exp":)" + std::to_string(kJwtExp) +
           R"(,"deep":)" + std::string(static_cast<std::size_t>(arrays), '[') +
           std::string(static_cast<std::size_t>(arrays), ']') + "}";
  };
  EXPECT_TRUE(verifier.Verify(ValidToken(TestSigner::kHs256, claims_with(7)), Now()).has_value());
  EXPECT_TRUE(Refused(verifier.Verify(ValidToken(TestSigner::kHs256, claims_with(8)), Now()),
                      reason::kMalformed));
  // As deep as the size limit allows, in the claims and in the header: refused, no crash.
  EXPECT_TRUE(Refused(verifier.Verify(ValidToken(TestSigner::kHs256, claims_with(1400)), Now()),
                      reason::kMalformed));
  const std::string deep_header =
      R"({"alg":"HS256","x":)" + std::string(1400, '[') + std::string(1400, ']') + "}";
  EXPECT_TRUE(Refused(verifier.Verify(Token(TestSigner::kHs256, deep_header, ValidClaims()), Now()),
                      reason::kMalformed));
  // Unterminated nesting is refused too.
  EXPECT_TRUE(Refused(
      verifier.Verify(Token(TestSigner::kHs256, std::string(2000, '['), ValidClaims()), Now()),
      reason::kMalformed));
}

TEST_F(JwtTokenTricksTest, RefusesInvalidUtf8InTheClaims) {
  const std::string exp = std::to_string(kJwtExp);
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  for (const std::string& sub : {std::string("\xff"), std::string("\xc3"),
                                 std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
    const std::string claims =
        R"({"sub":")" + sub + R"(","scenes":["x"],"role":"read","exp":)" + exp + "}";
    EXPECT_TRUE(Refused(verifier.Verify(ValidToken(TestSigner::kHs256, claims), Now()),
                        reason::kMalformed));
  }
}

TEST_F(JwtTokenTricksTest, RefusesCriticalHeaderExtensions) {
  for (const char* header :
       {R"({"alg":"HS256","crit":["exp"],"exp":1})",
        R"({"alg":"HS256","b64":false,"crit":["b64"]})", R"({"alg":"HS256","crit":[]})"}) {
    EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256)
                            .Verify(Token(TestSigner::kHs256, header, ValidClaims()), Now()),
                        reason::kUnsupportedHeader))
        << header;
  }
}

TEST_F(JwtTokenTricksTest, RefusesEs256SignaturesOfTheWrongLength) {
  const JwtVerifier verifier = Verifier(TestSigner::kEs256);
  const std::string input = SigningInput(kEs256Header, ValidClaims());
  const std::vector<uint8_t> raw = SignWithPem(keys().p256_private, input);
  ASSERT_EQ(raw.size(), 64u);
  std::vector<uint8_t> longer = raw;
  longer.push_back(0);
  std::vector<uint8_t> leading_zero = {0};
  leading_zero.insert(leading_zero.end(), raw.begin(), raw.end());
  for (const std::vector<uint8_t>& sig :
       {std::vector<uint8_t>(raw.begin(), raw.end() - 1), longer, leading_zero,
        std::vector<uint8_t>(raw.begin(), raw.begin() + 32), std::vector<uint8_t>{},
        std::vector<uint8_t>(64, 0), std::vector<uint8_t>(64, 0xff)}) {
    EXPECT_TRUE(Refused(verifier.Verify(JoinToken(input, sig), Now()), reason::kBadSignature))
        << sig.size();
  }
}

TEST_F(JwtTokenTricksTest, RefusesEs256SignaturesInDerForm) {
  const JwtVerifier verifier = Verifier(TestSigner::kEs256);
  const std::string input = SigningInput(kEs256Header, ValidClaims());
  // What `openssl dgst -sign` and most ECDSA APIs produce: a DER SEQUENCE of two INTEGERs
  // (70..72 bytes for P-256). JWS wants the 64-byte r||s; the verifier never parses DER.
  const std::vector<uint8_t> der = SignWithPem(keys().p256_private, input, /*der=*/true);
  ASSERT_GE(der.size(), 8u);
  ASSERT_EQ(der[0], 0x30);
  EXPECT_TRUE(Refused(verifier.Verify(JoinToken(input, der), Now()), reason::kBadSignature));
  // The same signature, raw, is accepted: the refusal is about the form only.
  EXPECT_TRUE(verifier.Verify(JoinToken(input, EcdsaDerToRaw(der)), Now()).has_value());
}

TEST_F(JwtTokenTricksTest, RefusesEdDsaAndHs256SignaturesOfTheWrongLength) {
  const std::string ed_input = SigningInput(kEdDsaHeader, ValidClaims());
  std::vector<uint8_t> ed = SignWithPem(keys().ed25519_private, ed_input);
  ASSERT_EQ(ed.size(), 64u);
  ed.push_back(0);
  EXPECT_TRUE(Refused(Verifier(TestSigner::kEdDsa).Verify(JoinToken(ed_input, ed), Now()),
                      reason::kBadSignature));
  ed.resize(63);
  EXPECT_TRUE(Refused(Verifier(TestSigner::kEdDsa).Verify(JoinToken(ed_input, ed), Now()),
                      reason::kBadSignature));
  const std::string hs_input = SigningInput(kHs256Header, ValidClaims());
  std::vector<uint8_t> mac = SignHs256(keys().secret, hs_input);
  mac.push_back(0);
  EXPECT_TRUE(Refused(Verifier(TestSigner::kHs256).Verify(JoinToken(hs_input, mac), Now()),
                      reason::kBadSignature));
}

}  // namespace
}  // namespace scenecrdt::testing

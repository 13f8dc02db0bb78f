// SPDX-License-Identifier: Apache-2.0
// JwtVerifier acceptance: valid tokens of each algorithm (signed through the OpenSSL API and by
// the openssl CLI), time rules and leeway edges, claim shapes, grants, options, several keys.
// The hostile cases (structure, algorithm, signature, encoding, JSON bounds) are in
// jwt_token_tricks_test.cc.
#include "scenecrdt/server/auth/jwt_verifier.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "scenecrdt/server/auth/jwt_base64url.h"
#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using server::AccessGrant;
using server::JwtOptions;
using server::JwtVerifier;
using server::Role;
namespace reason = server::auth_reason;

class JwtVerifierTest : public JwtFixture {};

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

TEST_F(JwtVerifierTest, AcceptsAValidTokenOfEachAlgorithm) {
  for (const TestSigner signer : kAllSigners) {
    const JwtVerifier verifier = Verifier(signer);
    auto claims = verifier.Verify(ValidToken(signer), Now());
    ASSERT_TRUE(claims.has_value()) << HeaderFor(signer) << ": " << claims.error().detail;
    EXPECT_EQ(claims->subject, "alice");
    EXPECT_EQ(claims->scenes, (std::vector<std::string>{"lobby", "arena"}));
    EXPECT_EQ(claims->role, Role::kWrite);
    EXPECT_EQ(claims->expires_at, UnixSeconds(kJwtExp));
    EXPECT_FALSE(claims->not_before.has_value());
  }
}

TEST_F(JwtVerifierTest, AcceptsTheFullySpecifiedEd25519AlgorithmName) {
  const std::string token = Token(TestSigner::kEdDsa, R"({"alg":"Ed25519"})", ValidClaims());
  EXPECT_TRUE(Verifier(TestSigner::kEdDsa).Verify(token, Now()).has_value());
}

TEST_F(JwtVerifierTest, AcceptsTokensSignedByTheOpensslCli) {
  const std::string dir = keys().dir() + "/";
  const std::string input_file = dir + "cli-input";
  int status = -1;
  // HS256: openssl dgst's HMAC over the signing input.
  std::string input = SigningInput(kHs256Header, ValidClaims());
  std::ofstream(input_file, std::ios::binary) << input;
  RunShell("openssl dgst -sha256 -mac HMAC -macopt 'key:" + keys().secret + "' -binary -out " +
               dir + "hs.sig " + input_file,
           status);
  ASSERT_EQ(status, 0);
  EXPECT_TRUE(Verifier(TestSigner::kHs256)
                  .Verify(JoinToken(input, ReadBytes(dir + "hs.sig")), Now())
                  .has_value());
  // EdDSA: pkeyutl signs the raw message (Ed25519 hashes internally).
  input = SigningInput(kEdDsaHeader, ValidClaims());
  std::ofstream(input_file, std::ios::binary) << input;
  RunShell("openssl pkeyutl -sign -rawin -inkey " + keys().ed25519_private + " -in " + input_file +
               " -out " + dir + "ed.sig",
           status);
  ASSERT_EQ(status, 0);
  EXPECT_TRUE(Verifier(TestSigner::kEdDsa)
                  .Verify(JoinToken(input, ReadBytes(dir + "ed.sig")), Now())
                  .has_value());
  // ES256: dgst writes DER; JWS wants raw r||s.
  input = SigningInput(kEs256Header, ValidClaims());
  std::ofstream(input_file, std::ios::binary) << input;
  RunShell(
      "openssl dgst -sha256 -sign " + keys().p256_private + " -out " + dir + "es.sig " + input_file,
      status);
  ASSERT_EQ(status, 0);
  const std::vector<uint8_t> raw = EcdsaDerToRaw(ReadBytes(dir + "es.sig"));
  ASSERT_EQ(raw.size(), 64u);
  EXPECT_TRUE(Verifier(TestSigner::kEs256).Verify(JoinToken(input, raw), Now()).has_value());
}

TEST_F(JwtVerifierTest, IgnoresUnknownHeaderMembersAndExtraClaims) {
  const std::string header = R"({"alg":"HS256","typ":"at+jwt","kid":"k1","x5u":"http://x"})";
  const std::string claims = R"({"sub":"bob","scenes":["lobby"],"role":"read","exp":)" +
                             std::to_string(kJwtExp) +
                             R"(,"iat":1,"jti":"abc","room":{"name":"lobby","grants":[1,2]}})";
  auto result =
      Verifier(TestSigner::kHs256).Verify(Token(TestSigner::kHs256, header, claims), Now());
  ASSERT_TRUE(result.has_value()) << result.error().detail;
  EXPECT_EQ(result->role, Role::kRead);
}

TEST_F(JwtVerifierTest, CheckReturnsRoleSubjectAndExpiryPlusLeeway) {
  JwtOptions options;
  options.leeway = std::chrono::seconds(10);
  const JwtVerifier verifier = Verifier(TestSigner::kEdDsa, options);
  auto grant = verifier.Check(ValidToken(TestSigner::kEdDsa), "arena", Now());
  ASSERT_TRUE(grant.has_value()) << grant.error().detail;
  EXPECT_EQ(grant->role, Role::kWrite);
  EXPECT_EQ(grant->subject, "alice");
  ASSERT_TRUE(grant->expires_at.has_value());
  EXPECT_EQ(*grant->expires_at, UnixSeconds(kJwtExp + 10));
  // The expiry is exactly the first instant the same token is refused.
  EXPECT_TRUE(verifier
                  .Check(ValidToken(TestSigner::kEdDsa), "arena",
                         *grant->expires_at - std::chrono::seconds(1))
                  .has_value());
  EXPECT_TRUE(Refused(verifier.Check(ValidToken(TestSigner::kEdDsa), "arena", *grant->expires_at),
                      reason::kExpired));
}

TEST_F(JwtVerifierTest, RefusesAnExpiredToken) {
  for (const TestSigner signer : kAllSigners) {
    const std::string token = ValidToken(signer, ValidClaims(kJwtNow - 3600));
    EXPECT_TRUE(Refused(Verifier(signer).Verify(token, Now()), reason::kExpired));
  }
}

TEST_F(JwtVerifierTest, ExpiryLeewayEdges) {
  const std::string token = ValidToken(TestSigner::kHs256, ValidClaims(kJwtNow));
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);  // default leeway 30 s
  EXPECT_TRUE(verifier.Verify(token, Now(-1)).has_value());
  EXPECT_TRUE(verifier.Verify(token, Now(29)).has_value());
  EXPECT_TRUE(Refused(verifier.Verify(token, Now(30)), reason::kExpired));
  JwtOptions strict;
  strict.leeway = std::chrono::seconds(0);
  const JwtVerifier no_leeway = Verifier(TestSigner::kHs256, strict);
  EXPECT_TRUE(no_leeway.Verify(token, Now(-1)).has_value());
  EXPECT_TRUE(Refused(no_leeway.Verify(token, Now()), reason::kExpired));
}

TEST_F(JwtVerifierTest, RefusesANotYetValidToken) {
  const std::string claims = R"({"sub":"a","scenes":["lobby"],"role":"read","nbf":)" +
                             std::to_string(kJwtNow + 600) + ",\"exp\":" + std::to_string(kJwtExp) +
                             "}";
  for (const TestSigner signer : kAllSigners) {
    EXPECT_TRUE(
        Refused(Verifier(signer).Verify(ValidToken(signer, claims), Now()), reason::kNotYetValid));
  }
}

TEST_F(JwtVerifierTest, NotBeforeLeewayEdges) {
  const std::string claims = R"({"sub":"a","scenes":["lobby"],"role":"read","nbf":)" +
                             std::to_string(kJwtNow) + ",\"exp\":" + std::to_string(kJwtExp) + "}";
  const std::string token = ValidToken(TestSigner::kHs256, claims);
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  auto at_edge = verifier.Verify(token, Now(-30));
  ASSERT_TRUE(at_edge.has_value());
  EXPECT_EQ(at_edge->not_before, UnixSeconds(kJwtNow));
  EXPECT_TRUE(Refused(verifier.Verify(token, Now(-31)), reason::kNotYetValid));
  JwtOptions strict;
  strict.leeway = std::chrono::seconds(0);
  EXPECT_TRUE(Verifier(TestSigner::kHs256, strict).Verify(token, Now()).has_value());
  EXPECT_TRUE(
      Refused(Verifier(TestSigner::kHs256, strict).Verify(token, Now(-1)), reason::kNotYetValid));
}

TEST_F(JwtVerifierTest, FractionalTimesRoundToTheStricterSecond) {
  JwtOptions strict;
  strict.leeway = std::chrono::seconds(0);
  const JwtVerifier verifier = Verifier(TestSigner::kHs256, strict);
  const std::string claims = R"({"sub":"a","scenes":["lobby"],"role":"read","nbf":)" +
                             std::to_string(kJwtNow) +
                             ".25,\"exp\":" + std::to_string(kJwtNow + 10) + ".75}";
  const std::string token = ValidToken(TestSigner::kHs256, claims);
  auto claims_at = verifier.Verify(token, Now(1));
  ASSERT_TRUE(claims_at.has_value()) << claims_at.error().detail;
  EXPECT_EQ(claims_at->not_before, UnixSeconds(kJwtNow + 1));   // nbf rounds up
  EXPECT_EQ(claims_at->expires_at, UnixSeconds(kJwtNow + 10));  // exp rounds down
  EXPECT_TRUE(Refused(verifier.Verify(token, Now()), reason::kNotYetValid));
  EXPECT_TRUE(Refused(verifier.Verify(token, Now(10)), reason::kExpired));
}

TEST_F(JwtVerifierTest, RefusesATokenWithoutExp) {
  for (const TestSigner signer : kAllSigners) {
    const std::string token =
        ValidToken(signer, R"({"sub":"alice","scenes":["lobby"],"role":"write"})");
    EXPECT_TRUE(Refused(Verifier(signer).Verify(token, Now()), reason::kMissingExp));
  }
}

TEST_F(JwtVerifierTest, RefusesWrongClaimTypes) {
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  const std::string exp = std::to_string(kJwtExp);
  const struct {
    std::string claims;
    const char* reason;
  } cases[] = {
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":")" + exp + "\"}", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":true})", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":null})", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":[)" + exp + "]}", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":-5})", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":1e300})", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","exp":99999999999999999999})", reason::kBadTime},
      {R"({"sub":"a","scenes":["x"],"role":"read","nbf":"0","exp":)" + exp + "}", reason::kBadTime},
      {R"({"sub":42,"scenes":["x"],"role":"read","exp":)" + exp + "}", reason::kBadSubject},
      {R"({"scenes":["x"],"role":"read","exp":)" + exp + "}", reason::kBadSubject},
      {R"({"sub":"","scenes":["x"],"role":"read","exp":)" + exp + "}", reason::kBadSubject},
      {R"({"sub":"a\nfake log line","scenes":["x"],"role":"read","exp":)" + exp + "}",
       reason::kBadSubject},
      {R"({"sub":")" + std::string(257, 's') + R"(","scenes":["x"],"role":"read","exp":)" + exp +
           "}",
       reason::kBadSubject},
      {R"({"sub":"a","scenes":"lobby","role":"read","exp":)" + exp + "}", reason::kBadScenes},
      {R"({"sub":"a","scenes":{"lobby":true},"role":"read","exp":)" + exp + "}",
       reason::kBadScenes},
      {R"({"sub":"a","scenes":[1],"role":"read","exp":)" + exp + "}", reason::kBadScenes},
      {R"({"sub":"a","scenes":[""],"role":"read","exp":)" + exp + "}", reason::kBadScenes},
      {R"({"sub":"a","scenes":[["x"]],"role":"read","exp":)" + exp + "}", reason::kBadScenes},
      {R"({"sub":"a","role":"read","exp":)" + exp + "}", reason::kBadScenes},
      {R"({"sub":"a","scenes":["x"],"role":true,"exp":)" + exp + "}", reason::kBadRole},
      {R"({"sub":"a","scenes":["x"],"role":["write"],"exp":)" + exp + "}", reason::kBadRole},
  };
  for (const auto& c : cases) {
    EXPECT_TRUE(Refused(verifier.Verify(ValidToken(TestSigner::kHs256, c.claims), Now()), c.reason))
        << c.claims;
  }
}

TEST_F(JwtVerifierTest, RefusesAMissingOrUnknownRole) {
  const JwtVerifier verifier = Verifier(TestSigner::kEs256);
  const std::string tail = R"(,"sub":"a","scenes":["x"],"exp":)" + std::to_string(kJwtExp) + "}";
  for (const char* role : {R"("role":"Admin")", R"("role":"Write")", R"("role":"READ")",
                           R"("role":"")", R"("roles":"write")"}) {
    const std::string claims = std::string("{") + role + tail;
    EXPECT_TRUE(
        Refused(verifier.Verify(ValidToken(TestSigner::kEs256, claims), Now()), reason::kBadRole))
        << claims;
  }
  auto read = verifier.Verify(ValidToken(TestSigner::kEs256, R"({"role":"read")" + tail), Now());
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->role, Role::kRead);
  // "admin" (docs/AUTHORITY.md) writes any entity under --authority owner.
  auto admin = verifier.Verify(ValidToken(TestSigner::kEs256, R"({"role":"admin")" + tail), Now());
  ASSERT_TRUE(admin.has_value());
  EXPECT_EQ(admin->role, Role::kAdmin);
}

TEST_F(JwtVerifierTest, AcceptsAPrintableUtf8Subject) {
  const std::string claims = R"({"sub":"zoë-42 [web]","scenes":["x"],"role":"read","exp":)" +
                             std::to_string(kJwtExp) + "}";
  auto result = Verifier(TestSigner::kHs256).Verify(ValidToken(TestSigner::kHs256, claims), Now());
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->subject, "zoë-42 [web]");
}

TEST_F(JwtVerifierTest, RefusesASceneTheTokenDoesNotGrant) {
  const JwtVerifier verifier = Verifier(TestSigner::kEdDsa);
  const std::string token = ValidToken(TestSigner::kEdDsa);
  EXPECT_TRUE(verifier.Check(token, "lobby", Now()).has_value());
  auto other = verifier.Check(token, "backstage", Now());
  EXPECT_TRUE(Refused(other, reason::kMissingGrant));
  EXPECT_TRUE(server::IsSceneNotGranted(other.error()));
  // Scene names compare exactly: no prefix, case or wildcard-in-name matching.
  EXPECT_TRUE(Refused(verifier.Check(token, "Lobby", Now()), reason::kMissingGrant));
  EXPECT_TRUE(Refused(verifier.Check(token, "lobby2", Now()), reason::kMissingGrant));
  EXPECT_TRUE(Refused(verifier.Check(token, "", Now()), reason::kMissingGrant));
  const std::string none =
      ValidToken(TestSigner::kEdDsa,
                 R"({"sub":"a","scenes":[],"role":"write","exp":)" + std::to_string(kJwtExp) + "}");
  EXPECT_TRUE(Refused(verifier.Check(none, "lobby", Now()), reason::kMissingGrant));
}

TEST_F(JwtVerifierTest, StarGrantsEveryScene) {
  const JwtVerifier verifier = Verifier(TestSigner::kHs256);
  const std::string exp = std::to_string(kJwtExp);
  for (const char* scenes : {R"(["*"])", R"("*")", R"(["lobby","*"])"}) {
    const std::string token =
        ValidToken(TestSigner::kHs256, R"({"sub":"a","scenes":)" + std::string(scenes) +
                                           R"(,"role":"read","exp":)" + exp + "}");
    for (const char* scene : {"lobby", "arena", "any.scene-1"}) {
      auto grant = verifier.Check(token, scene, Now());
      ASSERT_TRUE(grant.has_value()) << scenes << " " << scene;
      EXPECT_EQ(grant->role, Role::kRead);
    }
  }
}

TEST_F(JwtVerifierTest, IssuerAndAudienceWhenConfigured) {
  JwtOptions options;
  options.issuer = "https://backend.example";
  options.audience = "scenecrdt";
  const JwtVerifier verifier = Verifier(TestSigner::kHs256, options);
  const std::string base =
      R"("sub":"a","scenes":["x"],"role":"read","exp":)" + std::to_string(kJwtExp);
  const auto token = [&](const std::string& extra) {
    return ValidToken(TestSigner::kHs256, "{" + base + extra + "}");
  };
  EXPECT_TRUE(verifier.Verify(token(R"(,"iss":"https://backend.example","aud":"scenecrdt")"), Now())
                  .has_value());
  EXPECT_TRUE(
      verifier.Verify(token(R"(,"iss":"https://backend.example","aud":["x","scenecrdt"])"), Now())
          .has_value());
  EXPECT_TRUE(
      Refused(verifier.Verify(token(R"(,"aud":"scenecrdt")"), Now()), reason::kWrongIssuer));
  EXPECT_TRUE(Refused(verifier.Verify(token(R"(,"iss":"https://evil","aud":"scenecrdt")"), Now()),
                      reason::kWrongIssuer));
  EXPECT_TRUE(Refused(verifier.Verify(token(R"(,"iss":"https://backend.example")"), Now()),
                      reason::kWrongAudience));
  EXPECT_TRUE(
      Refused(verifier.Verify(token(R"(,"iss":"https://backend.example","aud":["other"])"), Now()),
              reason::kWrongAudience));
  EXPECT_TRUE(Refused(
      verifier.Verify(token(R"(,"iss":"https://backend.example","aud":{"scenecrdt":1})"), Now()),
      reason::kWrongAudience));
  // Unconfigured, both are ignored.
  EXPECT_TRUE(Verifier(TestSigner::kHs256).Verify(token(R"(,"iss":1,"aud":2)"), Now()).has_value());
}

TEST_F(JwtVerifierTest, SeveralKeysEachOnlyForItsOwnAlgorithm) {
  std::vector<server::JwtKey> all;
  all.push_back(SecretKey());
  all.push_back(Ed25519Key());
  all.push_back(P256Key());
  const JwtVerifier verifier = Verifier(std::move(all));
  for (const TestSigner signer : kAllSigners) {
    EXPECT_TRUE(verifier.Verify(ValidToken(signer), Now()).has_value());
  }
  // With a secret configured too, "HS256 keyed with the public PEM" meets the real secret.
  std::ifstream in(keys().ed25519_public);
  const std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string input = SigningInput(kHs256Header, ValidClaims());
  EXPECT_TRUE(Refused(verifier.Verify(JoinToken(input, SignHs256(pem, input)), Now()),
                      reason::kBadSignature));
}

// Key rotation (issue 23 item 9): the old and the new key of one algorithm side by side.
TEST_F(JwtVerifierTest, SeveralKeysOfOneAlgorithmEachVerify) {
  auto other = server::JwtKey::FromPublicKeyPemFile(keys().ed25519_other_public);
  ASSERT_TRUE(other.has_value());
  std::vector<server::JwtKey> both;
  both.push_back(Ed25519Key());
  both.push_back(std::move(other).value());
  both.push_back(SecretKey());
  auto second_secret = server::JwtKey::FromSecret(std::string(40, 's'));
  ASSERT_TRUE(second_secret.has_value());
  both.push_back(std::move(second_secret).value());
  const JwtVerifier verifier = Verifier(std::move(both));
  const std::string input = SigningInput(kEdDsaHeader, ValidClaims());
  EXPECT_TRUE(verifier.Verify(ValidToken(TestSigner::kEdDsa), Now()).has_value());
  EXPECT_TRUE(
      verifier.Verify(JoinToken(input, SignWithPem(keys().ed25519_other_private, input)), Now())
          .has_value());
  const std::string hs = SigningInput(kHs256Header, ValidClaims());
  EXPECT_TRUE(verifier.Verify(ValidToken(TestSigner::kHs256), Now()).has_value());
  EXPECT_TRUE(
      verifier.Verify(JoinToken(hs, SignHs256(std::string(40, 's'), hs)), Now()).has_value());
  // A key of neither: still a bad signature; ES256 has no key: wrong algorithm.
  EXPECT_TRUE(Refused(verifier.Verify(JoinToken(hs, SignHs256(std::string(40, 't'), hs)), Now()),
                      reason::kBadSignature));
  EXPECT_TRUE(
      Refused(verifier.Verify(ValidToken(TestSigner::kEs256), Now()), reason::kWrongAlgorithm));
}

TEST_F(JwtVerifierTest, CreateRefusesBadConfigurations) {
  EXPECT_EQ(JwtVerifier::Create({}).error().code, ErrorCode::kInvalidArgument);
  {
    std::vector<server::JwtKey> many;
    for (std::size_t i = 0; i <= JwtVerifier::kMaxKeysPerAlgorithm; ++i) {
      many.push_back(Ed25519Key());
    }
    EXPECT_EQ(JwtVerifier::Create(std::move(many)).error().code, ErrorCode::kInvalidArgument);
  }
  const auto with = [&](auto&& edit) {
    JwtOptions options;
    edit(options);
    std::vector<server::JwtKey> one;
    one.push_back(SecretKey());
    return JwtVerifier::Create(std::move(one), options);
  };
  EXPECT_FALSE(with([](JwtOptions& o) { o.leeway = std::chrono::seconds(-1); }).has_value());
  EXPECT_FALSE(with([](JwtOptions& o) { o.leeway = std::chrono::seconds(601); }).has_value());
  EXPECT_TRUE(with([](JwtOptions& o) { o.leeway = std::chrono::seconds(600); }).has_value());
  EXPECT_FALSE(with([](JwtOptions& o) { o.max_token_bytes = 127; }).has_value());
  EXPECT_FALSE(with([](JwtOptions& o) { o.max_token_bytes = 65537; }).has_value());
  EXPECT_FALSE(with([](JwtOptions& o) { o.max_json_depth = 1; }).has_value());
  EXPECT_FALSE(with([](JwtOptions& o) { o.max_json_depth = 65; }).has_value());
  EXPECT_TRUE(with([](JwtOptions& o) { o.max_json_depth = 2; }).has_value());
}

}  // namespace
}  // namespace scenecrdt::testing

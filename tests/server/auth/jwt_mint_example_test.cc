// SPDX-License-Identifier: Apache-2.0
// The "how a backend mints a token" example (docs/examples/mint_token.mjs, node's crypto only)
// runs under `node`, and its tokens pass the verifier: HS256 with the secret file, EdDSA and
// ES256 with private keys made by the openssl CLI.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "scenecrdt/server/auth/jwt_verifier.h"
#include "tests/server/auth/jwt_test_util.h"

#ifndef SCENECRDT_MINT_TOKEN_SCRIPT
#error "SCENECRDT_MINT_TOKEN_SCRIPT must name docs/examples/mint_token.mjs"
#endif

namespace scenecrdt::testing {
namespace {

using server::Role;

class JwtMintExampleTest : public JwtFixture {
 protected:
  // The script's one output line (the token), or "" with a test failure.
  static std::string Mint(const std::string& alg, const std::string& key_file,
                          const std::string& scenes, const std::string& role) {
    int status = -1;
    std::string out =
        RunShell(std::string("node ") + SCENECRDT_MINT_TOKEN_SCRIPT + " " + alg + " " + key_file +
                     " backend-user-7 '" + scenes + "' " + role + " 300",
                 status);
    EXPECT_EQ(status, 0) << "node failed (is node 20 installed? scripts/deps.sh): " << out;
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  static std::chrono::sys_seconds WallClock() {
    return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  }
};

TEST_F(JwtMintExampleTest, NodeMintedTokensVerify) {
  const struct {
    const char* alg;
    TestSigner key;
    std::string key_file;
  } cases[] = {
      {"HS256", TestSigner::kHs256, keys().secret_file},
      {"EdDSA", TestSigner::kEdDsa, keys().ed25519_private},
      {"ES256", TestSigner::kEs256, keys().p256_private},
  };
  for (const auto& c : cases) {
    const std::string token = Mint(c.alg, c.key_file, "lobby,arena", "write");
    const auto now = WallClock();
    auto claims = Verifier(c.key).Verify(token, now);
    ASSERT_TRUE(claims.has_value()) << c.alg << ": " << claims.error().detail << " " << token;
    EXPECT_EQ(claims->subject, "backend-user-7");
    EXPECT_EQ(claims->scenes, (std::vector<std::string>{"lobby", "arena"}));
    EXPECT_EQ(claims->role, Role::kWrite);
    // A 300 s lifetime, minted within the last minute.
    EXPECT_GT(claims->expires_at, now + std::chrono::seconds(240)) << c.alg;
    EXPECT_LE(claims->expires_at, now + std::chrono::seconds(301)) << c.alg;
    // It stops being accepted after its lifetime plus the leeway.
    EXPECT_FALSE(Verifier(c.key).Verify(token, now + std::chrono::seconds(331)).has_value());
  }
}

TEST_F(JwtMintExampleTest, NodeMintedWildcardReadToken) {
  const std::string token = Mint("EdDSA", keys().ed25519_private, "*", "read");
  auto grant = Verifier(TestSigner::kEdDsa).Check(token, "any-scene", WallClock());
  ASSERT_TRUE(grant.has_value()) << grant.error().detail;
  EXPECT_EQ(grant->role, Role::kRead);
  EXPECT_EQ(grant->subject, "backend-user-7");
  // A verifier holding another Ed25519 key refuses it.
  int status = -1;
  const std::string other_pem =
      RunShell("openssl pkey -pubout -in " + keys().ed25519_other_private, status);
  ASSERT_EQ(status, 0);
  auto other = server::JwtKey::FromPublicKeyPem(other_pem);
  ASSERT_TRUE(other.has_value());
  std::vector<server::JwtKey> other_keys;
  other_keys.push_back(std::move(other).value());
  EXPECT_TRUE(Refused(Verifier(std::move(other_keys)).Check(token, "any-scene", WallClock()),
                      server::auth_reason::kBadSignature));
}

}  // namespace
}  // namespace scenecrdt::testing

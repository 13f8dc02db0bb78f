// SPDX-License-Identifier: Apache-2.0
// The Authenticator seam a session calls: the --auth token table and the JWT verifier answer
// the same question the same way (grant with role, subject, expiry; refusal reasons).
#include "scenecrdt/server/auth/authenticator.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "scenecrdt/server/auth/auth.h"
#include "scenecrdt/server/auth/jwt_verifier.h"
#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using server::AccessGrant;
using server::Authenticator;
using server::AuthTable;
using server::Role;
namespace reason = server::auth_reason;

class AuthenticatorTest : public JwtFixture {};

TEST_F(AuthenticatorTest, TokenTableThroughTheInterface) {
  auto table =
      AuthTable::Parse(R"({"tokens":[{"token":"t-write","scenes":["lobby"],"role":"write"},)"
                       R"({"token":"t-read","scenes":["*"],"role":"read"}]})");
  ASSERT_TRUE(table.has_value());
  const Authenticator& auth = *table;
  auto grant = auth.Check("t-write", "lobby", Now());
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->role, Role::kWrite);
  EXPECT_EQ(grant->subject, "auth-file");
  EXPECT_FALSE(grant->expires_at.has_value());
  // Static tokens never expire, whatever `now` is.
  EXPECT_TRUE(auth.Check("t-read", "anything", UnixSeconds(0)).has_value());
  EXPECT_TRUE(auth.Check("t-read", "anything", UnixSeconds(253402300799)).has_value());
  EXPECT_EQ(auth.Check("t-read", "arena", Now())->role, Role::kRead);

  auto unknown = auth.Check("t-nope", "lobby", Now());
  EXPECT_TRUE(Refused(unknown, reason::kUnknownToken));
  EXPECT_FALSE(server::IsSceneNotGranted(unknown.error()));
  auto not_granted = auth.Check("t-write", "arena", Now());
  EXPECT_TRUE(Refused(not_granted, reason::kMissingGrant));
  EXPECT_TRUE(server::IsSceneNotGranted(not_granted.error()));
  // The two-argument form keeps its own answers.
  EXPECT_EQ(table->Check("t-write", "lobby").value(), Role::kWrite);
}

TEST_F(AuthenticatorTest, OpenModeGrantsWriteToAnyone) {
  const AuthTable open = AuthTable::Open();
  const Authenticator& auth = open;
  auto grant = auth.Check("", "lobby", Now());
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->role, Role::kWrite);
  EXPECT_EQ(grant->subject, "open");
  EXPECT_FALSE(grant->expires_at.has_value());
}

TEST_F(AuthenticatorTest, TableAndJwtAnswerAlike) {
  auto table = AuthTable::Parse(R"({"tokens":[{"token":"static","scenes":["lobby"],)"
                                R"("role":"read"}]})");
  ASSERT_TRUE(table.has_value());
  const server::JwtVerifier jwt = Verifier(TestSigner::kEdDsa);
  const std::string token =
      ValidToken(TestSigner::kEdDsa, R"({"sub":"bob","scenes":["lobby"],"role":"read","exp":)" +
                                         std::to_string(kJwtExp) + "}");
  const struct {
    const Authenticator* auth;
    std::string token;
  } cases[] = {{&*table, "static"}, {&jwt, token}};
  for (const auto& c : cases) {
    auto grant = c.auth->Check(c.token, "lobby", Now());
    ASSERT_TRUE(grant.has_value());
    EXPECT_EQ(grant->role, Role::kRead);
    auto other = c.auth->Check(c.token, "arena", Now());
    EXPECT_TRUE(Refused(other, reason::kMissingGrant));
    EXPECT_TRUE(server::IsSceneNotGranted(other.error()));
    EXPECT_FALSE(server::IsSceneNotGranted(c.auth->Check("x" + c.token, "lobby", Now()).error()));
  }
  EXPECT_EQ(jwt.Check(token, "lobby", Now())->expires_at, UnixSeconds(kJwtExp + 30));
  EXPECT_EQ(jwt.Check(token, "lobby", Now())->subject, "bob");
}

}  // namespace
}  // namespace scenecrdt::testing

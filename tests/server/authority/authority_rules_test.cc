// SPDX-License-Identifier: Apache-2.0
// Owner: server/scene/authority/authority_rules.*. The --authority-rules file: what it accepts, and
// that every mistake (a typo in a key, a bad value, lo > hi, a number outside the entity-number
// space, a component id that is not a u32) is refused with a reason naming the key.
#include "scenecrdt/server/scene/authority/authority_rules.h"

#include <gtest/gtest.h>

#include <string>

namespace scenecrdt::server {
namespace {

std::string Why(std::string_view text) {
  std::string why;
  auto rules = AuthorityRules::Parse(text, why);
  return rules.has_value() ? "ok" : why;
}

TEST(AuthorityRulesTest, ParsesEveryKey) {
  std::string why;
  auto rules = AuthorityRules::Parse(
      R"({"default":"any","components":{"1":"owner","1041":"none","1092":"admin"},
          "admin_entities":[[512,600],[700,700]]})",
      why);
  ASSERT_TRUE(rules.has_value()) << why;
  EXPECT_EQ(rules->For(1), Writer::kOwner);
  EXPECT_EQ(rules->For(1041), Writer::kNone);
  EXPECT_EQ(rules->For(1092), Writer::kAdmin);
  EXPECT_EQ(rules->For(5), Writer::kAny);  // the default
  EXPECT_TRUE(rules->AdminOnly(512));
  EXPECT_TRUE(rules->AdminOnly(700));
  EXPECT_FALSE(rules->AdminOnly(650));
  EXPECT_EQ(Why("{}"), "ok");
}

TEST(AuthorityRulesTest, MistakesNameTheKey) {
  EXPECT_NE(Why(R"({"defualt":"owner"})").find("unknown key \"defualt\""), std::string::npos);
  EXPECT_NE(Why(R"({"default":"everyone"})").find("\"default\""), std::string::npos);
  EXPECT_NE(Why(R"({"components":{"1":"everyone"}})").find("\"1\""), std::string::npos);
  EXPECT_NE(Why(R"({"components":{"x1":"any"}})").find("\"x1\" is not a component id"),
            std::string::npos);
  EXPECT_NE(Why(R"({"components":{"4294967296":"any"}})").find("not a component id"),
            std::string::npos);
  EXPECT_NE(Why(R"({"admin_entities":[[600,512]]})").find("\"admin_entities\""), std::string::npos);
  EXPECT_NE(Why(R"({"admin_entities":[[512,65535]]})").find("\"admin_entities\""),
            std::string::npos);
  EXPECT_NE(Why(R"({"admin_entities":[[-1,5]]})").find("\"admin_entities\""), std::string::npos);
  EXPECT_NE(Why("[1,2").find("not JSON"), std::string::npos);
  EXPECT_NE(Why(R"({"default":"any","default":"owner"})").find("not JSON"), std::string::npos);
}

}  // namespace
}  // namespace scenecrdt::server

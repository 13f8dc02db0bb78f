// SPDX-License-Identifier: Apache-2.0
// Tests the Redis URL grammar (cluster/redis_url.h): every refusal first, then the accepted
// forms, the canonical round trip and the redacted log form.
#include "scenecrdt/cluster/redis_url.h"

#include <gtest/gtest.h>

#include <string>

namespace scenecrdt::cluster {
namespace {

TEST(RedisUrlTest, Validity) {
  const char* bad[] = {
      "",
      "redis:/host",
      "http://host:6379",
      "rediss://host:6379",
      "redis://",
      "redis://:6379",
      "redis://host:",
      "redis://host:0",
      "redis://host:65536",
      "redis://host:+6379",
      "redis://host:06379",
      "redis://host:63a9",
      "redis://ho st:6379",
      "redis://host:6379/x",
      "redis://host:6379/01",
      "redis://host:6379/2147483648",
      "redis://host:6379/0/1",
      "redis://pass@host",
      "redis://user:@host",
      "redis://:p%zz@host",
      "redis://:p%0@host",
      "redis://:p%00@host",
      "redis://[::1",
      "redis://[]:6379",
      "redis://[::1]x",
      "redis://[::g]:6379",
      "redis://host{x}",
      "unix://",
      "unix://relative/path.sock",
      "unix:///tmp/r.sock?",
      "unix:///tmp/r.sock?db",
      "unix:///tmp/r.sock?db=x",
      "unix:///tmp/r.sock?db=1&db=2",
      "unix:///tmp/r.sock?color=red",
      "unix:///tmp/r.sock?user=u",
      "unix:///tmp/r.sock?password=a&password=b",
      "unix:///tmp/%zz.sock",
      "redis://host\t:6379",
      "redis://h\xc3\xa9st",
  };
  for (const char* url : bad) {
    auto r = ParseRedisUrl(url);
    ASSERT_FALSE(r.has_value()) << url;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << url;
    EXPECT_STRNE(r.error().detail, "") << url;
  }
  EXPECT_FALSE(ParseRedisUrl("redis://" + std::string(254, 'h')).has_value());
  EXPECT_FALSE(ParseRedisUrl("unix:///" + std::string(107, 's')).has_value());
  EXPECT_FALSE(ParseRedisUrl("redis://h/" + std::string(4096, '1')).has_value());
  EXPECT_FALSE(ParseRedisUrl("redis://" + std::string(257, 'u') + ":p@h").has_value());
  EXPECT_FALSE(ParseRedisUrl("redis://:" + std::string(513, 'p') + "@h").has_value());
  EXPECT_FALSE(ParseRedisUrl("unix:///s?password=" + std::string(513, 'p')).has_value());
  // The longest credentials, each byte percent-encoded, still fit.
  std::string user, password;
  for (int i = 0; i < 256; ++i) user += "%3F";
  for (int i = 0; i < 512; ++i) password += "%3F";
  auto longest = ParseRedisUrl("redis://" + user + ":" + password + "@h");
  ASSERT_TRUE(longest.has_value());
  EXPECT_TRUE(ParseRedisUrl(FormatRedisUrl(*longest, true)).has_value());
}

TEST(RedisUrlTest, TcpForms) {
  auto plain = ParseRedisUrl("redis://cache.internal");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->kind, RedisEndpoint::Kind::kTcp);
  EXPECT_EQ(plain->host, "cache.internal");
  EXPECT_EQ(plain->port, 6379);
  EXPECT_EQ(plain->db, 0u);
  EXPECT_TRUE(plain->password.empty());

  auto full = ParseRedisUrl("REDIS://alice:s%40cr%3At@10.0.0.7:6390/3");
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->host, "10.0.0.7");
  EXPECT_EQ(full->port, 6390);
  EXPECT_EQ(full->user, "alice");
  EXPECT_EQ(full->password, "s@cr:t");
  EXPECT_EQ(full->db, 3u);

  auto v6 = ParseRedisUrl("redis://:pw@[::1]:7000/");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 7000);
  EXPECT_TRUE(v6->user.empty());
  EXPECT_EQ(v6->password, "pw");
  EXPECT_EQ(v6->db, 0u);
}

TEST(RedisUrlTest, UnixForms) {
  auto bare = ParseRedisUrl("unix:///run/redis/redis.sock");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->kind, RedisEndpoint::Kind::kUnix);
  EXPECT_EQ(bare->path, "/run/redis/redis.sock");

  auto options = ParseRedisUrl("unix:///tmp/a%20b.sock?password=p%26w&db=2&user=bob");
  ASSERT_TRUE(options.has_value());
  EXPECT_EQ(options->path, "/tmp/a b.sock");
  EXPECT_EQ(options->password, "p&w");
  EXPECT_EQ(options->user, "bob");
  EXPECT_EQ(options->db, 2u);
}

TEST(RedisUrlTest, PasswordOption) {
  auto replaced = ParseRedisUrl("redis://:inurl@h:1", "fromflag");
  ASSERT_TRUE(replaced.has_value());
  EXPECT_EQ(replaced->password, "fromflag");
  auto user = ParseRedisUrl("redis://bob@h", "s3cret");
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->user, "bob");
  EXPECT_EQ(user->password, "s3cret");
  EXPECT_EQ(ParseRedisUrl(FormatRedisUrl(*user, true)).value(), *user);
  auto unix_user = ParseRedisUrl("unix:///s.sock?user=bob", "pw");
  ASSERT_TRUE(unix_user.has_value());
  EXPECT_EQ(unix_user->user, "bob");
  EXPECT_EQ(unix_user->password, "pw");
  // Without the option the same URLs are refused; an empty option changes nothing.
  EXPECT_FALSE(ParseRedisUrl("redis://bob@h").has_value());
  EXPECT_FALSE(ParseRedisUrl("redis://bob@h", "").has_value());
  EXPECT_EQ(ParseRedisUrl("redis://:u@h", "")->password, "u");
  EXPECT_FALSE(ParseRedisUrl("redis://h", std::string(513, 'p')).has_value());
  EXPECT_FALSE(ParseRedisUrl("redis://h", std::string("a\0b", 3)).has_value());
  EXPECT_FALSE(ParseRedisUrl("redis://h:0", "pw").has_value());  // the URL is still checked
}

TEST(RedisUrlTest, CanonicalFormRoundTrips) {
  const char* urls[] = {
      "redis://localhost",
      "redis://:p%2Fw%3F@127.0.0.1:1/9",
      "redis://u%3Ax:pw@[fe80::1%25]:6379",
      "redis://a@b:c@host:6379",
      "unix:///tmp/x.sock",
      "unix:///tmp/%3Fq.sock?user=u&password=%E2%82%AC&db=7",
  };
  for (const char* url : urls) {
    auto e = ParseRedisUrl(url);
    if (!e.has_value()) continue;  // IPv6 zone ids are refused: fine, nothing to round-trip
    const std::string canonical = FormatRedisUrl(*e, true);
    auto again = ParseRedisUrl(canonical);
    ASSERT_TRUE(again.has_value()) << url << " -> " << canonical;
    EXPECT_EQ(*again, *e) << url << " -> " << canonical;
    EXPECT_EQ(FormatRedisUrl(*again, true), canonical);
  }
  EXPECT_EQ(FormatRedisUrl(*ParseRedisUrl("redis://h"), true), "redis://h:6379");
  EXPECT_EQ(FormatRedisUrl(*ParseRedisUrl("redis://a@b:c@host:6379"), true),
            "redis://a%40b:c@host:6379");
}

TEST(RedisUrlTest, RedactedFormHidesThePassword) {
  auto e = ParseRedisUrl("redis://bob:hunter2@db:6379");
  ASSERT_TRUE(e.has_value());
  const std::string shown = FormatRedisUrl(*e, false);
  EXPECT_EQ(shown, "redis://bob:***@db:6379");
  auto u = ParseRedisUrl("unix:///s.sock?password=hunter2");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(FormatRedisUrl(*u, false), "unix:///s.sock?password=***");
}

}  // namespace
}  // namespace scenecrdt::cluster

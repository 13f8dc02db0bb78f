// SPDX-License-Identifier: Apache-2.0
// Owner: server/observability/event_log.* end to end (issue 24 §3, --log-format and
// --log-level). An in-process server with an --auth token and a JWT secret, run once per log
// format: joins with the right token, a wrong one, a valid JWT, a forged JWT and both on the
// /dcl/ path's ?token=; no line of either format holds a token, a JWT (or any of its three
// parts) or the JWT secret. Json lines are objects with ts, level, event and the text lines'
// fields; --log-level warn leaves the info events out.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kStaticToken[] = "static-token-0f3a9c51e7d24b86";
constexpr char kWrongToken[] = "static-token-wrong-77c1d0e2aa";

int64_t WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Lines {
 public:
  std::function<void(std::string_view)> Sink() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    };
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  std::string All() {
    std::string out;
    for (const std::string& l : Get()) out += l;
    return out;
  }
  bool Has(std::string_view part) { return All().find(part) != std::string::npos; }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

class ServerLogFormatTest : public JwtFixture {
 protected:
  // Runs the joins against a server logging in `format` at `level`; returns its lines.
  std::vector<std::string> RunJoins(server::LogFormat format, server::LogLevel level,
                                    std::vector<std::string>& secrets) {
    TempDir dir;
    const std::string auth = dir.path() + "/auth.json";
    FILE* f = std::fopen(auth.c_str(), "w");
    EXPECT_NE(f, nullptr);
    if (f == nullptr) return {};
    std::fprintf(f, R"({"tokens":[{"token":"%s","scenes":["*"],"role":"write"}]})", kStaticToken);
    std::fclose(f);
    Lines lines;
    server::ServerConfig config = TestServer::Config();
    config.access.auth_file = auth;
    config.access.jwt_secret_files = {keys().secret_file};
    config.log_sink = lines.Sink();
    config.log_format = format;
    config.log_level = level;
    const std::string jwt = ValidToken(
        TestSigner::kHs256, R"({"sub":"player-7","scenes":["lobby"],"role":"write","exp":)" +
                                std::to_string(WallNow() + 600) + "}");
    std::string forged = jwt;
    char& c = forged[forged.size() - 10];
    c = c == 'A' ? 'B' : 'A';
    secrets = {kStaticToken, kWrongToken, keys().secret, jwt, forged};
    // Each part of both JWTs (the claims part names the subject, but whole it is a token).
    std::size_t start = 0;
    for (int part = 0; part < 3; ++part) {
      const std::size_t end = jwt.find('.', start);
      secrets.push_back(jwt.substr(start, end - start));
      start = end + 1;
    }
    secrets.push_back(forged.substr(forged.rfind('.') + 1));
    {
      TestServer server(config);
      const uint16_t tcp = server.get().tcp_port();
      const uint16_t http = server.get().http_port();
      RawConnection writer(tcp);
      EXPECT_TRUE(writer.Join("lobby", kStaticToken).has_value());
      RawConnection wrong(tcp);
      EXPECT_FALSE(wrong.Join("lobby", kWrongToken).has_value());
      RawConnection signed_in(tcp);
      EXPECT_TRUE(signed_in.Join("lobby", jwt).has_value());
      RawConnection forger(tcp);
      EXPECT_FALSE(forger.Join("lobby", forged).has_value());
      DclSocket dcl_ok(http, "/dcl/lobby?token=" + jwt);
      EXPECT_TRUE(dcl_ok.connected());
      DclSocket dcl_static(http, std::string("/dcl/lobby?token=") + kStaticToken);
      EXPECT_TRUE(dcl_static.connected());
      DclSocket dcl_wrong(http, std::string("/dcl/lobby?token=") + kWrongToken);
      EXPECT_FALSE(dcl_wrong.connected());
      DclSocket dcl_forged(http, "/dcl/lobby?token=" + forged);
      EXPECT_FALSE(dcl_forged.connected());
      // A viewer asset named like a token (the path is logged when the asset is missing).
      HttpGet(http, std::string("/view/lobby?token=") + kStaticToken);
      if (level <= server::LogLevel::kInfo) {
        EXPECT_TRUE(WaitUntil([&] {
          return lines.Has(format == server::LogFormat::kJson ? "\"event\":\"auth\"" : " auth ");
        })) << lines.All();
      }
      EXPECT_TRUE(WaitUntil([&] { return lines.Has("unknown_token"); })) << lines.All();
      server.Stop();
    }
    return lines.Get();
  }
};

void ExpectNoSecret(const std::vector<std::string>& lines,
                    const std::vector<std::string>& secrets) {
  for (const std::string& line : lines) {
    for (const std::string& secret : secrets) {
      ASSERT_GE(secret.size(), 8u);
      EXPECT_EQ(line.find(secret), std::string::npos) << "a secret in the log: " << line;
    }
  }
}

TEST_F(ServerLogFormatTest, NoTokenOrSecretInTextLines) {
  std::vector<std::string> secrets;
  const auto lines = RunJoins(server::LogFormat::kText, server::LogLevel::kInfo, secrets);
  ASSERT_FALSE(lines.empty());
  ExpectNoSecret(lines, secrets);
  for (const std::string& line : lines) {
    EXPECT_EQ(line.rfind("scenecrdt serve: ", 0), 0u) << line;
    EXPECT_EQ(line.find('{'), std::string::npos) << line;
  }
}

TEST_F(ServerLogFormatTest, NoTokenOrSecretInJsonLinesAndEachIsOneObject) {
  std::vector<std::string> secrets;
  const auto lines = RunJoins(server::LogFormat::kJson, server::LogLevel::kInfo, secrets);
  ASSERT_FALSE(lines.empty());
  ExpectNoSecret(lines, secrets);
  bool saw_open = false;
  bool saw_auth = false;
  bool saw_refusal = false;
  for (const std::string& line : lines) {
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one object per line: " << line;
    const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(object.is_object()) << line;
    ASSERT_TRUE(object.contains("ts") && object["ts"].is_string()) << line;
    ASSERT_TRUE(object.contains("level") && object["level"].is_string()) << line;
    ASSERT_TRUE(object.contains("event") && object["event"].is_string()) << line;
    const std::string event = object["event"];
    if (event == "open") {
      saw_open = true;
      EXPECT_EQ(object["scene"], "lobby") << line;
      EXPECT_TRUE(object["session"].is_number_unsigned()) << line;
      EXPECT_TRUE(object["peer"].is_string()) << line;
      EXPECT_EQ(object["level"], "info") << line;
    } else if (event == "auth") {
      saw_auth = true;
      EXPECT_EQ(object["subject"], "player-7") << line;
      EXPECT_TRUE(object["expires_in_s"].is_number_integer()) << line;
    } else if (event == "refusal" && object["reason"] == "unauthorized") {
      saw_refusal = true;
      EXPECT_EQ(object["level"], "warn") << line;
      EXPECT_TRUE(object["session"].is_null() || object["session"].is_number()) << line;
    }
  }
  EXPECT_TRUE(saw_open && saw_auth && saw_refusal);
}

TEST_F(ServerLogFormatTest, LogLevelWarnLeavesInfoEventsOut) {
  std::vector<std::string> secrets;
  const auto lines = RunJoins(server::LogFormat::kJson, server::LogLevel::kWarn, secrets);
  ASSERT_FALSE(lines.empty());
  ExpectNoSecret(lines, secrets);
  for (const std::string& line : lines) {
    const auto object = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(object.is_object()) << line;
    EXPECT_NE(object["level"], "info") << line;
    EXPECT_NE(object["level"], "debug") << line;
  }
}

}  // namespace
}  // namespace scenecrdt::testing

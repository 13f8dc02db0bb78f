// SPDX-License-Identifier: Apache-2.0
// Tests the admin HTTP API (docs/OPERATIONS.md "Admin API") over real HTTP (curl) against a
// real `scenecrdt serve`: 404 without --admin-token-file, 401 (logged, counted, the token
// never in the log) for a missing or wrong token, the scene list, one scene's figures and a
// WAL checkpoint for the right one, and a refused start for a token file that is too short.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kExamplesDir = SCENECRDT_EXAMPLES_DIR;
const std::string kToken = "0123456789abcdef0123456789abcdef";

struct Http {
  int status = 0;
  std::string body;
};

// `curl -X METHOD URL` with an optional bearer token.
Http Curl(const ScratchDir& scratch, const std::string& method, const std::string& url,
          const std::string& token = {}) {
  std::vector<std::string> args = {"-s", "-S", "--max-time",     "10", "-o",
                                   "-",  "-w", "\n%{http_code}", "-X", method};
  if (!token.empty()) {
    args.push_back("-H");
    args.push_back("Authorization: Bearer " + token);
  }
  args.push_back(url);
  const RunResult r = RunProcess("/usr/bin/curl", args, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Http out;
  const auto nl = r.out.rfind('\n');
  if (nl == std::string::npos) return out;
  out.status = std::atoi(r.out.c_str() + nl + 1);
  out.body = r.out.substr(0, nl);
  return out;
}

std::string Base(const ServeProcess& serve) {
  return "http://127.0.0.1:" + std::to_string(serve.http_port());
}

TEST(ServeAdminTest, WithoutATokenFileEveryAdminPathIs404) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started()) << serve.log();
  EXPECT_EQ(Curl(scratch, "GET", Base(serve) + "/admin/scenes").status, 404);
  EXPECT_EQ(Curl(scratch, "GET", Base(serve) + "/admin/scenes", kToken).status, 404);
  EXPECT_EQ(Curl(scratch, "DELETE", Base(serve) + "/admin/scenes/x", kToken).status, 404);
}

TEST(ServeAdminTest, TheTokenGuardsTheListAndOneScenesFigures) {
  ScratchDir scratch;
  WriteText(scratch.File("admin.token"), kToken + "\n");
  ServeProcess serve(kCli, scratch.File("data"),
                     {"--admin-token-file", scratch.File("admin.token").string()});
  ASSERT_TRUE(serve.started()) << serve.log();
  const RunResult sent = RunProcess(kCli,
                                    {"send", "--server", serve.tcp_url(), "--scene", "kept",
                                     "--timeout", "20", kExamplesDir + "/sample_scene.dcl"},
                                    scratch);
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  const std::string list = Base(serve) + "/admin/scenes";

  EXPECT_EQ(Curl(scratch, "GET", list).status, 401);
  EXPECT_EQ(Curl(scratch, "GET", list, "wrong-token-wrong-token-wrong-tok").status, 401);
  EXPECT_EQ(Curl(scratch, "GET", list, kToken + "x").status, 401);
  EXPECT_TRUE(serve.WaitForLog("kind=admin", 3)) << serve.log();
  EXPECT_NE(serve.log().find("reason=unauthorized"), std::string::npos) << serve.log();
  EXPECT_EQ(serve.log().find("wrong-token"), std::string::npos) << serve.log();
  const Http metrics = Curl(scratch, "GET", Base(serve) + "/metrics");
  EXPECT_NE(metrics.body.find("scenecrdt_admin_refused_total 3"), std::string::npos);

  const Http scenes = Curl(scratch, "GET", list, kToken);
  ASSERT_EQ(scenes.status, 200) << scenes.body;
  auto doc = json::ReadJson(scenes.body);
  ASSERT_TRUE(doc.has_value()) << scenes.body;
  const json::Json* array = json::Member(*doc, "scenes");
  ASSERT_TRUE(array && array->is_array()) << scenes.body;
  bool found = false;
  for (const json::Json& s : *array) {
    const json::Json* name = json::Member(s, "name");
    if (name && name->is_string() && name->get<std::string>() == "kept") found = true;
  }
  EXPECT_TRUE(found) << scenes.body;

  const Http one = Curl(scratch, "GET", list + "/kept", kToken);
  ASSERT_EQ(one.status, 200) << one.body;
  auto scene = json::ReadJson(one.body);
  ASSERT_TRUE(scene.has_value()) << one.body;
  for (const char* field : {"entities", "bytes", "sessions", "sequences"}) {
    EXPECT_NE(json::Member(*scene, field), nullptr) << field << " " << one.body;
  }
  const json::Json* bytes = json::Member(*scene, "bytes");
  ASSERT_TRUE(bytes && bytes->is_number()) << one.body;
  EXPECT_GT(bytes->get<double>(), 0) << one.body;

  // Nothing stored: 404, and the inspection did not create the scene.
  EXPECT_EQ(Curl(scratch, "GET", list + "/nope", kToken).status, 404);
  EXPECT_EQ(Curl(scratch, "GET", list, kToken).body.find("\"nope\""), std::string::npos);
  EXPECT_EQ(Curl(scratch, "GET", list + "/bad%20name", kToken).status, 400);
  EXPECT_EQ(Curl(scratch, "DELETE", list + "/kept", kToken).status, 501);
  // The WAL moves into the database file and is truncated (nothing writes meanwhile).
  const Http checkpoint = Curl(scratch, "POST", list + "/kept/checkpoint", kToken);
  EXPECT_EQ(checkpoint.status, 200) << checkpoint.body;
  EXPECT_NE(checkpoint.body.find("\"database_bytes\""), std::string::npos) << checkpoint.body;
  EXPECT_EQ(std::filesystem::file_size(scratch.File("data") / "scenes.sqlite3-wal"), 0u);
  EXPECT_EQ(Curl(scratch, "GET", list + "/kept/checkpoint", kToken).status, 405);
  EXPECT_EQ(Curl(scratch, "POST", list, kToken).status, 405);
}

TEST(ServeAdminTest, ATokenFileTooShortOrMissingRefusesToStart) {
  ScratchDir scratch;
  WriteText(scratch.File("short.token"), "short\n");
  for (const std::string& file :
       {scratch.File("short.token").string(), scratch.File("none.token").string()}) {
    const RunResult r =
        RunProcess(kCli,
                   {"serve", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data",
                    scratch.File("data").string(), "--admin-token-file", file},
                   scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--admin-token-file"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test

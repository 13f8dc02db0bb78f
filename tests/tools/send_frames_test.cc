// SPDX-License-Identifier: Apache-2.0
// `scenecrdt send` against a real `scenecrdt serve` child (issue 23 item 14): a recording of
// 4 000 components of 4 KB (16 MB; 500 messages per frame made 2 MB frames, twice the server's
// 1 MiB frame limit, refused as fatal) is sent whole over tcp:// and ws://, in frames cut under
// the limit the Welcome tells; a message larger than that limit is said before anything is
// sent, not met with a fatal refusal from the server.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A PUT_COMPONENT of component 1500 with `payload` bytes (docs/PROTOCOL.md section 1).
void AppendPut(std::vector<uint8_t>& out, uint32_t entity, uint32_t payload) {
  PutU32(out, 24 + payload);
  PutU32(out, 1);
  PutU32(out, entity);
  PutU32(out, 1500);
  PutU32(out, 1);
  PutU32(out, payload);
  for (uint32_t i = 0; i < payload; ++i) out.push_back(static_cast<uint8_t>(entity * 31 + i));
}

std::string WriteFile(const ScratchDir& scratch, const std::string& name,
                      const std::vector<uint8_t>& bytes) {
  const std::string path = scratch.File(name).string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string StateHash(const std::string& document) {
  auto doc = json::ReadJson(document);
  if (!doc.has_value()) return "";
  const json::Json* hash = json::Member(*doc, "stateHash");
  return hash && hash->is_string() ? hash->get<std::string>() : "";
}

std::string ReplayHash(const ScratchDir& scratch, const std::string& file) {
  const RunResult replay = RunProcess(kCli, {"replay", file}, scratch);
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  return StateHash(replay.out);
}

std::string PullHash(const ScratchDir& scratch, const std::string& server,
                     const std::string& scene) {
  // A 16 MB snapshot takes a while to build under a sanitizer on a loaded machine.
  const RunResult pull =
      RunProcess(kCli, {"pull", "--server", server, "--scene", scene, "--timeout", "120"}, scratch);
  EXPECT_EQ(pull.exit_code, 0) << pull.err;
  return StateHash(pull.out);
}

TEST(SendFramesTest, FourThousandComponentsOfFourKilobytesAreSentWhole) {
  ScratchDir scratch;
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < 4000; ++e) AppendPut(dcl, 512 + e, 4000);
  const std::string file = WriteFile(scratch, "big.dcl", dcl);
  const std::string want = ReplayHash(scratch, file);
  ASSERT_FALSE(want.empty());
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started());
  for (const bool ws : {false, true}) {
    SCOPED_TRACE(ws ? "ws://" : "tcp://");
    const std::string server = ws ? serve.ws_url() : serve.tcp_url();
    const std::string scene = ws ? "big-ws" : "big-tcp";
    // --frame-messages 500 is the default: alone it makes 2 MB frames.
    const RunResult send = RunProcess(kCli,
                                      {"send", "--server", server, "--scene", scene,
                                       "--frame-messages", "500", "--timeout", "120", file},
                                      scratch);
    ASSERT_EQ(send.exit_code, 0) << send.err << serve.log();
    EXPECT_NE(send.err.find("4000 messages in"), std::string::npos) << send.err;
    EXPECT_EQ(PullHash(scratch, server, scene), want);
  }
  EXPECT_EQ(serve.log().find("frame_too_large"), std::string::npos) << serve.log();
}

TEST(SendFramesTest, AMessageOverTheServersFrameLimitIsSaidBeforeSending) {
  ScratchDir scratch;
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 512, 100);
  AppendPut(dcl, 513, 20000);  // more than a 16 KiB frame carries
  const std::string file = WriteFile(scratch, "oversized.dcl", dcl);
  const std::string empty = ReplayHash(scratch, WriteFile(scratch, "empty.dcl", {}));
  ServeProcess serve(kCli, scratch.File("data"), {"--max-frame-bytes", "16384"});
  ASSERT_TRUE(serve.started());
  for (const bool ws : {false, true}) {
    SCOPED_TRACE(ws ? "ws://" : "tcp://");
    const std::string server = ws ? serve.ws_url() : serve.tcp_url();
    const RunResult send =
        RunProcess(kCli, {"send", "--server", server, "--scene", "limit", file}, scratch);
    EXPECT_EQ(send.exit_code, 1) << send.err;
    EXPECT_NE(send.err.find(file + ": the message at byte offset 124 is 20024 bytes, more than "
                                   "one frame carries to this server (frame limit 16384 bytes"),
              std::string::npos)
        << send.err;
    EXPECT_NE(send.err.find("nothing sent"), std::string::npos) << send.err;
    EXPECT_EQ(PullHash(scratch, server, "limit"), empty) << "nothing was sent";
  }
  EXPECT_EQ(serve.log().find("frame_too_large"), std::string::npos) << serve.log();
}

}  // namespace
}  // namespace scenecrdt::tools::test

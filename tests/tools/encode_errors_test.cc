// SPDX-License-Identifier: Apache-2.0
// Tests that `scenecrdt encode` refuses what it cannot use, as a user sees it (the built
// binary): a misspelt key ("transfrom", "postion", "positon") is exit 2 with the line, the
// key and the accepted keys, in JSON lines, arrays and {"ops":[...]} documents alike; a missing
// field says "missing <field>"; nothing is written on refusal.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

struct Refusal {
  std::string name;
  std::string text;
  std::vector<std::string> expect;  // substrings of stderr
};

class EncodeErrorsTest : public ::testing::Test {
 protected:
  // Runs `encode` on `text`; the output file must not appear on failure.
  RunResult Encode(const std::string& text) {
    const auto in = scratch_.File("in.json");
    const auto out = scratch_.File("out.dcl");
    std::filesystem::remove(out);
    WriteText(in, text);
    RunResult r = RunProcess(kCli, {"encode", in.string(), "-o", out.string()}, scratch_);
    if (r.exit_code != 0) {
      EXPECT_FALSE(std::filesystem::exists(out));
    }
    return r;
  }

  // Each case exits 2, prints nothing on stdout, and names everything in `expect`.
  void ExpectRefusals(const std::vector<Refusal>& cases) {
    for (const Refusal& c : cases) {
      SCOPED_TRACE(c.name);
      const RunResult r = Encode(c.text);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_EQ(r.out, "");
      for (const std::string& e : c.expect) {
        EXPECT_NE(r.err.find(e), std::string::npos) << r.err;
      }
    }
  }

  ScratchDir scratch_;
};

TEST_F(EncodeErrorsTest, MisspeltKeysAreRefusedWithTheLineAndTheAcceptedKeys) {
  const std::string put = R"("type":"put","entity":512,"component":1,"timestamp":1)";
  ExpectRefusals({
      {"transfrom (decode format)",
       "{" + put + R"(,"transform":{"position":[0,0,0]}})" + "\n{" + put +
           R"(,"transfrom":{"position":[1,2,3]}})" + "\n",
       {"line 2", "unknown key \"transfrom\"", "type put",
        "accepted keys: type, op, entity, number, version, component, componentId, "
        "timestamp, dataHex, transform, position, rotation, scale, parent"}},
      {"postion (ops format, top level)",
       R"({"op":"put","entity":600,"timestamp":5,"postion":[2,0,0]})"
       "\n",
       {"line 1", "unknown key \"postion\"", "accepted keys:"}},
      {"positon (inside transform)",
       "\n\n{" + put + R"(,"transform":{"positon":[1,2,3]}})" + "\n",
       {"line 3", "unknown key \"positon\" in \"transform\"",
        "accepted keys: position, rotation, scale, parent"}},
      {"inside an entity object",
       R"({"type":"delete_entity","entity":{"numbr":512}})",
       {"line 1", "unknown key \"numbr\" in \"entity\"", "accepted keys: number, version"}},
      {"a key of another type",
       R"({"type":"delete_entity","entity":512,"timestamp":3})",
       {"line 1", "unknown key \"timestamp\"", "type delete_entity",
        "accepted keys: type, op, entity, number, version)"}},
      {"unknown messages",
       R"({"type":"unknown","typeCode":99,"bodyHex":"","dataHex":"00"})",
       {"unknown key \"dataHex\"", "accepted keys: type, op, typeCode, bodyHex"}},
  });
}

TEST_F(EncodeErrorsTest, DocumentsNameTheLineOfTheMessage) {
  ExpectRefusals({
      {"ops document",
       "{\n \"comment\": \"x\",\n \"ops\": [\n  {\"op\":\"put\",\"entity\":600,"
       "\"timestamp\":5},\n  {\"op\":\"put\",\n   \"entity\":601,\"timestamp\":5,"
       "\"positon\":[1,0,0]}\n ]\n}\n",
       {"line 5", "unknown key \"positon\""}},
      {"array",
       "[\n{\"op\":\"delete_entity\",\"entity\":512},\n\n7\n]",
       {"line 4", "each message must be a JSON object, got 7"}},
      {"unknown top-level key",
       "{\"ops\":[],\"opps\":[]}",
       {"line 1", "unknown key \"opps\" at the top level (accepted keys: ops, comment)"}},
      {"ops not an array", "{\"ops\":{}}", {"line 1", "\"ops\" must be an array"}},
      {"bad JSON in an array",
       "[\n{\"op\":\"put\",\n \"entity\":512,,}\n]",
       {"line 3", "invalid JSON", "(column 15)"}},
  });
}

TEST_F(EncodeErrorsTest, MissingAndBadFieldsAreNamed) {
  ExpectRefusals({
      {"missing timestamp",
       "{\"type\":\"delete\",\"entity\":512,\"component\":1,\"timestamp\":1}\n"
       "{\"type\":\"delete\",\"entity\":512,\"component\":1}\n",
       {"line 2", "missing timestamp", "\"timestamp\" (a u32)"}},
      {"missing type",
       R"({"entity":512})",
       {"line 1", "missing type",
        "put, delete, delete_entity, append, put_network, "
        "delete_network, delete_entity_network, unknown"}},
      {"unknown type",
       R"({"type":"teleport","entity":512})",
       {"line 1", "unknown type \"teleport\" (accepted: put, delete"}},
      {"missing entity", R"({"type":"delete_entity"})", {"line 1", "missing entity"}},
      {"missing dataHex",
       R"({"type":"append","entity":512,"component":9,"timestamp":1})",
       {"line 1", "missing dataHex"}},
      {"missing typeCode", R"({"type":"unknown","bodyHex":""})", {"line 1", "missing typeCode"}},
      {"negative timestamp",
       R"({"type":"delete","entity":512,"component":1,"timestamp":-1})",
       {"line 1", "\"timestamp\" must be a u32 (0..4294967295), got -1"}},
      {"short position",
       R"({"op":"put","entity":512,"timestamp":1,"position":[1,2]})",
       {"line 1", "\"position\" needs 3 numbers [x,y,z], got [1,2]"}},
      {"entity and number disagree",
       R"({"type":"delete_entity","entity":512,"number":513,"version":0})",
       {"line 1", "\"entity\" 512 and \"number\"/\"version\" 513/0 disagree"}},
      {"transform and top-level fields",
       R"({"type":"put","entity":512,"timestamp":1,"transform":{},"scale":[1,1,1]})",
       {"line 1", "give \"transform\" or top-level"}},
      {"type and op",
       R"({"type":"put","op":"put","entity":512,"timestamp":1})",
       {"line 1", "give \"type\" or \"op\", not both"}},
      {"bad legacyLength",
       R"({"type":"delete_entity_network","entity":512,"legacyLength":1})",
       {"line 1", "\"legacyLength\" must be true or false"}},
  });
}

TEST_F(EncodeErrorsTest, ValidInputStillEncodes) {
  // Every accepted spelling at once: the checks refuse only what they must.
  const RunResult r = Encode(
      R"({"type":"put","entity":512,"number":512,"version":0,"component":1,"timestamp":1,)"
      R"("dataHex":"00","transform":{"position":[1,2,3],"rotation":[0,0,0,1],"scale":[1,1,1],)"
      R"("parent":0}})"
      "\n"
      R"({"op":"put","entity":{"number":513,"version":1},"componentId":1,"timestamp":2,)"
      R"("position":[1,-0,2],"parent":{"number":512}})"
      "\n"
      R"({"type":"delete_entity_network","number":514,"networkId":3,"legacyLength":true})"
      "\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace scenecrdt::tools::test

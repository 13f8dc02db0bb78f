// SPDX-License-Identifier: Apache-2.0
// consumer_cxx STREAM.dcl EXPECTED.txt: applies a DCL stream with the installed C++ runtime
// (<scenecrdt/runtime/runtime.h>) and checks world matrices, effective parents, flags and the
// state hash against `scenecrdt replay --world` (EXPECTED.txt from world_text.py), bit for bit.
#include <scenecrdt/runtime/runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int Fail(const std::string& what) {
  std::cerr << "consumer_cxx: " << what << "\n";
  return 1;
}

// The float32 bits of replay's JSON float text (docs/CLI.md).
bool FloatBits(const std::string& text, uint32_t* bits) {
  if (text == "NaN") {
    *bits = 0x7fc00000u;
  } else if (text == "Infinity") {
    *bits = 0x7f800000u;
  } else if (text == "-Infinity") {
    *bits = 0xff800000u;
  } else if (text.rfind("0x", 0) == 0) {
    *bits = static_cast<uint32_t>(std::stoul(text.substr(2), nullptr, 16));
  } else {
    char* end = nullptr;
    const float f = std::strtof(text.c_str(), &end);
    if (*end != '\0') return false;
    std::memcpy(bits, &f, sizeof(f));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: consumer_cxx STREAM.dcl EXPECTED.txt");
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> stream((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
  std::ifstream expected(argv[2]);
  std::string word, hash;
  std::size_t count = 0;
  if (!(expected >> word >> hash >> word >> count)) return Fail("malformed expectations");

  scenecrdt::runtime::Runtime replica;
  const auto merged = replica.ApplyCrdt(stream);
  if (!merged.has_value()) return Fail(std::string("apply: ") + merged.error().detail);
  replica.Update();
  if (replica.store().StateHashHex() != hash) return Fail("state hash differs from replay");
  const std::vector<scenecrdt::runtime::NodeInfo> nodes = replica.transforms().Nodes();
  if (nodes.size() != count) return Fail("node count differs from replay");
  for (const scenecrdt::runtime::NodeInfo& n : nodes) {
    uint32_t entity = 0, parent = 0;
    int parked = 0, placeholder = 0;
    expected >> entity >> parent >> parked >> placeholder;
    if (entity != n.entity || parent != n.effective_parent || (parked != 0) != n.parked ||
        (placeholder != 0) != n.placeholder) {
      return Fail("node " + std::to_string(n.entity) + " differs from replay");
    }
    const glm::mat4& m = replica.world_matrices()[n.index];
    for (int k = 0; k < 16; ++k) {
      std::string text;
      uint32_t want = 0, got = 0;
      if (!(expected >> text) || !FloatBits(text, &want)) return Fail("malformed float");
      std::memcpy(&got, &m[k / 4][k % 4], sizeof(got));
      if (got != want) {
        return Fail("entity " + std::to_string(entity) + " m[" + std::to_string(k) + "] " +
                    std::to_string(got) + " != replay " + text);
      }
    }
  }
  std::printf("consumer_cxx: %s: %zu entities, bit-identical to replay\n", argv[1], count);
  return 0;
}

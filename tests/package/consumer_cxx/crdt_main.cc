// SPDX-License-Identifier: Apache-2.0
// consumer_crdt STREAM.dcl EXPECTED.txt: merges a DCL stream with the installed CRDT side alone
// (scenecrdt::crdt, <scenecrdt/runtime/crdt_store.h>: what cluster/ links) and checks the state
// hash against `scenecrdt replay --world` (EXPECTED.txt from world_text.py).
#include <scenecrdt/runtime/crdt_store.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int Fail(const std::string& what) {
  std::cerr << "consumer_crdt: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: consumer_crdt STREAM.dcl EXPECTED.txt");
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> stream((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
  std::ifstream expected(argv[2]);
  std::string word, hash;
  if (!(expected >> word >> hash) || word != "hash") return Fail("malformed expectations");

  scenecrdt::runtime::CrdtStore store;
  const auto merged = store.MergeStream(stream);
  if (!merged.has_value()) return Fail(std::string("merge: ") + merged.error().detail);
  if (store.StateHashHex() != hash) return Fail("state hash differs from replay");
  return 0;
}

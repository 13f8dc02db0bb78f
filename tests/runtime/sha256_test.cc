// SPDX-License-Identifier: Apache-2.0
// Tests SHA-256 against the FIPS 180-4 / NIST example vectors.
#include "scenecrdt/runtime/sha256.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace scenecrdt::runtime {
namespace {

std::string HashText(const std::string& s) {
  return Sha256::ToHex(
      Sha256::Hash(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size())));
}

TEST(Sha256Test, NistVectors) {
  EXPECT_EQ(HashText(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HashText("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HashText("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(HashText(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  std::vector<uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
  const auto expected = Sha256::Hash(data);
  for (std::size_t step : {1u, 3u, 63u, 64u, 65u, 500u}) {
    Sha256 s;
    for (std::size_t pos = 0; pos < data.size(); pos += step) {
      s.Update(std::span<const uint8_t>(data).subspan(pos, std::min(step, data.size() - pos)));
    }
    EXPECT_EQ(s.Finish(), expected) << "step " << step;
  }
}

}  // namespace
}  // namespace scenecrdt::runtime

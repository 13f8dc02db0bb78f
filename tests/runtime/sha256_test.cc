// SPDX-License-Identifier: Apache-2.0
// Tests SHA-256 against the FIPS 180-4 / NIST example vectors and the padding boundaries
// (docs/CRDT.md says why the state hash has its own implementation).
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

TEST(Sha256Test, PaddingBoundaries) {
  // Lengths around the 56-byte padding limit and the 64-byte block, where a second padding
  // block starts. Digests from coreutils sha256sum (`head -c N /dev/zero | tr '\0' a`), so
  // the hash every build computes is the standard one.
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const auto& [length, digest] : cases) {
    EXPECT_EQ(HashText(std::string(length, 'a')), digest) << length << " bytes";
  }
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

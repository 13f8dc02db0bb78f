// Harness of the docs/COMPONENTS.md C++ snippet (docs/SNIPPETS.md): `bytes` is one DCL chunk
// putting a MeshRenderer (1018) on entity 600; `Decode` and `Handle` are the renderer's.
// After the snippet the replica must have listed that component as added and changed.
#include <scenecrdt/runtime/runtime.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

namespace runtime = scenecrdt::runtime;

namespace {
int decoded = 0;
void Decode(uint32_t component, std::span<const uint8_t> data) {
  decoded += component == 1018 && data.size() == 4;
}
void Handle(uint32_t, std::span<const uint8_t>) {}
int created = 0;
void Create(uint32_t, uint32_t) { created++; }
void Destroy(uint32_t, uint32_t) {}

std::vector<uint8_t> Chunk() {
  // PUT_COMPONENT: length, type 1, entity, component, timestamp, data length, data.
  std::vector<uint8_t> out;
  for (uint32_t v : {28u, 1u, 600u, 1018u, 1u, 4u}) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  for (uint8_t b : {0x0a, 0x02, 0x08, 0x01}) out.push_back(b);
  return out;
}
}  // namespace

int main() {
  const std::vector<uint8_t> bytes = Chunk();
  {
    // @snippet
  }
  if (decoded != 1 || created != 1)
    std::fprintf(stderr, "the MeshRenderer was not added and decoded once\n");
  return decoded == 1 && created == 1 ? 0 : 1;
}

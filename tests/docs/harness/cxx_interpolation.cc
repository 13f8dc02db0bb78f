// Harness of the docs/INTERPOLATION.md API listing (docs/SNIPPETS.md): `options`, `bytes`
// (a sender's Transform of `entity`), `receive_us` and `render_us`; the listing runs in order.
#include <scenecrdt/runtime/runtime.h>

#include <cstdint>
#include <vector>

using scenecrdt::runtime::BatchTime;
using scenecrdt::runtime::InterpolationOptions;
using scenecrdt::runtime::Runtime;

int main() {
  const InterpolationOptions options;
  const uint32_t entity = 600;
  Runtime sender;
  std::vector<uint8_t> bytes;
  scenecrdt::protocol::Transform t;
  t.position = {1, 2, 3};
  if (!sender.WriteTransform(entity, t, bytes).has_value()) return 1;
  const int64_t receive_us = 1000000, render_us = 1200000;
  // @snippet
  return 0;
}

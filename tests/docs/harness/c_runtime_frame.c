/* Harness of the docs/C-ABI.md "A frame" snippet (docs/SNIPPETS.md): `bytes`/`size`, one
 * chunk of DCL bytes (a sender's Transform), received at `receive_us`; the buffers of the
 * copies. The snippet's frame loop runs until the runner stops it (`loop`). */
#include <scenecrdt/scenecrdt.h>

int main(void) {
  sc_runtime* sender = sc_runtime_create();
  const sc_transform t = {{1, 2, 3}, {0, 0, 0, 1}, {1, 1, 1}, 0};
  uint8_t bytes[SC_WRITE_MAX_BYTES];
  size_t written = 0;
  if (sc_runtime_write_transform(sender, 600, &t, bytes, sizeof bytes, &written) != SC_OK) return 1;
  const size_t size = written; /* unused (-Werror) when the snippet passes another length */
  sc_runtime_destroy(sender);
  const int64_t receive_us = sc_now_us();
  enum { cap = 64 };
  uint32_t ids[cap];
  float m[16 * cap];
  size_t n = 0;
  /* @snippet */
  return 0;
}

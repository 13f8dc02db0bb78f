/* Harness of the docs/COMPONENTS.md C snippet (docs/SNIPPETS.md): `rt` holds entity `e` with
 * a MeshRenderer (1018) from one PUT_COMPONENT, updated; `ids`/`components`/`cap` the list
 * buffers. After the snippet the changed list must name that one component. */
#include <scenecrdt/scenecrdt.h>
#include <stdio.h>
#include <stdlib.h>

static void u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

int main(void) {
  /* PUT_COMPONENT: length, type 1, entity, component, timestamp, data length, data. */
  const uint8_t data[] = {0x0a, 0x02, 0x08, 0x01};
  uint8_t chunk[24 + sizeof data];
  u32(chunk, sizeof chunk);
  u32(chunk + 4, 1);
  u32(chunk + 8, 600);
  u32(chunk + 12, 1018);
  u32(chunk + 16, 1);
  u32(chunk + 20, sizeof data);
  for (size_t i = 0; i < sizeof data; ++i) chunk[24 + i] = data[i];
  sc_runtime* rt = sc_runtime_create();
  if (sc_runtime_apply(rt, chunk, sizeof chunk) < 0 || sc_runtime_update(rt) < 0) {
    fprintf(stderr, "the harness's chunk was refused: %s\n", sc_last_error());
    return 1;
  }
  const uint32_t e = 600;
  enum { cap = 16 };
  uint32_t ids[cap], components[cap];
  /* @snippet */
  const int ok = n == 1 && ids[0] == 600 && components[0] == 1018;
  if (!ok) fprintf(stderr, "the changed list is not (600, 1018)\n");
  sc_runtime_destroy(rt);
  return ok ? 0 : 1;
}

/* Harness of the docs/C-ABI.md "A frame of a renderer" snippet (docs/SNIPPETS.md): a client
 * of the runner's server writes one entity; the snippet is the body of a bounded frame loop,
 * which must see that entity's matrix among the changed ones. */
#include <scenecrdt/scenecrdt.h>
#include <stdio.h>

int main(void) {
  sc_client* client = sc_client_connect("tcp://127.0.0.1:7600", "snippets-c", NULL);
  if (client == NULL) return 1;
  if (sc_client_enable_interpolation(client, NULL) != SC_OK) return 1;
  const sc_transform t = {{1, 2, 3}, {0, 0, 0, 1}, {1, 1, 1}, 0};
  if (sc_client_write_transform(client, 600, &t) != SC_OK) return 1;
  enum { cap = 64 };
  uint32_t ids[cap];
  float matrices[16 * cap];
  size_t n = 0;
  int seen = 0;
  for (const int64_t end = sc_now_us() + 10000000; !seen && sc_now_us() < end;) {
    /* @snippet */
    for (size_t i = 0; i < n; ++i) seen |= ids[i] == 600 && matrices[16 * i + 12] == 1.0f;
    sc_client_poll(client, 10);
  }
  sc_client_destroy(client);
  if (!seen) fprintf(stderr, "entity 600's matrix never showed among the changed ones\n");
  return seen ? 0 : 1;
}

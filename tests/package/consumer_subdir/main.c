/* SPDX-License-Identifier: Apache-2.0 */
/* consumer_subdir: scenecrdt built as a subproject; one local write, one update, one read. */
#include <scenecrdt/scenecrdt.h>
#include <stdio.h>

int main(void) {
  const sc_transform t = {{1.0f, 2.0f, 3.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}, 0};
  unsigned char msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  float m[16];
  sc_runtime* rt = sc_runtime_create();
  if (rt == NULL || sc_runtime_write_transform(rt, 512, &t, msg, sizeof(msg), &len) != SC_OK ||
      sc_runtime_update(rt) != SC_OK || sc_runtime_world_matrix(rt, 512, m) != SC_OK ||
      m[12] != 1.0f || m[13] != 2.0f || m[14] != 3.0f) {
    fprintf(stderr, "consumer_subdir: %s\n", sc_last_error());
    return 1;
  }
  sc_runtime_destroy(rt);
  printf("consumer_subdir: ok\n");
  return 0;
}

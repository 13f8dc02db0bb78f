/* SPDX-License-Identifier: Apache-2.0 */
/* client_c URL SCENE ENTITY X: joins SCENE through sc_client_* and waits (30 s at most) until
 * its replica shows ENTITY at x = X (a write of another client). Exit 0 on success. */
#include <scenecrdt/scenecrdt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  sc_client* client = NULL;
  const sc_runtime* view = NULL;
  uint32_t entity = 0;
  float x = 0.0f;
  float m[16];
  int64_t deadline = 0;
  int result = 1;
  if (argc != 5) {
    fprintf(stderr, "usage: client_c URL SCENE ENTITY X\n");
    return 2;
  }
  entity = (uint32_t)strtoul(argv[3], NULL, 10);
  x = strtof(argv[4], NULL);
  client = sc_client_connect(argv[1], argv[2], NULL);
  if (client == NULL) {
    fprintf(stderr, "client_c: %s\n", sc_last_error());
    return 1;
  }
  view = sc_client_runtime(client);
  deadline = sc_now_us() + 30 * 1000 * 1000;
  while (sc_now_us() < deadline) {
    if (sc_client_poll(client, 20) < 0) {
      fprintf(stderr, "client_c: %s\n", sc_last_error());
      break;
    }
    if (sc_runtime_world_matrix(view, entity, m) == SC_OK && m[12] == x) {
      printf("client_c: sees entity %u at x = %g\n", entity, (double)x);
      result = 0;
      break;
    }
  }
  if (result != 0)
    fprintf(stderr, "client_c: entity %u never showed at x = %g\n", entity, (double)x);
  sc_client_destroy(client);
  return result;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The C ABI used from C11 (compiled -std=c11 -Wall -Wextra -Wpedantic -Werror): a parent and
 * a child written locally, their world matrices in bulk, the DCL bytes replayed into a second
 * runtime, and an error path. capi_c_program_test.cc runs it. */
#include "tests/capi/c_program.h"

#include <stdio.h>
#include <string.h>

#include "scenecrdt/scenecrdt.h"

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      snprintf(error, error_size, "%s:%d: %s (%s)", __FILE__, __LINE__, #cond, sc_last_error()); \
      goto done;                                                                                 \
    }                                                                                            \
  } while (0)

int capi_c_program(char* error, size_t error_size) {
  int ok = 0;
  sc_runtime* writer = sc_runtime_create();
  sc_runtime* peer = sc_runtime_create();
  uint8_t stream[4 * SC_WRITE_MAX_BYTES];
  size_t stream_len = 0;
  size_t len = 0;
  size_t count = 0;
  uint32_t entities[4];
  float matrices[4 * 16];
  char hash_a[SC_STATE_HASH_CHARS];
  char hash_b[SC_STATE_HASH_CHARS];
  sc_node_info info;
  const sc_transform parent = {{1.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {2.0f, 2.0f, 2.0f}, 0};
  const sc_transform child = {
      {0.0f, 3.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}, 512};

  CHECK(sc_abi_version() == SC_ABI_VERSION);
  CHECK(writer != NULL && peer != NULL);
  CHECK(sc_runtime_write_transform(writer, 512, &parent, stream, sizeof(stream), &len) == SC_OK);
  stream_len += len;
  CHECK(sc_runtime_write_transform(writer, 513, &child, stream + stream_len,
                                   sizeof(stream) - stream_len, &len) == SC_OK);
  stream_len += len;
  CHECK(stream_len == 2 * 68);
  CHECK(sc_runtime_update(writer) == SC_OK);
  CHECK(sc_runtime_copy_world(writer, entities, matrices, 4, &count) == SC_OK);
  CHECK(count == 2 && entities[0] == 512 && entities[1] == 513);
  /* Column-major: the child's translation is parent + parent scale x child position. */
  CHECK(matrices[16 + 12] == 1.0f && matrices[16 + 13] == 6.0f && matrices[16 + 14] == 0.0f);

  CHECK(sc_runtime_apply(peer, stream, stream_len) == SC_OK);
  CHECK(sc_runtime_update(peer) == SC_OK);
  CHECK(sc_runtime_state_hash(writer, hash_a, sizeof(hash_a)) == SC_OK);
  CHECK(sc_runtime_state_hash(peer, hash_b, sizeof(hash_b)) == SC_OK);
  CHECK(strcmp(hash_a, hash_b) == 0 && strlen(hash_a) == 64);
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  CHECK(sc_runtime_node_info(peer, 513, &info) == SC_OK);
  CHECK(info.effective_parent == 512 && info.parked == 0 && info.placeholder == 0);

  /* Errors are statuses with a text, never a crash. */
  CHECK(sc_runtime_apply(peer, stream, 5) == SC_E_DECODE);
  CHECK(strstr(sc_last_error(), "sc_runtime_apply: malformed DCL stream") == sc_last_error());
  CHECK(sc_runtime_world_matrix(peer, 999, matrices) == SC_E_NOT_FOUND);
  CHECK(sc_runtime_world_matrix(NULL, 512, matrices) == SC_E_INVALID_ARGUMENT);
  ok = 1;
done:
  sc_runtime_destroy(writer);
  sc_runtime_destroy(peer);
  return ok;
}

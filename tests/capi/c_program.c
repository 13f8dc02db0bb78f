/* SPDX-License-Identifier: Apache-2.0 */
/* The C ABI used from C11 (compiled -std=c11 -Wall -Wextra -Wpedantic -Werror): a parent and
 * a child written locally, their world matrices in bulk, the DCL bytes replayed into a second
 * runtime, components (a value, a grow-only set, the per-update lists), and error paths.
 * capi_c_program_test.cc runs it. */
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

/* Appends a little-endian u32 (the DCL wire order, docs/PROTOCOL.md). */
static size_t put_u32(uint8_t* out, size_t at, uint32_t v) {
  out[at] = (uint8_t)v;
  out[at + 1] = (uint8_t)(v >> 8);
  out[at + 2] = (uint8_t)(v >> 16);
  out[at + 3] = (uint8_t)(v >> 24);
  return at + 4;
}

/* A PUT_COMPONENT (type 1) or APPEND_VALUE (type 4) message: header (length, type), then
 * entity, component, timestamp, payload length, payload. Returns the new end. */
static size_t put_message(uint8_t* out, size_t at, uint32_t type, uint32_t entity,
                          uint32_t component, uint32_t timestamp, const uint8_t* data, uint32_t n) {
  at = put_u32(out, at, 24 + n);
  at = put_u32(out, at, type);
  at = put_u32(out, at, entity);
  at = put_u32(out, at, component);
  at = put_u32(out, at, timestamp);
  at = put_u32(out, at, n);
  memcpy(out + at, data, n);
  return at + n;
}

/* Components: a MeshRenderer-like value and a grow-only set, read back; the per-update lists;
 * a DELETE_ENTITY removes them. 1 when every check passed. */
static int check_components(char* error, size_t error_size) {
  int ok = 0;
  sc_runtime* rt = sc_runtime_create();
  const uint8_t mesh[4] = {0x0a, 0x02, 0x0a, 0x00};
  const uint8_t hit[2] = {7, 8};
  uint8_t stream[128];
  uint8_t buf[64];
  size_t at = 0;
  size_t len = 0;
  size_t count = 0;
  uint32_t entities[4];
  uint32_t components[4];
  memset(buf, 0xEE, sizeof(buf));
  if (rt == NULL) {
    snprintf(error, error_size, "sc_runtime_create failed");
    return 0;
  }
  at = put_message(stream, at, 1, 512, 1018, 1, mesh, sizeof(mesh));
  at = put_message(stream, at, 4, 512, 1063, 0, hit, sizeof(hit));
  CHECK(sc_runtime_apply(rt, stream, at) == SC_OK);
  /* A size query, then the value. */
  CHECK(sc_runtime_get_component(rt, 512, 1018, NULL, 0, &len) == SC_E_BUFFER_TOO_SMALL);
  CHECK(len == sizeof(mesh));
  CHECK(sc_runtime_get_component(rt, 512, 1018, buf, sizeof(buf), &len) == SC_OK);
  CHECK(len == sizeof(mesh) && memcmp(buf, mesh, sizeof(mesh)) == 0 && buf[len] == 0xEE);
  CHECK(sc_runtime_get_component(rt, 512, 1017, buf, sizeof(buf), &len) == SC_E_NOT_FOUND);
  CHECK(sc_runtime_get_component(rt, 512, 1063, buf, sizeof(buf), &len) == SC_E_GROW_ONLY);
  CHECK(strcmp(sc_error_name(SC_E_GROW_ONLY), "SC_E_GROW_ONLY") == 0);
  /* One record: timestamp 0, 2 bytes, the bytes. */
  CHECK(sc_runtime_copy_append_values(rt, 512, 1063, buf, sizeof(buf), &len) == SC_OK);
  CHECK(len == SC_APPEND_RECORD_HEADER_BYTES + 2 && buf[0] == 0 && buf[4] == 2 && buf[5] == 0);
  CHECK(buf[8] == 7 && buf[9] == 8);
  CHECK(sc_runtime_update(rt) == SC_OK);
  CHECK(sc_runtime_copy_added_components(rt, entities, components, 4, &count) == SC_OK);
  CHECK(count == 2 && entities[0] == 512 && components[0] == 1018 && components[1] == 1063);
  CHECK(sc_runtime_copy_changed_components(rt, entities, components, 1, &count) ==
        SC_E_BUFFER_TOO_SMALL);
  CHECK(count == 2);
  /* DELETE_ENTITY (type 3): header and the entity. */
  at = put_u32(stream, 0, 12);
  at = put_u32(stream, at, 3);
  at = put_u32(stream, at, 512);
  CHECK(sc_runtime_apply(rt, stream, at) == SC_OK);
  CHECK(sc_runtime_update(rt) == SC_OK);
  CHECK(sc_runtime_copy_removed_components(rt, entities, components, 4, &count) == SC_OK);
  CHECK(count == 2 && entities[1] == 512 && components[1] == 1063);
  CHECK(sc_runtime_copy_changed_components(rt, NULL, NULL, 0, &count) == SC_OK && count == 0);
  CHECK(sc_runtime_get_component(rt, 512, 1018, buf, sizeof(buf), &len) == SC_E_NOT_FOUND);
  ok = 1;
done:
  sc_runtime_destroy(rt);
  return ok;
}


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
  if (!check_components(error, error_size)) goto done;
  ok = 1;
done:
  sc_runtime_destroy(writer);
  sc_runtime_destroy(peer);
  return ok;
}

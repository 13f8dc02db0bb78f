/* SPDX-License-Identifier: Apache-2.0 */
/* The C ABI's client used from C11 (compiled -std=c11 -Wall -Wextra -Wpedantic -Werror): two
 * clients join a running server; one writes a Transform, the other sees it in its world
 * matrices and change list; then a deletion, the read-only view, interpolation, stats and
 * the error paths. Every wait polls with a deadline. capi_client_test.cc runs it. */
#include "tests/capi/c_client_program.h"

#include <stddef.h>
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

/* Generous: a loaded 2-core machine under sanitizers. */
#define DEADLINE_US (30 * 1000 * 1000)

/* Polls both clients once (5 ms wait on the second); 0 when a poll failed. */
static int poll_both(sc_client* a, sc_client* b) {
  return sc_client_poll(a, 0) >= 0 && sc_client_poll(b, 5) >= 0;
}

/* 1 when `entities` holds `entity`. */
static int contains(const uint32_t* entities, size_t count, uint32_t entity) {
  size_t i;
  for (i = 0; i < count; ++i) {
    if (entities[i] == entity) return 1;
  }
  return 0;
}

int capi_c_client_program(const char* url, const char* scene, char* error, size_t error_size) {
  int ok = 0;
  int seen = 0;
  int64_t deadline = 0;
  sc_client* writer = NULL;
  sc_client* reader = NULL;
  const sc_runtime* view = NULL;
  float m[16];
  uint32_t changed[16];
  size_t count = 0;
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  sc_client_stats stats;
  const sc_transform moved = {{4.0f, 5.0f, 6.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}, 0};

  /* Bad arguments: NULL, no handle, and a URL that is not a server URL. */
  CHECK(sc_client_connect(NULL, scene, NULL) == NULL);
  CHECK(sc_client_connect("http://127.0.0.1:1", scene, NULL) == NULL);
  CHECK(strstr(sc_last_error(), "sc_client_connect") != NULL);
  CHECK(sc_client_poll(NULL, 0) == SC_E_INVALID_ARGUMENT);
  CHECK(sc_client_runtime(NULL) == NULL);
  sc_client_destroy(NULL);

  writer = sc_client_connect(url, scene, NULL);
  reader = sc_client_connect(url, scene, NULL);
  CHECK(writer != NULL && reader != NULL);
  deadline = sc_now_us() + DEADLINE_US;
  while (!(sc_client_state_ready(writer) == 1 && sc_client_state_ready(reader) == 1) &&
         sc_now_us() < deadline) {
    CHECK(poll_both(writer, reader));
  }
  CHECK(sc_client_state_ready(writer) == 1 && sc_client_state_ready(reader) == 1);
  CHECK(sc_client_connected(reader) == 1);

  /* A write by one client reaches the other's world matrices and change list. */
  CHECK(sc_client_write_transform(writer, 600, &moved) == SC_OK);
  CHECK(sc_client_flush(writer) == SC_OK);
  view = sc_client_runtime(reader);
  CHECK(view != NULL);
  deadline = sc_now_us() + DEADLINE_US;
  while (!seen && sc_now_us() < deadline) {
    CHECK(poll_both(writer, reader));
    seen = sc_runtime_world_matrix(view, 600, m) == SC_OK;
  }
  CHECK(seen);
  CHECK(m[12] == 4.0f && m[13] == 5.0f && m[14] == 6.0f);
  CHECK(sc_runtime_copy_changed(view, changed, 16, &count) == SC_OK);
  CHECK(contains(changed, count, 600));
  /* The view is read-only: writes go through the client. */
  CHECK(sc_runtime_write_transform((sc_runtime*)view, 601, &moved, msg, sizeof(msg), &len) ==
        SC_E_READ_ONLY);
  CHECK(sc_client_write_transform(writer, 600, NULL) == SC_E_INVALID_ARGUMENT);
  CHECK(sc_client_delete_entity(writer, 5) == SC_E_REFUSED);

  /* Interpolation on the reader: a presentation at a render time, then off again. */
  CHECK(sc_client_enable_interpolation(reader, NULL) == SC_OK);
  CHECK(sc_runtime_interpolation_enabled(view) == 1);
  CHECK(sc_client_poll(reader, 0) >= 0);
  CHECK(sc_client_update_interpolated(reader, sc_now_us()) == SC_OK);
  CHECK(sc_runtime_interpolated_world_matrix(view, 600, m) == SC_OK);
  CHECK(m[12] == 4.0f);
  CHECK(sc_client_update_interpolated(reader, INT64_MAX) == SC_E_INVALID_ARGUMENT);
  CHECK(sc_client_disable_interpolation(reader) == SC_OK);

  /* A deletion reaches the reader: the entity leaves its scene. */
  CHECK(sc_client_delete_entity(writer, 600) == SC_OK);
  CHECK(sc_client_write_transform(writer, 600, &moved) == SC_E_REFUSED);
  seen = 0;
  deadline = sc_now_us() + DEADLINE_US;
  while (!seen && sc_now_us() < deadline) {
    CHECK(poll_both(writer, reader));
    seen = sc_runtime_world_matrix(view, 600, m) == SC_E_NOT_FOUND;
  }
  CHECK(seen);

  memset(&stats, 0, sizeof(stats));
  CHECK(sc_client_get_stats(reader, &stats) == SC_E_INVALID_ARGUMENT); /* struct_size unset */
  stats.struct_size = sizeof(stats);
  CHECK(sc_client_get_stats(reader, &stats) == SC_OK);
  CHECK(stats.connects == 1 && stats.live_frames >= 2 && stats.bytes_received > 0);
  CHECK(stats.struct_size == sizeof(stats) && stats.refusals == 0); /* open server */
  CHECK(sc_client_get_stats(writer, &stats) == SC_OK);
  CHECK(stats.unsent_writes == 0);
  /* A caller built before `refusals` was appended passes the older size: it gets the fields
   * before it, and the appended one is left alone. */
  memset(&stats, 0, sizeof(stats));
  stats.refusals = 77;
  stats.struct_size = (uint32_t)offsetof(sc_client_stats, refusals);
  CHECK(sc_client_get_stats(reader, &stats) == SC_OK);
  CHECK(stats.struct_size == offsetof(sc_client_stats, refusals) && stats.connects == 1);
  CHECK(stats.refusals == 77);
  ok = 1;
done:
  sc_client_destroy(writer);
  sc_client_destroy(reader);
  return ok;
}

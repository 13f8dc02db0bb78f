/* SPDX-License-Identifier: Apache-2.0 */
/* Example: a networked renderer's frame loop in C over the C ABI's client
 * (<scenecrdt/scenecrdt.h>, docs/C-ABI.md "Client"): the shape of a Unity, Godot or Unreal
 * plugin. It connects (reconnect, resume and fail-over along a comma-separated URL list are
 * on), waits for the scene's state, turns interpolation on, then each frame (60 Hz):
 * sc_client_poll applies what arrived and sends our writes, sc_client_update_interpolated
 * computes the presented matrices at the frame's time, and one bulk copy each brings the
 * added, removed and changed entities (with their world matrices) across the boundary.
 *
 *   render_loop_net_c tcp://127.0.0.1:7600 demo [FRAMES]
 *
 * Exit status: 0 after FRAMES frames (default 600), 1 when the state never arrives or a call
 * fails, 2 for bad usage. */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenecrdt/scenecrdt.h"

#define MAX_ENTITIES 4096
#define FRAME_US 16667
#define JOIN_TIMEOUT_US (20 * 1000 * 1000)

/* Frame-sized buffers for the bulk copies (one boundary crossing each). */
static uint32_t added[MAX_ENTITIES];
static uint32_t removed[MAX_ENTITIES];
static uint32_t changed[MAX_ENTITIES];
static float matrices[MAX_ENTITIES * 16];

static int fail(const char* what, int status) {
  fprintf(stderr, "render_loop_net_c: %s: %s: %s\n", what, sc_error_name(status), sc_last_error());
  return 1;
}

static void sleep_until_us(int64_t when) {
  const int64_t left = when - sc_now_us();
  struct timespec ts;
  if (left <= 0) return;
  ts.tv_sec = (time_t)(left / 1000000);
  ts.tv_nsec = (long)((left % 1000000) * 1000);
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  sc_client* client = NULL;
  const sc_runtime* scene = NULL;
  long frames = 600;
  long frame = 0;
  long uploads = 0;
  long created = 0;
  long freed = 0;
  size_t count = 0;
  int64_t deadline = 0;
  int64_t next = 0;
  int status = 0;
  int result = 1;

  if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
    printf(
        "usage: render_loop_net_c URL[,URL...] SCENE [FRAMES]\n"
        "Joins SCENE and runs a 60 Hz render loop over the interpolated world matrices.\n");
    return 0;
  }
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: render_loop_net_c URL[,URL...] SCENE [FRAMES]\n");
    return 2;
  }
  if (argc == 4) frames = strtol(argv[3], NULL, 10);
  if (frames <= 0) {
    fprintf(stderr, "render_loop_net_c: FRAMES must be a positive number\n");
    return 2;
  }
  if (sc_abi_version() != SC_ABI_VERSION) {
    fprintf(stderr, "render_loop_net_c: libscenecrdt ABI %u, header %u\n", sc_abi_version(),
            SC_ABI_VERSION);
    return 1;
  }
  client = sc_client_connect(argv[1], argv[2], NULL);
  if (client == NULL) return fail("sc_client_connect", SC_E_INVALID_ARGUMENT);
  scene = sc_client_runtime(client);

  /* Connect and wait for the state. */
  deadline = sc_now_us() + JOIN_TIMEOUT_US;
  while (sc_client_state_ready(client) != 1) {
    status = sc_client_poll(client, 50);
    if (status < 0) {
      fail("sc_client_poll", status);
      goto done;
    }
    if (sc_now_us() > deadline) {
      fprintf(stderr, "render_loop_net_c: no state from %s after 20 s (is the server up?)\n",
              argv[1]);
      goto done;
    }
  }
  status = sc_client_enable_interpolation(client, NULL);
  if (status != SC_OK) {
    fail("sc_client_enable_interpolation", status);
    goto done;
  }

  next = sc_now_us();
  for (frame = 1; frame <= frames; ++frame) {
    status = sc_client_poll(client, 0); /* apply what arrived, send our writes */
    if (status < 0) {
      fail("sc_client_poll", status);
      goto done;
    }
    status = sc_client_update_interpolated(client, sc_now_us());
    if (status != SC_OK) {
      fail("sc_client_update_interpolated", status);
      goto done;
    }
    /* New entities: the renderer creates their objects; removed ones: it frees them. */
    status = sc_runtime_copy_interpolated_added(scene, added, MAX_ENTITIES, &count);
    if (status != SC_OK) {
      fail("sc_runtime_copy_interpolated_added", status);
      goto done;
    }
    created += (long)count;
    status = sc_runtime_copy_interpolated_removed(scene, removed, MAX_ENTITIES, &count);
    if (status != SC_OK) {
      fail("sc_runtime_copy_interpolated_removed", status);
      goto done;
    }
    freed += (long)count;
    /* Moved entities with their matrices (column-major, 16 floats each): upload as they are. */
    status =
        sc_runtime_copy_interpolated_changed_world(scene, changed, matrices, MAX_ENTITIES, &count);
    if (status != SC_OK) {
      fail("sc_runtime_copy_interpolated_changed_world", status);
      goto done;
    }
    uploads += (long)count;
    if (frame % 60 == 0) {
      printf("frame %ld: %zu entities, %ld uploads%s\n", frame,
             sc_runtime_interpolated_entity_count(scene), uploads,
             sc_client_connected(client) == 1 ? "" : " (reconnecting)");
    }
    next += FRAME_US;
    sleep_until_us(next); /* stands in for the renderer's vsync */
  }
  printf("render_loop_net_c: %ld frames, %zu entities, %ld created, %ld freed, %ld uploads\n",
         frames, sc_runtime_interpolated_entity_count(scene), created, freed, uploads);
  result = 0;
done:
  sc_client_destroy(client);
  return result;
}

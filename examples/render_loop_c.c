/* SPDX-License-Identifier: Apache-2.0 */
/* Example: a renderer's frame loop in C over the C ABI (<scenecrdt/scenecrdt.h>,
 * docs/C-ABI.md), with interpolation. A "sender" replica writes a turntable (512) carrying a
 * satellite (513) at 20 Hz; its DCL bytes reach the renderer's replica 40 ms later with
 * +-15 ms of jitter. The renderer draws at 60 Hz: each frame it applies what arrived (with the
 * receive time), calls sc_runtime_update_interpolated once, and re-uploads only the changed
 * matrices, reading the added / removed lists to create and free its objects. At tick 30 the
 * satellite moves to the root (a reparent: it snaps), at tick 45 it is deleted.
 * The clock is simulated so the run is deterministic; a real loop passes sc_now_us(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenecrdt/scenecrdt.h"

#define MAX_OBJECTS 8
#define FRAME_US 16667
#define SEND_US 50000

/* Stand-in for GPU-side objects, keyed by entity. */
typedef struct object {
  uint32_t entity;
  float world[16];
} object;

static object objects[MAX_OBJECTS];
static int num_objects = 0;
static long uploads = 0;
static int satellite_freed = 0;

static int check(int status, const char* what) {
  if (status != SC_OK) {
    fprintf(stderr, "render_loop_c: %s: %s: %s\n", what, sc_error_name(status), sc_last_error());
    exit(1);
  }
  return status;
}

static object* find_object(uint32_t entity) {
  int i;
  for (i = 0; i < num_objects; ++i) {
    if (objects[i].entity == entity) return &objects[i];
  }
  return NULL;
}

/* The sender's tick: one batch of local writes, returned as the bytes to send. */
static size_t sender_tick(sc_runtime* sender, int tick, uint8_t* out, size_t capacity) {
  const float angle = 0.1f * (float)tick;
  size_t used = 0;
  size_t len = 0;
  sc_transform turntable = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}, 0};
  sc_transform satellite = {{2.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}, 512};
  /* A rotation of `angle` about y: (x, y, z, w) = (0, sin(a/2), 0, cos(a/2)). */
  turntable.rotation[1] = sinf(0.5f * angle);
  turntable.rotation[3] = cosf(0.5f * angle);
  turntable.position[0] = 0.05f * (float)tick;
  check(sc_runtime_write_transform(sender, 512, &turntable, out + used, capacity - used, &len),
        "write turntable");
  used += len;
  if (tick < 45) {
    if (tick >= 30) satellite.parent = 0;
    check(sc_runtime_write_transform(sender, 513, &satellite, out + used, capacity - used, &len),
          "write satellite");
    used += len;
  } else if (tick == 45) {
    check(sc_runtime_delete_transform(sender, 513, out + used, capacity - used, &len),
          "delete satellite");
    used += len;
  }
  return used;
}

int main(void) {
  static const int jitter_ms[] = {3, -11, 14, -6, 0, 9, -15, 5, -2, 12, -9, 7};
  sc_runtime* sender;
  sc_runtime* renderer;
  sc_interpolation_options options;
  sc_interpolation_stats stats;
  uint8_t batch[4 * SC_WRITE_MAX_BYTES];
  size_t batch_len = 0;
  int next_tick = 0;
  int64_t next_arrival_us = 40000;
  int frame;

  if (sc_abi_version() != SC_ABI_VERSION) {
    fprintf(stderr, "render_loop_c: libscenecrdt ABI %u, header %u\n", sc_abi_version(),
            SC_ABI_VERSION);
    return 1;
  }
  sender = sc_runtime_create();
  renderer = sc_runtime_create();
  if (sender == NULL || renderer == NULL) {
    fprintf(stderr, "render_loop_c: %s\n", sc_last_error());
    return 1;
  }
  check(sc_interpolation_options_default(&options), "options");
  options.max_extrapolation_us = 100000; /* after the last batch: 100 ms of motion, then hold */
  check(sc_runtime_enable_interpolation(renderer, &options), "enable interpolation");

  for (frame = 0; frame < 240; ++frame) {
    const int64_t render_us = 100000 + (int64_t)frame * FRAME_US;
    uint32_t ids[MAX_OBJECTS];
    float matrices[16 * MAX_OBJECTS];
    size_t count = 0;
    size_t i;

    /* Network: every batch that has arrived by now, with its receive time. */
    while (next_tick < 60 && next_arrival_us <= render_us) {
      batch_len = sender_tick(sender, next_tick, batch, sizeof(batch));
      check(sc_runtime_apply_at(renderer, batch, batch_len, next_arrival_us, SC_NO_SENDER_TIME),
            "apply");
      ++next_tick;
      next_arrival_us = 40000 + (int64_t)next_tick * SEND_US + 1000 * jitter_ms[next_tick % 12];
    }

    /* One update per frame, then one crossing per list. */
    check(sc_runtime_update_interpolated(renderer, render_us), "update");
    check(sc_runtime_copy_interpolated_added(renderer, ids, MAX_OBJECTS, &count), "added");
    for (i = 0; i < count && num_objects < MAX_OBJECTS; ++i) {
      objects[num_objects].entity = ids[i];
      ++num_objects;
      printf("frame %3d: create object for entity %u\n", frame, ids[i]);
    }
    check(sc_runtime_copy_interpolated_removed(renderer, ids, MAX_OBJECTS, &count), "removed");
    for (i = 0; i < count; ++i) {
      object* o = find_object(ids[i]);
      if (o != NULL) {
        *o = objects[--num_objects];
        satellite_freed |= ids[i] == 513;
        printf("frame %3d: free object of entity %u\n", frame, ids[i]);
      }
    }
    check(sc_runtime_copy_interpolated_changed_world(renderer, ids, matrices, MAX_OBJECTS, &count),
          "changed");
    for (i = 0; i < count; ++i) {
      object* o = find_object(ids[i]);
      if (o != NULL) {
        memcpy(o->world, &matrices[16 * i], sizeof(o->world));
        ++uploads;
      }
    }

    if (frame % 30 == 29) {
      const object* satellite = find_object(513);
      stats.struct_size = sizeof(stats);
      check(sc_runtime_interpolation_stats(renderer, &stats), "stats");
      printf(
          "frame %3d: %d objects, satellite %s (%.3f, %.3f), delay %.1f ms, buffered %u, "
          "snaps %llu, stalled frames %llu\n",
          frame, num_objects, satellite != NULL ? "at" : "gone",
          satellite != NULL ? satellite->world[12] : 0.0,
          satellite != NULL ? satellite->world[14] : 0.0, (double)stats.delay_us / 1000.0,
          stats.buffer_depth, (unsigned long long)stats.snaps,
          (unsigned long long)stats.stalled_frames);
    }
  }
  printf("%ld matrix uploads over %d frames\n", uploads, frame);
  if (!satellite_freed || num_objects != 1) {
    fprintf(stderr, "render_loop_c: the satellite's removal never reached the renderer\n");
    return 1;
  }
  sc_runtime_destroy(sender);
  sc_runtime_destroy(renderer);
  return 0;
}

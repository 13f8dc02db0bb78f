/* SPDX-License-Identifier: Apache-2.0 */
/* The C side of the binding overhead figures (docs/BINDINGS.md "Overhead"): the median time of
 * one sc_runtime_copy_world of a whole scene into preallocated arrays, as the C# and Python
 * benchmarks time it through their bindings.
 * usage: copy_world STREAM.dcl CALLS */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <scenecrdt/scenecrdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double NowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: copy_world STREAM.dcl CALLS\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* bytes = malloc((size_t)size);
  if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) return 2;
  fclose(f);
  const int calls = atoi(argv[2]);
  if (calls <= 0) return 2;

  sc_runtime* rt = sc_runtime_create();
  if (sc_runtime_apply(rt, bytes, (size_t)size) != SC_OK || sc_runtime_update(rt) != SC_OK) {
    fprintf(stderr, "copy_world: %s\n", sc_last_error());
    return 1;
  }
  const size_t count = sc_runtime_entity_count(rt);
  uint32_t* ids = malloc(count * sizeof *ids);
  float* matrices = malloc(16 * count * sizeof *matrices);
  double* samples = malloc((size_t)calls * sizeof *samples);
  size_t n = 0;
  for (int i = 0; i < 20; ++i) sc_runtime_copy_world(rt, ids, matrices, count, &n);
  for (int i = 0; i < calls; ++i) {
    const double start = NowUs();
    if (sc_runtime_copy_world(rt, ids, matrices, count, &n) != SC_OK || n != count) return 1;
    samples[i] = NowUs() - start;
  }
  qsort(samples, (size_t)calls, sizeof *samples, Compare);
  printf("c copy_world entities=%zu calls=%d median_us=%.1f min_us=%.1f\n", count, calls,
         samples[calls / 2], samples[0]);
  sc_runtime_destroy(rt);
  free(samples);
  free(matrices);
  free(ids);
  free(bytes);
  return 0;
}

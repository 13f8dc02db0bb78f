/* SPDX-License-Identifier: Apache-2.0 */
/* consumer_c STREAM.dcl EXPECTED.txt: applies a DCL stream through the installed C ABI and
 * checks, bit for bit, the world matrices, effective parents, parked and placeholder flags and
 * the state hash against `scenecrdt replay --world` (EXPECTED.txt from world_text.py). Also a
 * malformed copy of the stream must be refused without changing anything. Exit 0 when equal. */
#include <scenecrdt/scenecrdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what, const char* detail) {
  fprintf(stderr, "consumer_c: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

/* The whole file in a malloc'd buffer (NULL on failure). */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* data = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = (unsigned char*)malloc((size_t)n + 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
      free(data);
      data = NULL;
    }
    *size = (size_t)n;
  }
  fclose(f);
  return data;
}

/* The float32 bits of replay's JSON float text (docs/CLI.md): shortest decimal, "NaN"
 * (0x7fc00000), "Infinity", "-Infinity", or another NaN as "0x" + its bits. */
static int float_bits(const char* text, uint32_t* bits) {
  char* end = NULL;
  float f;
  if (strcmp(text, "NaN") == 0) {
    *bits = 0x7fc00000u;
  } else if (strcmp(text, "Infinity") == 0) {
    *bits = 0x7f800000u;
  } else if (strcmp(text, "-Infinity") == 0) {
    *bits = 0xff800000u;
  } else if (strncmp(text, "0x", 2) == 0) {
    *bits = (uint32_t)strtoul(text + 2, &end, 16);
    return *end == '\0';
  } else {
    f = strtof(text, &end); /* correctly rounded: the shortest text gives back the bits */
    if (*end != '\0') return 0;
    memcpy(bits, &f, sizeof(f));
  }
  return 1;
}

int main(int argc, char** argv) {
  size_t stream_size = 0, count = 0, expected_count = 0, i;
  unsigned char* stream;
  FILE* expected;
  char hash[SC_STATE_HASH_CHARS], expected_hash[SC_STATE_HASH_CHARS], after[SC_STATE_HASH_CHARS];
  uint32_t* entities;
  float* matrices;
  sc_runtime* rt;
  int status, parked = 0, placeholders = 0;

  if (argc != 3) return fail("usage", "consumer_c STREAM.dcl EXPECTED.txt");
  if (sc_abi_version() != SC_ABI_VERSION) return fail("ABI", "library and header differ");
  stream = read_file(argv[1], &stream_size);
  if (stream == NULL) return fail("cannot read", argv[1]);
  expected = fopen(argv[2], "r");
  if (expected == NULL) return fail("cannot read", argv[2]);
  if (fscanf(expected, "hash %64s count %zu", expected_hash, &expected_count) != 2) {
    return fail("malformed", argv[2]);
  }

  rt = sc_runtime_create();
  if (rt == NULL) return fail("sc_runtime_create", sc_last_error());
  if (sc_runtime_apply(rt, stream, stream_size) != SC_OK) return fail("apply", sc_last_error());
  if (sc_runtime_update(rt) != SC_OK) return fail("update", sc_last_error());
  if (sc_runtime_state_hash(rt, hash, sizeof(hash)) != SC_OK) return fail("hash", sc_last_error());
  if (strcmp(hash, expected_hash) != 0) return fail("state hash differs from replay", hash);
  if (sc_runtime_entity_count(rt) != expected_count) return fail("entity count differs", NULL);

  /* One bulk copy, sized by a query first. */
  status = sc_runtime_copy_world(rt, NULL, NULL, 0, &count);
  if (status != (count > 0 ? SC_E_BUFFER_TOO_SMALL : SC_OK) || count != expected_count) {
    return fail("size query", sc_last_error());
  }
  entities = (uint32_t*)malloc((count + 1) * sizeof(uint32_t));
  matrices = (float*)malloc((count + 1) * 16 * sizeof(float));
  if (entities == NULL || matrices == NULL) return fail("out of memory", NULL);
  if (sc_runtime_copy_world(rt, entities, matrices, count, &count) != SC_OK) {
    return fail("copy_world", sc_last_error());
  }

  for (i = 0; i < count; ++i) {
    unsigned long entity, parent;
    int is_parked, is_placeholder, k;
    sc_node_info info;
    float one[16];
    if (fscanf(expected, "%lu %lu %d %d", &entity, &parent, &is_parked, &is_placeholder) != 4) {
      return fail("malformed", argv[2]);
    }
    if (entities[i] != (uint32_t)entity) return fail("entity list differs from replay", NULL);
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (sc_runtime_node_info(rt, entities[i], &info) != SC_OK) {
      return fail("node_info", sc_last_error());
    }
    if (info.effective_parent != (uint32_t)parent || info.parked != is_parked ||
        info.placeholder != is_placeholder) {
      fprintf(stderr,
              "consumer_c: entity %lu: parent %u parked %d placeholder %d, replay says "
              "%lu %d %d\n",
              entity, info.effective_parent, info.parked, info.placeholder, parent, is_parked,
              is_placeholder);
      return 1;
    }
    parked += is_parked;
    placeholders += is_placeholder;
    if (sc_runtime_world_matrix(rt, entities[i], one) != SC_OK) {
      return fail("world_matrix", sc_last_error());
    }
    for (k = 0; k < 16; ++k) {
      char text[64];
      uint32_t want, got, single;
      if (fscanf(expected, "%63s", text) != 1 || !float_bits(text, &want)) {
        return fail("malformed float in", argv[2]);
      }
      memcpy(&got, &matrices[16 * i + (size_t)k], sizeof(got));
      memcpy(&single, &one[k], sizeof(single));
      if (got != want || single != want) {
        fprintf(stderr, "consumer_c: entity %lu m[%d]: bits %08x, replay %s (%08x)\n", entity, k,
                got, text, want);
        return 1;
      }
    }
  }

  /* A cut stream is refused whole: nothing changes. */
  if (stream_size > 1) {
    if (sc_runtime_apply(rt, stream, stream_size - 1) != SC_E_DECODE) {
      return fail("a truncated stream was not refused", sc_last_error());
    }
    if (sc_runtime_state_hash(rt, after, sizeof(after)) != SC_OK || strcmp(after, hash) != 0) {
      return fail("a refused stream changed the state", NULL);
    }
  }
  printf(
      "consumer_c: %s: %zu entities (%d parked, %d placeholders), bit-identical to replay, "
      "hash %.12s...\n",
      argv[1], count, parked, placeholders, hash);
  sc_runtime_destroy(rt);
  free(entities);
  free(matrices);
  free(stream);
  fclose(expected);
  return 0;
}

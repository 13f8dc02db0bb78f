/* SPDX-License-Identifier: Apache-2.0 */
/* The stable C ABI of scenecrdt (docs/C-ABI.md): a replica of a Decentraland SDK7 scene
 * (DCL CRDT bytes in, column-major world matrices out) behind opaque handles, for engines and
 * other languages (P/Invoke, GDExtension, ctypes, wasm). C11 and C++ clean; installed as
 * <scenecrdt/scenecrdt.h>, implemented by libscenecrdt.so (CMake target scenecrdt::c).
 *
 * Conventions of every function:
 * - A function that can fail returns int: SC_OK (0) or a negative SC_E_* status. It then sets
 *   the calling thread's sc_last_error() text; success leaves that text as it was.
 * - NULL pointers are errors (SC_E_INVALID_ARGUMENT) unless the function says otherwise.
 * - Nothing is thrown or aborted across the boundary; an internal failure is a status.
 * - One handle is used by one thread at a time (no internal locking); separate handles are
 *   independent. Entities are full u32 DCL ids (number | version << 16).
 * - Bulk copies fill caller arrays: pass `capacity` elements; `*count` receives the number
 *   written, or, with SC_E_BUFFER_TOO_SMALL, the number needed (nothing is written then).
 *   The arrays may be NULL when capacity is 0 (a size query).
 * - Structs with a `struct_size` field grow only at the end: set it to sizeof the struct
 *   (the *_default functions do). ABI rules: only additive changes within SC_ABI_VERSION. */
#ifndef SCENECRDT_SCENECRDT_H_
#define SCENECRDT_SCENECRDT_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(SCENECRDT_C_BUILDING)
#define SC_API __declspec(dllexport)
#else
#define SC_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define SC_API __attribute__((visibility("default")))
#else
#define SC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI major version: the SONAME is libscenecrdt.so.SC_ABI_VERSION. */
#define SC_ABI_VERSION 1u

/* Status codes (int). Values never change; new ones are only added. */
enum {
  SC_OK = 0,
  SC_E_INVALID_ARGUMENT = -1, /* NULL pointer, bad struct_size, option or time out of range */
  SC_E_NOT_FOUND = -2,        /* the entity is not in the scene (no Transform, no children) */
  SC_E_BUFFER_TOO_SMALL = -3, /* *count / *len holds the size needed; nothing was written */
  SC_E_DECODE = -4,           /* malformed DCL stream; nothing was applied */
  SC_E_REFUSED = -5,          /* a local write the CRDT rules refuse (e.g. deleted entity) */
  SC_E_READ_ONLY = -6,        /* a write through a read-only view (sc_client_runtime) */
  SC_E_NO_MEMORY = -7,        /* allocation failed; a handle being changed is now broken */
  SC_E_BROKEN = -8,           /* the handle failed internally earlier: only destroy it */
  SC_E_INTERNAL = -9,         /* unexpected internal failure (a bug: please report it) */
  SC_E_CLOSED = -10,          /* the client is closed for good (a permanent refusal) */
  SC_E_UNSUPPORTED = -11,     /* this libscenecrdt was built without the network client */
  SC_E_FULL = -12,            /* a bounded buffer is full (unsent writes): poll, then retry */
  SC_E_GROW_ONLY = -13        /* the component is a grow-only set: sc_runtime_copy_append_values */
};

/* The library's SC_ABI_VERSION. Compare it with the header's before anything else. */
SC_API uint32_t sc_abi_version(void);
/* The calling thread's last error text ("" before any): "function: reason". Valid until the
 * next failing call on this thread. Never NULL. */
SC_API const char* sc_last_error(void);
/* "SC_OK", "SC_E_NOT_FOUND", ...; "SC_E_UNKNOWN" for other values. Static, never NULL. */
SC_API const char* sc_error_name(int status);
/* A monotonic clock in microseconds (steady_clock): a clock for receive and render times. */
SC_API int64_t sc_now_us(void);

/* One entity's replicated Transform (component 1), in the scene's units (metres). */
typedef struct sc_transform {
  float position[3];
  float rotation[4]; /* x y z w, as on the wire; used as given (not normalised) */
  float scale[3];
  uint32_t parent; /* declared parent entity; 0 = the scene root */
} sc_transform;

/* Where an entity sits in the effective tree after the last update. */
typedef struct sc_node_info {
  uint32_t struct_size;
  uint32_t effective_parent; /* 0 = root; loop members are parked at root */
  uint32_t declared_parent;  /* the Transform's parent; 0 for placeholders */
  int32_t parked;            /* 1: member of a parenting loop, shown at root */
  int32_t placeholder;       /* 1: no Transform but has children: identity at root */
} sc_node_info;

/* Totals of what sc_runtime_apply / sc_runtime_apply_at did through this handle. */
typedef struct sc_apply_stats {
  uint32_t struct_size;
  uint32_t reserved;      /* 0 */
  uint64_t calls;         /* apply calls that merged (decode errors excluded) */
  uint64_t messages;      /* messages merged */
  uint64_t changed;       /* messages that changed the state (newer, or won a tie, or deleted) */
  uint64_t ignored;       /* outdated, equal, or for a deleted entity: state unchanged */
  uint64_t refused;       /* refused by the store (unknown type, bad Transform size, ...) */
  uint64_t decode_errors; /* apply calls refused as malformed (SC_E_DECODE) */
} sc_apply_stats;

/* ---- Runtime: a replica without networking (replays, tools, a renderer's own feed) ---- */
typedef struct sc_runtime sc_runtime;

/* A new, empty replica; NULL on failure (sc_last_error). Interpolation off. */
SC_API sc_runtime* sc_runtime_create(void);
/* Frees the replica. NULL is a no-op. A read-only view (sc_client_runtime) is never freed
 * here: it belongs to its client. */
SC_API void sc_runtime_destroy(sc_runtime* rt);

/* Decodes a DCL CRDT stream and merges every message with the @dcl/ecs 7.28 rules, exactly
 * as `scenecrdt replay FILE` does with the same bytes: default decoding (messages up to
 * 1 MiB, unknown types skipped) and store limits. The whole stream is decoded first: a
 * malformed one is SC_E_DECODE (offset and reason in sc_last_error) and applies nothing.
 * `dcl` may be NULL when len is 0. Changes reach the world matrices at the next update. */
SC_API int sc_runtime_apply(sc_runtime* rt, const uint8_t* dcl, size_t len);
/* SC_NO_SENDER_TIME: the batch carries no sender clock (the raw-DCL path). */
#define SC_NO_SENDER_TIME INT64_MIN
/* sc_runtime_apply for one batch of live traffic that arrived at `receive_time_us` (the
 * caller's clock, e.g. sc_now_us()); `sender_time_us` is the sender's stamp or
 * SC_NO_SENDER_TIME. With interpolation on, the batch is shown at its smoothed receive time
 * plus the delay. An empty batch is a heartbeat. Times must lie within +-2^60 us
 * (SC_E_INVALID_ARGUMENT, nothing applied). */
SC_API int sc_runtime_apply_at(sc_runtime* rt, const uint8_t* dcl, size_t len,
                               int64_t receive_time_us, int64_t sender_time_us);
/* Totals since sc_runtime_create (zeros for a view). `out->struct_size` must be set. */
SC_API int sc_runtime_apply_stats(const sc_runtime* rt, sc_apply_stats* out);

/* Once per frame: hands the merged Transform changes to the scene graph and recomputes
 * effective parents and dirty world matrices. Reads below reflect the last update. */
SC_API int sc_runtime_update(sc_runtime* rt);

/* Entities in the scene: those with a Transform plus placeholders (the root, entity 0, is
 * not counted). 0 for NULL or a broken handle (sc_last_error says which). */
SC_API size_t sc_runtime_entity_count(const sc_runtime* rt);
/* The world matrix of `entity`: 16 floats, column-major (out[12..14] is the translation),
 * bit-identical to `scenecrdt replay --world`. Entity 0 gives the identity. SC_E_NOT_FOUND
 * for an entity that is not in the scene. */
SC_API int sc_runtime_world_matrix(const sc_runtime* rt, uint32_t entity, float out[16]);
/* Every entity of sc_runtime_entity_count, sorted by id, with its world matrix:
 * entities[i] and matrices[16 * i .. 16 * i + 15]. */
SC_API int sc_runtime_copy_world(const sc_runtime* rt, uint32_t* entities, float* matrices,
                                 size_t capacity, size_t* count);
/* Entities whose world matrix the last update recomputed (or whose storage moved), each once:
 * what a renderer re-uploads. */
SC_API int sc_runtime_copy_changed(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                                   size_t* count);
/* The same entities with their world matrices (one crossing per frame). */
SC_API int sc_runtime_copy_changed_world(const sc_runtime* rt, uint32_t* entities, float* matrices,
                                         size_t capacity, size_t* count);
/* Entities that gained / lost their Transform in the last update. */
SC_API int sc_runtime_copy_added(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                                 size_t* count);
SC_API int sc_runtime_copy_removed(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                                   size_t* count);
/* The entity's merged Transform (current at once, before any update). SC_E_NOT_FOUND when
 * it has none (never set, deleted, or a placeholder). */
SC_API int sc_runtime_get_transform(const sc_runtime* rt, uint32_t entity, sc_transform* out);
/* The entity's place in the effective tree. SC_E_NOT_FOUND for entity 0 and for entities not
 * in the scene. `out->struct_size` must be set. */
SC_API int sc_runtime_node_info(const sc_runtime* rt, uint32_t entity, sc_node_info* out);
/* The SHA-256 of the canonical CRDT state (docs/CRDT.md) as 64 lowercase hex digits and a
 * NUL: the "stateHash" of `scenecrdt replay`. capacity >= SC_STATE_HASH_CHARS. */
#define SC_STATE_HASH_CHARS 65
SC_API int sc_runtime_state_hash(const sc_runtime* rt, char* out_hex, size_t capacity);

/* ---- Components (docs/COMPONENTS.md): every component's payload, and what each update changed
 * `component_id` is the component number (1 = Transform, 1018 = MeshRenderer, ...). Reads see
 * the merged state at once (no update needed). Byte outputs follow the bulk-copy rule: `buf`
 * may be NULL when `cap` is 0 (a size query); with too little room, SC_E_BUFFER_TOO_SMALL,
 * `*len` = the bytes needed, nothing written. */
/* The current value of (entity, component_id): the payload of its last winning PUT, exactly
 * as sent (the Transform: its 44 wire bytes), `*len` = its size (0 for an empty payload).
 * SC_E_NOT_FOUND when it has none (never set, DELETE_COMPONENT won, the entity deleted);
 * SC_E_GROW_ONLY when it is an APPEND_VALUE set (read it with sc_runtime_copy_append_values). */
SC_API int sc_runtime_get_component(const sc_runtime* rt, uint32_t entity, uint32_t component_id,
                                    uint8_t* buf, size_t cap, size_t* len);
/* The values of the APPEND_VALUE set of (entity, component_id), ascending by (timestamp,
 * bytes), as records: uint32 timestamp, uint32 byte count (both little-endian), the bytes;
 * `*len` = the total size (SC_APPEND_RECORD_HEADER_BYTES per value plus the values' bytes).
 * SC_E_NOT_FOUND when the key has no set (a plain value reads with sc_runtime_get_component). */
#define SC_APPEND_RECORD_HEADER_BYTES 8
SC_API int sc_runtime_copy_append_values(const sc_runtime* rt, uint32_t entity,
                                         uint32_t component_id, uint8_t* buf, size_t cap,
                                         size_t* len);
/* The (entity, component) pairs of the last update, components other than the Transform (the
 * entity lists above cover it), sorted by entity then component, each once: entities[i] with
 * components[i]. Changed: a value or set now, whose state changed since the update before
 * (added ones included). Added: absent at the update before, present now. Removed: present at
 * the update before, absent now. */
SC_API int sc_runtime_copy_changed_components(const sc_runtime* rt, uint32_t* entities,
                                              uint32_t* components, size_t capacity, size_t* count);
SC_API int sc_runtime_copy_added_components(const sc_runtime* rt, uint32_t* entities,
                                            uint32_t* components, size_t capacity, size_t* count);
SC_API int sc_runtime_copy_removed_components(const sc_runtime* rt, uint32_t* entities,
                                              uint32_t* components, size_t capacity, size_t* count);

/* ---- Local writes: merged here with the Lamport rule, the DCL message to send returned ----
 * `out_msg` receives the message's bytes and `*len` their count (0 when the write changed
 * nothing: nothing to send). A capacity of SC_WRITE_MAX_BYTES always suffices; with less
 * than the message needs, SC_E_BUFFER_TOO_SMALL and nothing is merged. Writes show in the
 * world at the next update (and in the interpolated view at once, without delay). */
#define SC_WRITE_MAX_BYTES 68
SC_API int sc_runtime_write_transform(sc_runtime* rt, uint32_t entity, const sc_transform* t,
                                      uint8_t* out_msg, size_t capacity, size_t* len);
/* DELETE_COMPONENT of the Transform. */
SC_API int sc_runtime_delete_transform(sc_runtime* rt, uint32_t entity, uint8_t* out_msg,
                                       size_t capacity, size_t* len);
/* DELETE_ENTITY: every component of the entity (number, version) goes. SC_E_REFUSED for the
 * reserved numbers below 512. */
SC_API int sc_runtime_delete_entity(sc_runtime* rt, uint32_t entity, uint8_t* out_msg,
                                    size_t capacity, size_t* len);

/* ---- Interpolation (docs/INTERPOLATION.md): off by default ----
 * A presentation shown a short adaptive delay behind the stream, blending each entity's local
 * Transform between updates; parents, loops and placeholders behave as in the replica, which
 * stays exact. Times are int64 microseconds on the caller's clock. */
typedef struct sc_interpolation_options {
  uint32_t struct_size;
  float snap_distance;          /* metres; a longer jump snaps instead of sliding; > 0. 5 */
  int64_t fixed_delay_us;       /* > 0: constant delay; 0: adaptive (default 0) */
  int64_t initial_delay_us;     /* adaptive delay until an interval is seen. 100 000 */
  int64_t min_delay_us;         /* adaptive delay clamp. 0 */
  int64_t max_delay_us;         /* adaptive delay clamp. 1 000 000 */
  double interval_multiple;     /* target >= this x update interval; >= 1. 2 */
  double jitter_multiple;       /* target >= interval + this x jitter; >= 0. 3 */
  double catch_up;              /* playback speed-up while behind target, [0, 0.5]. 0.02 */
  double slow_down;             /* playback slow-down while ahead, [0, 0.5]. 0.04 */
  int64_t max_extrapolation_us; /* motion past the newest batch (then hold, return). 250 000 */
  int64_t max_interval_us;      /* longer gaps are idle periods, not intervals. 1 000 000 */
} sc_interpolation_options;

/* What the presentation did; counters are totals since interpolation was enabled. */
typedef struct sc_interpolation_stats {
  uint32_t struct_size;
  uint32_t buffer_depth;        /* batches received that playback has not reached */
  uint32_t tracked_entities;    /* entities with a sample buffer */
  uint32_t active_entities;     /* entities evaluated by the last update */
  int64_t playback_time_us;     /* the time being shown (render time - delay) */
  int64_t delay_us;             /* current delay */
  int64_t target_delay_us;      /* where the delay is heading */
  int64_t interval_us;          /* observed update interval (0: none yet) */
  int64_t jitter_us;            /* mean lateness of batches behind the smoothed clock */
  uint64_t frames;              /* sc_runtime_update_interpolated calls */
  uint64_t stalled_frames;      /* frames with nothing newer to interpolate towards */
  uint64_t extrapolated_frames; /* frames showing at least one extrapolated entity */
  uint64_t snaps;               /* teleports and reparents shown as jumps */
  uint64_t entities_added;      /* appearances shown */
  uint64_t entities_removed;    /* removals shown */
  uint64_t late_batches;        /* batches stamped behind playback on arrival */
  uint64_t resets;              /* arrival clock resyncs and forward playback jumps */
  uint64_t dropped_samples;     /* samples dropped from full entity buffers */
  uint64_t time_regressions;    /* receive or render times that went backwards (held) */
} sc_interpolation_stats;

/* Fills `out` with the defaults (above) and its struct_size. */
SC_API int sc_interpolation_options_default(sc_interpolation_options* out);
/* Turns interpolation on (every current Transform shown as it is), or changes the options of
 * a running presentation (its buffers kept). `options` may be NULL: the defaults. */
SC_API int sc_runtime_enable_interpolation(sc_runtime* rt, const sc_interpolation_options* options);
/* Turns it off and frees its buffers; interpolated reads then read the replica. */
SC_API int sc_runtime_disable_interpolation(sc_runtime* rt);
/* 1 when on, 0 when off, a negative status on error. */
SC_API int sc_runtime_interpolation_enabled(const sc_runtime* rt);
/* Once per frame with interpolation: sc_runtime_update, then the presentation at
 * `render_time_us` (the clock of the receive times). Without interpolation: the update alone. */
SC_API int sc_runtime_update_interpolated(sc_runtime* rt, int64_t render_time_us);
/* The interpolated counterparts of the reads above (without interpolation: the replica's;
 * added / removed: appearances and removals the presentation showed in the last update). */
SC_API size_t sc_runtime_interpolated_entity_count(const sc_runtime* rt);
SC_API int sc_runtime_interpolated_world_matrix(const sc_runtime* rt, uint32_t entity,
                                                float out[16]);
SC_API int sc_runtime_copy_interpolated_world(const sc_runtime* rt, uint32_t* entities,
                                              float* matrices, size_t capacity, size_t* count);
SC_API int sc_runtime_copy_interpolated_changed(const sc_runtime* rt, uint32_t* entities,
                                                size_t capacity, size_t* count);
SC_API int sc_runtime_copy_interpolated_changed_world(const sc_runtime* rt, uint32_t* entities,
                                                      float* matrices, size_t capacity,
                                                      size_t* count);
SC_API int sc_runtime_copy_interpolated_added(const sc_runtime* rt, uint32_t* entities,
                                              size_t capacity, size_t* count);
SC_API int sc_runtime_copy_interpolated_removed(const sc_runtime* rt, uint32_t* entities,
                                                size_t capacity, size_t* count);
/* Zeros while interpolation is off. `out->struct_size` must be set. */
SC_API int sc_runtime_interpolation_stats(const sc_runtime* rt, sc_interpolation_stats* out);

/* ---- Client: a networked replica of one scene (docs/C-ABI.md, docs/CLIENT.md) ----
 * The client joins the scene on a server (framed TCP or WebSocket), applies what arrives to
 * its replica, sends Lamport-stamped writes and resends them until acknowledged. Reconnect
 * and resume are on: a lost connection (or a server not up yet) is retried with capped
 * exponential backoff, to the next server of the list (fail-over); the server sends only
 * what changed meanwhile when it can, else a snapshot that replaces the replica. The network
 * runs on a thread of the client's own; everything else happens in the calls below, on the
 * thread that owns the handle. */
typedef struct sc_client sc_client;

/* Starts joining `scene` (may be NULL when a ws://HOST:PORT/scene/NAME URL names it) on
 * `url`: tcp://HOST:PORT, ws://HOST:PORT or ws://HOST:PORT/scene/NAME, or a comma-separated
 * list of them (nodes of one cluster: fail-over, tried in turn). `token` may be NULL (servers
 * without --auth). Returns at once; sc_client_poll drives the join. NULL on bad arguments
 * (sc_last_error). */
SC_API sc_client* sc_client_connect(const char* url, const char* scene, const char* token);
/* Stops the network thread and frees the client (writes not yet acknowledged are lost).
 * NULL is a no-op. Views from sc_client_runtime die with it. */
SC_API void sc_client_destroy(sc_client* client);
/* Once per frame: waits up to `timeout_ms` for something to arrive (0: no wait), applies
 * everything received, reconnects when due, sends pending writes, then updates the world
 * matrices (as sc_runtime_update; with interpolation on, sc_client_update_interpolated does
 * the update instead). Returns the number of frames handled (>= 0), SC_E_CLOSED when the
 * client is closed for good (sc_last_error says why), or another negative status. */
SC_API int sc_client_poll(sc_client* client, uint32_t timeout_ms);
/* 1 once the scene's state has been applied (stays 1 across reconnects), else 0; or a
 * negative status. */
SC_API int sc_client_state_ready(const sc_client* client);
/* 1 while connected with the current connection's state applied (writes go out at once),
 * else 0 (joining, or reconnecting: writes are kept and sent later); or a negative status. */
SC_API int sc_client_connected(const sc_client* client);
/* The client's replica as a read-only sc_runtime view: every sc_runtime_* read works on it
 * (world matrices, changed / added / removed lists, interpolated reads); changes through it
 * are SC_E_READ_ONLY. Valid until sc_client_destroy; do not pass it to sc_runtime_destroy
 * (a no-op for views). NULL on error. */
SC_API const sc_runtime* sc_client_runtime(const sc_client* client);
/* Local writes, merged into the replica at once (Lamport-stamped) and sent at the next poll
 * or flush; kept and resent until the server acknowledges them. Before the first state they
 * are held and stamped on top of it. SC_E_INVALID_ARGUMENT for non-finite values,
 * SC_E_REFUSED for what the CRDT rules refuse (a deleted entity, a reserved number),
 * SC_E_FULL when the unsent-write buffer (65 536 entities) is full, SC_E_CLOSED. */
SC_API int sc_client_write_transform(sc_client* client, uint32_t entity, const sc_transform* t);
SC_API int sc_client_delete_transform(sc_client* client, uint32_t entity);
SC_API int sc_client_delete_entity(sc_client* client, uint32_t entity);
/* Sends buffered writes now (when connected); sc_client_poll does it too. */
SC_API int sc_client_flush(sc_client* client);
/* Interpolation of the client's replica (docs/INTERPOLATION.md): live changes are stamped
 * with their receive time (sc_now_us's clock) and shown a short delay later, blended.
 * Survives reconnects and resyncs. `options` may be NULL: the defaults. */
SC_API int sc_client_enable_interpolation(sc_client* client,
                                          const sc_interpolation_options* options);
SC_API int sc_client_disable_interpolation(sc_client* client);
/* Once per frame with interpolation, after sc_client_poll: the presentation at
 * `render_time_us` (sc_now_us() or a renderer clock on the same base). Then read the
 * interpolated reads of sc_client_runtime. Without interpolation: the update alone. */
SC_API int sc_client_update_interpolated(sc_client* client, int64_t render_time_us);

/* Diagnostics (docs/C-ABI.md, "Client diagnostics"). sc_client_state returns one of these
 * (>= 0) or a negative status. CONNECTING also covers the wait between attempts; REFUSED and
 * CLOSED are for good (sc_client_poll then returns SC_E_CLOSED). */
enum {
  SC_CLIENT_CONNECTING = 0, /* the transport is not open yet (or a retry is waiting) */
  SC_CLIENT_JOINING = 1,    /* open, Hello sent, the scene's state not applied yet */
  SC_CLIENT_JOINED = 2,     /* connected with the state applied (sc_client_connected) */
  SC_CLIENT_REFUSED = 3,    /* closed for good after the server refused us */
  SC_CLIENT_CLOSED = 4      /* closed for good otherwise (the give-up policy, destroy) */
};
SC_API int sc_client_state(const sc_client* client);
/* "connecting", "joining", "joined", "refused", "closed"; "unknown" for other values. */
SC_API const char* sc_client_state_name(int state);
/* The latest failure, kept until a newer one: `*code` (may be NULL) the error code (the
 * server's refusal reason or the transport's; 0 when nothing failed yet), `text` "REASON: TEXT"
 * (e.g. "unauthorized: ..." from the server, or the hint naming the right port when the URL
 * dialled the wrong one) with its NUL. Bulk-copy rule: `text` may be NULL when `cap` is 0;
 * `*len` is the bytes with the NUL; SC_E_BUFFER_TOO_SMALL when cap < *len. */
SC_API int sc_client_last_error(const sc_client* client, uint32_t* code, char* text, size_t cap,
                                size_t* len);
/* The give-up policy (default: retry forever, reporting through sc_client_state and
 * sc_client_last_error): give up (SC_CLIENT_CLOSED or SC_CLIENT_REFUSED) after
 * `max_attempts` consecutive connections that ended before their state was applied, or when an
 * attempt ends and none reached its state for `deadline_ms`. 0 = never, for either. */
SC_API int sc_client_set_give_up(sc_client* client, uint32_t max_attempts, uint32_t deadline_ms);

/* Interest (docs/INTEREST.md): receive only the entities whose world position is within
 * `radius` metres of (x, y, z), or of entity `entity`'s world position (sc_client_follow_interest;
 * an entity without a Transform gives an empty view until it has one), plus their ancestors
 * and every entity without a Transform; they leave at radius + max(1, 0.1 radius). Entities
 * leaving the view are dropped from the replica (they show in sc_runtime_copy_removed after
 * the next update, no tombstone) and come back whole when they re-enter. Takes effect at
 * once when connected and is declared again on every reconnect. SC_E_INVALID_ARGUMENT (with
 * "invalid_interest" in sc_last_error) for a NaN, infinite or negative radius or centre. */
SC_API int sc_client_set_interest(sc_client* client, float x, float y, float z, float radius);
SC_API int sc_client_follow_interest(sc_client* client, uint32_t entity, float radius);
/* Receive everything again (the server sends the whole state once). */
SC_API int sc_client_clear_interest(sc_client* client);

/* Connection counters since sc_client_connect. */
typedef struct sc_client_stats {
  uint32_t struct_size;
  uint32_t current_server; /* index in the URL list of the current (or last) connection */
  uint64_t connects;       /* connections the server welcomed */
  uint64_t reconnects;     /* of which after an earlier one */
  uint64_t failovers;      /* attempts that moved to another server of the list */
  uint64_t resumes;        /* joins answered with a resume delta */
  uint64_t resyncs;        /* snapshots that replaced the replica */
  uint64_t pending_frames; /* frames sent or waiting, not acknowledged yet */
  uint64_t unsent_writes;  /* entities with a write not in a frame yet */
  uint64_t live_frames;    /* live change frames applied */
  uint64_t bytes_received; /* transport bytes, every connection */
  uint64_t bytes_sent;
  /* Appended: own writes the scene's authority refused (docs/AUTHORITY.md); the scene's value
   * came back as a change. Callers built before it pass a smaller struct_size and get the
   * fields above. */
  uint64_t refusals;
} sc_client_stats;
/* `out->struct_size` must be set. */
SC_API int sc_client_get_stats(const sc_client* client, sc_client_stats* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCENECRDT_SCENECRDT_H_ */

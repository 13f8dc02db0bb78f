// SPDX-License-Identifier: Apache-2.0
// Owns the C entry points of the interpolated presentation (docs/INTERPOLATION.md): options
// and stats mirrored field by field from runtime/interpolation.h, enable / disable, the
// per-frame update for a render time, and the interpolated reads.
#include "scenecrdt/capi/internal/conversions.h"
#include "scenecrdt/capi/internal/copies.h"
#include "scenecrdt/capi/internal/runtime_handle.h"
#include "scenecrdt/runtime/interpolation.h"

namespace scenecrdt::capi::internal {
namespace {

using runtime::InterpolationOptions;
using runtime::InterpolationStats;

sc_interpolation_options ToC(const InterpolationOptions& o) {
  sc_interpolation_options c{};
  c.struct_size = sizeof(sc_interpolation_options);
  c.snap_distance = o.snap_distance;
  c.fixed_delay_us = o.fixed_delay_us;
  c.initial_delay_us = o.initial_delay_us;
  c.min_delay_us = o.min_delay_us;
  c.max_delay_us = o.max_delay_us;
  c.interval_multiple = o.interval_multiple;
  c.jitter_multiple = o.jitter_multiple;
  c.catch_up = o.catch_up;
  c.slow_down = o.slow_down;
  c.max_extrapolation_us = o.max_extrapolation_us;
  c.max_interval_us = o.max_interval_us;
  return c;
}

sc_interpolation_stats ToC(const InterpolationStats& s) {
  sc_interpolation_stats c{};
  c.struct_size = sizeof(sc_interpolation_stats);
  c.buffer_depth = s.buffer_depth;
  c.tracked_entities = s.tracked_entities;
  c.active_entities = s.active_entities;
  c.playback_time_us = s.playback_time_us;
  c.delay_us = s.delay_us;
  c.target_delay_us = s.target_delay_us;
  c.interval_us = s.interval_us;
  c.jitter_us = s.jitter_us;
  c.frames = s.frames;
  c.stalled_frames = s.stalled_frames;
  c.extrapolated_frames = s.extrapolated_frames;
  c.snaps = s.snaps;
  c.entities_added = s.entities_added;
  c.entities_removed = s.entities_removed;
  c.late_batches = s.late_batches;
  c.resets = s.resets;
  c.dropped_samples = s.dropped_samples;
  c.time_regressions = s.time_regressions;
  return c;
}

}  // namespace

// Every field exists in the ABI 1 layout; a later field would be read only when
// struct_size covers it, and take its default otherwise.
InterpolationOptions FromC(const sc_interpolation_options& c) {
  InterpolationOptions o;
  o.snap_distance = c.snap_distance;
  o.fixed_delay_us = c.fixed_delay_us;
  o.initial_delay_us = c.initial_delay_us;
  o.min_delay_us = c.min_delay_us;
  o.max_delay_us = c.max_delay_us;
  o.interval_multiple = c.interval_multiple;
  o.jitter_multiple = c.jitter_multiple;
  o.catch_up = c.catch_up;
  o.slow_down = c.slow_down;
  o.max_extrapolation_us = c.max_extrapolation_us;
  o.max_interval_us = c.max_interval_us;
  return o;
}

int OptionsFromC(const sc_interpolation_options* options, InterpolationOptions* out,
                 const char* function) {
  *out = InterpolationOptions{};
  if (options == nullptr) return SC_OK;
  if (const int status =
          CheckInputSize(options->struct_size, sizeof(sc_interpolation_options),
                         sizeof(sc_interpolation_options), "sc_interpolation_options", function);
      status != SC_OK) {
    return status;
  }
  *out = FromC(*options);
  return SC_OK;
}

}  // namespace scenecrdt::capi::internal

using scenecrdt::capi::internal::Fail;
using scenecrdt::capi::internal::GuardRead;
using scenecrdt::capi::internal::GuardWrite;
using scenecrdt::runtime::Runtime;

extern "C" {

int sc_interpolation_options_default(sc_interpolation_options* out) {
  if (out == nullptr) {
    return Fail(SC_E_INVALID_ARGUMENT, "sc_interpolation_options_default", "out is NULL");
  }
  *out = scenecrdt::capi::internal::ToC(scenecrdt::runtime::InterpolationOptions{});
  return SC_OK;
}

int sc_runtime_enable_interpolation(sc_runtime* rt, const sc_interpolation_options* options) {
  constexpr const char* kFunction = "sc_runtime_enable_interpolation";
  return GuardWrite(rt, kFunction, [&](Runtime& replica) -> int {
    scenecrdt::runtime::InterpolationOptions converted;
    if (const int status = scenecrdt::capi::internal::OptionsFromC(options, &converted, kFunction);
        status != SC_OK) {
      return status;
    }
    const scenecrdt::Result<void> enabled = replica.EnableInterpolation(converted);
    if (!enabled.has_value()) {
      return Fail(SC_E_INVALID_ARGUMENT, kFunction, "%s; interpolation unchanged",
                  enabled.error().detail);
    }
    return SC_OK;
  });
}

int sc_runtime_disable_interpolation(sc_runtime* rt) {
  return GuardWrite(rt, "sc_runtime_disable_interpolation", [](Runtime& replica) -> int {
    replica.DisableInterpolation();
    return SC_OK;
  });
}

int sc_runtime_interpolation_enabled(const sc_runtime* rt) {
  return GuardRead(rt, "sc_runtime_interpolation_enabled", [](const Runtime& replica) -> int {
    return replica.interpolation_enabled() ? 1 : 0;
  });
}

int sc_runtime_update_interpolated(sc_runtime* rt, int64_t render_time_us) {
  constexpr const char* kFunction = "sc_runtime_update_interpolated";
  return GuardWrite(rt, kFunction, [&](Runtime& replica) -> int {
    const scenecrdt::Result<void> updated = replica.UpdateInterpolated(render_time_us);
    if (!updated.has_value()) {
      return Fail(SC_E_INVALID_ARGUMENT, kFunction,
                  "render_time_us %lld: %s (within +-2^60 us); nothing updated",
                  static_cast<long long>(render_time_us), updated.error().detail);
    }
    return SC_OK;
  });
}

size_t sc_runtime_interpolated_entity_count(const sc_runtime* rt) {
  std::size_t count = 0;
  GuardRead(rt, "sc_runtime_interpolated_entity_count", [&](const Runtime& replica) -> int {
    count = replica.interpolated().num_nodes();
    return SC_OK;
  });
  return count;
}

int sc_runtime_interpolated_world_matrix(const sc_runtime* rt, uint32_t entity, float out[16]) {
  constexpr const char* kFunction = "sc_runtime_interpolated_world_matrix";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyWorldMatrix(replica.interpolated(), entity, out,
                                                      kFunction);
  });
}

int sc_runtime_copy_interpolated_world(const sc_runtime* rt, uint32_t* entities, float* matrices,
                                       size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_interpolated_world";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyWorld(replica.interpolated(), entities, matrices,
                                                capacity, count, kFunction);
  });
}

int sc_runtime_copy_interpolated_changed(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                                         size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_interpolated_changed";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntities(replica.interpolated_changed_entities(),
                                                   entities, capacity, count, kFunction);
  });
}

int sc_runtime_copy_interpolated_changed_world(const sc_runtime* rt, uint32_t* entities,
                                               float* matrices, size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_interpolated_changed_world";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntitiesWorld(
        replica.interpolated(), replica.interpolated_changed_entities(), entities, matrices,
        capacity, count, kFunction);
  });
}

int sc_runtime_copy_interpolated_added(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                                       size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_interpolated_added";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntities(replica.interpolated_added_entities(), entities,
                                                   capacity, count, kFunction);
  });
}

int sc_runtime_copy_interpolated_removed(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                                         size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_interpolated_removed";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntities(replica.interpolated_removed_entities(),
                                                   entities, capacity, count, kFunction);
  });
}

int sc_runtime_interpolation_stats(const sc_runtime* rt, sc_interpolation_stats* out) {
  constexpr const char* kFunction = "sc_runtime_interpolation_stats";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::WriteOutput(
        scenecrdt::capi::internal::ToC(replica.interpolation_stats()), out,
        sizeof(sc_interpolation_stats), "sc_interpolation_stats", kFunction);
  });
}

}  // extern "C"

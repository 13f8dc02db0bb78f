// SPDX-License-Identifier: Apache-2.0
// Owns the range checks of InterpolationOptions (one place; the Runtime and a C ABI call it).
#include "scenecrdt/runtime/interpolation.h"

namespace scenecrdt::runtime {
namespace {

Error Invalid(const char* detail) { return MakeError(ErrorCode::kInvalidArgument, detail); }

bool ValidDuration(int64_t us) { return us >= 0 && us <= kMaxTimeUs; }

}  // namespace

Result<void> ValidateInterpolationOptions(const InterpolationOptions& o) {
  if (!ValidDuration(o.fixed_delay_us)) return Invalid("fixed_delay_us out of [0, 2^60]");
  if (!ValidDuration(o.initial_delay_us)) return Invalid("initial_delay_us out of [0, 2^60]");
  if (!ValidDuration(o.min_delay_us)) return Invalid("min_delay_us out of [0, 2^60]");
  if (!ValidDuration(o.max_delay_us)) return Invalid("max_delay_us out of [0, 2^60]");
  if (o.min_delay_us > o.max_delay_us) return Invalid("min_delay_us above max_delay_us");
  if (!(o.interval_multiple >= 1.0 && o.interval_multiple <= 100.0)) {
    return Invalid("interval_multiple out of [1, 100]");
  }
  if (!(o.jitter_multiple >= 0.0 && o.jitter_multiple <= 100.0)) {
    return Invalid("jitter_multiple out of [0, 100]");
  }
  if (!(o.catch_up >= 0.0 && o.catch_up <= 0.5)) return Invalid("catch_up out of [0, 0.5]");
  if (!(o.slow_down >= 0.0 && o.slow_down <= 0.5)) return Invalid("slow_down out of [0, 0.5]");
  if (!ValidDuration(o.max_extrapolation_us)) {
    return Invalid("max_extrapolation_us out of [0, 2^60]");
  }
  if (!(o.snap_distance > 0.0f)) return Invalid("snap_distance must be > 0");  // NaN too
  if (o.max_interval_us <= 0 || o.max_interval_us > kMaxTimeUs) {
    return Invalid("max_interval_us out of (0, 2^60]");
  }
  return {};
}

}  // namespace scenecrdt::runtime

// SPDX-License-Identifier: Apache-2.0
// Owns the WebAssembly module's translation unit: the C ABI is linked in whole (the exports are
// listed in wasm/CMakeLists.txt), and this file pins the struct layouts that the TypeScript side
// reads from wasm memory by offset (client-web/src/wasm.ts, docs/WEB.md): a layout change breaks
// this build instead of silently misreading fields in the browser. It also holds the module's
// one function of its own, scw_update_interpolated_us.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "scenecrdt/scenecrdt.h"

static_assert(sizeof(void*) == 4, "the TypeScript offsets assume wasm32");
static_assert(sizeof(sc_transform) == 44);
static_assert(offsetof(sc_transform, position) == 0);
static_assert(offsetof(sc_transform, rotation) == 12);
static_assert(offsetof(sc_transform, scale) == 28);
static_assert(offsetof(sc_transform, parent) == 40);
static_assert(sizeof(sc_node_info) == 20);
static_assert(offsetof(sc_node_info, effective_parent) == 4);
static_assert(offsetof(sc_node_info, declared_parent) == 8);
static_assert(offsetof(sc_node_info, parked) == 12);
static_assert(offsetof(sc_node_info, placeholder) == 16);
static_assert(sizeof(sc_interpolation_options) == 88);
static_assert(offsetof(sc_interpolation_options, max_extrapolation_us) == 72);
static_assert(sizeof(sc_apply_stats) == 56);
static_assert(offsetof(sc_apply_stats, messages) == 16);
// The component reads (client-web/src/components.ts): the append-value record header and the
// grow-only status.
static_assert(SC_APPEND_RECORD_HEADER_BYTES == 8);
static_assert(SC_E_GROW_ONLY == -13);

// sc_runtime_update_interpolated with the render time as a double (microseconds, whole values
// exact below 2^53: 285 years). With WASM_BIGINT an int64 argument is a JavaScript BigInt, a
// heap object: a render loop passing one per frame would allocate every frame (docs/WEB.md "No
// allocation per frame"). A time that is not finite or beyond +-2^62 is passed as INT64_MAX,
// which the C ABI refuses (SC_E_INVALID_ARGUMENT, its text in sc_last_error).
extern "C" int scw_update_interpolated_us(sc_runtime* rt, double render_time_us) {
  const bool usable = std::isfinite(render_time_us) && std::fabs(render_time_us) < 0x1p62;
  return sc_runtime_update_interpolated(rt,
                                        usable ? static_cast<int64_t>(render_time_us) : INT64_MAX);
}

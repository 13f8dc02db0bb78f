// SPDX-License-Identifier: Apache-2.0
// Owns the sc_client_* entry points of a libscenecrdt built without the network client
// (SCENECRDT_BUILD_CLIENT=OFF, e.g. inside another project; docs/PACKAGING.md): the ABI keeps
// every function, sc_client_connect says why it cannot connect and returns NULL, and every
// other call returns SC_E_UNSUPPORTED with the same reason.
#include "scenecrdt/capi/internal/status.h"

using scenecrdt::capi::internal::Fail;

namespace {

constexpr const char* kWhy =
    "this libscenecrdt was built without the network client (SCENECRDT_BUILD_CLIENT=OFF); "
    "rebuild with -DSCENECRDT_BUILD_CLIENT=ON";

int Unsupported(const char* function) { return Fail(SC_E_UNSUPPORTED, function, "%s", kWhy); }

}  // namespace

extern "C" {

sc_client* sc_client_connect(const char*, const char*, const char*) {
  Unsupported("sc_client_connect");
  return nullptr;
}
void sc_client_destroy(sc_client*) {}
int sc_client_poll(sc_client*, uint32_t) { return Unsupported("sc_client_poll"); }
int sc_client_state_ready(const sc_client*) { return Unsupported("sc_client_state_ready"); }
int sc_client_connected(const sc_client*) { return Unsupported("sc_client_connected"); }
const sc_runtime* sc_client_runtime(const sc_client*) {
  Unsupported("sc_client_runtime");
  return nullptr;
}
int sc_client_write_transform(sc_client*, uint32_t, const sc_transform*) {
  return Unsupported("sc_client_write_transform");
}
int sc_client_delete_transform(sc_client*, uint32_t) {
  return Unsupported("sc_client_delete_transform");
}
int sc_client_delete_entity(sc_client*, uint32_t) { return Unsupported("sc_client_delete_entity"); }
int sc_client_flush(sc_client*) { return Unsupported("sc_client_flush"); }
int sc_client_set_interest(sc_client*, float, float, float, float) {
  return Unsupported("sc_client_set_interest");
}
int sc_client_follow_interest(sc_client*, uint32_t, float) {
  return Unsupported("sc_client_follow_interest");
}
int sc_client_clear_interest(sc_client*) { return Unsupported("sc_client_clear_interest"); }
int sc_client_enable_interpolation(sc_client*, const sc_interpolation_options*) {
  return Unsupported("sc_client_enable_interpolation");
}
int sc_client_disable_interpolation(sc_client*) {
  return Unsupported("sc_client_disable_interpolation");
}
int sc_client_update_interpolated(sc_client*, int64_t) {
  return Unsupported("sc_client_update_interpolated");
}
int sc_client_state(const sc_client*) { return Unsupported("sc_client_state"); }
const char* sc_client_state_name(int) { return "unknown"; }
int sc_client_last_error(const sc_client*, uint32_t*, char*, size_t, size_t*) {
  return Unsupported("sc_client_last_error");
}
int sc_client_set_give_up(sc_client*, uint32_t, uint32_t) {
  return Unsupported("sc_client_set_give_up");
}
int sc_client_get_stats(const sc_client*, sc_client_stats*) {
  return Unsupported("sc_client_get_stats");
}

}  // extern "C"

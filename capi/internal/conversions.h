// SPDX-License-Identifier: Apache-2.0
// Owns the conversions between the C ABI's value structs and the C++ types that more than one
// group of entry points needs (the runtime's and the client's writes and interpolation).
#pragma once

#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/runtime/interpolation.h"
#include "scenecrdt/scenecrdt.h"

namespace scenecrdt::capi::internal {

// Field by field; the rotation is x y z w on both sides.
protocol::Transform ToTransform(const sc_transform& t);
runtime::InterpolationOptions FromC(const sc_interpolation_options& c);
// `options` NULL: the defaults. Else its struct_size is checked (CheckInputSize) and its
// fields converted; a status and sc_last_error on a bad size.
int OptionsFromC(const sc_interpolation_options* options, runtime::InterpolationOptions* out,
                 const char* function);

}  // namespace scenecrdt::capi::internal

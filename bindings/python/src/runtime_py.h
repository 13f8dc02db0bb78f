// SPDX-License-Identifier: Apache-2.0
// Owns the Python classes over the C ABI: scenecrdt.Runtime (runtime_py.cc, its component reads
// in components_py.cc) and scenecrdt.Client (client_py.cc), and the interpolation options they
// share.
#pragma once

#include <pybind11/pybind11.h>

#include "bindings/python/src/handles.h"

namespace scenecrdt::python {

// The library's defaults with the keyword arguments of enable_interpolation applied (names
// as in sc_interpolation_options); an unknown name raises TypeError.
sc_interpolation_options InterpolationOptions(const pybind11::kwargs& options);

void DefineRuntime(pybind11::module_& m);
// component(), append_values() and the component lists (components_py.cc).
void AddComponentMethods(pybind11::class_<PyRuntime>& runtime);
void DefineClient(pybind11::module_& m);

}  // namespace scenecrdt::python

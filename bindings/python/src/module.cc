// SPDX-License-Identifier: Apache-2.0
// Owns the extension module scenecrdt._native (docs/BINDINGS.md): the library functions, the
// JSON-lines codec of `scenecrdt decode`/`encode` (replay/message_json.h, the CLI's own code)
// and the Runtime and Client classes over the C ABI. scenecrdt/__init__.py wraps it.
#include <pybind11/pybind11.h>
#include <scenecrdt/scenecrdt.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "bindings/python/src/errors.h"
#include "bindings/python/src/runtime_py.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/replay/message_json.h"

namespace scenecrdt::python {
namespace py = pybind11;

namespace {

// `scenecrdt decode` with its default options: one JSON object per line.
std::string DecodeJsonLines(const py::bytes& data) {
  const std::string_view bytes = data;
  std::string out;
  const auto input =
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const Result<void> status = protocol::DecodeStream(input, protocol::DecodeOptions{},
                                                     [&out](const protocol::CrdtMessage& m) {
                                                       replay::AppendMessageJson(m, out);
                                                       out += '\n';
                                                     });
  if (!status.has_value()) {
    const Error& e = status.error();
    std::string message = "malformed DCL stream: ";
    message += ErrorCodeName(e.code);
    message += ": ";
    message += e.detail;
    if (e.has_offset()) message += " (at byte offset " + std::to_string(e.offset) + ")";
    RaiseDecode(message, e.has_offset() ? e.offset : 0);
  }
  return out;
}

// `scenecrdt encode` of JSON lines (or any input form it accepts).
py::bytes EncodeJsonLines(const std::string& text) {
  replay::EncodeProblem problem;
  auto bytes = replay::EncodeJsonText(text, problem);
  if (!bytes.has_value()) {
    const std::string where = problem.line > 0
                                  ? "message " + std::to_string(problem.line - 1) + " (line " +
                                        std::to_string(problem.line) + "): "
                                  : std::string();
    RaiseEncode(where + problem.message, problem.line);
  }
  return py::bytes(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

}  // namespace

void DefineModule(py::module_& m) {
  m.doc() = "scenecrdt over its C ABI (docs/BINDINGS.md); import scenecrdt instead.";
  if (sc_abi_version() != SC_ABI_VERSION) {
    throw py::import_error("scenecrdt: libscenecrdt has ABI version " +
                           std::to_string(sc_abi_version()) + ", this module needs " +
                           std::to_string(SC_ABI_VERSION));
  }
  InitErrors();
  m.attr("ABI_VERSION") = sc_abi_version();
  m.attr("NO_SENDER_TIME") = static_cast<int64_t>(SC_NO_SENDER_TIME);
  m.def("now_us", &sc_now_us, "The library's monotonic clock in microseconds.");
  m.def("decode_json_lines", &DecodeJsonLines, py::arg("data"));
  m.def("encode_json_lines", &EncodeJsonLines, py::arg("text"));
  DefineRuntime(m);
  DefineClient(m);
}

}  // namespace scenecrdt::python

PYBIND11_MODULE(_native, m) { scenecrdt::python::DefineModule(m); }

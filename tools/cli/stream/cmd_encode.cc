// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt encode`: JSON lines (the `decode` format or reference ops) to a DCL stream.
#include <cstdio>
#include <string>

#include "scenecrdt/replay/message_json.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(The inverse of `scenecrdt decode`: reads JSON (FILE or stdin) and writes the DCL SDK7 CRDT
binary stream to OUT ('-' for stdout). Input forms:
  - JSON lines in the `decode` format. When a "transform" object is present it is used
    instead of "dataHex".
  - the reference "ops" format: a JSON array of operations or {"ops":[...]}, with "op"
    instead of "type", entities as u32 or {"number","version"}, and position / rotation /
    scale / parent at the top level (identity defaults, component 1 by default).
Numbers are rounded to float32 as JavaScript's Float32 store does. Input is strict: a key
the message type does not use (a typo such as "postion"), a missing field or a value of the
wrong kind is refused, naming the line, the key and the accepted keys; nothing is written.
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 2 bad input (the error names the line and the reason) or bad usage.
)";
}  // namespace

int RunEncode(Args args) {
  CliApp app("encode", kAbout, kFooter);
  std::optional<std::string> output;
  std::vector<std::string> files;
  app.Value("--output,-o", "OUT", "where to write the stream, '-' for stdout (required)", &output);
  app.Positionals("FILE|-", "the JSON input (default: stdin)", &files);
  if (auto status = app.Parse(args)) return *status;
  if (!output) {
    PrintMessage("encode", "missing -o OUT; see 'scenecrdt encode --help'");
    return kExitBadInput;
  }
  if (files.size() > 1) {
    PrintMessage("encode", "takes one FILE (or '-'); see 'scenecrdt encode --help'");
    return kExitBadInput;
  }
  const std::string path = files.empty() ? "-" : files[0];
  auto input = ReadInput(path);
  if (!input.has_value()) {
    PrintError("encode", "cannot read '" + path + "'", input.error());
    return kExitBadInput;
  }
  replay::EncodeProblem problem;
  auto bytes = replay::EncodeJsonText(
      std::string_view(reinterpret_cast<const char*>(input->data()), input->size()), problem);
  if (!bytes.has_value()) {
    std::string where = path == "-" ? "stdin" : path;
    if (problem.line > 0) where += ", line " + std::to_string(problem.line);
    PrintMessage("encode", where + ": " + problem.message);
    return kExitBadInput;
  }
  if (auto w = WriteOutput(*output, *bytes); !w.has_value()) {
    PrintError("encode", "cannot write '" + *output + "'", w.error());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace scenecrdt::cli

// SPDX-License-Identifier: Apache-2.0
// Owns the flags of `scenecrdt serve`: the option table (serve_options.cc) declared on the
// command's CLI11 adapter (cli_app.h), so the parser and `serve --help` read the same entries,
// and the parsed values applied over the config file's.
#include <string>
#include <string_view>
#include <utility>

#include "tools/cli/cli_app.h"
#include "tools/cli/serve/serve_options.h"

namespace scenecrdt::cli {
namespace {

// --help's headings: {the first option under it, the heading}.
constexpr std::pair<const char*, const char*> kSections[] = {
    {"tcp", "listeners"},
    {"data", "state and access"},
    {"redis", "cluster (docs/CLUSTER.md; several nodes share scenes through Redis Streams)"},
    {"log-format", "logs (stderr; docs/SERVER.md \"Log format and levels\")"},
    {"max-frame-bytes",
     "limits (each refusal is a typed Error frame; see docs/SERVER.md for the defaults' "
     "reasons)"},
    {"max-scene-bytes",
     "memory bounds (docs/SERVER.md \"Memory bounds\" gives the memory each one implies)"},
};

}  // namespace

void DeclareServeFlags(CliApp& app, ServeFlagValues& values) {
  const std::span<const ServeOption> options = ServeOptions();
  values.slots.assign(options.size(), {});
  for (std::size_t i = 0; i < options.size(); ++i) {
    const ServeOption& o = options[i];
    for (const auto& [first, heading] : kSections) {
      if (std::string_view(o.name) == first) app.Section(heading);
    }
    const std::string flag = std::string("--") + o.name;
    const std::string meta = o.meta != nullptr ? o.meta : "";
    const std::string help = o.help != nullptr ? o.help : "";
    ServeFlagValues::Slot& slot = values.slots[i];
    switch (o.kind) {
      case OptionKind::kListen:
      case OptionKind::kString:
        app.Value(flag, meta, help, &slot.text);
        break;
      case OptionKind::kStringList:
        app.Values(flag, meta, help, &slot.list);
        break;
      case OptionKind::kUnsigned:
        app.U64(flag, meta, help, &slot.n);
        break;
      case OptionKind::kNumber:
        app.Double(flag, meta, help, &slot.d);
        break;
      case OptionKind::kFlag:
        app.Flag(flag, help, &slot.flag);
        break;
    }
  }
}

bool ApplyServeFlags(const ServeFlagValues& values, ServeSettings& s, std::string& error) {
  const std::span<const ServeOption> options = ServeOptions();
  for (std::size_t i = 0; i < options.size() && i < values.slots.size(); ++i) {
    const ServeOption& o = options[i];
    const ServeFlagValues::Slot& slot = values.slots[i];
    const std::string flag = std::string("--") + o.name;
    OptionValue v;
    switch (o.kind) {
      case OptionKind::kListen:
      case OptionKind::kString:
        if (!slot.text) continue;
        v = *slot.text;
        break;
      case OptionKind::kStringList:
        if (slot.list.empty()) continue;
        v = slot.list;
        break;
      case OptionKind::kUnsigned:
        if (!slot.n) continue;
        if (*slot.n > o.max) {
          if (error.empty()) error = flag + " must be at most " + std::to_string(o.max);
          continue;
        }
        v = *slot.n;
        break;
      case OptionKind::kNumber:
        if (!slot.d) continue;
        v = *slot.d;
        break;
      case OptionKind::kFlag:
        if (!slot.flag) continue;
        v = true;
        break;
    }
    if (const char* why = o.set(s, v)) {
      if (error.empty()) error = flag + " " + why;
    }
  }
  return error.empty();
}

}  // namespace scenecrdt::cli

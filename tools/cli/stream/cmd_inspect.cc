// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt inspect`: replays streams (or loads a scene stored in a server's data
// directory, with its owners), then prints the effective tree with local and world positions
// and flags, and optionally draws it top-down (X/Z) as SVG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/server/storage/persistence.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/stream/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Replays the DCL streams (as `scenecrdt replay` does), runs the transform runtime and prints
the effective tree: for each node its entity, local position (from its Transform), world
position (from its world matrix) and flags:
  parked       member of a parenting loop, temporarily placed at the root
  placeholder  a parent without a Transform, identity at the root (ADR-153)
  sheared      its world matrix has no exact translation/rotation/scale (a rotated child of
               a non-uniformly scaled parent)
With --data DIR --scene NAME instead of FILEs: the scene as stored in the data directory of
'scenecrdt serve' (read-only; a running server may hold it), followed by its owners
(--authority owner|rules: entity number and principal; docs/AUTHORITY.md).
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 2 malformed input (file, byte offset and reason on stderr), bad usage, a
data directory without a database or without the scene, or the --svg file cannot be written.
)";

struct Node {
  runtime::NodeInfo info;
  glm::vec3 local{0.0f};
  glm::vec3 world{0.0f};
  bool sheared = false;
};

std::string Vec(const glm::vec3& v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%.3g, %.3g, %.3g)", static_cast<double>(v.x),
                static_cast<double>(v.y), static_cast<double>(v.z));
  return buf;
}

std::string Flags(const Node& n) {
  std::string f;
  if (n.info.parked) f += " [parked]";
  if (n.info.placeholder) f += " [placeholder]";
  if (n.sheared) f += " [sheared]";
  return f;
}

std::string Svg(const std::vector<Node>& nodes) {
  float min_x = 0, max_x = 0, min_z = 0, max_z = 0;
  for (const Node& n : nodes) {
    min_x = std::min(min_x, n.world.x);
    max_x = std::max(max_x, n.world.x);
    min_z = std::min(min_z, n.world.z);
    max_z = std::max(max_z, n.world.z);
  }
  const float extent = std::max({max_x - min_x, max_z - min_z, 1e-3f});
  const double size = 1000.0, margin = 60.0;
  const double k = size / static_cast<double>(extent);
  auto px = [&](float x) { return margin + (static_cast<double>(x - min_x)) * k; };
  auto py = [&](float z) { return margin + size - (static_cast<double>(z - min_z)) * k; };
  const double count = static_cast<double>(std::max<std::size_t>(nodes.size(), 1));
  const double r = std::clamp(200.0 / std::sqrt(count), 1.2, 9.0);
  const bool label_all = nodes.size() <= 300;
  std::map<protocol::EntityId, const Node*> by_id;
  for (const Node& n : nodes) by_id[n.info.entity] = &n;

  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                size + 2 * margin, size + 2 * margin + 40, size + 2 * margin,
                size + 2 * margin + 40);
  s += buf;
  // Parent links first, under the nodes.
  s += "<g stroke=\"#4a6fa5\" stroke-opacity=\"0.5\" stroke-width=\"" +
       std::to_string(std::max(0.3, r / 4)) + "\">\n";
  for (const Node& n : nodes) {
    double x0 = px(0), y0 = py(0);
    if (n.info.effective_parent != 0) {
      auto it = by_id.find(n.info.effective_parent);
      if (it == by_id.end()) continue;
      x0 = px(it->second->world.x);
      y0 = py(it->second->world.z);
    } else if (!label_all) {
      continue;  // on big scenes, links to the root are noise
    }
    std::snprintf(buf, sizeof buf, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x0,
                  y0, px(n.world.x), py(n.world.z));
    s += buf;
  }
  s += "</g>\n";
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"black\"/>\n",
                px(0) - r, py(0) - r, 2 * r, 2 * r);
  s += buf;
  std::size_t labels = 0;
  for (const Node& n : nodes) {
    const char* fill = n.info.placeholder ? "none" : (n.info.parked ? "#d62728" : "#1f77b4");
    const char* stroke = n.info.parked ? "#d62728" : (n.info.placeholder ? "#777" : "none");
    std::snprintf(buf, sizeof buf,
                  "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.2f\" fill=\"%s\" stroke=\"%s\" "
                  "stroke-width=\"%.2f\"%s><title>%u%s</title></circle>\n",
                  px(n.world.x), py(n.world.z), n.info.parked ? r * 1.4 : r, fill, stroke,
                  std::max(0.5, r / 3), n.info.placeholder ? " stroke-dasharray=\"2,1\"" : "",
                  n.info.entity, Flags(n).c_str());
    s += buf;
    const bool label = label_all || ((n.info.parked || n.info.placeholder) && labels < 200);
    if (label) {
      ++labels;
      std::snprintf(buf, sizeof buf,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" fill=\"#222\">%u</text>\n",
                    px(n.world.x) + r * 1.5, py(n.world.z) - r * 0.5,
                    std::clamp(r * 2.2, 8.0, 14.0), n.info.entity);
      s += buf;
    }
  }
  std::size_t parked = 0, placeholders = 0;
  for (const Node& n : nodes) {
    parked += n.info.parked;
    placeholders += n.info.placeholder;
  }
  std::snprintf(buf, sizeof buf,
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"16\">%zu nodes, %zu parked (red), %zu "
                "placeholders (hollow); top-down X/Z, extent %.3g; black square: root</text>\n",
                margin, size + 2 * margin + 20, nodes.size(), parked, placeholders,
                static_cast<double>(extent));
  s += buf;
  s += "</svg>\n";
  return s;
}

}  // namespace

int RunInspect(Args args) {
  CliApp app("inspect", kAbout, kFooter);
  std::optional<std::string> svg_out;
  std::optional<uint64_t> max_lines;
  std::vector<std::string> files;
  app.Value("--svg", "OUT",
            "also draw the scene top-down (X right, Z up) with parent links and labels;\n"
            "parked entities in red, placeholders hollow. Labels are thinned out on large\n"
            "scenes so 10 000 entities stay readable.",
            &svg_out);
  app.U64("--max-lines", "N", "print at most N tree lines (default: all)", &max_lines);
  std::optional<std::string> data_dir, scene_name;
  app.Value("--data", "DIR", "a data directory of 'scenecrdt serve' (with --scene), not FILEs",
            &data_dir);
  app.Value("--scene", "NAME", "the stored scene to inspect (with --data)", &scene_name);
  app.Positionals("FILE", "the DCL streams, replayed in order ('-' for stdin)", &files);
  if (auto status = app.Parse(args)) return *status;
  if (data_dir.has_value() != scene_name.has_value() || (data_dir && !files.empty())) {
    PrintMessage("inspect", "--data DIR and --scene NAME go together, instead of FILEs");
    return kExitBadInput;
  }
  if (files.empty() && !data_dir) {
    PrintMessage("inspect",
                 "needs at least one FILE (or --data DIR --scene NAME); see "
                 "'scenecrdt inspect --help'");
    return kExitBadInput;
  }
  runtime::Runtime replica;
  std::vector<std::pair<uint32_t, std::string>> owners;
  if (data_dir) {
    std::string diagnostic;
    auto stored = server::Persistence::ReadStoredScene(*data_dir, *scene_name, &diagnostic);
    if (!stored.has_value()) {
      PrintMessage("inspect", diagnostic.empty() ? stored.error().detail : diagnostic);
      return kExitBadInput;
    }
    if (stored->rows == 0) {
      PrintMessage("inspect", "scene '" + *scene_name + "' has nothing stored in " + *data_dir);
      return kExitBadInput;
    }
    if (auto applied = replica.ApplyCrdt(stored->dcl); !applied.has_value()) {
      PrintError("inspect", "the stored scene '" + *scene_name + "' does not load",
                 applied.error());
      return kExitBadInput;
    }
    owners = std::move(stored->owners);
    std::sort(owners.begin(), owners.end());
  }
  // In order, window by window: the input is never held (stream_files.h MergeFiles).
  LoadError load_error;
  auto merged = data_dir
                    ? Result<void>{}
                    : MergeFiles(
                          files,
                          [&](std::span<const uint8_t> window) -> Result<void> {
                            Result<void> r = replica.ApplyCrdt(
                                window, protocol::DecodeOptions{},
                                [](const protocol::CrdtMessage&, const runtime::MergeResult&) {});
                            // Bounds the change feed (one entry per Transform change until
                            // Update()).
                            if (replica.store().transform_changes().size() > (std::size_t{1} << 20))
                              replica.Update();
                            return r;
                          },
                          &load_error);
  if (!merged.has_value()) {
    PrintLoadError("inspect", load_error);
    return kExitBadInput;
  }
  replica.Update();
  const runtime::TransformSystem& ts = replica.transforms();
  const auto world = ts.world_matrices();

  std::vector<Node> nodes;
  std::map<protocol::EntityId, std::vector<std::size_t>> children;
  std::size_t parked = 0, placeholders = 0;
  for (const runtime::NodeInfo& info : ts.Nodes()) {
    Node n;
    n.info = info;
    if (const protocol::Transform* t = ts.GetTransform(info.entity); t && !info.placeholder) {
      n.local = glm::vec3(t->position.x, t->position.y, t->position.z);
    }
    const glm::mat4& m = world[info.index];
    n.world = glm::vec3(m[3]);
    n.sheared = runtime::DecomposeWorld(m).has_shear;
    parked += info.parked;
    placeholders += info.placeholder;
    children[info.effective_parent].push_back(nodes.size());
    nodes.push_back(n);
  }

  std::string out;
  out += "scene: " + std::to_string(nodes.size()) + " nodes, " + std::to_string(parked) +
         " parked, " + std::to_string(placeholders) + " placeholders\nroot\n";
  // Iterative depth-first walk (no recursion: chains can be 65 024 deep).
  struct Frame {
    protocol::EntityId parent;
    std::size_t next;
    std::string prefix;
  };
  std::vector<Frame> stack{{protocol::kRootEntity, 0, ""}};
  uint64_t lines = 0;
  const uint64_t line_limit = max_lines.value_or(~uint64_t{0});
  while (!stack.empty() && lines < line_limit) {
    Frame& f = stack.back();
    const auto it = children.find(f.parent);
    if (it == children.end() || f.next >= it->second.size()) {
      stack.pop_back();
      continue;
    }
    const bool last = f.next + 1 == it->second.size();
    const Node& n = nodes[it->second[f.next++]];
    out += f.prefix + (last ? "`-- " : "|-- ") + std::to_string(n.info.entity) + "  local " +
           Vec(n.local) + "  world " + Vec(n.world) + Flags(n) + "\n";
    ++lines;
    const std::string child_prefix = f.prefix + (last ? "    " : "|   ");
    stack.push_back({n.info.entity, 0, child_prefix});
    if (out.size() > (1 << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  if (lines >= line_limit && lines < nodes.size()) {
    out += "... (" + std::to_string(nodes.size() - lines) + " more nodes; raise --max-lines)\n";
  }
  if (data_dir) {
    out += "owners: " + std::to_string(owners.size()) + "\n";
    for (const auto& [number, principal] : owners) {
      // Principals are JWT subjects: control bytes are shown escaped, never sent to the terminal.
      out += "  " + std::to_string(number) + "  ";
      for (const char c : principal) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
          out += escaped;
        } else {
          out += c;
        }
      }
      out += "\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (svg_out) {
    if (auto w = WriteText(*svg_out, Svg(nodes)); !w.has_value()) {
      PrintError("inspect", "cannot write '" + *svg_out + "'", w.error());
      return kExitBadInput;
    }
  }
  return kExitOk;
}

}  // namespace scenecrdt::cli

// SPDX-License-Identifier: Apache-2.0
// Owns the CLI11 adapter of the command line: declarations, parsing with the project's error
// messages and exit status, and the --help text printed from the same declarations.
#include "tools/cli/cli_app.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

// Debian's CLI11 is header-only and reports parse errors as exceptions: they are caught in
// this file and never leave it.
#include <CLI/CLI.hpp>

namespace scenecrdt::cli {
namespace {

constexpr std::size_t kHelpColumn = 24;  // where an option's description starts in --help

// "--name=value" -> "--name" (how today's messages name an unknown option).
std::string OptionWord(std::string arg) {
  if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
    const std::size_t eq = arg.find('=');
    if (eq != std::string::npos) arg.resize(eq);
  }
  return arg;
}

// The option's names as --help shows them: "-o, --out" or "--max-rate".
std::string ShownNames(const CLI::Option& o) {
  std::string out;
  for (const std::string& s : o.get_snames()) out += "-" + s + ", ";
  for (const std::string& l : o.get_lnames()) out += "--" + l + ", ";
  if (out.empty()) return o.get_name(true);  // a positional: its meta
  out.resize(out.size() - 2);
  return out;
}

}  // namespace

CliApp::CliApp(std::string command, std::string about, std::string footer)
    : command_(std::move(command)),
      about_(std::move(about)),
      footer_(std::move(footer)),
      app_(std::make_unique<CLI::App>(about_, "scenecrdt " + command_)) {
  app_->allow_extras(true);  // unknown options are reported by Parse, in the project's words
  app_->set_help_flag();     // --help is handled by Parse before CLI11 sees the arguments
}

CliApp::~CliApp() = default;

void CliApp::Section(std::string heading) { section_ = std::move(heading); }

CliApp::Declared* CliApp::Declare(Kind kind, std::string names, std::string meta, std::string help,
                                  void* out) {
  Declared& d = declared_.emplace_back();
  d.kind = kind;
  d.out = out;
  try {
    if (kind == Kind::kFlag) {
      d.option = app_->add_flag(names)->description(help)->disable_flag_override();
    } else {
      d.option = app_->add_option(names, d.results, help);
      if (kind != Kind::kPositionals) {
        // One value per occurrence (a vector target would take every following word).
        d.option->expected(1)->allow_extra_args(false)->multi_option_policy(
            CLI::MultiOptionPolicy::TakeAll);
      }
      d.option->type_name(meta);
    }
    d.option->group(section_);
    d.long_name = d.option->get_lnames().empty() ? d.option->get_name(true)
                                                 : "--" + d.option->get_lnames().front();
  } catch (const CLI::Error& e) {
    if (declaration_error_.empty()) declaration_error_ = names + ": " + e.what();
  }
  return &d;
}

void CliApp::Value(std::string names, std::string meta, std::string help,
                   std::optional<std::string>* out) {
  Declare(Kind::kValue, std::move(names), std::move(meta), std::move(help), out);
}
void CliApp::Values(std::string names, std::string meta, std::string help,
                    std::vector<std::string>* out) {
  Declare(Kind::kValues, std::move(names), std::move(meta), std::move(help), out);
}
void CliApp::Flag(std::string names, std::string help, bool* out) {
  Declare(Kind::kFlag, std::move(names), std::string(), std::move(help), out);
}
void CliApp::U64(std::string names, std::string meta, std::string help,
                 std::optional<uint64_t>* out) {
  Declare(Kind::kU64, std::move(names), std::move(meta), std::move(help), out);
}
void CliApp::Double(std::string names, std::string meta, std::string help,
                    std::optional<double>* out) {
  Declare(Kind::kDouble, std::move(names), std::move(meta), std::move(help), out);
}
void CliApp::Positionals(std::string meta, std::string help, std::vector<std::string>* out) {
  Declare(Kind::kPositionals, meta, meta, std::move(help), out);
}

void CliApp::HiddenPositionals(std::vector<std::string>* out) {
  Declared* d = Declare(Kind::kPositionals, "args", "ARGS", std::string(), out);
  if (d->option != nullptr) d->option->group(std::string());
}

int CliApp::Fail(const std::string& message) const {
  std::fprintf(stderr, "scenecrdt %s: %s (see 'scenecrdt %s --help')\n", command_.c_str(),
               message.c_str(), command_.c_str());
  return kExitBadInput;
}

std::optional<int> CliApp::Parse(Args args) {
  for (std::string_view a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(Help().c_str(), stdout);
      return kExitOk;
    }
  }
  if (!declaration_error_.empty()) return Fail("bad option declaration " + declaration_error_);
  // CLI11 pops from the back. "--name=" is "--name" with an empty value (CLI11 alone would
  // take the next argument as the value).
  std::vector<std::string> reversed;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->size() > 3 && it->substr(0, 2) == "--" && it->back() == '=' &&
        it->find('=') == it->size() - 1) {
      reversed.emplace_back();
      reversed.emplace_back(it->substr(0, it->size() - 1));
    } else {
      reversed.emplace_back(*it);
    }
  }
  try {
    app_->parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    // "--name: 1 required N missing" (a value missing at the end) or "NAME was given a
    // disallowed flag override" (--flag=value).
    const std::string what = e.what();
    const std::string name = what.substr(0, what.find(':'));
    if (what.find("missing") != std::string::npos) return Fail(name + " needs a value");
    if (what.find("flag override") != std::string::npos) {  // "NAME was given a disallowed ..."
      const std::string flag = what.substr(0, what.find(' '));
      return Fail((flag.rfind('-', 0) == 0 ? flag : "--" + flag) + " takes no value");
    }
    return Fail(what);
  } catch (const CLI::Error& e) {
    return Fail(e.what());
  }
  // Values in declaration order; the first refusal is reported, then unknown options.
  std::string error;
  for (Declared& d : declared_) {
    const bool given = d.option != nullptr && d.option->count() > 0;
    switch (d.kind) {
      case Kind::kFlag:
        *static_cast<bool*>(d.out) = given;
        break;
      case Kind::kValues:
      case Kind::kPositionals:
        *static_cast<std::vector<std::string>*>(d.out) = d.results;
        break;
      case Kind::kValue:
        if (!d.results.empty()) *static_cast<std::optional<std::string>*>(d.out) = d.results.back();
        break;
      case Kind::kU64: {
        if (d.results.empty()) break;
        const std::string& v = d.results.back();
        uint64_t n = 0;
        const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || ptr != v.data() + v.size()) {
          if (error.empty()) error = d.long_name + " needs a non-negative integer, got '" + v + "'";
          break;
        }
        *static_cast<std::optional<uint64_t>*>(d.out) = n;
        break;
      }
      case Kind::kDouble: {
        if (d.results.empty()) break;
        const std::string& v = d.results.back();
        double x = 0;
        const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || ptr != v.data() + v.size()) {
          if (error.empty()) error = d.long_name + " needs a number, got '" + v + "'";
          break;
        }
        *static_cast<std::optional<double>*>(d.out) = x;
        break;
      }
    }
  }
  if (!error.empty()) return Fail(error);
  const std::vector<std::string> extras = app_->remaining();
  if (!extras.empty()) return Fail("unknown option '" + OptionWord(extras.front()) + "'");
  if (std::getenv(kParseOnlyEnv) != nullptr) {
    for (const CLI::Option* o : static_cast<const CLI::App&>(*app_).get_options()) {
      if (o->nonpositional()) std::printf("%s\n", ShownNames(*o).c_str());
    }
    return kExitOk;
  }
  return std::nullopt;
}

std::string CliApp::Help() const {
  std::string out =
      "usage: scenecrdt " + (usage_name_.empty() ? command_ : usage_name_) + " [options]";
  const CLI::App& app = *app_;
  const std::vector<const CLI::Option*> options = app.get_options();
  for (const CLI::Option* o : options) {
    if (!o->nonpositional() && !o->get_group().empty()) {
      out += " [" + o->get_type_name() + "...]";
    }
  }
  out += "\n\n" + about_;
  if (!about_.empty() && about_.back() != '\n') out += '\n';
  std::vector<std::string> sections;
  for (const CLI::Option* o : options) {
    if (!o->get_group().empty() &&
        std::find(sections.begin(), sections.end(), o->get_group()) == sections.end()) {
      sections.push_back(o->get_group());
    }
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    out += (i == 0 ? "\n" : "") + sections[i] + ":\n";
    for (const CLI::Option* o : options) {
      if (o->get_group() != sections[i]) continue;
      std::string left = "  " + ShownNames(*o);
      if (o->nonpositional() && o->get_type_size_max() > 0) left += " " + o->get_type_name();
      out += left;
      if (left.size() + 2 <= kHelpColumn) {
        out.append(kHelpColumn - left.size(), ' ');
      } else {
        out += "\n" + std::string(kHelpColumn, ' ');
      }
      for (const char c : o->get_description()) {
        out += c;
        if (c == '\n') out.append(kHelpColumn, ' ');
      }
      out += '\n';
    }
  }
  out += "  -h, --help            print this help\n";
  if (!footer_.empty()) out += "\n" + footer_;
  if (!footer_.empty() && footer_.back() != '\n') out += '\n';
  return out;
}

}  // namespace scenecrdt::cli

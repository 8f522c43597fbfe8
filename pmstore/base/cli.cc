#include "pmstore/base/cli.h"

#include <algorithm>
#include <cstdio>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pmstore::base {
namespace {

std::string Canonical(std::string_view name) {
  return absl::StrReplaceAll(std::string(name), {{"-", "_"}});
}

std::string Dashed(std::string_view name) {
  return absl::StrReplaceAll(std::string(name), {{"_", "-"}});
}

bool Takes(const Subcommand& sub, const std::string& canonical) {
  return std::any_of(sub.flags.begin(), sub.flags.end(),
                     [&](const std::string& f) { return Canonical(f) == canonical; });
}

absl::Status UsageError(const std::string& program, const Subcommand& sub, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " (see '", program, " help ", sub.name, "')"));
}

// Applies one `--name[=value]` argument; may consume the next argv entry.
absl::Status ApplyFlag(const std::string& program, const Subcommand& sub, std::string_view arg,
                       int& i, int argc, char** argv) {
  std::string_view body = arg.substr(2);
  std::string value;
  bool has_value = false;
  if (auto eq = body.find('='); eq != std::string_view::npos) {
    value = std::string(body.substr(eq + 1));
    body = body.substr(0, eq);
    has_value = true;
  }
  std::string name = Canonical(body);
  absl::CommandLineFlag* flag = Takes(sub, name) ? absl::FindCommandLineFlag(name) : nullptr;
  if (flag == nullptr && !has_value && name.starts_with("no") && Takes(sub, name.substr(2))) {
    flag = absl::FindCommandLineFlag(name.substr(2));
    if (flag != nullptr && flag->IsOfType<bool>()) {
      name = name.substr(2);
      value = "false";
      has_value = true;
    } else {
      flag = nullptr;
    }
  }
  if (flag == nullptr) {
    return UsageError(program, sub, absl::StrCat("unknown flag --", Dashed(body), " for '", sub.name, "'"));
  }
  if (!has_value) {
    const auto implicit = std::find_if(sub.implicit_values.begin(), sub.implicit_values.end(),
                                       [&](const auto& entry) { return Canonical(entry.first) == name; });
    if (flag->IsOfType<bool>()) {
      value = "true";
    } else if (implicit != sub.implicit_values.end()) {
      value = implicit->second;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return UsageError(program, sub, absl::StrCat("flag --", Dashed(name), " needs a value"));
    }
  }
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return UsageError(program, sub, absl::StrCat("bad value '", value, "' for --", Dashed(name), ": ", error));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedCommandLine> ParseCommandLine(int argc, char** argv,
                                                   const std::vector<Subcommand>& subcommands) {
  // Messages name the program as a user types it, not the path it ran from.
  std::string program = argc > 0 ? argv[0] : "tool";
  program = program.substr(program.rfind('/') + 1);
  ParsedCommandLine parsed;
  if (argc < 2) {
    return absl::InvalidArgumentError(absl::StrCat("no subcommand given (see '", program, " --help')"));
  }
  std::string_view first = argv[1];
  int next = 2;
  if (first == "--help" || first == "-h" || first == "help") {
    parsed.help = true;
    if (argc < 3) return parsed;
    first = argv[2];
    next = 3;
  }
  auto it = std::find_if(subcommands.begin(), subcommands.end(),
                         [&](const Subcommand& s) { return s.name == first; });
  if (it == subcommands.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown subcommand '", std::string(first),
                                                   "' (see '", program, " --help')"));
  }
  parsed.subcommand = &*it;
  bool flags_done = false;
  for (int i = next; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (flags_done || !arg.starts_with("-") || arg == "-") {
      parsed.args.emplace_back(arg);
    } else if (arg == "--") {
      flags_done = true;
    } else if (arg == "--help" || arg == "-h") {
      parsed.help = true;
    } else if (!arg.starts_with("--")) {
      return UsageError(program, *it, absl::StrCat("unknown option ", std::string(arg),
                                                   ": flags are spelled --name or --name=value"));
    } else {
      auto status = ApplyFlag(program, *it, arg, i, argc, argv);
      if (!status.ok()) return status;
    }
  }
  return parsed;
}

int RunMain(int argc, char** argv, const std::string& program, const std::string& about,
            const std::vector<Subcommand>& subcommands, const Dispatcher& dispatch) {
  auto parsed = ParseCommandLine(argc, argv, subcommands);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->help || parsed->subcommand == nullptr) {
    const std::string text = parsed->subcommand ? SubcommandHelp(program, *parsed->subcommand)
                                                : ProgramHelp(program, about, subcommands);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  return dispatch(parsed->subcommand->name, parsed->args);
}

std::string ProgramHelp(const std::string& program, const std::string& about,
                        const std::vector<Subcommand>& subcommands) {
  std::string out = absl::StrCat(about, "\n\nUsage: ", program, " SUBCOMMAND [flags] [args]\n\nSubcommands:\n");
  for (const auto& sub : subcommands) {
    absl::StrAppend(&out, "  ", sub.synopsis, "\n      ", sub.summary, "\n");
  }
  absl::StrAppend(&out, "\nRun '", program, " help SUBCOMMAND' for its flags and examples.\n");
  return out;
}

std::string SubcommandHelp(const std::string& program, const Subcommand& sub) {
  std::string out = absl::StrCat("Usage: ", program, " ", sub.synopsis, "\n\n", sub.summary, "\n");
  if (!sub.details.empty()) absl::StrAppend(&out, "\n", sub.details, "\n");
  if (!sub.flags.empty()) absl::StrAppend(&out, "\nFlags:\n");
  for (const auto& name : sub.flags) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(Canonical(name));
    if (flag == nullptr) continue;
    absl::StrAppend(&out, "  --", Dashed(name), "\n      ", flag->Help());
    const std::string def = flag->DefaultValue();
    if (!def.empty()) absl::StrAppend(&out, " (default: ", def, ")");
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace pmstore::base

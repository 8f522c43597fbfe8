// Command lines of the project's binaries: `tool SUBCOMMAND [flags] [args]`.
//
// Flags are defined with ABSL_FLAG in each binary's main file, as Abseil
// intends. absl::ParseCommandLine is not used because it knows no
// subcommands and exits with status 1 on a bad flag, while these tools
// promise exit status 2 and accept only the flags of the chosen subcommand.
// So this parser walks argv itself, looks every flag up in Abseil's registry
// and lets Abseil parse the value (one parser per flag type, Abseil's).
//
// Spelling: `--name=value`, `--name value`, `--bool-flag`, `--nobool-flag`,
// `--name` alone for a flag with an implicit value;
// dashes and underscores in names are the same (`--map-sync`,
// `--map_sync`), so fio's underscore names work too. `--` ends the flags.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pmstore::base {

struct Subcommand {
  std::string name;      // "run"
  std::string synopsis;  // "run [flags] [JOB.fio]"
  std::string summary;   // one line for the program's help
  std::string details;   // paragraphs printed by `tool help run`
  std::vector<std::string> flags;  // names of ABSL_FLAGs this subcommand takes
  // Flags that may be given without a value, and the value they then take
  // (faultbench's `--anon` is `--anon=private`); such a flag never takes
  // the next argument as its value.
  std::map<std::string, std::string> implicit_values;
};

struct ParsedCommandLine {
  const Subcommand* subcommand = nullptr;  // null when help was asked for the program
  std::vector<std::string> args;           // positional arguments after the subcommand
  bool help = false;                       // --help, -h or `help [subcommand]`
};

// Parses argv against `subcommands`, setting the absl flags it names.
// Errors (unknown subcommand, unknown flag, flag of another subcommand,
// unparsable value) come back as InvalidArgument with a one-line message
// that says what to do, e.g. "unknown flag --sise for 'run' (see 'faultbench
// help run')".
absl::StatusOr<ParsedCommandLine> ParseCommandLine(int argc, char** argv,
                                                   const std::vector<Subcommand>& subcommands);

// The whole of a binary's main(): parses argv, prints usage errors as one
// line on stderr (exit 2), prints help (exit 0), else returns
// dispatch(subcommand name, positional args).
using Dispatcher = std::function<int(const std::string& subcommand, const std::vector<std::string>& args)>;
int RunMain(int argc, char** argv, const std::string& program, const std::string& about,
            const std::vector<Subcommand>& subcommands, const Dispatcher& dispatch);

// `tool --help`: the summary, then each subcommand's synopsis and summary.
std::string ProgramHelp(const std::string& program, const std::string& about,
                        const std::vector<Subcommand>& subcommands);

// `tool help SUBCOMMAND`: synopsis, details, then every flag with its help
// text and default, in the order the subcommand lists them.
std::string SubcommandHelp(const std::string& program, const Subcommand& subcommand);

}  // namespace pmstore::base

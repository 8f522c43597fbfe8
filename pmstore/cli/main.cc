// The `pmstore` command: create, inspect and exercise pools from the shell.
#include <cstdio>

#include "absl/flags/flag.h"
#include "pmstore/base/cli.h"
#include "pmstore/version.h"

namespace {

const std::vector<pmstore::base::Subcommand>& Subcommands() {
  static const std::vector<pmstore::base::Subcommand> kSubcommands = {
      {"version", "version", "Print the library version.", "", {}},
  };
  return kSubcommands;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = "pmstore";
  auto parsed = pmstore::base::ParseCommandLine(argc, argv, Subcommands());
  if (!parsed.ok()) {
    std::fprintf(stderr, "pmstore: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->help) {
    const std::string text = parsed->subcommand
        ? pmstore::base::SubcommandHelp(program, *parsed->subcommand)
        : pmstore::base::ProgramHelp(program, "pmstore: a crash-consistent key/object store on persistent memory.",
                                     Subcommands());
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::printf("%s\n", std::string(pmstore::Version()).c_str());
  return 0;
}

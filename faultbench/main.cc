// The `faultbench` command. Flags live here (ABSL_FLAG belongs in the
// binary's main file); each subcommand copies them into its library's
// config struct and calls one entry function.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "faultbench/doctor/doctor.h"
#include "pmstore/base/cli.h"

ABSL_FLAG(bool, json, false, "doctor: print the report as JSON instead of text");

namespace {

using pmstore::base::Subcommand;

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"doctor", "doctor PATH [--json]",
       "Tell whether PMD (2 MiB) mappings are possible for PATH, and what blocks them.",
       "Reports the file system and its mount options, DAX state (statx and mount),\n"
       "the share of the file's extents that are 2 MiB aligned (FIEMAP), THP settings,\n"
       "tmpfs huge=, the block device and its NUMA node, the kernel, which verification\n"
       "methods work here, and the PAT memtype of a pmem range. Ends with\n"
       "'PMD mappings possible here: yes|no' and, for each blocker, the command that\n"
       "fixes it. PATH may be a file or a directory (the file system of a directory\n"
       "is examined; FIEMAP needs a file).\n\n"
       "Examples:\n  faultbench doctor /mnt/pmem0\n  faultbench doctor --json /dev/shm/test.dat\n\n"
       "Exit status: 0 report printed, 2 bad usage or PATH does not exist.",
       {"json"}},
  };
  return kSubcommands;
}

int RunDoctor(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::fprintf(stderr, "faultbench: doctor takes exactly one PATH (see 'faultbench help doctor')\n");
    return 2;
  }
  auto report = faultbench::doctor::Examine(args[0]);
  if (!report.ok()) {
    std::fprintf(stderr, "faultbench: %s\n", std::string(report.status().message()).c_str());
    return 2;
  }
  const std::string text = absl::GetFlag(FLAGS_json) ? faultbench::doctor::RenderJson(*report)
                                                     : faultbench::doctor::RenderText(*report);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = "faultbench";
  auto parsed = pmstore::base::ParseCommandLine(argc, argv, Subcommands());
  if (!parsed.ok()) {
    std::fprintf(stderr, "faultbench: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->help) {
    const std::string text =
        parsed->subcommand
            ? pmstore::base::SubcommandHelp(program, *parsed->subcommand)
            : pmstore::base::ProgramHelp(
                  program,
                  "faultbench: a page-fault study tool. Runs fio-style 4 KiB workloads over mmap'd\n"
                  "files with 4 KiB (PTE) or 2 MiB (PMD) mappings, NUMA-pinned, and verifies which\n"
                  "mapping the kernel really gave.",
                  Subcommands());
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  const std::string& name = parsed->subcommand->name;
  if (name == "doctor") return RunDoctor(parsed->args);
  std::fprintf(stderr, "faultbench: subcommand '%s' is not implemented\n", name.c_str());
  return 2;
}

// faultbench scale through the binary: every point of threads and
// processes, each task's faults, the point's signature and the curve; an
// anonymous folio size in processes, whose knobs the parent sets once and
// puts back. One at a time (RESOURCE_LOCK thp_knobs): it may set the
// machine's THP knobs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/thp.h"
#include "nlohmann/json.hpp"
#include "support/read_text.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace faultbench {
namespace {

// Under a sanitizer the copy's interceptor touches the shadow of the
// memory, and the first touch of each shadow page is the task's fault too
// (an eighth more under ASan, twice more under TSan): no upper bound then.
#ifdef PMSTORE_SANITIZE_BUILD
constexpr bool kShadowFaults = true;
#else
constexpr bool kShadowFaults = false;
#endif

// TSan refuses new threads in a child of a process with threads, and its
// own runtime has one: the processes' tasks start workers after fork.
CommandResult Scale(const std::string& args) {
  return RunCommand("TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}die_after_fork=0\" " +
                    std::string(FAULTBENCH_BINARY) + " scale " + args);
}

// 4 MiB of anonymous memory a task, written once: 1024 faults of 4 KiB each.
TEST(Scale, EveryPointRunsItsTasksAndCountsTheirFaults) {
  TempDir dir;
  const CommandResult r = Scale("--anon --size=4M --rw=write --mapping=pte --tasks=1,2 --repeat=2 --output-format=json "
                                "--plot=" + dir.File("scale.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["points"].size(), 4u) << "threads and processes, 1 and 2 tasks";
  for (const nlohmann::json& point : doc["points"]) {
    const int tasks = point["tasks"];
    ASSERT_EQ(point["runs"].size(), 2u);
    for (const nlohmann::json& run : point["runs"]) {
      ASSERT_EQ(run["tasks"].size(), static_cast<size_t>(tasks)) << point["mode"];
      for (const nlohmann::json& task : run["tasks"]) {
        EXPECT_GE(task["faults"].get<uint64_t>(), 1024u) << "a fault per 4 KiB page written";
        if (!kShadowFaults) {
          EXPECT_LE(task["faults"].get<uint64_t>(), 1024u + 64) << "and little else";
        }
        EXPECT_GT(task["faults_per_s"].get<double>(), 0);
      }
      // The point's signature counts every task's faults, in either mode.
      EXPECT_GE(run["signature"]["faults"].get<uint64_t>(), 1024u * tasks) << point["mode"];
      if (geteuid() == 0) {
        EXPECT_EQ(run["signature"]["folio_sizes"]["4K"], 1024 * tasks) << point["mode"];
      }
    }
    EXPECT_GT(point["total_faults_per_s"]["median"].get<double>(), 0);
  }
  const std::string svg = ReadText(dir.File("scale.svg"));
  EXPECT_NE(svg.find(">threads<"), std::string::npos);
  EXPECT_NE(svg.find(">processes<"), std::string::npos);
}

TEST(Scale, ProcessesGetTheFolioSizeAndTheKnobsComeBack) {
  if (geteuid() != 0 || ReadMthpSizes().empty()) GTEST_SKIP() << "needs root and the per-size THP knobs (6.8+)";
  const std::string knob = std::string(kThpDir) + "/hugepages-64kB/enabled";
  const std::string before = SelectedChoice(ReadFirstLine(knob));
  const CommandResult r = Scale("--anon --size=4M --rw=write --mapping=64K --tasks=2 --mode=processes --repeat=1 "
                                "--output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json run = nlohmann::json::parse(r.out)["points"][0]["runs"][0];
  EXPECT_EQ(run["signature"]["folio_sizes"]["64K"], 2 * 64) << "two tasks of 4 MiB in 64 KiB folios";
  // The check of 64K; other sizes may show what other processes did meanwhile.
  bool checked = false;
  for (const nlohmann::json& check : run["signature"]["folio_checks"]) {
    if (check["size"] != "64K") continue;
    checked = true;
    EXPECT_TRUE(check["agree"].get<bool>()) << check;
  }
  EXPECT_TRUE(checked) << run["signature"]["folio_checks"];
  EXPECT_EQ(SelectedChoice(ReadFirstLine(knob)), before);
}

TEST(Scale, BadUsageIsOneLine) {
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--anon --size=4M --tasks=0", "is not a number of tasks"},
           {"--anon --size=4M --mode=fibers", "use threads, processes"},
           {"--anon --size=4M --numjobs=2", "drop --numjobs"},
           {"--anon --size=4M --repeat=auto", "is not a count"}}) {
    const CommandResult r = Scale(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace faultbench

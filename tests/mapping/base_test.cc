#include <gtest/gtest.h>

#include "absl/flags/flag.h"
#include "pmstore/base/cli.h"
#include "pmstore/base/cpu_flags.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/units.h"

ABSL_FLAG(int, cli_test_count, 1, "a number");
ABSL_FLAG(bool, cli_test_verbose, false, "a switch");
ABSL_FLAG(std::string, cli_test_name, "", "a name");

namespace pmstore::base {
namespace {

TEST(ParseSizeTest, AcceptsFioSuffixesAsPowersOf1024) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseSize("2M"), 2u << 20);
  EXPECT_EQ(*ParseSize("2mb"), 2u << 20);
  EXPECT_EQ(*ParseSize("1g"), 1ull << 30);
  EXPECT_EQ(*ParseSize("3T"), 3ull << 40);
}

TEST(ParseSizeTest, RejectsGarbageWithAMessageThatShowsTheSyntax) {
  for (const char* bad : {"", "k", "-1", "12q", "1.5g", "4 k"}) {
    auto size = ParseSize(bad);
    ASSERT_FALSE(size.ok()) << bad;
    EXPECT_NE(size.status().message().find("e.g. 4k"), std::string::npos) << size.status();
  }
  EXPECT_EQ(ParseSize("99999999999999t").status().code(), absl::StatusCode::kOutOfRange);
}

TEST(RoundUpTest, RoundsToTheMultiple) {
  EXPECT_EQ(RoundUp(1, kHugePageSize), kHugePageSize);
  EXPECT_EQ(RoundUp(kHugePageSize, kHugePageSize), kHugePageSize);
  EXPECT_EQ(RoundUp(kHugePageSize + 1, kHugePageSize), 2 * kHugePageSize);
  EXPECT_EQ(RoundDown(kHugePageSize + 1, kHugePageSize), kHugePageSize);
}

TEST(FormatBytesTest, UsesBinaryUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(2u << 20), "2.0 MiB");
  EXPECT_EQ(FormatBytes(3ull << 29), "1.5 GiB");
}

TEST(CpuFlagsTest, TakesTheFirstProcessorsFlagsAsWholeWords) {
  const auto flags = ParseCpuFlags(
      "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu constant_tsc nonstop_tsc_s3 hypervisor\n\n"
      "processor\t: 1\nflags\t\t: fpu nonstop_tsc\n");
  EXPECT_TRUE(flags.contains("constant_tsc"));
  EXPECT_TRUE(flags.contains("hypervisor"));
  EXPECT_FALSE(flags.contains("nonstop_tsc")) << "nonstop_tsc_s3 is another flag, and processor 1 is not read";
  EXPECT_FALSE(flags.contains("AMD"));
  EXPECT_TRUE(ParseCpuFlags("processor\t: 0\n").empty());
}

TEST(ErrnoStatusTest, MapsErrnoToCodeAndNamesCallAndFile) {
  absl::Status s = ErrnoStatus(ENOSPC, "fallocate", "/mnt/pool");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "fallocate(/mnt/pool): No space left on device");
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "x").code(), absl::StatusCode::kNotFound);
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::SetFlag(&FLAGS_cli_test_count, 1);
    absl::SetFlag(&FLAGS_cli_test_verbose, false);
    absl::SetFlag(&FLAGS_cli_test_name, "");
  }
  absl::StatusOr<ParsedCommandLine> Parse(std::vector<std::string> args) {
    args.insert(args.begin(), "/usr/bin/tool");
    argv_.clear();
    for (auto& a : args) argv_.push_back(a.data());
    return ParseCommandLine(static_cast<int>(argv_.size()), argv_.data(), subcommands_);
  }
  std::vector<Subcommand> subcommands_ = {
      {"go", "go [flags] ARG", "Go.", "", {"cli_test_count", "cli-test-verbose"}},
      {"other", "other", "Other.", "", {"cli_test_name"}},
  };
  std::vector<char*> argv_;
};

TEST_F(CliTest, SetsFlagsInEverySpellingAndKeepsPositionals) {
  auto parsed = Parse({"go", "--cli-test-count=5", "first", "--cli_test_verbose", "second"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->subcommand->name, "go");
  EXPECT_EQ(parsed->args, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(absl::GetFlag(FLAGS_cli_test_count), 5);
  EXPECT_TRUE(absl::GetFlag(FLAGS_cli_test_verbose));

  ASSERT_TRUE(Parse({"go", "--cli-test-count", "7", "--nocli-test-verbose"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_cli_test_count), 7);
  EXPECT_FALSE(absl::GetFlag(FLAGS_cli_test_verbose));
}

TEST_F(CliTest, RejectsFlagsOfAnotherSubcommandAndNamesTheHelpCommand) {
  auto parsed = Parse({"go", "--cli-test-name=x"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "unknown flag --cli-test-name for 'go' (see 'tool help go')");
  EXPECT_EQ(absl::GetFlag(FLAGS_cli_test_name), "");
}

TEST_F(CliTest, RejectsBadValuesUnknownSubcommandsAndMissingValues) {
  EXPECT_NE(Parse({"go", "--cli-test-count=many"}).status().message().find("bad value 'many'"), std::string::npos);
  EXPECT_NE(Parse({"went"}).status().message().find("unknown subcommand 'went'"), std::string::npos);
  EXPECT_NE(Parse({"go", "--cli-test-count"}).status().message().find("needs a value"), std::string::npos);
  EXPECT_FALSE(Parse({}).ok());
  EXPECT_FALSE(Parse({"go", "-x"}).ok());
}

TEST_F(CliTest, DoubleDashEndsFlagsAndHelpIsRecognised) {
  auto parsed = Parse({"go", "--", "--cli-test-count=3"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->args, (std::vector<std::string>{"--cli-test-count=3"}));
  EXPECT_EQ(absl::GetFlag(FLAGS_cli_test_count), 1);
  EXPECT_TRUE(Parse({"help", "go"})->help);
  EXPECT_TRUE(Parse({"go", "--help"})->help);
  EXPECT_EQ(Parse({"--help"})->subcommand, nullptr);
}

TEST_F(CliTest, SubcommandHelpListsEachFlagWithItsDefault) {
  const std::string help = SubcommandHelp("tool", subcommands_[0]);
  EXPECT_NE(help.find("Usage: tool go [flags] ARG"), std::string::npos);
  EXPECT_NE(help.find("--cli-test-count\n      a number (default: 1)"), std::string::npos) << help;
  EXPECT_NE(help.find("--cli-test-verbose"), std::string::npos);
}

}  // namespace
}  // namespace pmstore::base

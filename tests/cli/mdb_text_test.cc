// mdb_dump's text format: what the writer puts out, byte for byte, and
// what the reader accepts, decodes and refuses (with the line it was on).
#include "pmstore/cli/mdb_text.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace pmstore::cli {
namespace {

std::string Written(MdbTextFormat format, const std::vector<std::pair<std::string, std::string>>& entries) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  MdbTextWriter writer(out, format);
  writer.WriteHeader(1 << 30);
  for (const auto& [key, value] : entries) writer.WriteEntry(key, value);
  writer.WriteFooter();
  EXPECT_TRUE(writer.ok());
  std::fclose(out);
  std::string text(data, size);
  std::free(data);
  return text;
}

struct Read {
  absl::Status status;
  std::vector<std::pair<std::string, std::string>> entries;
  int sections = 0;
  std::vector<std::string> notes;
};

Read ReadAll(const std::string& text) {
  std::FILE* in = fmemopen(const_cast<char*>(text.data()), text.size(), "r");
  MdbTextReader reader(in, "dump.txt");
  Read read;
  std::string key, value;
  while (true) {
    absl::StatusOr<bool> section = reader.NextSection();
    if (!section.ok() || !*section) {
      read.status = section.status();
      break;
    }
    ++read.sections;
    absl::StatusOr<bool> entry;
    while ((entry = reader.NextEntry(&key, &value)).ok() && *entry) read.entries.emplace_back(key, value);
    if (!entry.ok()) {
      read.status = entry.status();
      break;
    }
  }
  read.notes = reader.notes();
  std::fclose(in);
  return read;
}

const std::string kHeader = "VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n";

void ExpectRefused(const std::string& text, const std::string& words) {
  const Read read = ReadAll(text);
  EXPECT_TRUE(absl::IsInvalidArgument(read.status)) << read.status;
  EXPECT_NE(read.status.message().find(words), std::string::npos) << read.status;
  EXPECT_EQ(read.status.message().find('\n'), std::string::npos) << "one line: " << read.status;
}

TEST(MdbTextTest, HexDumpIsWhatMdbDumpWrites) {
  const std::string text = Written(MdbTextFormat::kByteValue, {{"a\\b", std::string("x\x01y\n", 4)}, {"k2", ""}});
  EXPECT_EQ(text, absl::StrCat("VERSION=3\nformat=bytevalue\ntype=btree\nmapsize=1073741824\nmaxreaders=126\n"
                               "db_pagesize=",
                               sysconf(_SC_PAGESIZE), "\nHEADER=END\n 615c62\n 7801790a\n 6b32\n \nDATA=END\n"));
}

TEST(MdbTextTest, PrintDumpEscapesEverythingButPrintableAsciiAndEscapesBackslashAsHex) {
  const std::string text = Written(MdbTextFormat::kPrint, {{"a\\b", std::string("x\x01 ~\x7f\xff", 6)}});
  EXPECT_NE(text.find("format=print\n"), std::string::npos);
  EXPECT_NE(text.find("HEADER=END\n a\\5cb\n x\\01 ~\\7f\\ff\nDATA=END\n"), std::string::npos) << text;
}

TEST(MdbTextTest, EveryByteRoundTripsInBothFormats) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::vector<std::pair<std::string, std::string>> entries = {{all, all}, {"", "empty key"}, {"k", ""}};
  for (MdbTextFormat format : {MdbTextFormat::kByteValue, MdbTextFormat::kPrint}) {
    const Read read = ReadAll(Written(format, entries));
    ASSERT_TRUE(read.status.ok()) << read.status;
    EXPECT_EQ(read.entries, entries);
    EXPECT_TRUE(read.notes.empty());
  }
}

TEST(MdbTextTest, PrintDecodingReadsWhatLmdbWrites) {
  // LMDB 0.9.24's mdb_dump -p leaves a backslash unescaped; "\\" is what
  // mdb_load and Berkeley DB's db_load read as one backslash.
  const Read read = ReadAll("VERSION=3\nformat=print\ntype=btree\nHEADER=END\n a\\b\n x\\01y\\z\\0Aw\n q\\\\\\\\r\n"
                            " trailing\\\nDATA=END\n");
  ASSERT_TRUE(read.status.ok()) << read.status;
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[0], (std::pair<std::string, std::string>{"a\\b", std::string("x\x01y\\z\nw", 7)}));
  EXPECT_EQ(read.entries[1], (std::pair<std::string, std::string>{"q\\\\r", "trailing\\"}));
}

TEST(MdbTextTest, UpperCaseHexAndSeveralSectionsAreRead) {
  const Read read = ReadAll(kHeader + " 4B\n 56\nDATA=END\n" + kHeader + " 6b32\n \nDATA=END\n");
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_EQ(read.sections, 2);
  EXPECT_EQ(read.entries, (std::vector<std::pair<std::string, std::string>>{{"K", "V"}, {"k2", ""}}));
}

TEST(MdbTextTest, EmptyInputHasNoSection) {
  const Read read = ReadAll("");
  EXPECT_TRUE(read.status.ok());
  EXPECT_EQ(read.sections, 0);
}

TEST(MdbTextTest, InputAPoolCannotHoldIsRefusedAtItsHeader) {
  ExpectRefused("VERSION=3\nformat=bytevalue\ndatabase=users\ntype=btree\nHEADER=END\n", "line 3: named sub-database 'users'");
  ExpectRefused("VERSION=3\nformat=bytevalue\ntype=btree\nduplicates=1\ndupsort=1\nHEADER=END\n",
                "line 4: a DUPSORT database (duplicates=1)");
  ExpectRefused("VERSION=3\ndupfixed=1\nHEADER=END\n", "DUPSORT");
}

TEST(MdbTextTest, HeadersOfOtherFormatsAreRefused) {
  ExpectRefused("VERSION=4\nHEADER=END\n", "line 1: unsupported VERSION 4");
  ExpectRefused("VERSION=3\nformat=base64\nHEADER=END\n", "line 2: unsupported format base64");
  ExpectRefused("VERSION=3\ntype=hash\nHEADER=END\n", "unsupported type hash");
  ExpectRefused("this is not a dump\n", "line 1: not a header line");
  ExpectRefused("VERSION=3\nformat=bytevalue\n", "ends inside a header");
}

TEST(MdbTextTest, BadDataLinesAreRefusedWithTheirLine) {
  ExpectRefused(kHeader + " 6b\n 767\nDATA=END\n", "line 6: an odd number of hex digits");
  ExpectRefused(kHeader + " 6g\n 76\nDATA=END\n", "line 5: not a hex digit");
  ExpectRefused(kHeader + " 6b\nDATA=END\n", "line 6: a key without a value line");
  ExpectRefused(kHeader + "6b\n 76\nDATA=END\n", "line 5: expected a data line");
  ExpectRefused(kHeader + " 6b\n 76\n", "line 6: the input ends before DATA=END: the dump is truncated");
}

TEST(MdbTextTest, KeyOrderFlagsAndUnknownKeywordsAreNotedNotRefused) {
  const Read read = ReadAll("VERSION=3\nformat=bytevalue\ntype=btree\nintegerkey=1\nfrobnicate=7\nmapsize=1\n"
                            "HEADER=END\n 01000000\n 76\nDATA=END\n");
  ASSERT_TRUE(read.status.ok()) << read.status;
  ASSERT_EQ(read.notes.size(), 2u);
  EXPECT_NE(read.notes[0].find("integerkey: LMDB ordered these keys as native integers"), std::string::npos);
  EXPECT_NE(read.notes[1].find("line 5: unrecognized keyword ignored: frobnicate"), std::string::npos);
  EXPECT_EQ(read.entries.size(), 1u);
}

}  // namespace
}  // namespace pmstore::cli

// What a mapping may ask for (pmstore/mapping/mapping.h PageIntent): the
// names users give, the sizes and names they stand for.
#include <gtest/gtest.h>

#include "pmstore/mapping/mapping.h"

namespace pmstore::mapping {
namespace {

TEST(PageIntentTest, FolioSizesParseInTheSpellingsUsersWrite) {
  for (const char* name : {"64K", "64k", "64KiB", "64kb"}) {
    auto intent = ParsePageIntent(name);
    ASSERT_TRUE(intent.ok()) << name << ": " << intent.status();
    EXPECT_EQ(*intent, PageIntent::Folio(64 << 10)) << name;
  }
  EXPECT_EQ(*ParsePageIntent("1M"), PageIntent::Folio(1 << 20));
  EXPECT_EQ(*ParsePageIntent("1024K"), PageIntent::Folio(1 << 20));
  EXPECT_EQ(*ParsePageIntent("8K"), PageIntent::Folio(8 << 10));
}

TEST(PageIntentTest, PageSizesNameTheirIntents) {
  EXPECT_EQ(*ParsePageIntent("4K"), PageIntent::kPte);
  EXPECT_EQ(*ParsePageIntent("2M"), PageIntent::kPmd);
  EXPECT_EQ(*ParsePageIntent("1G"), PageIntent::kPud);
  EXPECT_EQ(*ParsePageIntent("PMD"), PageIntent::kPmd);
  EXPECT_EQ(*ParsePageIntent("auto"), PageIntent::kAuto);
}

TEST(PageIntentTest, SizesThatNoFolioHasAreRefusedWithTheRule) {
  for (const char* name : {"48K", "4M", "512M", "0K", "K", "64Q", "big"}) {
    const auto intent = ParsePageIntent(name);
    EXPECT_FALSE(intent.ok()) << name;
  }
  const auto odd = ParsePageIntent("48K");
  EXPECT_NE(odd.status().message().find("a power of two from 8K to 1M"), std::string::npos) << odd.status();
}

TEST(PageIntentTest, EveryFolioSizeHasItsNameAndSize) {
  for (uint64_t size = PageIntent::kMinFolio; size <= PageIntent::kMaxFolio; size *= 2) {
    const PageIntent intent = PageIntent::Folio(size);
    EXPECT_TRUE(intent.is_folio());
    EXPECT_EQ(IntentPageSize(intent), size);
    EXPECT_EQ(std::string(PageIntentName(intent)), SizeName(size));
    EXPECT_EQ(*ParsePageIntent(PageIntentName(intent)), intent) << "the name parses back";
  }
  EXPECT_EQ(SizeName(4096), "4K");
  EXPECT_EQ(SizeName(2 << 20), "2M");
  EXPECT_EQ(SizeName(1ull << 30), "1G");
  EXPECT_FALSE(PageIntent::kPmd.is_folio());
  EXPECT_NE(PageIntent::Folio(16 << 10), PageIntent::Folio(32 << 10));
}

}  // namespace
}  // namespace pmstore::mapping

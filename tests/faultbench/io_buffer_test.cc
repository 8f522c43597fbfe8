// The write buffer's scramble: every block of a write, the last one shorter
// than 512 bytes included, carries the stamp and the write's offset.
#include "faultbench/run/io_buffer.h"

#include <gtest/gtest.h>

#include <cstring>

namespace faultbench {
namespace {

uint64_t Word(const char* at) {
  uint64_t value = 0;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

// Every block of min(512, what is left) bytes holds the stamp at the end of
// its first cache line and its own file offset at the start of one of its lines.
void ExpectEveryBlockStamped(uint64_t bs, uint64_t offset, uint64_t stamp) {
  auto buffer = IoBuffer::Make(bs, "", 7);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  buffer->Scramble(offset, stamp);
  const char* data = buffer->data();
  for (uint64_t start = 0; start < bs; start += 512) {
    const uint64_t bytes = std::min<uint64_t>(512, bs - start);
    SCOPED_TRACE(testing::Message() << "bs=" << bs << ", block at " << start << " of " << bytes << " bytes");
    EXPECT_EQ(Word(data + start + 48), stamp);
    EXPECT_EQ(Word(data + start + 56), (offset + start) ^ stamp);
    bool offset_found = false;
    for (uint64_t line = 0; line < bytes; line += 64) offset_found |= Word(data + start + line) == offset + start;
    EXPECT_TRUE(offset_found);
  }
}

TEST(IoBufferScramble, StampsWritesShorterThan512Bytes) {
  for (uint64_t bs : {64, 128, 256, 448}) ExpectEveryBlockStamped(bs, 1 << 20, 0x1234567890ull);
}

TEST(IoBufferScramble, StampsTheShortLastBlockOfALongerWrite) {
  for (uint64_t bs : {576, 1088, 4096 + 192}) ExpectEveryBlockStamped(bs, 3 << 20, 0xABCDEFull);
}

TEST(IoBufferScramble, StampsEveryWholeBlockAsFioDoes) {
  for (uint64_t stamp = 0; stamp < 8; ++stamp) ExpectEveryBlockStamped(4096, 8192, stamp);
}

TEST(IoBufferScramble, TwoWritesOfOneBufferDiffer) {
  auto buffer = IoBuffer::Make(128, "", 1);
  ASSERT_TRUE(buffer.ok());
  buffer->Scramble(0, 1);
  const std::string first(buffer->data(), 128);
  buffer->Scramble(128, 2);
  EXPECT_NE(std::string(buffer->data(), 128), first);
}

TEST(IoBufferScramble, RefusesASizeThatIsNotAMultipleOf64) {
  EXPECT_FALSE(IoBuffer::Make(100, "", 1).ok());
}

}  // namespace
}  // namespace faultbench

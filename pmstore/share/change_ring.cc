#include "pmstore/share/change_ring.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/share/region_layout.h"

namespace pmstore::internal {
namespace {

// An entry: this header, then the payload, padded to 8 bytes. Positions
// count bytes since the region was made and never wrap; an entry may
// straddle the ring's end.
struct EntryHeader {
  uint64_t commit;
  uint32_t length;  // payload bytes
  uint8_t kind;
  uint8_t mark;  // kEntryMark or kFillerMark: anything else is not an entry
  uint16_t unused;
};
static_assert(sizeof(EntryHeader) == 16);

constexpr uint8_t kEntryMark = 0xc5;
// What a dead writer staged and never published, covered over by the
// next holder: readers step over it.
constexpr uint8_t kFillerMark = 0xf1;

uint64_t EntryBytes(uint64_t payload) { return sizeof(EntryHeader) + ((payload + 7) & ~uint64_t{7}); }

// The ring's bytes are copied while a writer may overwrite them, as a
// seqlock's readers copy: a copy is used only once the reservation,
// loaded after it, shows that the writer had not reached it.
void CopyOut(const char* ring, uint64_t position, void* to, size_t n) {
  const size_t at = position % kChangeRingBytes;
  const size_t first = std::min(n, kChangeRingBytes - at);
  std::memcpy(to, ring + at, first);
  std::memcpy(static_cast<char*>(to) + first, ring, n - first);
}

void CopyIn(char* ring, uint64_t position, const void* from, size_t n) {
  const size_t at = position % kChangeRingBytes;
  const size_t first = std::min(n, kChangeRingBytes - at);
  std::memcpy(ring + at, from, first);
  std::memcpy(ring, static_cast<const char*>(from) + first, n - first);
}

// Whether the bytes from `position` on that a reader copied are still
// the ones written there: the writer has not reserved past them a lap on.
bool StillThere(void* region, uint64_t position) {
  std::atomic_thread_fence(std::memory_order_acquire);
  return region::RingWordsOf(region)->reserved.load(std::memory_order_relaxed) <= position + kChangeRingBytes;
}

}  // namespace

void ChangeRing::MakeIn(void* region) {
  region::PublishedOf(region)->commit.store(0, std::memory_order_relaxed);
  region::PublishedOf(region)->written.store(0, std::memory_order_relaxed);
  region::PublishedOf(region)->applying.store(0, std::memory_order_relaxed);
  region::RingWordsOf(region)->reserved.store(0, std::memory_order_relaxed);
}

absl::Status ChangeRing::Stage(uint64_t commit, uint8_t kind, std::string_view payload) {
  if (payload.size() > kMaxChangePayload) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": a change of ", payload.size(),
                                                   " bytes is over the ring's limit of ", kMaxChangePayload));
  }
  std::atomic<uint64_t>& reserved = region::RingWordsOf(region_)->reserved;
  const uint64_t at = reserved.load(std::memory_order_relaxed);  // only the turn's holder writes it
  reserved.store(at + EntryBytes(payload.size()), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // the reservation before the bytes it covers
  const EntryHeader header = {
      .commit = commit, .length = static_cast<uint32_t>(payload.size()), .kind = kind, .mark = kEntryMark, .unused = 0};
  char* ring = region::RingOf(region_);
  CopyIn(ring, at, &header, sizeof(header));
  CopyIn(ring, at + sizeof(header), payload.data(), payload.size());
  return absl::OkStatus();
}

void ChangeRing::BeginApplying(uint64_t commit) {
  region::PublishedOf(region_)->applying.store(commit, std::memory_order_relaxed);
  // A reader that loads a leaf version word the writer stores next, with
  // acquire order, then loads this one sees the commit (or the 0 stored
  // once it is applied).
  std::atomic_thread_fence(std::memory_order_release);
}

void ChangeRing::Publish(uint64_t commit) {
  region::PublishedWords* published = region::PublishedOf(region_);
  published->written.store(region::RingWordsOf(region_)->reserved.load(std::memory_order_relaxed),
                           std::memory_order_release);
  published->commit.store(commit + 1, std::memory_order_release);
  published->applying.store(0, std::memory_order_release);
}

void ChangeRing::CountRecovery() {
  std::atomic<uint64_t>& recoveries = region::PublishedOf(region_)->recoveries;
  recoveries.store(recoveries.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // A seqlock's writer: a reader that sees a word the recovery writes next
  // sees the count.
  std::atomic_thread_fence(std::memory_order_release);
}

uint64_t ChangeRing::recoveries() const {
  std::atomic_thread_fence(std::memory_order_acquire);
  return region::PublishedOf(region_)->recoveries.load(std::memory_order_relaxed);
}

uint64_t ChangeRing::applying() const {
  return region::PublishedOf(region_)->applying.load(std::memory_order_acquire);
}

void ChangeRing::DropStaged() {
  // The reservation never moves back (a reader's check of its copy reads
  // it), so what was staged is covered by one filler entry instead.
  const uint64_t written = region::PublishedOf(region_)->written.load(std::memory_order_relaxed);
  const uint64_t reserved = region::RingWordsOf(region_)->reserved.load(std::memory_order_relaxed);
  if (reserved == written) return;
  const EntryHeader filler = {.commit = 0,
                              .length = static_cast<uint32_t>(reserved - written - sizeof(EntryHeader)),
                              .kind = 0,
                              .mark = kFillerMark,
                              .unused = 0};
  CopyIn(region::RingOf(region_), written, &filler, sizeof(filler));
  region::PublishedOf(region_)->written.store(reserved, std::memory_order_release);
}

std::optional<uint64_t> ChangeRing::published() const {
  const uint64_t word = region::PublishedOf(region_)->commit.load(std::memory_order_acquire);
  return word == 0 ? std::nullopt : std::optional<uint64_t>(word - 1);
}

bool ChangeRing::Quiet(std::optional<uint64_t> commit) const { return applying() == 0 && published() == commit; }

bool ChangeRing::StillQuiet(std::optional<uint64_t> commit) const {
  std::atomic_thread_fence(std::memory_order_acquire);
  return Quiet(commit);
}

ChangeRing::Cursor ChangeRing::Now() const {
  return Cursor{region::PublishedOf(region_)->written.load(std::memory_order_acquire)};
}

absl::StatusOr<ChangeRing::Followed> ChangeRing::Follow(Cursor* cursor, uint64_t through,
                                                        std::vector<Change>* changes) const {
  const char* ring = region::RingOf(region_);
  const uint64_t written = region::PublishedOf(region_)->written.load(std::memory_order_acquire);
  const size_t had = changes->size();
  auto overrun = [&] {
    changes->resize(had);
    return Followed::kOverrun;
  };
  auto not_an_entry = [&](uint64_t at) {
    changes->resize(had);
    return absl::DataLossError(absl::StrCat(path_, ": the pool's change ring holds no entry at byte ", at,
                                            " of those written: the lock region was written by something "
                                            "other than pmstore. Close the pool in every process"));
  };
  uint64_t at = cursor->position;
  if (written < at) return not_an_entry(at);
  if (written - at > kChangeRingBytes) return overrun();
  while (at < written) {
    EntryHeader header;
    CopyOut(ring, at, &header, sizeof(header));
    const uint64_t bytes = EntryBytes(header.length);
    const bool filler = header.mark == kFillerMark;
    if ((header.mark != kEntryMark && !filler) || bytes > written - at ||
        (!filler && header.length > kMaxChangePayload)) {
      if (!StillThere(region_, at)) return overrun();
      return not_an_entry(at);
    }
    if (filler) {
      if (!StillThere(region_, at)) return overrun();
      at += bytes;
      continue;
    }
    if (header.commit > through) {  // published after the commit asked for
      if (!StillThere(region_, at)) return overrun();
      break;
    }
    Change change{.commit = header.commit, .kind = header.kind, .payload = std::string(header.length, '\0')};
    CopyOut(ring, at + sizeof(header), change.payload.data(), header.length);
    if (!StillThere(region_, at)) return overrun();
    changes->push_back(std::move(change));
    at += bytes;
  }
  cursor->position = at;
  return Followed::kCaughtUp;
}

}  // namespace pmstore::internal

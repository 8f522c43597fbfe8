#include "pmstore/space/space_journal.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"

namespace pmstore::internal {
namespace {

constexpr size_t kHeaderBytes = 2 * 8 + 3 * 4;
constexpr size_t kWordBytes = 8;
constexpr size_t kTakenBytes = 16;
constexpr size_t kFreedBytes = 24;

void Append(std::string* out, const void* bytes, size_t n) { out->append(static_cast<const char*>(bytes), n); }
void Append64(std::string* out, uint64_t value) { Append(out, &value, 8); }
void Append32(std::string* out, uint32_t value) { Append(out, &value, 4); }

// A part with entries [words, taken, freed) from the `from` positions of
// each list, as many as `max_bytes` holds; moves the positions on.
std::string EncodePart(const SpaceJournal& journal, size_t max_bytes, size_t* word, size_t* taken, size_t* freed) {
  size_t room = max_bytes > kHeaderBytes ? max_bytes - kHeaderBytes : 0;
  const auto take = [&room](size_t left, size_t bytes) {
    const size_t n = std::min(left, room / bytes);
    room -= n * bytes;
    return n;
  };
  const size_t words = take(journal.chunk_words.size() - *word, kWordBytes);
  const size_t takens = take(journal.taken.size() - *taken, kTakenBytes);
  const size_t freeds = take(journal.freed.size() - *freed, kFreedBytes);
  std::string out;
  out.reserve(kHeaderBytes + words * kWordBytes + takens * kTakenBytes + freeds * kFreedBytes);
  Append64(&out, journal.num_chunks);
  Append64(&out, journal.released_through);
  Append32(&out, static_cast<uint32_t>(words));
  Append32(&out, static_cast<uint32_t>(takens));
  Append32(&out, static_cast<uint32_t>(freeds));
  for (size_t i = 0; i < words; ++i) Append64(&out, journal.chunk_words[*word + i]);
  for (size_t i = 0; i < takens; ++i) {
    Append64(&out, journal.taken[*taken + i].offset);
    Append64(&out, journal.taken[*taken + i].units);
  }
  for (size_t i = 0; i < freeds; ++i) {
    const Quarantine::Item& item = journal.freed[*freed + i];
    Append64(&out, static_cast<uint64_t>(item.kind));
    Append64(&out, item.offset);
    Append64(&out, item.count);
  }
  *word += words;
  *taken += takens;
  *freed += freeds;
  return out;
}

uint64_t Load64(const char* at) {
  uint64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

}  // namespace

std::vector<std::string> EncodeSpaceJournal(const SpaceJournal& journal, size_t max_bytes) {
  // A part must carry at least its largest entry, or it would never end.
  max_bytes = std::max(max_bytes, kHeaderBytes + kFreedBytes);
  std::vector<std::string> parts;
  size_t word = 0, taken = 0, freed = 0;
  do {
    parts.push_back(EncodePart(journal, max_bytes, &word, &taken, &freed));
  } while (word < journal.chunk_words.size() || taken < journal.taken.size() || freed < journal.freed.size());
  return parts;
}

absl::StatusOr<SpaceJournal> DecodeSpaceJournal(std::string_view payload) {
  const auto damaged = [] { return absl::DataLossError("a space change in the change ring is damaged"); };
  if (payload.size() < kHeaderBytes) return damaged();
  SpaceJournal journal;
  uint32_t counts[3];
  journal.num_chunks = Load64(payload.data());
  journal.released_through = Load64(payload.data() + 8);
  std::memcpy(counts, payload.data() + 16, sizeof(counts));
  const uint64_t expected = kHeaderBytes + uint64_t{counts[0]} * kWordBytes + uint64_t{counts[1]} * kTakenBytes +
                            uint64_t{counts[2]} * kFreedBytes;
  if (payload.size() != expected) return damaged();
  const char* at = payload.data() + kHeaderBytes;
  journal.chunk_words.resize(counts[0]);
  for (uint64_t& chunk : journal.chunk_words) {
    chunk = Load64(at);
    at += kWordBytes;
  }
  journal.taken.resize(counts[1]);
  for (SpaceJournal::Taken& taken : journal.taken) {
    taken = {Load64(at), Load64(at + 8)};
    at += kTakenBytes;
  }
  journal.freed.resize(counts[2]);
  for (Quarantine::Item& item : journal.freed) {
    const uint64_t kind = Load64(at);
    if (kind > static_cast<uint64_t>(Quarantine::Kind::kCell)) return damaged();
    item = {static_cast<Quarantine::Kind>(kind), Load64(at + 8), Load64(at + 16)};
    at += kFreedBytes;
  }
  return journal;
}

}  // namespace pmstore::internal

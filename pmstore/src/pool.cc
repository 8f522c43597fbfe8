#include "pmstore/src/pool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <map>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/src/persist_site.h"
#include "pmstore/src/record.h"

namespace pmstore::internal {
namespace {

using base::RoundUp;

Granularity Public(mapping::Granularity g) {
  switch (g) {
    case mapping::Granularity::kByte: return Granularity::kByte;
    case mapping::Granularity::kCacheLine: return Granularity::kCacheLine;
    case mapping::Granularity::kPage: return Granularity::kPage;
  }
  return Granularity::kPage;
}

// Weaker granularities are larger enum values.
bool AtLeast(Granularity have, Granularity want) { return static_cast<int>(have) <= static_cast<int>(want); }

uint64_t HeapOffset(uint64_t max_chunks) { return RoundUp(kChunkTableOffset + max_chunks * 8, kChunkSize); }

// An OFD lock excludes every other open of the file, this process's
// included; a classic POSIX lock on the next byte only lets a loser learn
// the holder's pid (OFD locks report none).
absl::Status LockPool(int fd, const std::string& path) {
  struct flock lock = {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 1;
  if (fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    const int err = errno;
    if (err != EAGAIN && err != EACCES) return base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
    struct flock query = {};
    query.l_type = F_WRLCK;
    query.l_whence = SEEK_SET;
    query.l_start = 1;
    query.l_len = 1;
    std::string holder = "another open of it in this process";
    if (fcntl(fd, F_GETLK, &query) == 0 && query.l_type != F_UNLCK) holder = absl::StrCat("process ", query.l_pid);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": pool in use by ", holder, " (a pool is open in one place at a time: close it there first)"));
  }
  struct flock marker = lock;
  marker.l_start = 1;
  fcntl(fd, F_SETLK, &marker);  // best effort: only feeds the message above
  return absl::OkStatus();
}

absl::Status CheckSuperblock(const Superblock& sb, uint64_t file_size, const std::string& path) {
  if (std::memcmp(sb.magic, kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a pmstore pool (bad magic)"));
  }
  if (sb.version < kOldestFormatVersion || sb.version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": unsupported pool format version ", sb.version,
                                                      " (this library reads versions ", kOldestFormatVersion, " to ",
                                                      kFormatVersion, ")"));
  }
  if (sb.checksum != SuperblockChecksum(sb)) {
    return absl::DataLossError(absl::StrCat(path, ": checksum failure in the superblock"));
  }
  if (sb.superblock_size != sizeof(Superblock) || sb.unit_size != kUnitSize || sb.chunk_size != kChunkSize ||
      sb.leaf_slots != kLeafSlots || sb.root_offset != kRootOffset || sb.log_offset != kLogOffset ||
      sb.log_slot_size != kLogSlotSize || sb.chunk_table_offset != kChunkTableOffset ||
      sb.max_chunks == 0 || sb.max_chunks > (1ull << 32) || sb.heap_offset != HeapOffset(sb.max_chunks)) {
    return absl::DataLossError(absl::StrCat(path, ": superblock describes an impossible layout"));
  }
  if (file_size < sb.heap_offset + kChunkSize) {
    return absl::DataLossError(absl::StrCat(path, ": truncated file: ", file_size, " bytes, a pool needs at least ",
                                            sb.heap_offset + kChunkSize));
  }
  return absl::OkStatus();
}

absl::StatusOr<Superblock> ReadSuperblock(int fd, uint64_t file_size, const std::string& path) {
  Superblock sb;
  if (file_size < sizeof(sb)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a pmstore pool (", file_size, " bytes, shorter than a pool header)"));
  }
  const ssize_t n = pread(fd, &sb, sizeof(sb), 0);
  if (n < 0) return base::ErrnoStatus(errno, "pread", path);
  if (static_cast<size_t>(n) != sizeof(sb)) return absl::DataLossError(absl::StrCat(path, ": short read of the superblock"));
  PMSTORE_RETURN_IF_ERROR(CheckSuperblock(sb, file_size, path));
  return sb;
}

// Everything but the magic, persisted; then the magic and checksum.
absl::Status Format(Pool& pool, Persister& persister) {
  char* base = pool.base();
  Superblock& sb = pool.superblock;
  std::memset(base, 0, sb.heap_offset);  // fresh file: zero already, but a reused one need not be
  // Chunk 0 is small and holds the first (empty) leaf right after its bitmap.
  const uint64_t chunk0 = sb.heap_offset;
  uint64_t* bits = reinterpret_cast<uint64_t*>(base + chunk0);
  std::memset(bits, 0, kBitmapWords * 8);
  bits[0] = ~0ull;
  const uint64_t leaf = chunk0 + kBitmapUnits * kUnitSize;
  bits[1] = (1ull << kLeafUnits) - 1;
  Leaf* first = reinterpret_cast<Leaf*>(base + leaf);
  std::memset(first, 0, sizeof(Leaf));
  first->header.checksum = LeafChecksum(first->header, *first);
  uint64_t chunk_word = kChunkSmall;
  std::memcpy(base + sb.chunk_table_offset, &chunk_word, 8);
  Root root = {};
  root.head_leaf = leaf;
  root.num_chunks = pool.file_chunks();
  root.checksum = RootChecksum(root);
  std::memcpy(base + kRootOffset, &root, sizeof(root));
  Superblock without_magic = sb;
  std::memset(without_magic.magic, 0, sizeof(without_magic.magic));
  std::memcpy(base, &without_magic, sizeof(without_magic));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatMetadataFlush, persister.Flush(base, sb.heap_offset)));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatBitmapFlush, persister.Flush(base + chunk0, kBitmapWords * 8)));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatLeafFlush, persister.Flush(first, sizeof(Leaf))));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatDrain, persister.Drain()));
  std::memcpy(base, &sb, sizeof(sb));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kFormatMagicFlush, persister.Flush(base, sizeof(sb))));
  return PMSTORE_PERSIST(kFormatMagicDrain, persister.Drain());
}

// Where a new pool is made before it is published under its name; the
// pid keeps two creators apart, and a leftover (a crash mid-create) is
// visibly not a pool.
std::string CreatingPath(const std::string& path) { return absl::StrCat(path, ".creating.", getpid()); }

}  // namespace

uint64_t Pool::file_chunks() const {
  const uint64_t chunks = (file->size() - superblock.heap_offset) / kChunkSize;
  return chunks < superblock.max_chunks ? chunks : superblock.max_chunks;
}

absl::Status WithPath(const absl::Status& status, const std::string& path) {
  if (status.ok() || status.message().find(path) != absl::string_view::npos) return status;
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<std::unique_ptr<Pool>> OpenPool(const std::string& path, const Options& options,
                                               PersisterFactory make_persister,
                                               std::unique_ptr<Persister>* persister) {
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a pool"));
  if (exists && options.error_if_exists) return absl::AlreadyExistsError(absl::StrCat(path, ": pool already exists"));
  if (!exists && !options.create_if_missing) {
    return absl::NotFoundError(absl::StrCat(path, ": no such pool file (create it first)"));
  }

  auto pool = std::make_unique<Pool>();
  pool->path = path;
  // Set while a new pool exists only under its temporary name: any return
  // before it is published removes it.
  std::string unpublished;
  auto remove_unpublished = absl::MakeCleanup([&] {
    if (!unpublished.empty()) unlink(unpublished.c_str());
  });
  Superblock& sb = pool->superblock;
  if (!exists) {
    const uint64_t max_size = options.max_size == 0 ? options.initial_size : options.max_size;
    std::memset(&sb, 0, sizeof(sb));
    std::memcpy(sb.magic, kMagic, sizeof(kMagic));
    sb.version = kFormatVersion;
    sb.superblock_size = sizeof(Superblock);
    sb.unit_size = kUnitSize;
    sb.chunk_size = kChunkSize;
    sb.leaf_slots = kLeafSlots;
    sb.root_offset = kRootOffset;
    sb.log_offset = kLogOffset;
    sb.log_slot_size = kLogSlotSize;
    sb.chunk_table_offset = kChunkTableOffset;
    // The chunk table's size moves the heap: size the table for the whole
    // file first (an upper bound), then count the chunks that fit after it.
    const uint64_t total = RoundUp(std::max(max_size, options.initial_size), kChunkSize);
    const uint64_t heap_bound = HeapOffset(total / kChunkSize);
    sb.max_chunks = total > heap_bound ? (total - heap_bound) / kChunkSize : 1;
    sb.heap_offset = HeapOffset(sb.max_chunks);
    sb.checksum = SuperblockChecksum(sb);
    const uint64_t size = std::max(RoundUp(options.initial_size, kChunkSize), sb.heap_offset + kChunkSize);
    // Made under a temporary name and published by Format's caller once
    // formatted, so a crash during create leaves no half-made pool at `path`.
    auto file = mapping::PoolFile::Open(CreatingPath(path), mapping::OpenMode::kCreateExclusive, size);
    if (!file.ok()) return WithPath(file.status(), path);
    unpublished = file->path();
    pool->file = std::make_unique<mapping::PoolFile>(std::move(*file));
    pool->created = true;
    absl::Status locked = LockPool(pool->file->fd(), path);
    if (!locked.ok()) return locked;
  } else {
    auto file = mapping::PoolFile::Open(path, mapping::OpenMode::kOpenExisting, 0);
    if (!file.ok()) return WithPath(file.status(), path);
    pool->file = std::make_unique<mapping::PoolFile>(std::move(*file));
    PMSTORE_RETURN_IF_ERROR(LockPool(pool->file->fd(), path));
    PMSTORE_ASSIGN_OR_RETURN(sb, ReadSuperblock(pool->file->fd(), pool->file->size(), path));
  }

  mapping::MapOptions map_options;
  map_options.intent = mapping::PageIntent::kPmd;
  map_options.engine = mapping::Engine::kPmem2;
  map_options.reserve = std::max(sb.heap_offset + sb.max_chunks * kChunkSize, pool->file->size());
  auto mapped = mapping::Mapping::Create(*pool->file, map_options);
  if (!mapped.ok()) return WithPath(mapped.status(), path);
  pool->mapping = std::move(*mapped);
  const Granularity have = Public(pool->mapping->granularity());
  if (!AtLeast(have, options.required_granularity)) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": the mapping offers ", std::string(GranularityName(have)),
                                                      " granularity, ",
                                                      std::string(GranularityName(options.required_granularity)),
                                                      " is required"));
  }
  *persister = make_persister(*pool->mapping, *pool->file);
  if (pool->created) {
    PMSTORE_RETURN_IF_ERROR(WithPath(Format(*pool, **persister), path));
    PMSTORE_RETURN_IF_ERROR(WithPath(pool->file->PublishAs(path), path));
    pool->mapping->set_path(path);
    unpublished.clear();
  }
  return pool;
}

namespace {

const LogEntry* EntriesOf(const LogHeader* header) { return reinterpret_cast<const LogEntry*>(header + 1); }

// Whether everything the newest commit wrote in place reached the media:
// the objects it names, and the leaves whose headers it changes (their
// checksums cover the slots written in place). `older`, when not null, is
// the commit before it, whose applied words may not all be durable yet.
bool CommitDataIsDurable(const Pool& pool, const LogHeader* older, const LogHeader* newest) {
  const char* base = pool.base();
  const uint64_t length = pool.length();
  const uint64_t heap = pool.superblock.heap_offset;
  auto leaf_ok = [&](uint64_t offset, const LeafHeader& header) {
    if (offset < heap || offset % kUnitSize != 0 || offset > length - kLeafBytes) return false;
    if (header.count > kLeafSlots) return false;
    for (int i = 0; i < header.count; ++i) {
      if (header.perm[i] >= kLeafSlots) return false;
    }
    return LeafChecksum(header, *reinterpret_cast<const Leaf*>(base + offset)) == header.checksum;
  };
  // The leaves whose header the newest commit changes (a leaf it frees has
  // no words in it: Transaction::DropWritesInto), as replay would leave
  // them: media, then the older commit's words, then the newest's. Leaves
  // only the older commit touched are not checked: the newest commit may
  // have freed them, and the commit in progress reused the space.
  // Misaligned words are not header words (replay refuses them below); an
  // entry at leaf + 60 would otherwise overlay 4 bytes past the copy.
  auto is_header_word = [&](const LogEntry& e) {
    return (e.offset & kVerifyMask) == 0 && e.offset % 8 == 0 && e.offset >= heap &&
           (e.offset - heap) % kChunkSize >= kBitmapWords * 8;
  };
  std::map<uint64_t, LeafHeader> headers;
  for (uint64_t i = 0; i < newest->count; ++i) {
    const LogEntry& e = EntriesOf(newest)[i];
    if (!is_header_word(e)) continue;
    const uint64_t leaf = e.offset & ~(kUnitSize - 1);
    if (leaf > length - kLeafBytes) return false;
    auto [it, added] = headers.try_emplace(leaf);
    if (added) std::memcpy(&it->second, base + leaf, sizeof(LeafHeader));
  }
  auto overlay = [&](const LogHeader* log) {
    for (uint64_t i = 0; i < log->count; ++i) {
      const LogEntry& e = EntriesOf(log)[i];
      if (!is_header_word(e)) continue;
      const uint64_t leaf = e.offset & ~(kUnitSize - 1);
      auto it = headers.find(leaf);
      if (it != headers.end()) std::memcpy(reinterpret_cast<char*>(&it->second) + (e.offset - leaf), &e.value, 8);
    }
  };
  if (older != nullptr) overlay(older);
  overlay(newest);
  for (const auto& [leaf, header] : headers) {
    if (!leaf_ok(leaf, header)) return false;
  }
  for (uint64_t i = 0; i < newest->count; ++i) {
    const LogEntry& e = EntriesOf(newest)[i];
    const uint64_t offset = e.offset & ~kVerifyMask;
    if ((e.offset & kVerifyLeaf) != 0) {
      LeafHeader header;
      if (offset < heap || offset > length - kLeafBytes) return false;
      std::memcpy(&header, base + offset, sizeof(header));
      if (header.checksum != e.value || !leaf_ok(offset, header)) return false;
    } else if ((e.offset & kVerifyRecord) != 0) {
      RecordView view;
      if (offset < heap || !ReadRecord(base, length, offset, &view)) return false;
      const uint64_t stored = *reinterpret_cast<const uint64_t*>(base + offset);
      if (stored != e.value || RecordChecksum(base + offset, view.large ? view.value.data() : nullptr) != stored) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

absl::Status ReplayLog(Pool& pool, Persister& persister, uint64_t* next_seq, LogHeader* last) {
  *last = LogHeader{};
  char* base = pool.base();
  const uint64_t length = pool.length();
  const LogHeader* valid[2] = {nullptr, nullptr};
  for (uint64_t slot = 0; slot < 2; ++slot) {
    const auto* header = reinterpret_cast<const LogHeader*>(base + kLogOffset + slot * kLogSlotSize);
    if (header->seq == 0 || header->seq % 2 != slot || header->count > kLogCapacity) continue;
    if (LogChecksum(*header, EntriesOf(header)) != header->checksum) continue;
    valid[slot] = header;
  }
  const LogHeader* newest = valid[0];
  const LogHeader* older = valid[1];
  if (newest == nullptr || (older != nullptr && older->seq > newest->seq)) std::swap(newest, older);
  if (older != nullptr && older->seq + 1 != newest->seq) older = nullptr;
  if (newest == nullptr) {
    *next_seq = 1;
    return absl::OkStatus();
  }
  // The newest commit counts only if its data reached the media; else it
  // was never acknowledged and the one before it is the last commit.
  if (!CommitDataIsDurable(pool, older, newest)) {
    *next_seq = newest->seq;
    newest = older;
    older = nullptr;
    if (newest == nullptr) return absl::OkStatus();
  } else {
    *next_seq = newest->seq + 1;
  }
  *last = *newest;
  // Two consecutive commits are replayed oldest first: the older one's
  // writes may not all be durable yet (FORMAT.md, "Commit protocol").
  for (const LogHeader* header : {older, newest}) {
    if (header == nullptr) continue;
    const LogEntry* entries = EntriesOf(header);
    for (uint64_t i = 0; i < header->count; ++i) {
      const uint64_t offset = entries[i].offset;
      if ((offset & kVerifyMask) != 0) continue;
      if (!IsLoggableWord(offset, length)) {
        return absl::DataLossError(absl::StrCat(pool.path, ": redo log commit ", header->seq,
                                                " writes outside the pool's metadata (offset ", offset, ")"));
      }
    }
    for (uint64_t i = 0; i < header->count; ++i) {
      if ((entries[i].offset & kVerifyMask) != 0) continue;
      std::memcpy(base + entries[i].offset, &entries[i].value, 8);
      PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kReplayFlush, persister.Flush(base + entries[i].offset, 8)));
    }
  }
  return PMSTORE_PERSIST(kReplayDrain, persister.Drain());
}

absl::StatusOr<Root> ReadRoot(const Pool& pool) {
  Root root;
  std::memcpy(&root, pool.base() + kRootOffset, sizeof(root));
  if (root.checksum != RootChecksum(root)) {
    return absl::DataLossError(absl::StrCat(pool.path, ": checksum failure in the root"));
  }
  if (root.num_chunks > pool.superblock.max_chunks || root.num_chunks > pool.file_chunks()) {
    return absl::DataLossError(absl::StrCat(pool.path, ": truncated file: the pool holds ", root.num_chunks,
                                            " chunks of 2 MiB, the file only ", pool.file_chunks()));
  }
  return root;
}

absl::Status GrowPool(Pool& pool, Persister& persister, uint64_t chunks) {
  const uint64_t size = pool.superblock.heap_offset + chunks * kChunkSize;
  PMSTORE_RETURN_IF_ERROR(WithPath(pool.file->Grow(size), pool.path));
  // The new length must survive a crash before any commit counts on it.
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kGrowSync, persister.SyncLength()));
  return WithPath(pool.mapping->Extend(*pool.file, size), pool.path);
}

}  // namespace pmstore::internal

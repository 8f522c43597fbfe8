#include "pmstore/mapping/mapping.h"

#include <libpmem2.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/persist_internal.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

namespace pmstore::mapping {
namespace {

using base::kHugePageSize;
using base::kPageSize;
using base::RoundUp;

// Room to slide the start of a reservation to the colour the intent wants:
// up to its alignment, plus the 4 KiB offset of the pte intent.
uint64_t AlignmentSlack(PageIntent intent) { return IntentAlignment(intent) + kPageSize; }

uint64_t IntentOffset(PageIntent intent) { return intent == PageIntent::kPte ? kPageSize : 0; }

absl::Status Pmem2Error(int code, std::string_view call, const std::string& path) {
  return absl::InternalError(absl::StrCat("libpmem2 ", std::string(call), "(", path, "): ",
                                          pmem2_errormsg(), " (", code, ")"));
}

absl::Status MapSyncUnavailable(const std::string& path) {
  return absl::FailedPreconditionError(absl::StrCat(
      "MAP_SYNC needs a file on a DAX file system and ", path,
      " is not DAX: mount a pmem (fsdax) device with -o dax, or drop --map-sync "
      "(run 'faultbench doctor ", path, "' for details)"));
}

Granularity FromPmem2(pmem2_granularity g) {
  switch (g) {
    case PMEM2_GRANULARITY_BYTE: return Granularity::kByte;
    case PMEM2_GRANULARITY_CACHE_LINE: return Granularity::kCacheLine;
    case PMEM2_GRANULARITY_PAGE: return Granularity::kPage;
  }
  return Granularity::kPage;
}

}  // namespace

std::string_view PageIntentName(PageIntent intent) {
  switch (intent) {
    case PageIntent::kPmd: return "pmd";
    case PageIntent::kPte: return "pte";
    case PageIntent::kAuto: return "auto";
    case PageIntent::kPud: return "pud";
  }
  return "unknown";
}

uint64_t IntentAlignment(PageIntent intent) {
  return intent == PageIntent::kPud ? base::kGiantPageSize : kHugePageSize;
}

std::optional<PageIntent> IntentOfPageSize(uint64_t page_size) {
  for (PageIntent intent : {PageIntent::kPte, PageIntent::kPmd, PageIntent::kPud}) {
    if (IntentPageSize(intent) == page_size) return intent;
  }
  return std::nullopt;
}

uint64_t IntentPageSize(PageIntent intent) {
  switch (intent) {
    case PageIntent::kPte: return kPageSize;
    case PageIntent::kPmd: return kHugePageSize;
    case PageIntent::kPud: return base::kGiantPageSize;
    case PageIntent::kAuto: return 0;
  }
  return 0;
}

std::string_view EngineName(Engine engine) {
  return engine == Engine::kMmap ? "mmap" : "pmem2";
}

absl::StatusOr<PageIntent> ParsePageIntent(std::string_view name) {
  if (name == "pmd") return PageIntent::kPmd;
  if (name == "pte") return PageIntent::kPte;
  if (name == "auto") return PageIntent::kAuto;
  if (name == "pud") return PageIntent::kPud;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mapping '", std::string(name), "': use pmd, pte, pud or auto"));
}

absl::StatusOr<Engine> ParseEngine(std::string_view name) {
  if (name == "mmap") return Engine::kMmap;
  if (name == "pmem2" || name == "libpmem") return Engine::kPmem2;
  return absl::InvalidArgumentError(absl::StrCat("unknown engine '", std::string(name), "': use mmap or pmem2"));
}

absl::StatusOr<std::unique_ptr<Mapping>> Mapping::Create(const PoolFile& file, const MapOptions& options) {
  if (file.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot map ", file.path(), ": the file is empty"));
  }
  if (options.reserve != 0 && options.reserve < file.size()) {
    return absl::InvalidArgumentError(absl::StrCat("reserve of ", options.reserve, " bytes is smaller than ",
                                                   file.path(), " (", file.size(), " bytes)"));
  }
  if (options.map_sync && !file.dax()) return MapSyncUnavailable(file.path());

  std::unique_ptr<Mapping> mapping(new Mapping());
  mapping->options_ = options;
  mapping->path_ = file.path();
  mapping->dax_ = file.dax();
  if (options.intent == PageIntent::kAuto) {
    mapping->reserved_ = file.size();
  } else {
    PMSTORE_RETURN_IF_ERROR(mapping->Reserve(std::max(options.reserve, file.size())));
  }
  PMSTORE_RETURN_IF_ERROR(mapping->MapPiece(file, 0, file.size()));
  return mapping;
}

absl::Status Mapping::Reserve(uint64_t length) {
  reserved_ = length;
  reservation_size_ = length + AlignmentSlack(options_.intent);
  if (options_.engine == Engine::kPmem2) {
    int rc = pmem2_vm_reservation_new(&pmem2_reservation_, nullptr, reservation_size_);
    if (rc != 0) return Pmem2Error(rc, "pmem2_vm_reservation_new", "address space");
    reservation_ = static_cast<char*>(pmem2_vm_reservation_get_address(pmem2_reservation_));
  } else {
    void* addr = mmap(nullptr, reservation_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (addr == MAP_FAILED) return base::ErrnoStatus(errno, "mmap (reserve)", absl::StrCat(length, " bytes"));
    reservation_ = static_cast<char*>(addr);
  }
  const auto start = reinterpret_cast<uintptr_t>(reservation_);
  base_ = reinterpret_cast<char*>(RoundUp(start, IntentAlignment(options_.intent)) + IntentOffset(options_.intent));
  return absl::OkStatus();
}

absl::Status Mapping::MapPiece(const PoolFile& file, uint64_t offset, uint64_t length) {
  absl::Status mapped = options_.engine == Engine::kPmem2 ? MapPiecePmem2(file, offset, length)
                                                          : MapPieceMmap(file, offset, length);
  if (mapped.ok()) pieces_.push_back({offset, length});
  return mapped;
}

absl::Status Mapping::MapPieceMmap(const PoolFile& file, uint64_t offset, uint64_t length) {
  int flags = options_.map_sync ? (MAP_SHARED_VALIDATE | MAP_SYNC) : MAP_SHARED;
  void* hint = nullptr;
  if (base_ != nullptr) {
    flags |= MAP_FIXED;  // inside our own reservation, never over someone else's mapping
    hint = base_ + offset;
  }
  void* addr = mmap(hint, length, PROT_READ | PROT_WRITE, flags, file.fd(), static_cast<off_t>(offset));
  if (addr == MAP_FAILED) {
    const int err = errno;
    if (options_.map_sync && err == EOPNOTSUPP) return MapSyncUnavailable(file.path());
    return base::ErrnoStatus(err, "mmap", file.path());
  }
  if (base_ == nullptr) base_ = static_cast<char*>(addr);
  Advise(base_ + offset, length);
  if (offset == 0) {  // the persist strategy is chosen once; Extend keeps it
    granularity_ = options_.map_sync ? Granularity::kCacheLine : Granularity::kPage;
    map_sync_ = options_.map_sync;
    ops_ = options_.map_sync ? CacheLinePersistOps() : MsyncPersistOps();
  }
  length_ = offset + length;
  return absl::OkStatus();
}

absl::Status Mapping::MapPiecePmem2(const PoolFile& file, uint64_t offset, uint64_t length) {
  pmem2_source* source = nullptr;
  int rc = pmem2_source_from_fd(&source, file.fd());
  if (rc != 0) return Pmem2Error(rc, "pmem2_source_from_fd", file.path());
  pmem2_config* config = nullptr;
  rc = pmem2_config_new(&config);
  if (rc != 0) {
    pmem2_source_delete(&source);
    return Pmem2Error(rc, "pmem2_config_new", file.path());
  }
  // Page is the weakest granularity, so asking for it accepts whatever the
  // media gives; MAP_SYNC is a demand for cache-line granularity.
  pmem2_config_set_required_store_granularity(
      config, options_.map_sync ? PMEM2_GRANULARITY_CACHE_LINE : PMEM2_GRANULARITY_PAGE);
  pmem2_config_set_offset(config, offset);
  pmem2_config_set_length(config, length);
  if (pmem2_reservation_ != nullptr) {
    const uint64_t in_reservation = static_cast<uint64_t>(base_ - reservation_) + offset;
    pmem2_config_set_vm_reservation(config, pmem2_reservation_, in_reservation);
  }
  pmem2_map* map = nullptr;
  rc = pmem2_map_new(&map, config, source);
  pmem2_config_delete(&config);
  pmem2_source_delete(&source);
  if (rc == PMEM2_E_GRANULARITY_NOT_SUPPORTED) return MapSyncUnavailable(file.path());
  if (rc != 0) return Pmem2Error(rc, "pmem2_map_new", file.path());
  pmem2_maps_.push_back(map);

  if (base_ == nullptr) base_ = static_cast<char*>(pmem2_map_get_address(map));
  Advise(base_ + offset, length);
  const Granularity granularity = FromPmem2(pmem2_map_get_store_granularity(map));
  if (offset != 0) {
    // The persist strategy was chosen with the first piece, and callers
    // hold its functions: a later piece of the same file must agree.
    length_ = offset + length;
    if (granularity == granularity_) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("libpmem2 mapped bytes ", offset, "+ of ", file.path(), " with ",
                                            std::string(GranularityName(granularity)), " granularity, the first bytes with ",
                                            std::string(GranularityName(granularity_))));
  }
  granularity_ = granularity;
  // libpmem2 uses MAP_SYNC exactly when the file is DAX and it could get
  // cache-line granularity from it (PMEM2_FORCE_GRANULARITY only changes
  // the reported granularity, not the mapping flags).
  map_sync_ = dax_ && granularity_ != Granularity::kPage;
  ops_.persist = pmem2_get_persist_fn(map);
  ops_.flush = pmem2_get_flush_fn(map);
  ops_.drain = pmem2_get_drain_fn(map);
  ops_.memcpy = pmem2_get_memcpy_fn(map);
  length_ = offset + length;
  return absl::OkStatus();
}

absl::Status Mapping::Persist(const void* ptr, size_t size) const {
  if (granularity_ == Granularity::kPage) {
    const auto start = reinterpret_cast<uintptr_t>(ptr);
    return SyncPages({{start, start + size}});
  }
  ops_.persist(ptr, size);
  return absl::OkStatus();
}

absl::Status Mapping::SyncPages(const std::vector<Range>& ranges) const {
  const auto base = reinterpret_cast<uintptr_t>(base_);
  for (const Piece& piece : pieces_) {
    const uintptr_t piece_start = base + piece.offset;
    const uintptr_t piece_end = piece_start + piece.length;
    uintptr_t start = piece_end;
    uintptr_t end = piece_start;
    for (const auto& [first, last] : ranges) {
      start = std::min(start, std::max(first, piece_start));
      end = std::max(end, std::min(last, piece_end));
    }
    if (start >= end) continue;  // nothing written in this piece
    start &= ~(kPageSize - 1);   // msync wants a page-aligned start (pieces are page aligned)
    if (msync(reinterpret_cast<void*>(start), end - start, MS_SYNC) != 0) {
      return base::ErrnoStatus(errno, "msync",
                               absl::StrCat(path_, ", ", end - start, " bytes at offset ", start - base));
    }
  }
  return absl::OkStatus();
}

void Mapping::Advise(char* start, uint64_t length) const {
  // A hint only: the pte intent is enforced by the address colour, and the
  // pmd intent needs the hint only where THP is in madvise mode.
  if (options_.intent == PageIntent::kPmd || options_.intent == PageIntent::kPud) madvise(start, length, MADV_HUGEPAGE);
  if (options_.intent == PageIntent::kPte) madvise(start, length, MADV_NOHUGEPAGE);
}

absl::Status Mapping::Extend(const PoolFile& file, uint64_t new_length) {
  if (options_.intent == PageIntent::kAuto) {
    return absl::FailedPreconditionError("an 'auto' mapping has no reserved range to grow into");
  }
  if (new_length <= length_) return absl::OkStatus();
  if (new_length > reserved_) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot grow the mapping of ", file.path(), " to ", new_length,
                                                     " bytes: only ", reserved_, " bytes were reserved"));
  }
  if (new_length > file.size()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot map ", new_length, " bytes of ", file.path(),
                                                      ": the file has ", file.size()));
  }
  return MapPiece(file, length_, new_length - length_);
}

Mapping::~Mapping() {
  for (pmem2_map*& map : pmem2_maps_) pmem2_map_delete(&map);
  if (pmem2_reservation_ != nullptr) {
    pmem2_vm_reservation_delete(&pmem2_reservation_);
  } else if (reservation_ != nullptr) {
    munmap(reservation_, reservation_size_);
  } else if (base_ != nullptr && options_.engine == Engine::kMmap) {
    munmap(base_, length_);
  }
}

}  // namespace pmstore::mapping

#include "pmstore/mapping/mapping.h"

#include <libpmem2.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
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
uint64_t AlignmentSlack(PageIntent intent) { return IntentAlignment(intent) + std::max(kPageSize, intent.folio_size()); }

// Where inside its alignment the mapping starts: 4 KiB off the 2 MiB colour
// for pte, one folio off it for a folio size (aligned to the folio, never
// to 2 MiB), on it otherwise.
uint64_t IntentOffset(PageIntent intent) {
  if (intent == PageIntent::kPte) return kPageSize;
  return intent.folio_size();
}

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
  // Folio sizes are powers of two from 8 KiB to 1 MiB: one name each.
  static constexpr std::string_view kFolioNames[] = {"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M"};
  switch (intent.kind()) {
    case PageIntent::Kind::kPmd: return "pmd";
    case PageIntent::Kind::kPte: return "pte";
    case PageIntent::Kind::kAuto: return "auto";
    case PageIntent::Kind::kPud: return "pud";
    case PageIntent::Kind::kFolio: {
      const int index = std::countr_zero(intent.folio_size()) - std::countr_zero(PageIntent::kMinFolio);
      if (index >= 0 && index < static_cast<int>(std::size(kFolioNames))) return kFolioNames[index];
      return "folio";
    }
  }
  return "unknown";
}

std::string SizeName(uint64_t bytes) {
  if (bytes == 0) return "";
  if (bytes % base::kGiantPageSize == 0) return absl::StrCat(bytes / base::kGiantPageSize, "G");
  if (bytes % (1 << 20) == 0) return absl::StrCat(bytes >> 20, "M");
  if (bytes % 1024 == 0) return absl::StrCat(bytes >> 10, "K");
  return absl::StrCat(bytes);
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
  switch (intent.kind()) {
    case PageIntent::Kind::kPte: return kPageSize;
    case PageIntent::Kind::kPmd: return kHugePageSize;
    case PageIntent::Kind::kPud: return base::kGiantPageSize;
    case PageIntent::Kind::kFolio: return intent.folio_size();
    case PageIntent::Kind::kAuto: return 0;
  }
  return 0;
}

std::string_view EngineName(Engine engine) {
  return engine == Engine::kMmap ? "mmap" : "pmem2";
}

absl::StatusOr<PageIntent> ParsePageIntent(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  if (lower == "pmd" || lower == "2m") return PageIntent::kPmd;
  if (lower == "pte" || lower == "4k") return PageIntent::kPte;
  if (lower == "auto") return PageIntent::kAuto;
  if (lower == "pud" || lower == "1g") return PageIntent::kPud;
  // A folio size: NK (or NKiB, NKB), or 1M.
  absl::string_view digits = lower;
  uint64_t unit = 0;
  for (const auto& [suffix, bytes] : {std::pair<absl::string_view, uint64_t>{"kib", 1 << 10}, {"kb", 1 << 10},
                                      {"k", 1 << 10}, {"mib", 1 << 20}, {"mb", 1 << 20}, {"m", 1 << 20}}) {
    if (absl::ConsumeSuffix(&digits, suffix)) {
      unit = bytes;
      break;
    }
  }
  uint64_t count = 0;
  if (unit != 0 && absl::SimpleAtoi(digits, &count) && count > 0) {
    const uint64_t size = count * unit;
    if (std::has_single_bit(size) && size >= PageIntent::kMinFolio && size <= PageIntent::kMaxFolio) {
      return PageIntent::Folio(size);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "mapping '", std::string(name), "': a folio size is a power of two from 8K to 1M (16K, 32K, 64K, ...); ",
        "4K is pte, 2M pmd, 1G pud"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown mapping '", std::string(name),
                                                 "': use pte, pmd, pud, auto or a folio size (16K, 64K, ... 1M)"));
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
  if (options.private_copy && (options.map_sync || options.engine != Engine::kMmap)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot map ", file.path(), " privately (copy-on-write) with MAP_SYNC or libpmem2: only shared mappings "
        "reach the file"));
  }

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

absl::StatusOr<std::unique_ptr<Mapping>> Mapping::CreateAnonymous(uint64_t length, bool shared,
                                                                  const MapOptions& options) {
  if (length == 0) return absl::InvalidArgumentError("cannot map 0 bytes of anonymous memory");
  if (options.engine != Engine::kMmap || options.map_sync) {
    return absl::InvalidArgumentError(
        "anonymous memory is mapped with mmap alone: libpmem2 and MAP_SYNC need a file (use --engine=mmap)");
  }
  std::unique_ptr<Mapping> mapping(new Mapping());
  mapping->options_ = options;
  mapping->options_.reserve = 0;
  mapping->path_ = shared ? "anonymous shared memory" : "anonymous private memory";
  mapping->anonymous_ = true;
  const int flags = (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
  if (options.intent == PageIntent::kAuto) {
    void* addr = mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (addr == MAP_FAILED) return base::ErrnoStatus(errno, "mmap", mapping->path_);
    mapping->base_ = static_cast<char*>(addr);
    mapping->reserved_ = length;
  } else {
    PMSTORE_RETURN_IF_ERROR(mapping->Reserve(length));
    if (mmap(mapping->base_, length, PROT_READ | PROT_WRITE, flags | MAP_FIXED, -1, 0) == MAP_FAILED) {
      return base::ErrnoStatus(errno, "mmap", mapping->path_);
    }
  }
  mapping->Advise(mapping->base_, length);
  mapping->pieces_.push_back({0, length});
  mapping->length_ = length;
  mapping->ops_ = MsyncPersistOps();
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
  int flags = options_.map_sync ? (MAP_SHARED_VALIDATE | MAP_SYNC) : options_.private_copy ? MAP_PRIVATE : MAP_SHARED;
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
  // pmd intent needs the hint only where THP is in madvise mode. A folio
  // size needs it in anonymous memory, where the per-size knobs' madvise
  // mode is how one size is given to one mapping; a file's folios are the
  // file system's, and VM_HUGEPAGE would make its read-ahead PMD-sized.
  const PageIntent intent = options_.intent;
  if (intent == PageIntent::kPmd || intent == PageIntent::kPud || (intent.is_folio() && anonymous_)) {
    madvise(start, length, MADV_HUGEPAGE);
  }
  if (intent == PageIntent::kPte) madvise(start, length, MADV_NOHUGEPAGE);
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

#include "pmstore/mapping/mapping.h"

#include <libpmem2.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <iterator>
#include <mutex>
#include <vector>

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

// libpmem2's failures: a negative errno (a system call it made failed), or
// one of its own codes with its message.
absl::Status Pmem2Error(int code, std::string_view call, const std::string& path) {
  if (code < 0 && code > -4096) return base::ErrnoStatus(-code, absl::StrCat("libpmem2 ", std::string(call)), path);
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

// libpmem2 1.12.1 reserves a range larger than asked, by up to 1 GiB, to
// align it, and its pmem2_vm_reservation_delete unmaps only the part it
// handed out: every reservation deleted leaks its padding (2 GiB of
// address space a cycle for a pool that may grow to 16 GiB; the 7 281st
// open of one pool failed with ENOMEM). So a reservation is not deleted
// but kept, empty, for the next mapping that fits in it: a program that
// reopens its pools reuses the same ranges. The few kept (the largest, when
// more would be kept than kKeptReservations) cost address space only.
constexpr size_t kKeptReservations = 8;

struct KeptReservation {
  pmem2_vm_reservation* reservation;
  uint64_t size;
};

std::mutex& KeptMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<KeptReservation>& Kept() {
  static std::vector<KeptReservation>* kept = new std::vector<KeptReservation>();  // lives past exit
  return *kept;
}

// A reservation of at least `size` bytes: the smallest kept one that is
// large enough, else a new one.
absl::StatusOr<pmem2_vm_reservation*> TakePmem2Reservation(env::Env* env, uint64_t size) {
  {
    std::lock_guard<std::mutex> lock(KeptMutex());
    std::vector<KeptReservation>& kept = Kept();
    auto best = kept.end();
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (it->size >= size && (best == kept.end() || it->size < best->size)) best = it;
    }
    if (best != kept.end()) {
      pmem2_vm_reservation* reservation = best->reservation;
      kept.erase(best);
      return reservation;
    }
  }
  pmem2_vm_reservation* reservation = nullptr;
  const int rc = env->Pmem2VmReservationNew(&reservation, nullptr, size);
  if (rc != 0) return Pmem2Error(rc, "pmem2_vm_reservation_new", "address space");
  return reservation;
}

// An empty reservation back, for later mappings; beyond the few kept, the
// smallest is deleted (and its padding lost).
void ReturnPmem2Reservation(pmem2_vm_reservation* reservation, uint64_t size) {
  std::lock_guard<std::mutex> lock(KeptMutex());
  std::vector<KeptReservation>& kept = Kept();
  kept.push_back({reservation, size});
  if (kept.size() <= kKeptReservations) return;
  auto smallest = std::min_element(kept.begin(), kept.end(),
                                   [](const KeptReservation& a, const KeptReservation& b) { return a.size < b.size; });
  pmem2_vm_reservation_delete(&smallest->reservation);
  kept.erase(smallest);
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
  const uint64_t length = options.length != 0 ? options.length : file.size();
  if (length == 0) return absl::InvalidArgumentError(absl::StrCat("cannot map ", file.path(), ": the file is empty"));
  if (length > file.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot map ", length, " bytes of ", file.path(), ": the file has ", file.size()));
  }
  if (options.reserve != 0 && options.reserve < length) {
    return absl::InvalidArgumentError(absl::StrCat("reserve of ", options.reserve, " bytes is smaller than the ",
                                                   length, " bytes to map of ", file.path()));
  }
  if (options.map_sync && !file.dax()) return MapSyncUnavailable(file.path());
  if (options.read_only && (options.map_sync || options.engine != Engine::kMmap)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot map ", file.path(), " read-only with MAP_SYNC or libpmem2: both map to persist writes"));
  }
  if (options.private_copy && (options.map_sync || options.engine != Engine::kMmap)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot map ", file.path(), " privately (copy-on-write) with MAP_SYNC or libpmem2: only shared mappings "
        "reach the file"));
  }

  std::unique_ptr<Mapping> mapping(new Mapping());
  mapping->options_ = options;
  mapping->env_ = file.env();
  mapping->path_ = file.path();
  mapping->dax_ = file.dax();
  if (options.intent == PageIntent::kAuto) {
    mapping->reserved_ = length;
  } else {
    PMSTORE_RETURN_IF_ERROR(mapping->Reserve(std::max(options.reserve, length)));
  }
  PMSTORE_RETURN_IF_ERROR(mapping->MapPiece(file, 0, length));
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
  mapping->env_ = env::Env::Default();  // no file to take one from; the reservation and unmap go through it
  mapping->path_ = shared ? "anonymous shared memory" : "anonymous private memory";
  mapping->anonymous_ = true;
  const int flags = (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
  if (options.intent == PageIntent::kAuto) {
    void* addr = nullptr;
    const int err = mapping->env_->Mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0, &addr);
    if (err != 0) return base::ErrnoStatus(err, "mmap", mapping->path_);
    mapping->base_ = static_cast<char*>(addr);
    mapping->reserved_ = length;
  } else {
    PMSTORE_RETURN_IF_ERROR(mapping->Reserve(length));
    void* addr = nullptr;
    const int err = mapping->env_->Mmap(mapping->base_, length, PROT_READ | PROT_WRITE, flags | MAP_FIXED, -1, 0, &addr);
    if (err != 0) return base::ErrnoStatus(err, "mmap", mapping->path_);
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
    PMSTORE_ASSIGN_OR_RETURN(pmem2_reservation_, TakePmem2Reservation(env_, reservation_size_));
    reservation_ = static_cast<char*>(pmem2_vm_reservation_get_address(pmem2_reservation_));
  } else {
    void* addr = nullptr;
    const int err =
        env_->Mmap(nullptr, reservation_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &addr);
    if (err != 0) return base::ErrnoStatus(err, "mmap", absl::StrCat("a reservation of ", length, " bytes"));
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
  void* addr = nullptr;
  const int prot = options_.read_only ? PROT_READ : PROT_READ | PROT_WRITE;
  const int err = env_->Mmap(hint, length, prot, flags, file.fd(), static_cast<off_t>(offset), &addr);
  if (err != 0) {
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
  rc = env_->Pmem2MapNew(&map, config, source);
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
    const int err = env_->Msync(reinterpret_cast<void*>(start), end - start, MS_SYNC);
    if (err != 0) {
      return base::ErrnoStatus(err, "msync", absl::StrCat(path_, ", ", end - start, " bytes at offset ", start - base));
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
    ReturnPmem2Reservation(pmem2_reservation_, reservation_size_);
  } else if (reservation_ != nullptr) {
    env_->Munmap(reservation_, reservation_size_);  // a failed unmap costs address space, never data
  } else if (base_ != nullptr && options_.engine == Engine::kMmap) {
    env_->Munmap(base_, length_);
  }
}

}  // namespace pmstore::mapping

// A file (or anonymous memory) mapped with an explicit page-size intent.
//
// Whether the kernel can use one PMD entry for 2 MiB of a file depends on
// the virtual address agreeing with the file offset modulo 2 MiB (among
// other things, see doc/MAPPING.md). This class makes that agreement a
// choice instead of an accident:
//   kPmd:  address and offset 2 MiB aligned, MADV_HUGEPAGE;
//   kPud:  address and offset 1 GiB aligned: a 1 GiB entry is possible
//          where the backing maps 1 GiB (hugetlbfs pagesize=1G, device
//          DAX align=1G); page cache and fsdax never do;
//   kPte:  address deliberately 4 KiB off the offset's 2 MiB colour, so a
//          PMD is impossible, MADV_NOHUGEPAGE;
//   Folio(size): a folio of 8 KiB to 1 MiB mapped by PTEs (multi-size
//          THP): the address agrees with the offset modulo the folio size
//          but is one folio off the 2 MiB colour, so no PMD is possible
//          for a file; anonymous memory is advised MADV_HUGEPAGE (the
//          per-size THP knobs' madvise mode; which sizes the kernel may
//          use is theirs to say), a file is not advised (its folios are
//          the file system's);
//   kAuto: whatever mmap(NULL, ...) returns, as fio does.
//
// A mapping may reserve more virtual space than it maps, so it can grow in
// place (Extend) without moving data that callers point into.
//
// Thread-safety: the accessors are const and safe from any thread; Extend
// must not race with another Extend, with length(), with Persist or
// SyncPages (they walk the list of mapped pieces), or with destruction.
// Extend never changes the persist strategy (granularity, map_sync, ops),
// so callers may keep the functions ops() hands out.
//
// Failures: at page granularity durability costs msync, which can fail
// (EIO from a failing device, EROFS from a file system gone read-only).
// Persist and SyncPages return that failure; the functions in ops() cannot
// (libpmem2's page persist aborts the process instead, the mmap engine's
// drops the error), so code that must know whether its data is durable
// uses Persist or SyncPages at page granularity.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pmstore/env/env.h"
#include "pmstore/mapping/persist.h"
#include "pmstore/mapping/pool_file.h"

struct pmem2_map;
struct pmem2_vm_reservation;

namespace pmstore::mapping {

// What a mapping asks the kernel for (see above). A value: compare it with
// the constants (intent == PageIntent::kPmd) or ask its kind().
class PageIntent {
 public:
  enum class Kind { kPmd, kPte, kAuto, kPud, kFolio };
  static const PageIntent kPmd, kPte, kAuto, kPud;
  // The smallest and largest folio sizes an intent may name: powers of two
  // between the 8 KiB of shmem's smallest mTHP and the 1 MiB below a PMD.
  static constexpr uint64_t kMinFolio = 8 << 10, kMaxFolio = 1 << 20;
  // A folio of `size` bytes mapped by PTEs; `size` must be a power of two
  // in [kMinFolio, kMaxFolio] (ParsePageIntent checks what a user gives).
  static constexpr PageIntent Folio(uint64_t size) { return PageIntent(Kind::kFolio, size); }

  constexpr Kind kind() const { return kind_; }
  constexpr bool is_folio() const { return kind_ == Kind::kFolio; }
  constexpr uint64_t folio_size() const { return folio_size_; }  // 0 unless is_folio()
  friend constexpr bool operator==(PageIntent, PageIntent) = default;

 private:
  constexpr PageIntent(Kind kind, uint64_t folio_size) : kind_(kind), folio_size_(folio_size) {}
  Kind kind_;
  uint64_t folio_size_;
};
inline constexpr PageIntent PageIntent::kPmd{PageIntent::Kind::kPmd, 0};
inline constexpr PageIntent PageIntent::kPte{PageIntent::Kind::kPte, 0};
inline constexpr PageIntent PageIntent::kAuto{PageIntent::Kind::kAuto, 0};
inline constexpr PageIntent PageIntent::kPud{PageIntent::Kind::kPud, 0};

enum class Engine {
  kMmap,  // mmap(2) MAP_SHARED; MAP_SHARED_VALIDATE|MAP_SYNC on request
  kPmem2  // libpmem2: MAP_SYNC when the file is DAX, its persist functions
};

std::string_view PageIntentName(PageIntent intent);  // "pmd", "pte", "auto", "pud", "64K", "1M"
// The address alignment an intent asks for: 1 GiB for kPud, else 2 MiB.
uint64_t IntentAlignment(PageIntent intent);
// The entry size an intent asks for: 4 KiB, 2 MiB, 1 GiB, the folio's
// size; 0 for kAuto.
uint64_t IntentPageSize(PageIntent intent);
// "4K", "64K", "2M", "1G": how faultbench names a page or folio size
// (the kernel's hugepages-64kB is "64K"); "" for 0.
std::string SizeName(uint64_t bytes);
// The intent that asks for `page_size`; nullopt for a size none asks for.
std::optional<PageIntent> IntentOfPageSize(uint64_t page_size);
std::string_view EngineName(Engine engine);          // "mmap", "pmem2"
// pte, pmd, pud, auto, or a folio size: 8K, 16K, ... 1024K (or 1M), any
// case; 4K, 2M and 1G name pte, pmd and pud. InvalidArgument otherwise.
absl::StatusOr<PageIntent> ParsePageIntent(std::string_view name);
absl::StatusOr<Engine> ParseEngine(std::string_view name);

struct MapOptions {
  PageIntent intent = PageIntent::kPmd;
  Engine engine = Engine::kMmap;
  // Require MAP_SYNC (writes through to the media, cache-line granularity).
  // FailedPrecondition when the file is not on a DAX mount.
  bool map_sync = false;
  // Bytes of the file to map from its start (0: all of it); at most the
  // file's size.
  uint64_t length = 0;
  // Bytes of virtual address space to reserve (0: the mapped length).
  // Must be >= the mapped length; Extend can map up to it. Ignored for kAuto.
  uint64_t reserve = 0;
  // MAP_PRIVATE instead of MAP_SHARED: reads see the file, a write copies
  // its page into anonymous memory and never reaches the file (mmap
  // engine only, no MAP_SYNC); msync writes none of it back.
  bool private_copy = false;
  // PROT_READ alone: a write through the mapping faults. For a file opened
  // read-only that must be mapped shared (device DAX maps shared only), so
  // that nothing of this process can reach it (mmap engine only).
  bool read_only = false;
};

class Mapping {
 public:
  // Maps `options.length` bytes of `file` (all of it by default).
  // Errors: FailedPrecondition for MAP_SYNC on a file that is not DAX,
  // InvalidArgument for a length beyond the file or a reserve smaller than
  // the length, the failing call's errno status otherwise.
  static absl::StatusOr<std::unique_ptr<Mapping>> Create(const PoolFile& file, const MapOptions& options);

  // Maps `length` bytes of anonymous memory: private (MAP_PRIVATE, the
  // process's own pages) or shared (MAP_SHARED, shmem pages) with the
  // intent of `options` (engine mmap; no MAP_SYNC, no reserve beyond
  // `length`). InvalidArgument for another engine, MAP_SYNC or length 0.
  static absl::StatusOr<std::unique_ptr<Mapping>> CreateAnonymous(uint64_t length, bool shared,
                                                                 const MapOptions& options);

  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // Maps `file` from the current length up to `new_length` (2 MiB
  // multiple, <= reserve) right after the existing range, with the same
  // intent, engine and persist strategy. The file must already be that
  // long (PoolFile::Grow). Addresses handed out before stay valid.
  absl::Status Extend(const PoolFile& file, uint64_t new_length);

  // Error messages name the file by the path it was mapped from; a caller
  // that renames the file (PoolFile::PublishAs) says so here.
  void set_path(std::string path) { path_ = std::move(path); }

  char* address() const { return base_; }
  uint64_t length() const { return length_; }
  uint64_t reserved() const { return reserved_; }
  PageIntent intent() const { return options_.intent; }
  Engine engine() const { return options_.engine; }
  Granularity granularity() const { return granularity_; }
  bool map_sync() const { return map_sync_; }
  bool dax() const { return dax_; }
  bool anonymous() const { return anonymous_; }
  const PersistOps& ops() const { return ops_; }

  // Makes [ptr, ptr+size) durable: msync at page granularity (SyncPages),
  // else the CPU cache flush and fence of ops(), which cannot fail.
  absl::Status Persist(const void* ptr, size_t size) const;

  // A range of mapped addresses [first, second).
  using Range = std::pair<uintptr_t, uintptr_t>;
  // Page granularity: msync(MS_SYNC) of the pages covering `ranges`, one
  // call per mapped piece they touch, over the span of the ranges that lie
  // in that piece (the kernel syncs each call's file range once, and on a
  // page-cache file system each call costs a device cache flush, so
  // pieces nothing was written to are skipped). Ranges outside the mapping
  // are ignored. Errors name the call, the file, the bytes and strerror:
  // "msync(/mnt/pool, 4096 bytes at offset 8192): Input/output error".
  absl::Status SyncPages(const std::vector<Range>& ranges) const;

 private:
  // One mmap or pmem2_map_new: file bytes [offset, offset + length).
  struct Piece {
    uint64_t offset;
    uint64_t length;
  };

  Mapping() = default;
  absl::Status Reserve(uint64_t length);
  absl::Status MapPiece(const PoolFile& file, uint64_t offset, uint64_t length);
  absl::Status MapPieceMmap(const PoolFile& file, uint64_t offset, uint64_t length);
  absl::Status MapPiecePmem2(const PoolFile& file, uint64_t offset, uint64_t length);
  void Advise(char* start, uint64_t length) const;

  MapOptions options_;
  env::Env* env_ = nullptr;        // the file's (anonymous memory: the default): every call that maps, unmaps or syncs
  std::string path_;               // for error messages
  std::vector<Piece> pieces_;      // in file order, back to back from 0
  char* base_ = nullptr;          // first mapped byte
  uint64_t length_ = 0;           // mapped bytes from base_
  uint64_t reserved_ = 0;         // virtual bytes usable from base_
  char* reservation_ = nullptr;   // start of the reserved range (mmap engine)
  uint64_t reservation_size_ = 0;
  Granularity granularity_ = Granularity::kPage;
  bool map_sync_ = false;
  bool dax_ = false;
  bool anonymous_ = false;
  PersistOps ops_;
  pmem2_vm_reservation* pmem2_reservation_ = nullptr;
  std::vector<pmem2_map*> pmem2_maps_;  // one per piece (Create, then each Extend)
};

}  // namespace pmstore::mapping

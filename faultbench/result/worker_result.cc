#include "faultbench/result/worker_result.h"

namespace faultbench {
namespace {

std::optional<uint64_t> Sum(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

}  // namespace

void AddCounters(PhaseResult& total, const PhaseResult& part, bool first) {
  for (auto [into, from] : {std::pair{&total.read, &part.read}, std::pair{&total.write, &part.write}}) {
    into->ios += from->ios;
    into->bytes += from->bytes;
    into->latency.Merge(from->latency);
  }
  total.rusage.user_s += part.rusage.user_s;
  total.rusage.system_s += part.rusage.system_s;
  total.rusage.minor_faults += part.rusage.minor_faults;
  total.rusage.major_faults += part.rusage.major_faults;
  total.rusage.context_switches += part.rusage.context_switches;
  total.perf = first ? part.perf
                     : PerfSnapshot{Sum(total.perf.dtlb_load_misses, part.perf.dtlb_load_misses),
                                    Sum(total.perf.dtlb_store_misses, part.perf.dtlb_store_misses),
                                    Sum(total.perf.page_faults, part.perf.page_faults)};
  total.bytes_first_touched += part.bytes_first_touched;
}

double PhaseResult::FaultsPerMib() const {
  if (bytes_accessed == 0) return 0;
  return static_cast<double>(rusage.minor_faults + rusage.major_faults) /
         (static_cast<double>(bytes_accessed) / (1024.0 * 1024.0));
}

uint64_t MappingOutcome::PresentBytes() const { return census.pud_bytes + census.pmd_bytes + census.pte_bytes; }

double MappingOutcome::PmdShare() const {
  const uint64_t present = PresentBytes();
  return present == 0 ? 0.0 : static_cast<double>(census.pmd_bytes) / static_cast<double>(present);
}

double MappingOutcome::PudShare() const {
  const uint64_t present = PresentBytes();
  return present == 0 ? 0.0 : static_cast<double>(census.pud_bytes) / static_cast<double>(present);
}

double MappingOutcome::FolioShareOf(uint64_t size) const {
  if (!folios) return 0;
  const uint64_t seen = folios->folio_bytes() + folios->zero_page_bytes + folios->no_page_bytes;
  const auto at = folios->bytes.find(size);
  return seen == 0 || at == folios->bytes.end() ? 0.0 : static_cast<double>(at->second) / static_cast<double>(seen);
}

bool MappingOutcome::DiffersFromRequest() const {
  using pmstore::mapping::PageIntent;
  if (!verified) return false;
  switch (requested.kind()) {
    case PageIntent::Kind::kPmd: return PmdShare() < 0.95;
    case PageIntent::Kind::kPud: return PudShare() < 0.95;
    case PageIntent::Kind::kPte: return census.pmd_bytes + census.pud_bytes > 0;
    case PageIntent::Kind::kFolio:
      // PTE-mapped folios: no huge entry, and (where the folios were read)
      // most of the bytes in folios of the size asked for.
      return census.pmd_bytes + census.pud_bytes > 0 || (folios && FolioShare() < 0.95);
    case PageIntent::Kind::kAuto: return false;
  }
  return false;
}

}  // namespace faultbench

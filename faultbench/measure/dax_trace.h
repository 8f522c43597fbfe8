// Tallies of the kernel's fs_dax PMD fault tracepoints for this process.
//
// dax_pmd_fault_done ends each line with the fault's result: NOPAGE (PMD
// installed), NEEDDSYNC (MAP_SYNC write fault, completed after the
// metadata sync) or FALLBACK (fell back to PTEs). dax_pte_fault_done counts
// 4 KiB faults. The ndctl DAX PMD test judges a kernel by these; so does
// faultbench's `dax_trace` verification, and the DAX tests of the mapping
// layer count with it. Needs root and tracefs (mounted on demand at
// /sys/kernel/tracing). Not part of pmstore's library: the store never
// traces itself.
//
// Not thread-safe, and one session at a time per machine: the tracepoint
// switches are global.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace faultbench {

struct DaxTraceTally {
  uint64_t pmd_nopage = 0;
  uint64_t pmd_needdsync = 0;
  uint64_t pmd_fallback = 0;
  uint64_t pmd_other = 0;  // any other result string
  uint64_t pte_faults = 0;
  uint64_t lost_events = 0;  // overwritten in the ring buffer: counts are lower bounds
  uint64_t pmd_installed() const { return pmd_nopage + pmd_needdsync; }
};

// Adds one line of the trace buffer to `tally` when it is an fs_dax fault
// event of process `pid`; other lines are ignored.
void AddTraceLine(std::string_view line, int pid, DaxTraceTally& tally);

// Where fs_dax tracepoints can be used: the tracefs root, or an error that
// says why not (not root, no tracefs, kernel without fs_dax events).
absl::StatusOr<std::string> FindDaxTracepoints();

class DaxTraceSession {
 public:
  // Clears the trace buffer and enables the fs_dax fault events.
  static absl::StatusOr<DaxTraceSession> Start();
  DaxTraceSession(DaxTraceSession&& other) noexcept;
  DaxTraceSession& operator=(DaxTraceSession&&) = delete;
  ~DaxTraceSession();  // puts back every setting Start changed, also after a failed Start

  // Disables the events and tallies this process's faults since Start.
  absl::StatusOr<DaxTraceTally> Stop();

 private:
  explicit DaxTraceSession(std::string root) : root_(std::move(root)) {}
  void DisableEvents();
  void Restore();

  std::string root_;  // empty once restored or moved from
  std::string saved_buffer_kb_;
  std::string saved_record_tgid_;
  bool active_ = false;
};

}  // namespace faultbench

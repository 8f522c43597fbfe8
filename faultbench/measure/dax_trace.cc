#include "faultbench/measure/dax_trace.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "faultbench/sysfacts/read_file.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"

namespace faultbench {
namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";
constexpr const char* kPmdEvent = "dax_pmd_fault_done";
constexpr const char* kPteEvent = "dax_pte_fault_done";
// 65536 PTE faults (256 MiB touched) take ~13 MiB of trace text; the
// default per-CPU buffer (1.4 MiB) would drop most of them.
constexpr const char* kBufferKb = "32768";

absl::Status WriteFile(const std::string& path, std::string_view value) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) return pmstore::base::ErrnoStatus(errno, "open", path);
  out << value;
  out.flush();
  if (!out) return pmstore::base::ErrnoStatus(errno, "write", path);
  return absl::OkStatus();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && absl::ascii_isspace(s.front())) s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(s.back())) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, int& value) {
  s = Trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

// The process id a trace line belongs to: the tgid column "(  1234)" when
// the record-tgid option is on (threads report their own tid before it),
// else the pid after the last '-' of "comm-pid".
bool LinePid(std::string_view line, int& pid) {
  const size_t cpu = line.find(" [");
  if (cpu == std::string_view::npos) return false;
  std::string_view head = line.substr(0, cpu);
  if (const size_t open = head.rfind('('); open != std::string_view::npos) {
    const size_t close = head.find(')', open);
    if (close != std::string_view::npos && ParseInt(head.substr(open + 1, close - open - 1), pid)) return true;
    head = head.substr(0, open);
  }
  head = Trim(head);
  const size_t dash = head.rfind('-');
  return dash != std::string_view::npos && ParseInt(head.substr(dash + 1), pid);
}

}  // namespace

void AddTraceLine(std::string_view line, int pid, DaxTraceTally& tally) {
  const bool pmd = line.find(absl::StrCat(kPmdEvent, ":")) != std::string_view::npos;
  const bool pte = !pmd && line.find(absl::StrCat(kPteEvent, ":")) != std::string_view::npos;
  int line_pid = 0;
  if (!(pmd || pte) || !LinePid(line, line_pid) || line_pid != pid) return;
  if (pte) {
    ++tally.pte_faults;
    return;
  }
  const std::string_view trimmed = Trim(line);
  const std::string_view result = trimmed.substr(trimmed.rfind(' ') + 1);
  if (result == "NOPAGE") ++tally.pmd_nopage;
  else if (result == "NEEDDSYNC") ++tally.pmd_needdsync;
  else if (result == "FALLBACK") ++tally.pmd_fallback;
  else ++tally.pmd_other;
}

absl::StatusOr<std::string> FindDaxTracepoints() {
  const std::string events = absl::StrCat(kTracefs, "/events/fs_dax");
  if (access(events.c_str(), F_OK) == 0) {
    if (geteuid() != 0) return absl::PermissionDeniedError("fs_dax tracepoints need root");
    return std::string(kTracefs);
  }
  if (geteuid() != 0) return absl::PermissionDeniedError("fs_dax tracepoints need root (and tracefs)");
  if (access(absl::StrCat(kTracefs, "/events").c_str(), F_OK) != 0 &&
      mount("nodev", kTracefs, "tracefs", 0, nullptr) != 0) {
    return pmstore::base::ErrnoStatus(errno, "mount tracefs on", kTracefs);
  }
  if (access(events.c_str(), F_OK) != 0) {
    return absl::UnavailableError("this kernel has no fs_dax tracepoints (CONFIG_FS_DAX off?)");
  }
  return std::string(kTracefs);
}

absl::StatusOr<DaxTraceSession> DaxTraceSession::Start() {
  PMSTORE_ASSIGN_OR_RETURN(std::string root, FindDaxTracepoints());
  DaxTraceSession session(root);
  // Saved first: whatever happens after, the destructor puts them back.
  session.saved_buffer_kb_ = ReadFirstLine(root + "/buffer_size_kb");
  session.saved_record_tgid_ = ReadFirstLine(root + "/options/record-tgid");
  PMSTORE_RETURN_IF_ERROR(WriteFile(root + "/buffer_size_kb", kBufferKb));
  PMSTORE_RETURN_IF_ERROR(WriteFile(root + "/options/record-tgid", "1"));
  PMSTORE_RETURN_IF_ERROR(WriteFile(root + "/trace", ""));  // clears the buffer
  for (const char* event : {kPmdEvent, kPteEvent}) {
    PMSTORE_RETURN_IF_ERROR(WriteFile(absl::StrCat(root, "/events/fs_dax/", event, "/enable"), "1"));
  }
  PMSTORE_RETURN_IF_ERROR(WriteFile(root + "/tracing_on", "1"));
  session.active_ = true;
  return session;
}

DaxTraceSession::DaxTraceSession(DaxTraceSession&& other) noexcept
    : root_(std::exchange(other.root_, std::string())),
      saved_buffer_kb_(std::move(other.saved_buffer_kb_)),
      saved_record_tgid_(std::move(other.saved_record_tgid_)),
      active_(std::exchange(other.active_, false)) {}

void DaxTraceSession::DisableEvents() {
  for (const char* event : {kPmdEvent, kPteEvent}) {
    (void)WriteFile(absl::StrCat(root_, "/events/fs_dax/", event, "/enable"), "0");
  }
}

// Puts back every global switch Start touched. Idempotent; a moved-from
// session (empty root) owns nothing.
void DaxTraceSession::Restore() {
  if (root_.empty()) return;
  DisableEvents();
  if (!saved_buffer_kb_.empty()) {
    // Before first use buffer_size_kb reads "7 (expanded: 1408)": the size
    // to put back is the expanded one, not the placeholder.
    std::string kb = saved_buffer_kb_;
    if (const size_t e = kb.find("expanded: "); e != std::string::npos) kb = kb.substr(e + 10);
    (void)WriteFile(root_ + "/buffer_size_kb", kb.substr(0, kb.find_first_not_of("0123456789")));
  }
  if (!saved_record_tgid_.empty()) (void)WriteFile(root_ + "/options/record-tgid", saved_record_tgid_);
  root_.clear();
}

DaxTraceSession::~DaxTraceSession() { Restore(); }

absl::StatusOr<DaxTraceTally> DaxTraceSession::Stop() {
  if (!active_) return absl::FailedPreconditionError("the trace session was already stopped");
  active_ = false;
  DisableEvents();  // before reading: the buffer stops growing
  auto restore = absl::MakeCleanup([this] { Restore(); });
  DaxTraceTally tally;
  const std::string path = root_ + "/trace";
  std::ifstream trace(path);
  if (!trace) return pmstore::base::ErrnoStatus(errno, "open", path);
  const int pid = getpid();
  std::string line;
  while (std::getline(trace, line)) {
    // The header's "entries-in-buffer/entries-written: 10/12" says how many
    // events the ring overwrote; the tally is then a lower bound.
    unsigned long in = 0, written = 0;
    if (std::sscanf(line.c_str(), "# entries-in-buffer/entries-written: %lu/%lu", &in, &written) == 2) {
      tally.lost_events = written > in ? written - in : 0;
      continue;
    }
    AddTraceLine(line, pid, tally);
  }
  return tally;
}

}  // namespace faultbench

#include "faultbench/measure/counters.h"

#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace faultbench {
namespace {

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

std::optional<uint64_t> Diff(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
  if (!a || !b) return std::nullopt;
  return *a - *b;
}

// Opens one counter for the calling thread on any CPU; -1 and errno on failure.
int OpenCounter(uint32_t type, uint64_t config) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = type;
  attr.config = config;
  attr.exclude_hv = 1;
  attr.exclude_idle = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

uint64_t CacheConfig(uint64_t op) {
  return PERF_COUNT_HW_CACHE_DTLB | (op << 8) | (static_cast<uint64_t>(PERF_COUNT_HW_CACHE_RESULT_MISS) << 16);
}

std::optional<uint64_t> ReadCounter(int fd) {
  if (fd < 0) return std::nullopt;
  uint64_t value = 0;
  if (read(fd, &value, sizeof(value)) != static_cast<ssize_t>(sizeof(value))) return std::nullopt;
  return value;
}

}  // namespace

RusageSnapshot ThreadRusage() {
  rusage usage;
  std::memset(&usage, 0, sizeof(usage));
  getrusage(RUSAGE_THREAD, &usage);
  RusageSnapshot s;
  s.user_s = Seconds(usage.ru_utime);
  s.system_s = Seconds(usage.ru_stime);
  s.minor_faults = static_cast<uint64_t>(usage.ru_minflt);
  s.major_faults = static_cast<uint64_t>(usage.ru_majflt);
  s.context_switches = static_cast<uint64_t>(usage.ru_nvcsw + usage.ru_nivcsw);
  return s;
}

RusageSnapshot operator-(const RusageSnapshot& after, const RusageSnapshot& before) {
  RusageSnapshot d;
  d.user_s = after.user_s - before.user_s;
  d.system_s = after.system_s - before.system_s;
  d.minor_faults = after.minor_faults - before.minor_faults;
  d.major_faults = after.major_faults - before.major_faults;
  d.context_switches = after.context_switches - before.context_switches;
  return d;
}

PerfSnapshot operator-(const PerfSnapshot& after, const PerfSnapshot& before) {
  return {Diff(after.dtlb_load_misses, before.dtlb_load_misses),
          Diff(after.dtlb_store_misses, before.dtlb_store_misses), Diff(after.page_faults, before.page_faults)};
}

ThreadPerfCounters::ThreadPerfCounters() {
  dtlb_load_fd_ = OpenCounter(PERF_TYPE_HW_CACHE, CacheConfig(PERF_COUNT_HW_CACHE_OP_READ));
  const int load_errno = errno;
  dtlb_store_fd_ = OpenCounter(PERF_TYPE_HW_CACHE, CacheConfig(PERF_COUNT_HW_CACHE_OP_WRITE));
  page_faults_fd_ = OpenCounter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
  if (dtlb_load_fd_ < 0) {
    unavailable_reason_ = absl::StrCat("dTLB-load-misses: perf_event_open: ", std::strerror(load_errno),
                                       " (no PMU access: a VM without a virtual PMU, or perf_event_paranoid)");
  }
}

ThreadPerfCounters::~ThreadPerfCounters() {
  for (int fd : {dtlb_load_fd_, dtlb_store_fd_, page_faults_fd_}) {
    if (fd >= 0) close(fd);
  }
}

PerfSnapshot ThreadPerfCounters::Read() const {
  return {ReadCounter(dtlb_load_fd_), ReadCounter(dtlb_store_fd_), ReadCounter(page_faults_fd_)};
}

}  // namespace faultbench

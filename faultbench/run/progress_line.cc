#include "faultbench/run/progress_line.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace faultbench {

ProgressLine::ProgressLine(bool enabled, const std::vector<std::unique_ptr<std::atomic<uint64_t>>>& counters)
    : counters_(counters) {
  if (enabled && isatty(STDERR_FILENO)) thread_ = std::thread([this] { Loop(); });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressLine::Loop() {
  const auto start = std::chrono::steady_clock::now();
  uint64_t last = 0;
  bool printed = false;
  for (;;) {
    {
      // Wakes at once when the run ends, so the line never delays the report.
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; })) break;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t ios = 0;
    for (const auto& c : counters_) ios += c->load(std::memory_order_relaxed);
    if (elapsed >= 2.0) {
      std::fprintf(stderr, "\rfaultbench: %.0fs elapsed, %s I/Os, %.0f IOPS   ", elapsed,
                   absl::StrCat(ios).c_str(), static_cast<double>(ios - last) * 2.0);
      printed = true;
    }
    last = ios;
  }
  if (printed) std::fprintf(stderr, "\r%80s\r", "");
}

}  // namespace faultbench

// One updating line on stderr while a run lasts more than 2 s, when stderr
// is a terminal: elapsed time, I/Os so far and the IOPS of the last half
// second. The workers only bump their counters (every 64 I/Os, relaxed);
// this thread reads them, so the line costs the measured loop nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace faultbench {

class ProgressLine {
 public:
  // Starts the line when `enabled` and stderr is a terminal. `counters`
  // must outlive this object.
  ProgressLine(bool enabled, const std::vector<std::unique_ptr<std::atomic<uint64_t>>>& counters);
  ~ProgressLine();  // wakes the thread at once, so the line never delays the report, and erases it
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void Loop();

  const std::vector<std::unique_ptr<std::atomic<uint64_t>>>& counters_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace faultbench

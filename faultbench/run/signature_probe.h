// Where a run reads the machine-wide counters its signature is made of
// (result/signature.h): at the two moments every worker of the run passes
// together; with stonewall stages, every worker of one stage (one probe
// per stage: the stages run one after the other). The first is the start line, once every worker has placed
// itself, made and mapped its file: the process's start-up and the files'
// creation lie before it. The second is the finish line, once every worker
// is done with its I/O but still holds its mapping: PageTables is read
// there, because unmapping gives the page tables back (measured: after the
// run PageTables had dropped below its starting value).
//
// The last worker to arrive takes the reading before any is let go, so no
// worker's I/O falls outside the interval. Thread-safe: each worker calls
// its two methods once, in order.
#pragma once

#include <barrier>
#include <cstddef>

#include "faultbench/sysfacts/vm_counters.h"

namespace faultbench {

// Called at each line of a stage, after the probe's own reading, while
// every worker of the stage still waits there: a caller that runs workers
// in other processes too (faultbench scale --mode=processes) holds the
// line here until those have come to it as well. `line` is 0 at the start
// line, 1 at the finish line. Called from the last worker to arrive.
class LineHook {
 public:
  virtual ~LineHook() = default;
  virtual void AtLine(int line) = 0;
};

class SignatureProbe {
 public:
  // `hook` (may be null) must outlive the probe.
  explicit SignatureProbe(std::ptrdiff_t workers, LineHook* hook = nullptr);

  // At the start line. `ready` false: the worker failed its setup and
  // leaves the run; it does not come to the finish line.
  void AtStartLine(bool ready);
  // After the worker's last I/O, its mapping still in place.
  void AtFinishLine();

  // The readings, valid once every worker has passed the finish line.
  const VmCounters& at_start() const { return readings_[0]; }
  const VmCounters& at_finish() const { return readings_[1]; }
  // Both readings were taken (false when every worker failed its setup).
  bool complete() const { return next_reading_ == 2; }

 private:
  struct TakeReading {
    SignatureProbe* probe;
    void operator()() noexcept;
  };
  VmCounters readings_[2];
  int next_reading_ = 0;  // written only by the barrier's completion step
  LineHook* hook_;
  std::barrier<TakeReading> line_;
};

}  // namespace faultbench

#include "faultbench/run/signature_probe.h"

namespace faultbench {

SignatureProbe::SignatureProbe(std::ptrdiff_t workers) : line_(workers, TakeReading{this}) {}

void SignatureProbe::TakeReading::operator()() noexcept {
  if (probe->next_reading_ < 2) probe->readings_[probe->next_reading_++] = ReadVmCounters();
}

void SignatureProbe::AtStartLine(bool ready) {
  if (ready) {
    line_.arrive_and_wait();
  } else {
    line_.arrive_and_drop();
  }
}

void SignatureProbe::AtFinishLine() { line_.arrive_and_wait(); }

}  // namespace faultbench

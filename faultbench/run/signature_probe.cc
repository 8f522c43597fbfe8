#include "faultbench/run/signature_probe.h"

namespace faultbench {

SignatureProbe::SignatureProbe(std::ptrdiff_t workers, LineHook* hook)
    : hook_(hook), line_(workers, TakeReading{this}) {}

void SignatureProbe::TakeReading::operator()() noexcept {
  if (probe->next_reading_ >= 2) return;
  const int line = probe->next_reading_;
  probe->readings_[probe->next_reading_++] = ReadVmCounters();
  if (probe->hook_ != nullptr) probe->hook_->AtLine(line);
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

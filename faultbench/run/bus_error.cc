#include "faultbench/run/bus_error.h"

#include <signal.h>

#include <csetjmp>
#include <mutex>

namespace faultbench {
namespace {

thread_local sigjmp_buf* t_bus_jump = nullptr;
thread_local void* t_bus_address = nullptr;

void OnSigbus(int, siginfo_t* info, void*) {
  if (t_bus_jump == nullptr) {
    // Not inside an I/O loop: the default action (a core dump), as before.
    signal(SIGBUS, SIG_DFL);
    raise(SIGBUS);
    return;
  }
  t_bus_address = info->si_addr;
  siglongjmp(*t_bus_jump, 1);
}

void InstallSigbusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action = {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, nullptr);
  });
}

}  // namespace

bool RunUnlessBusError(void (*body)(void* arg), void* arg, void** address) {
  InstallSigbusHandler();
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) != 0) {
    t_bus_jump = nullptr;
    *address = t_bus_address;
    return false;
  }
  t_bus_jump = &jump;
  body(arg);
  t_bus_jump = nullptr;
  return true;
}

}  // namespace faultbench

// A SIGBUS while a worker's I/O loop runs means the mapped file no longer
// backs the page (truncated underneath the run by another process, or a
// hole the file system could not fill). The worker's thread jumps back out
// of the loop, and the run reports the file and offset instead of dumping
// core. SIGBUS is synchronous, so it arrives on the thread that touched the
// page; a SIGBUS outside RunUnlessBusError keeps the default action.
#pragma once

namespace faultbench {

// Runs body(arg) on the calling thread; false when a SIGBUS on this thread
// cut it short, with *address the faulting address. Only pointers cross the
// jump, so nothing this call holds is left indeterminate by it; what body
// had on its own stack is abandoned, and what it was filling in stays
// partial. Installs the handler on first use.
bool RunUnlessBusError(void (*body)(void* arg), void* arg, void** address);

}  // namespace faultbench

// Where in its file a worker does I/O, and how much per loop, as fio lays a
// job with one file out (filesetup.c, setup_files):
//
//   offset          the range starts here; offset=N% at N percent of the
//                   file's real size (rounded down to bs); each further
//                   worker of the job starts offset_increment later;
//   size            bytes the range covers and the I/O of one loop;
//                   size=N% is N percent of the file's real size; without
//                   size, the file's size past the offset;
//   filesize        the file's size: the range runs from the offset to its
//                   end, and size (when smaller) is only the I/O per loop;
//   io_size         the I/O of one loop, whatever the range.
//
// The file's real size is its size now, or filesize for a file still to be
// made. The file is created or grown to cover the range. faultbench's own
// --shared-file splits the range into numjobs equal slices, one a worker.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct WorkerLayout {
  uint64_t bs = 4096;
  uint64_t file_size = 0;     // bytes the file must have: created or grown to this
  uint64_t range_offset = 0;  // first byte of the worker's range
  uint64_t range_bytes = 0;   // bytes its offsets cover, a multiple of bs
  uint64_t ios_per_loop = 0;  // I/Os of one loop (fio's per-loop budget)
  uint64_t blocks() const { return range_bytes / bs; }
};

// `existing_size`: the file's size now, 0 when it does not exist (or
// --fresh-file deletes it first). InvalidArgument with a one-line message
// when the options leave no range (a percentage of a file that does not
// exist, an offset past the end, a range smaller than bs).
absl::StatusOr<WorkerLayout> LayOutWorker(const JobOptions& job, int worker_index, uint64_t existing_size);

}  // namespace faultbench

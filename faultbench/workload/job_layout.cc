#include "faultbench/workload/job_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using pmstore::base::FormatBytes;

uint64_t RoundDown(uint64_t value, uint64_t unit) { return value / unit * unit; }

}  // namespace

absl::StatusOr<WorkerLayout> LayOutWorker(const JobOptions& job, int worker_index, uint64_t existing_size) {
  auto bad = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat("job '", job.name, "': ", parts...));
  };
  const uint64_t bs = job.bs;
  const uint64_t real_size = existing_size > 0 ? existing_size : job.filesize;
  const bool percent = job.size_percent > 0 || job.offset_percent > 0;
  if (percent && real_size == 0) {
    return bad(job.size_percent > 0 ? "size=" : "offset=", job.size_percent > 0 ? job.size_percent : job.offset_percent,
               "% is a share of the file's size, and ", WorkerFilePath(job, worker_index),
               " does not exist: give filesize= or size= in bytes");
  }
  // The shared file's slices all start at the job's offset; fio's
  // offset_increment moves each further worker of a job along.
  uint64_t offset = job.offset_percent > 0 ? RoundDown(real_size * job.offset_percent / 100, bs) : job.offset;
  if (!job.shared_file) offset += job.offset_increment * static_cast<uint64_t>(worker_index);

  uint64_t range = 0;
  if (job.filesize > 0 || job.size_percent > 0 || job.size == 0) {
    // The range runs to the end of the file (fio's io_size = real size - offset).
    const uint64_t file_end = job.filesize > 0 ? job.filesize : real_size;
    if (file_end <= offset) {
      if (job.size == 0 && job.filesize == 0 && real_size == 0) {
        return bad("size= is required (e.g. size=1G): ", WorkerFilePath(job, worker_index), " does not exist");
      }
      return bad("offset ", FormatBytes(offset), " is at or past the end of the file (", FormatBytes(file_end), ")");
    }
    range = file_end - offset;
    if (job.size_percent > 0) range = std::min(range, file_end * job.size_percent / 100);
  } else {
    range = job.size;
  }
  range = RoundDown(range, bs);

  uint64_t per_loop = job.io_size > 0 ? job.io_size : range;
  if (job.size > 0 && job.size_percent == 0 && job.filesize > 0) per_loop = std::min(per_loop, job.size);

  WorkerLayout layout;
  layout.bs = bs;
  layout.file_size = std::max(existing_size, offset + range);
  if (job.filesize > 0) layout.file_size = std::max(layout.file_size, job.filesize);
  layout.range_offset = offset;
  layout.range_bytes = range;
  if (job.shared_file) {
    const uint64_t slice = RoundDown(range / static_cast<uint64_t>(job.numjobs), bs);
    if (slice == 0) return bad("--shared-file: the range holds fewer blocks than --numjobs");
    layout.range_offset = offset + slice * static_cast<uint64_t>(worker_index);
    layout.range_bytes = slice;
    per_loop /= static_cast<uint64_t>(job.numjobs);
  }
  if (layout.range_bytes < bs) {
    return bad("the range (", FormatBytes(layout.range_bytes), ") is smaller than bs (", FormatBytes(bs), ")");
  }
  layout.ios_per_loop = std::max<uint64_t>(per_loop / bs, 1);
  return layout;
}

}  // namespace faultbench

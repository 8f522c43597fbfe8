#include "faultbench/run/worker.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "faultbench/engine/io_engine.h"
#include "faultbench/run/bus_error.h"
#include "faultbench/run/cpus.h"
#include "faultbench/run/io_buffer.h"
#include "faultbench/run/target.h"
#include "faultbench/sysfacts/block_device.h"
#include "faultbench/workload/block_coverage.h"
#include "faultbench/workload/block_order.h"
#include "faultbench/workload/fio_options.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/tick_clock.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/verify.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace faultbench {
namespace {

using pmstore::base::MonotonicNs;
using pmstore::base::ReadTicks;
using pmstore::base::TickCalibration;

// Adds `phase` into `total`, one after the other in time.
void AddPhase(PhaseResult& total, const PhaseResult& phase, bool first) {
  total.runtime_s += phase.runtime_s;
  AddCounters(total, phase, first);
}

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kCheckEvery = 64;  // I/Os per batch: between deadline checks and progress updates

// The two stretches a worker measures: `fault`, the first touch of every
// block (the populate call with --prefault, else the rest of the first
// pass), and `steady`, every I/O after it. `*_ran`: the stretch issued the
// job's I/O, so its counters count toward the job's totals.
struct MeasuredPhases {
  PhaseResult fault{.name = "fault"};
  PhaseResult steady{.name = "steady"};
  bool fault_io_ran = false;
  bool steady_ran = false;
};

// Everything a worker holds while it runs; destroyed in reverse order, so
// the mapping goes before the file.
class Worker {
 public:
  explicit Worker(const WorkerContext& context) : ctx_(context), job_(*context.job) {}

  absl::Status SetUp(WorkerResult& result);
  void Measure(WorkerResult& result);
  void ReadBack(WorkerResult& result);
  // Offset in the file of an address inside this worker's mapping.
  uint64_t FileOffsetOf(const void* address) const {
    return static_cast<uint64_t>(static_cast<const char*>(address) - target_.mapping->address());
  }

 private:
  // SetUp's steps, in order.
  absl::Status Place(WorkerResult& result);  // NUMA and cpus_allowed: CPUs and memory policy of this thread
  absl::Status MakeFile(WorkerResult& result);  // the file's creator makes it; the others wait for that
  absl::Status MapFile(WorkerResult& result);
  void PlanBlocks(WorkerResult& result);  // the range and order of blocks
  absl::Status AllocateBuffer();
  // --prefault: the first touch of every page as one system call, so the
  // fault phase is the kernel's work alone and the I/O after it is steady.
  void Prefault(PhaseResult& fault);
  // --ramp_time: I/O before anything is measured.
  void RampUp();
  // The fault phase's I/O; returns how many were issued.
  uint64_t FaultPass(uint64_t budget, uint64_t deadline_ns, MeasuredPhases& phases);
  void SteadyPass(uint64_t budget, uint64_t deadline_ns, MeasuredPhases& phases);
  // Issues up to `max_ios` I/Os, stopping early at `deadline_ns` (monotonic);
  // returns how many were issued. `measured` is false for the ramp, whose
  // offsets are not logged. kTimed: each I/O is timed (fio's disable_clat
  // and disable_lat both off the clock reads).
  uint64_t RunSpan(uint64_t max_ios, uint64_t deadline_ns, PhaseResult& phase, bool measured = true) {
    return job_.times_io() ? RunSpanAs<true>(max_ios, deadline_ns, phase, measured)
                           : RunSpanAs<false>(max_ios, deadline_ns, phase, measured);
  }
  template <bool kTimed>
  uint64_t RunSpanAs(uint64_t max_ios, uint64_t deadline_ns, PhaseResult& phase, bool measured);
  // Distinct bytes a phase touched (all of them, and those touched first):
  // counted for orders that repeat blocks, else its I/Os capped at the range.
  void StartCounting() {
    if (coverage_) coverage_->StartPhase();
  }
  void CountTouched(uint64_t ios, PhaseResult& phase) const;
  // ReadBack where the backing has one page size (device DAX, hugetlbfs).
  void VerifyAtPageSize(const WorkerResult& result, MappingOutcome& mapping) const;
  // DAX pages are the device's: name its node instead of move_pages' "absent".
  void AttributeDaxPages(PagePlacement& placement) const;
  template <typename Body>
  void TimedPhase(PhaseResult& phase, Body body);
  static bool NextIsRead(int read_percent, uint64_t& rng) {
    if (read_percent >= 100) return true;
    if (read_percent <= 0) return false;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return static_cast<int>(rng % 100) < read_percent;
  }

  const WorkerContext& ctx_;
  const JobOptions& job_;
  Target target_;
  std::unique_ptr<IoEngine> engine_;
  std::optional<IoBuffer> buffer_;
  std::unique_ptr<ThreadPerfCounters> perf_;
  std::optional<BlockCoverage> coverage_;  // orders that repeat blocks
  BlockOrder order_ = BlockOrder::Sequential(1);
  uint64_t base_offset_ = 0;
  uint64_t blocks_ = 0;
  int read_percent_ = 100;
  uint64_t rng_ = 0;
  uint64_t faults_while_measuring_ = 0;  // minor + major, ramp included
};

absl::Status Worker::MakeFile(WorkerResult& result) {
  result.file = ctx_.file;
  if (job_.anonymous()) return absl::OkStatus();  // nothing to make: the mapping is the memory
  if (!ctx_.creates_file) {
    if (ctx_.file_ready != nullptr) ctx_.file_ready->wait();
    return absl::OkStatus();
  }
  absl::Status status;
  if (job_.fresh_file) status = UnlinkJobFile(result.file, "--fresh-file");
  if (status.ok()) status = PrepareTargetFile(result.file, ctx_.file_size, job_.fallocate, ctx_.fixed);
  if (ctx_.file_ready != nullptr) ctx_.file_ready->count_down();
  return status;
}

absl::Status Worker::Place(WorkerResult& result) {
  PMSTORE_RETURN_IF_ERROR(ApplyNuma(ctx_.numa));
  PMSTORE_RETURN_IF_ERROR(RestrictThreadCpus(ctx_.cpus));
  result.numa.cpus = AllowedCpus();
  result.numa.policy = ctx_.numa.policy;
  result.numa.nodes = ctx_.numa.mem_nodes;
  return absl::OkStatus();
}

absl::Status Worker::MapFile(WorkerResult& result) {
  PMSTORE_ASSIGN_OR_RETURN(target_, OpenAndMapTarget(job_, result.file, ctx_.fixed, ctx_.file_size, result.page_cache));
  const pmstore::mapping::Mapping& mapping = *target_.mapping;
  const EngineOptions writes{
      .libpmem_flags = job_.ioengine == JobEngine::kLibpmem, .direct = job_.direct, .sync = job_.sync};
  engine_ = MakeEngine(mapping, writes);
  result.mapping.writes = DescribeWrites(mapping.engine(), writes);
  result.mapping.requested = job_.mapping;
  result.mapping.memory = job_.MemoryName();
  result.mapping.engine = job_.engine();
  result.mapping.granularity = std::string(pmstore::mapping::GranularityName(mapping.granularity()));
  result.mapping.map_sync = mapping.map_sync();
  result.mapping.dax = mapping.dax();
  return absl::OkStatus();
}

void Worker::PlanBlocks(WorkerResult& result) {
  const WorkerLayout& layout = ctx_.layout;
  blocks_ = layout.blocks();
  base_offset_ = layout.range_offset;
  result.range_bytes = layout.range_bytes;
  result.seed = ctx_.seed;
  order_ = BlockOrder::ForJob(job_, blocks_, ctx_.seed);
  order_.SetPassLength(layout.ios_per_loop);
  if (!order_.each_block_once()) coverage_.emplace(blocks_);
  read_percent_ = ReadPercent(job_.rw, job_.rwmixread);
  rng_ = (ctx_.seed * 0x2545F4914F6CDD1Dull) | 1;
}

absl::Status Worker::AllocateBuffer() {
  PMSTORE_ASSIGN_OR_RETURN(IoBuffer buffer, IoBuffer::Make(job_.bs, job_.buffer_pattern, ctx_.seed));
  buffer_.emplace(std::move(buffer));
  return absl::OkStatus();
}

absl::Status Worker::SetUp(WorkerResult& result) {
  // Placement first: the file's pages (tmpfs allocates them at fallocate)
  // and the page tables must come from the policy's nodes.
  PMSTORE_RETURN_IF_ERROR(Place(result));
  PMSTORE_RETURN_IF_ERROR(MakeFile(result));
  PMSTORE_RETURN_IF_ERROR(MapFile(result));
  PlanBlocks(result);
  PMSTORE_RETURN_IF_ERROR(AllocateBuffer());
  // What invalidate= left in the page cache, as the first I/O will find it.
  result.page_cache.resident_bytes = ResidentBytes(target_.mapping->address() + base_offset_, result.range_bytes);
  perf_ = std::make_unique<ThreadPerfCounters>();
  result.perf_unavailable = perf_->unavailable_reason();
  return absl::OkStatus();
}

template <typename Body>
void Worker::TimedPhase(PhaseResult& phase, Body body) {
  const RusageSnapshot rusage_before = ThreadRusage();
  const PerfSnapshot perf_before = perf_->Read();
  const uint64_t start = MonotonicNs();
  body();
  phase.runtime_s = static_cast<double>(MonotonicNs() - start) / 1e9;
  phase.perf = perf_->Read() - perf_before;
  phase.rusage = ThreadRusage() - rusage_before;
}

template <bool kTimed>
uint64_t Worker::RunSpanAs(uint64_t max_ios, uint64_t deadline_ns, PhaseResult& phase, bool measured) {
  // Everything the loop touches is copied into locals whose addresses never
  // escape: the engine call is opaque to the compiler, and members would be
  // reloaded and stored around every call.
  const bool tsc = ctx_.use_tsc;
  const uint64_t bs = job_.bs;
  const uint64_t base_offset = base_offset_;
  IoBuffer& io_buffer = *buffer_;
  char* const buffer = io_buffer.data();
  IoEngine* const engine = engine_.get();
  std::vector<uint64_t>* const offset_log = measured ? ctx_.offset_log : nullptr;
  BlockCoverage* const coverage = coverage_ ? &*coverage_ : nullptr;
  const bool scramble = job_.scrambles() && read_percent_ < 100;
  BlockOrder order = order_;
  const int read_percent = read_percent_;
  uint64_t rng = rng_;
  // Latencies of a batch are kept on the stack and added to the histograms
  // after the batch, so histogram updates stay out of the timed copies.
  uint64_t pending[kCheckEvery];
  uint64_t done = 0;
  while (done < max_ios) {
    const uint64_t batch = std::min(kCheckEvery, max_ios - done);
    uint64_t read_mask = 0;
    uint64_t t0 = kTimed ? ReadTicks(tsc) : 0;
    for (uint64_t k = 0; k < batch; ++k) {
      const uint64_t block = order.Next();
      const uint64_t offset = block * bs;
      if (coverage != nullptr) coverage->Mark(block);
      if (offset_log != nullptr) offset_log->push_back(offset);
      const bool is_read = NextIsRead(read_percent, rng);
      if (is_read) {
        engine->Read(base_offset + offset, buffer, bs);
      } else {
        if (scramble) {
          // Before the clock starts, as fio scrambles before it times the I/O.
          io_buffer.Scramble(base_offset + offset, kTimed ? t0 : done + k);
          if constexpr (kTimed) t0 = ReadTicks(tsc);
        }
        engine->Write(base_offset + offset, buffer, bs);
      }
      if constexpr (kTimed) {
        const uint64_t t1 = ReadTicks(tsc);
        pending[k] = t1 - t0;
        t0 = t1;
      }
      read_mask |= static_cast<uint64_t>(is_read) << k;
    }
    for (uint64_t k = 0; k < batch; ++k) {
      DirectionStats& stats = (read_mask >> k) & 1 ? phase.read : phase.write;
      if constexpr (kTimed) stats.latency.Record(pending[k]);
      ++stats.ios;
    }
    done += batch;
    if (ctx_.progress != nullptr) ctx_.progress->fetch_add(batch, std::memory_order_relaxed);
    if (deadline_ns != kNoLimit && MonotonicNs() >= deadline_ns) break;
  }
  order_ = order;
  rng_ = rng;
  phase.read.bytes = phase.read.ios * bs;
  phase.write.bytes = phase.write.ios * bs;
  return done;
}

void Worker::CountTouched(uint64_t ios, PhaseResult& phase) const {
  const uint64_t range = blocks_ * job_.bs;
  if (coverage_) {
    phase.bytes_accessed = coverage_->touched_in_phase() * job_.bs;
    phase.bytes_first_touched = coverage_->first_touched_in_phase() * job_.bs;
  } else {
    phase.bytes_accessed = std::min(ios * job_.bs, range);
  }
}

void Worker::Prefault(PhaseResult& fault) {
  const uint64_t range = blocks_ * job_.bs;
  const int advice = ReadPercent(job_.rw, job_.rwmixread) == 100 ? MADV_POPULATE_READ : MADV_POPULATE_WRITE;
  TimedPhase(fault, [&] {
    char* start = target_.mapping->address() + base_offset_;
    if (madvise(start, range, advice) != 0) {
      // Older kernels: touch one byte per page with the same access kind.
      for (uint64_t off = 0; off < range; off += 4096) {
        if (advice == MADV_POPULATE_READ) {
          volatile char sink = start[off];
          (void)sink;
        } else {
          start[off] = start[off];
        }
      }
    }
  });
  fault.bytes_first_touched = fault.bytes_accessed = range;
}

void Worker::RampUp() {
  if (job_.ramp_time_s <= 0) return;
  PhaseResult ramp;
  RunSpan(kNoLimit, MonotonicNs() + static_cast<uint64_t>(job_.ramp_time_s * 1e9), ramp, /*measured=*/false);
}

uint64_t Worker::FaultPass(uint64_t budget, uint64_t deadline_ns, MeasuredPhases& phases) {
  phases.fault_io_ran = true;
  // The rest of the first pass touches each block for the first time
  // (a permutation's blocks; an order that repeats blocks counts them).
  const uint64_t first_pass = std::min(budget, order_.pass_length() - order_.emitted());
  uint64_t done = 0;
  StartCounting();
  TimedPhase(phases.fault, [&] { done = RunSpan(first_pass, deadline_ns, phases.fault); });
  CountTouched(done, phases.fault);
  if (!coverage_) phases.fault.bytes_first_touched = phases.fault.bytes_accessed;
  return done;
}

void Worker::SteadyPass(uint64_t budget, uint64_t deadline_ns, MeasuredPhases& phases) {
  phases.steady_ran = true;
  uint64_t done = 0;
  StartCounting();
  TimedPhase(phases.steady, [&] { done = RunSpan(budget, deadline_ns, phases.steady); });
  CountTouched(done, phases.steady);
}

// fio's job-level numbers cover the measured I/O: with --prefault that is
// the steady phase only, otherwise both.
void AddUpPhases(MeasuredPhases& phases, uint64_t range, bool prefault, bool coverage, WorkerResult& result) {
  PhaseResult& total = result.total;
  total.name = "all";
  // Only phases that ran: one that did not has no counter readings at all.
  std::vector<const PhaseResult*> counted;
  if (phases.fault_io_ran) counted.push_back(&phases.fault);
  if (phases.steady_ran) counted.push_back(&phases.steady);
  for (size_t i = 0; i < counted.size(); ++i) AddPhase(total, *counted[i], i == 0);
  // Distinct bytes of both phases: a permutation's first pass covers what the
  // steady passes touch again; an order with coverage adds the blocks the steady
  // phase touched first.
  total.bytes_accessed =
      std::min(range, coverage ? phases.fault.bytes_accessed + phases.steady.bytes_first_touched
                              : std::max(phases.fault.bytes_accessed, phases.steady.bytes_accessed));
  if (prefault || phases.steady.read.ios + phases.steady.write.ios > 0) {
    result.phases.push_back(std::move(phases.fault));
    result.phases.push_back(std::move(phases.steady));
  }
}

// The steps of a measured run: prefault (or not), ramp, the rest of the
// first pass (the fault phase), every later I/O (the steady phase).
void Worker::Measure(WorkerResult& result) {
  TickCalibration calibration(ctx_.use_tsc);
  calibration.Start();
  MeasuredPhases phases;  // first: its histograms' memory is the run's, not the mapping's
  const RusageSnapshot before = ThreadRusage();
  if (job_.prefault) Prefault(phases.fault);
  RampUp();
  const uint64_t measure_start = MonotonicNs();
  const uint64_t deadline =
      job_.runtime_s > 0 ? measure_start + static_cast<uint64_t>(job_.runtime_s * 1e9) : kNoLimit;
  uint64_t budget = job_.time_based ? kNoLimit : static_cast<uint64_t>(job_.loops) * ctx_.layout.ios_per_loop;
  if (!job_.prefault && order_.pass() == 0) budget -= FaultPass(budget, deadline, phases);
  if (budget > 0 && (deadline == kNoLimit || MonotonicNs() < deadline)) SteadyPass(budget, deadline, phases);
  calibration.Stop();
  const RusageSnapshot measured = ThreadRusage() - before;
  faults_while_measuring_ = measured.minor_faults + measured.major_faults;
  result.start_ns = measure_start;
  result.end_ns = MonotonicNs();
  result.ns_per_tick = calibration.NsPerTick();
  AddUpPhases(phases, blocks_ * job_.bs, job_.prefault, coverage_.has_value(), result);
}

void Worker::ReadBack(WorkerResult& result) {
  const char* start = target_.mapping->address() + base_offset_;
  const uint64_t range = blocks_ * job_.bs;
  if (ctx_.fixed.fixed()) {
    VerifyAtPageSize(result, result.mapping);
  } else if (auto census = pmstore::mapping::VerifyMapping(start, range); census.ok()) {
    result.mapping.verified = true;
    result.mapping.census = *census;
  } else {
    result.mapping.verify_error = std::string(census.status().message());
  }
  // The folios behind the range (a 64 KiB folio is sixteen PTEs to every
  // page-table reader). DAX pages have none (no struct page).
  if (!target_.mapping->dax() && !ctx_.fixed.devdax) {
    auto folios = pmstore::mapping::ReadFolioSizes(start, range);
    if (folios.ok()) {
      result.mapping.folios = *std::move(folios);
    } else {
      result.mapping.folios_error = std::string(folios.status().message());
    }
  }
  result.numa.placement = SamplePagePlacement(start, range);
  if (target_.mapping->dax()) AttributeDaxPages(result.numa.placement);
}

// One page size means every present byte is mapped at it; what remains is
// which bytes are present. On hugetlbfs the page tables say (PAGEMAP_SCAN,
// else smaps' hugetlb lines), though not at which size. Device DAX has no
// such reader here (PAGEMAP_SCAN came in 6.7; smaps does not see DAX), but
// it needs none: its driver maps whatever is touched at its align or raises
// SIGBUS, so the present bytes are the touched ones. The fault count is the
// check on the page size: about one fault per page.
void Worker::VerifyAtPageSize(const WorkerResult& result, MappingOutcome& mapping) const {
  const uint64_t page = ctx_.fixed.page_size;
  const uint64_t range = blocks_ * job_.bs;
  const char* start = target_.mapping->address() + base_offset_;
  PageSizeEvidence evidence;
  evidence.page_size = page;
  evidence.backing = ctx_.fixed.What(result.file);
  evidence.faults = faults_while_measuring_;
  uint64_t present = 0;
  if (ctx_.fixed.devdax) {
    // A first pass that ran to its end touched every block.
    const uint64_t touched = result.total.bytes_accessed >= range ? range : result.total.bytes_accessed;
    present = std::min(range, pmstore::base::RoundUp(touched, page));
    evidence.presence = "touched";
  } else {
    auto census = pmstore::mapping::VerifyMapping(start, range);
    if (!census.ok()) {
      mapping.verify_error = std::string(census.status().message());
      return;
    }
    present = census->pmd_bytes + census->pte_bytes;
    evidence.presence = std::string(pmstore::mapping::VerifyMethodName(census->method));
  }
  // Pages of `page` that the present bytes span, from the range's start in the file.
  const uint64_t first = base_offset_ / page * page;
  evidence.expected_faults = present == 0 ? 0 : (pmstore::base::RoundUp(base_offset_ + present, page) - first) / page;
  mapping.verified = true;
  mapping.census = pmstore::mapping::CensusAtPageSize(present, page);
  mapping.page_size = evidence;
}

void Worker::AttributeDaxPages(PagePlacement& placement) const {
  if (ctx_.fixed.devdax) {
    AttributeToDaxDevice(placement, ctx_.fixed.devdax->numa_node, ctx_.fixed.devdax->name);
    return;
  }
  struct stat st {};
  if (fstat(target_.file->fd(), &st) != 0) return;
  const BlockFacts block = ReadBlockFacts(st.st_dev);
  if (!block.device.empty()) AttributeToDaxDevice(placement, block.numa_node, block.device);
}

// The steps that touch the mapping, run under RunUnlessBusError. The
// signature's finish line comes between the I/O and the read-back, so the
// read-back is not counted and the mapping is still live there.
struct MappedSteps {
  Worker* worker;
  WorkerResult* result;
  SignatureProbe* probe;
  bool at_finish_line = false;
  void ReachFinishLine() {
    if (probe == nullptr || at_finish_line) return;
    at_finish_line = true;
    probe->AtFinishLine();
  }
  static void Run(void* arg) {
    auto* steps = static_cast<MappedSteps*>(arg);
    steps->worker->Measure(*steps->result);
    steps->ReachFinishLine();
    steps->worker->ReadBack(*steps->result);
  }
};

}  // namespace

WorkerResult RunWorker(const WorkerContext& context) {
  WorkerResult result;
  result.job = *context.job;
  result.job_index = context.job_index;
  result.worker_index = context.worker_index;
  Worker worker(context);
  absl::Status status = worker.SetUp(result);
  result.group_id = context.group_id;
  result.stage = context.stage;
  result.notes = InertOptionNotes(*context.job);
  if (context.file_ready != nullptr && context.creates_file && !status.ok()) {
    // SetUp may have failed before the file step: never leave the others waiting.
    if (!context.file_ready->try_wait()) context.file_ready->count_down();
  }
  if (context.start_line != nullptr) context.start_line->arrive_and_wait();
  if (context.probe != nullptr) context.probe->AtStartLine(status.ok());
  if (!status.ok()) {
    result.error = std::string(status.message());
    result.failed_in_setup = true;
    return result;
  }
  MappedSteps steps{&worker, &result, context.probe};
  void* address = nullptr;
  const bool no_bus_error = RunUnlessBusError(&MappedSteps::Run, &steps, &address);
  steps.ReachFinishLine();  // a SIGBUS in the I/O skipped it; the others wait there
  if (!no_bus_error) {
    result.bus_error = true;
    result.error = absl::StrCat("SIGBUS at offset ", worker.FileOffsetOf(address), " of ", result.file,
                                ": the file no longer backs its mapping (truncated during the run, or no space "
                                "for the page)");
  }
  return result;
}

}  // namespace faultbench

#include "faultbench/workload/fio_options.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using Handler = absl::Status (*)(JobOptions& job, std::string_view key, std::string_view value);

absl::Status Bad(std::string_view key, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("option ", std::string(key), "=", std::string(value), ": ", std::string(why)));
}

// fio's booleans: a bare key is 1; 0/1, true/false, yes/no, on/off.
absl::StatusOr<bool> Bool(std::string_view key, std::string_view value) {
  const std::string v = absl::AsciiStrToLower(std::string(value));
  if (v.empty() || v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return Bad(key, value, "expected 0 or 1");
}

template <typename T>
absl::StatusOr<T> Number(std::string_view key, std::string_view value) {
  T out{};
  if (!absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &out)) return Bad(key, value, "not a number");
  return out;
}

absl::StatusOr<uint64_t> Size(std::string_view key, std::string_view value) {
  if (value.find(',') != std::string_view::npos || value.find('-') != std::string_view::npos) {
    return Bad(key, value, "faultbench takes one size for reads and writes (no ranges, no per-direction values)");
  }
  auto size = pmstore::base::ParseSize(value);
  if (!size.ok()) return Bad(key, value, std::string(size.status().message()));
  return *size;
}

// "N%" -> N; otherwise nullopt (a size in bytes).
absl::StatusOr<std::optional<unsigned>> Percent(std::string_view key, std::string_view value) {
  if (!value.ends_with("%")) return std::optional<unsigned>();
  PMSTORE_ASSIGN_OR_RETURN(unsigned percent, Number<unsigned>(key, value.substr(0, value.size() - 1)));
  if (percent == 0 || percent > 100) return Bad(key, value, "a percentage must be 1..100");
  return std::optional<unsigned>(percent);
}

absl::Status SizeOrPercent(std::string_view key, std::string_view value, uint64_t& bytes, unsigned& percent) {
  PMSTORE_ASSIGN_OR_RETURN(std::optional<unsigned> p, Percent(key, value));
  if (p) {
    percent = *p;
    bytes = 0;
    return absl::OkStatus();
  }
  percent = 0;
  PMSTORE_ASSIGN_OR_RETURN(bytes, Size(key, value));
  return absl::OkStatus();
}

// fio's numa_mem_policy: default | local | prefer:N | bind:NODES | interleave:NODES.
absl::Status MemPolicy(JobOptions& job, std::string_view key, std::string_view value) {
  const size_t colon = value.find(':');
  const std::string mode(value.substr(0, colon));
  const std::string nodes = colon == std::string_view::npos ? "" : std::string(value.substr(colon + 1));
  job.numa.membind.clear();
  job.numa.preferred.clear();
  job.numa.interleave.clear();
  if (mode == "default" || mode == "local") return absl::OkStatus();
  if (nodes.empty()) return Bad(key, value, absl::StrCat(mode, " needs nodes, e.g. ", mode, ":0"));
  if (mode == "prefer") job.numa.preferred = nodes;
  else if (mode == "bind") job.numa.membind = nodes;
  else if (mode == "interleave") job.numa.interleave = nodes;
  else return Bad(key, value, absl::StrCat("unknown mode '", mode, "'"));
  return absl::OkStatus();
}

// random_distribution=random | zipf[:theta[:center]] | pareto[:h[:center]] | normal[:dev[:center]].
absl::Status RandomDistributionOption(JobOptions& job, std::string_view key, std::string_view value) {
  std::vector<std::string> parts = absl::StrSplit(std::string(value), ':');
  Distribution d;
  const std::string& kind = parts[0];
  if (kind == "random") {
    if (parts.size() > 1) return Bad(key, value, "random takes no parameter");
    job.random_distribution = d;
    return absl::OkStatus();
  }
  if (kind == "zoned" || kind == "zoned_abs") {
    return Bad(key, value, "zoned distributions are not supported; use zipf, pareto or normal");
  }
  if (kind == "zipf") d = {RandomDistribution::kZipf, 1.1, -1};         // fio's FIO_DEF_ZIPF
  else if (kind == "pareto") d = {RandomDistribution::kPareto, 0.2, -1};  // fio's FIO_DEF_PARETO
  else if (kind == "normal" || kind == "gauss") d = {RandomDistribution::kNormal, 0, -1};
  else return Bad(key, value, "use random, zipf:THETA, pareto:H or normal:DEV (each with an optional :CENTER)");
  if (parts.size() > 3) return Bad(key, value, "at most a parameter and a center");
  if (parts.size() > 1 && !absl::SimpleAtod(parts[1], &d.parameter)) {
    return Bad(key, value, "the parameter is not a number");
  }
  if (parts.size() > 2 && (!absl::SimpleAtod(parts[2], &d.center) || d.center < 0 || d.center > 1)) {
    return Bad(key, value, "the center must be in [0, 1]");
  }
  if (d.kind == RandomDistribution::kZipf && (d.parameter <= 0 || d.parameter == 1.0)) {
    return Bad(key, value, "zipf's theta must be > 0 and differ from 1.0 (as in fio)");
  }
  if (d.kind == RandomDistribution::kPareto && (d.parameter <= 0 || d.parameter >= 1)) {
    return Bad(key, value, "pareto's h must be in (0, 1) (as in fio)");
  }
  if (d.kind == RandomDistribution::kNormal && (d.parameter < 0 || d.parameter >= 100)) {
    return Bad(key, value, "normal's deviation must be in [0, 100) percent (as in fio)");
  }
  job.random_distribution = d;
  return absl::OkStatus();
}

// fio's buffer_pattern: 0xHEX bytes, decimal numbers (little-endian, as
// few bytes as they need), 'quoted' or "quoted" strings, concatenated.
absl::Status BufferPattern(JobOptions& job, std::string_view key, std::string_view value) {
  std::string bytes;
  size_t i = 0;
  while (i < value.size()) {
    const char c = value[i];
    if (c == '"' || c == '\'') {
      const size_t end = value.find(c, i + 1);
      if (end == std::string_view::npos) return Bad(key, value, "unclosed quote");
      bytes.append(value.substr(i + 1, end - i - 1));
      i = end + 1;
    } else if (value.substr(i, 2) == "0x" || value.substr(i, 2) == "0X") {
      size_t end = i + 2;
      while (end < value.size() && absl::ascii_isxdigit(static_cast<unsigned char>(value[end]))) {
        if (value.substr(end, 2) == "0x" || value.substr(end, 2) == "0X") break;
        ++end;
      }
      std::string hex(value.substr(i + 2, end - i - 2));
      if (hex.empty()) return Bad(key, value, "0x needs hex digits");
      if (hex.size() % 2 != 0) hex.insert(hex.begin(), '0');
      for (size_t h = 0; h < hex.size(); h += 2) {
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(h, 2), nullptr, 16)));
      }
      i = end;
    } else if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      size_t end = i;
      while (end < value.size() && absl::ascii_isdigit(static_cast<unsigned char>(value[end]))) ++end;
      uint64_t number = 0;
      if (!absl::SimpleAtoi(absl::string_view(value.data() + i, end - i), &number) || number > 0x7fffffff) {
        return Bad(key, value, "a decimal number must fit in 31 bits (as in fio)");
      }
      do {
        bytes.push_back(static_cast<char>(number & 0xff));
        number >>= 8;
      } while (number != 0);
      i = end;
    } else if (c == '%' || c == '{') {
      return Bad(key, value, "fio's %o offsets and {file} patterns are not supported: use hex, numbers or strings");
    } else {
      return Bad(key, value, "expected 0xHEX, a number or a quoted string");
    }
  }
  if (bytes.empty()) return Bad(key, value, "empty pattern");
  job.buffer_pattern = bytes;
  return absl::OkStatus();
}

absl::Status PercentileList(JobOptions& job, std::string_view key, std::string_view value) {
  job.percentile_list.clear();
  for (absl::string_view item : absl::StrSplit(absl::string_view(value.data(), value.size()), ':')) {
    double p = 0;
    if (!absl::SimpleAtod(item, &p) || !(p > 0 && p <= 100)) {
      return Bad(key, value, "a ':'-separated list of percentiles in (0, 100], e.g. 50:99:99.9");
    }
    job.percentile_list.push_back(p);
  }
  if (job.percentile_list.size() > 20) return Bad(key, value, "at most 20 percentiles (as in fio)");
  std::sort(job.percentile_list.begin(), job.percentile_list.end());  // fio sorts them too
  return absl::OkStatus();
}

// fio's cpumask: a bit mask of CPUs (bit 0 = CPU 0), as cpus_allowed.
absl::Status CpuMask(JobOptions& job, std::string_view key, std::string_view value) {
  uint64_t mask = 0;
  const bool hex = value.starts_with("0x") || value.starts_with("0X");
  if (!(hex ? absl::SimpleHexAtoi(absl::string_view(value.data() + 2, value.size() - 2), &mask)
            : absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &mask)) || mask == 0) {
    return Bad(key, value, "expected a non-zero CPU bit mask, e.g. 0xf");
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < 64; ++cpu) {
    if ((mask >> cpu) & 1) cpus.push_back(cpu);
  }
  job.cpus_allowed = absl::StrJoin(cpus, ",");
  return absl::OkStatus();
}

#define FLAG(field) [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status { \
    PMSTORE_ASSIGN_OR_RETURN(j.field, Bool(k, v)); return absl::OkStatus(); }
#define CONTEXT_FLAG(field) [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status { \
    PMSTORE_ASSIGN_OR_RETURN(bool b, Bool(k, v)); j.field.set = b; return absl::OkStatus(); }
#define NUMBER(field) [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status { \
    PMSTORE_ASSIGN_OR_RETURN(j.field, Number<decltype(j.field)>(k, v)); return absl::OkStatus(); }
#define SIZE(field) [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status { \
    PMSTORE_ASSIGN_OR_RETURN(j.field, Size(k, v)); return absl::OkStatus(); }
#define TEXT(field) [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status { \
    j.field = std::string(v); return absl::OkStatus(); }
#define SECONDS(field) [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status { \
    PMSTORE_ASSIGN_OR_RETURN(j.field, ParseSeconds(v)); return absl::OkStatus(); }

// Options with fio's meaning (and faultbench's own), by canonical name.
const std::map<std::string, Handler, std::less<>>& Supported() {
  static const std::map<std::string, Handler, std::less<>> kOptions = {
      {"name", TEXT(name)},
      {"description", TEXT(description)},
      {"filename", TEXT(filename)},
      {"directory", TEXT(directory)},
      {"filename_format", TEXT(filename_format)},
      {"size", [](JobOptions& j, std::string_view k, std::string_view v) {
         return SizeOrPercent(k, v, j.size, j.size_percent); }},
      {"filesize", SIZE(filesize)},
      {"offset", [](JobOptions& j, std::string_view k, std::string_view v) {
         return SizeOrPercent(k, v, j.offset, j.offset_percent); }},
      {"offset_increment", SIZE(offset_increment)},
      {"io_size", SIZE(io_size)},
      {"io_limit", SIZE(io_size)},
      {"bs", SIZE(bs)},
      {"blocksize", SIZE(bs)},
      {"rw", [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(j.rw, ParseRwMode(v)); return absl::OkStatus(); }},
      {"rwmixread", NUMBER(rwmixread)},
      {"rwmixwrite", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(int write, Number<int>(k, v)); j.rwmixread = 100 - write; return absl::OkStatus(); }},
      {"numjobs", NUMBER(numjobs)},
      {"runtime", SECONDS(runtime_s)},
      {"time_based", FLAG(time_based)},
      {"loops", NUMBER(loops)},
      {"ramp_time", SECONDS(ramp_time_s)},
      {"randseed", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(j.randseed, Number<uint64_t>(k, v));
         j.randseed_set = true;
         return absl::OkStatus(); }},
      {"randrepeat", FLAG(randrepeat)},
      {"allrandrepeat", FLAG(randrepeat)},
      {"norandommap", FLAG(norandommap)},
      {"random_distribution", RandomDistributionOption},
      {"unlink", FLAG(unlink)},
      {"ioengine", [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(j.ioengine, ParseJobEngine(v)); return absl::OkStatus(); }},
      {"direct", FLAG(direct)},
      {"buffered", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(bool buffered, Bool(k, v)); j.direct = !buffered; return absl::OkStatus(); }},
      {"sync", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         // fio 3.33: none/0, sync/1, dsync; its libpmem engine drains for either kind.
         if (v == "sync" || v == "dsync") { j.sync = true; return absl::OkStatus(); }
         if (v == "none") { j.sync = false; return absl::OkStatus(); }
         PMSTORE_ASSIGN_OR_RETURN(j.sync, Bool(k, v)); return absl::OkStatus(); }},
      {"fallocate", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         if (v == "native") j.fallocate = Fallocate::kNative;
         else if (v == "posix" || v == "1") j.fallocate = Fallocate::kPosix;
         else if (v == "keep") j.fallocate = Fallocate::kKeep;
         else if (v == "none" || v == "0") j.fallocate = Fallocate::kNone;
         else if (v == "truncate") j.fallocate = Fallocate::kTruncate;
         else return Bad(k, v, "use native, posix, keep, none or truncate");
         return absl::OkStatus(); }},
      {"invalidate", CONTEXT_FLAG(invalidate)},
      {"fadvise_hint", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         if (v == "random") j.fadvise_hint.set = FadviseHint::kRandom;
         else if (v == "sequential") j.fadvise_hint.set = FadviseHint::kSequential;
         else {
           PMSTORE_ASSIGN_OR_RETURN(bool on, Bool(k, v));
           j.fadvise_hint.set = on ? FadviseHint::kType : FadviseHint::kOff;
         }
         return absl::OkStatus(); }},
      {"scramble_buffers", CONTEXT_FLAG(scramble_buffers)},
      {"buffer_pattern", BufferPattern},
      {"zero_buffers", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(bool zero, Bool(k, v));
         j.buffer_pattern = zero ? std::string(1, '\0') : std::string();
         return absl::OkStatus(); }},
      {"stonewall", FLAG(stonewall)},
      {"wait_for_previous", FLAG(stonewall)},
      {"new_group", FLAG(new_group)},
      {"group_reporting", FLAG(group_reporting)},
      {"cpus_allowed", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         if (!ParseCpuList(v).ok()) return Bad(k, v, "expected a CPU list, e.g. 0-3,6");
         j.cpus_allowed = std::string(v); return absl::OkStatus(); }},
      {"cpumask", CpuMask},
      {"cpus_allowed_policy", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         if (v == "shared") j.cpus_allowed_policy = CpusAllowedPolicy::kShared;
         else if (v == "split") j.cpus_allowed_policy = CpusAllowedPolicy::kSplit;
         else return Bad(k, v, "use shared or split");
         return absl::OkStatus(); }},
      {"disable_lat", FLAG(disable_lat)},
      {"disable_clat", FLAG(disable_clat)},
      {"disable_slat", FLAG(disable_slat)},
      {"gtod_reduce", [](JobOptions& j, std::string_view k, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(bool on, Bool(k, v));
         j.disable_lat = j.disable_clat = j.disable_slat = on;
         return absl::OkStatus(); }},
      {"clat_percentiles", FLAG(clat_percentiles)},
      {"lat_percentiles", FLAG(lat_percentiles)},
      {"percentile_list", PercentileList},
      {"nrfiles", [](JobOptions&, std::string_view k, std::string_view v) -> absl::Status {
         if (v != "1") return Bad(k, v, "faultbench maps one file per worker: use numjobs for more files");
         return absl::OkStatus(); }},
      {"mem", [](JobOptions&, std::string_view k, std::string_view v) -> absl::Status {
         if (v != "malloc") {
           return Bad(k, v, "the I/O buffer stays malloc'd: a huge-page or shared buffer would move TLB misses "
                            "to the buffer side of each copy, which is not what this tool studies");
         }
         return absl::OkStatus(); }},
      {"kb_base", [](JobOptions&, std::string_view k, std::string_view v) -> absl::Status {
         if (v != "1024") return Bad(k, v, "faultbench reads sizes as powers of 1024 (fio's default kb_base)");
         return absl::OkStatus(); }},
      {"numa_cpu_nodes", TEXT(numa.cpunodebind)},
      {"numa_mem_policy", MemPolicy},
      // faultbench's own
      {"engine", [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(j.ioengine, ParseJobEngine(v)); return absl::OkStatus(); }},
      {"mapping", [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(j.mapping, pmstore::mapping::ParsePageIntent(v)); return absl::OkStatus(); }},
      {"anon", [](JobOptions& j, std::string_view, std::string_view v) -> absl::Status {
         PMSTORE_ASSIGN_OR_RETURN(j.anon, ParseAnonMemory(v)); return absl::OkStatus(); }},
      {"private", FLAG(private_mapping)},
      {"map_sync", FLAG(map_sync)},
      {"prefault", FLAG(prefault)},
      {"fresh_file", FLAG(fresh_file)},
      {"shared_file", FLAG(shared_file)},
      {"cpunodebind", TEXT(numa.cpunodebind)},
      {"membind", TEXT(numa.membind)},
      {"preferred", TEXT(numa.preferred)},
      {"interleave", TEXT(numa.interleave)},
  };
  return kOptions;
}

#undef FLAG
#undef CONTEXT_FLAG
#undef NUMBER
#undef SIZE
#undef TEXT
#undef SECONDS

// Accepted, and changing nothing here, by why.
const std::vector<std::pair<std::vector<std::string>, std::string>>& Inert() {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> kOptions = {
      {{"iodepth", "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min",
        "iodepth_batch_complete_max", "iodepth_low", "io_submit_mode", "thread"},
       "change nothing in a synchronous mmap engine: each I/O is a load or store that completes before the next "
       "one starts, in a thread of one process"},
      {{"create_fsync", "overwrite"},
       "change nothing here: the file is allocated with fallocate, not laid out by writes"},
      {{"disable_bw_measurement", "disable_bw"}, "change nothing here: faultbench keeps no bandwidth samples"},
      {{"softrandommap", "random_generator"},
       "change nothing here: faultbench's random orders use their own generators"},
      {{"slat_percentiles"}, "changes nothing here: a mapping has no submission step, so no slat"},
  };
  return kOptions;
}

const std::string* InertReason(std::string_view key) {
  for (const auto& [names, why] : Inert()) {
    if (std::find(names.begin(), names.end(), key) != names.end()) return &why;
  }
  return nullptr;
}

// fio options that make no sense here, by why. A name ending in '*' covers
// every option it starts.
const std::vector<std::pair<std::vector<std::string>, std::string>>& Refused() {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> kOptions = {
      {{"verify*", "do_verify", "experimental_verify", "trim_*"},
       "faultbench checks no data (run fio itself to verify what was written)"},
      {{"rate*", "thinktime*", "latency_target", "latency_window", "latency_percentile", "latency_run",
        "max_latency", "flow*"},
       "faultbench issues I/O back to back: a rate limit or think time would time the limiter, not the faults"},
      {{"write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_*", "per_job_logs", "write_iolog",
        "read_iolog", "replay_*", "iolog", "bwavgtime", "iopsavgtime"},
       "faultbench writes no per-I/O logs: its JSON holds the percentiles, the phases and the fault counts"},
      {{"fsync", "fdatasync", "sync_file_range", "end_fsync", "fsync_on_close", "write_barrier"},
       "faultbench does not sync the file between I/Os; with ioengine=libpmem, sync=1 drains after every write"},
      {{"bsrange", "blocksize_range", "bssplit", "bs_unaligned", "blocksize_unaligned", "blockalign", "ba",
        "bs_is_seq_rand", "offset_align"},
       "faultbench issues one block size per job, at offsets that are multiples of it"},
      {{"openfiles", "file_service_type", "opendir", "create_serialize", "create_on_open", "pre_read",
        "allow_file_create", "allow_mounted_write", "lockfile", "file_append", "fill_device", "fill_fs",
        "unlink_each_loop", "create_only", "unique_filename", "filetype"},
       "each worker maps one file once for the whole run"},
      {{"zonemode", "zonesize", "zonerange", "zoneskip", "zonecapacity", "max_open_zones", "job_max_open_zones",
        "zone_reset_threshold", "zone_reset_frequency", "ignore_zone_limits", "read_beyond_wp"},
       "zoned block devices cannot be memory-mapped"},
      {{"exec_prerun", "exec_postrun"}, "faultbench runs no commands from job files"},
      {{"uid", "gid", "nice", "prio", "prioclass", "cmdprio*", "ioscheduler", "cgroup*", "daemonize"},
       "faultbench does not change a job's credentials, scheduling or cgroup: set them on the faultbench process "
       "(nice, chrt, cgexec)"},
      {{"cpuload", "cpuchunks", "cpumode", "exit_on_io_done"}, "these belong to fio's cpuio engine"},
      {{"hugepage-size", "lockmem", "refill_buffers", "buffer_compress*", "compress_percentage", "compress_chunk",
        "dedupe*"},
       "faultbench writes from one malloc'd buffer (scrambled per write with scramble_buffers=1, as fio does): "
       "buffer shaping would add work to every timed copy"},
      {{"unified_rw_reporting", "significant_figures", "percentile_precision", "gtod_cpu", "clocksource"},
       "faultbench reports reads and writes apart, timed by the invariant TSC (else CLOCK_MONOTONIC), and "
       "says which clock it used"},
      {{"steadystate*", "ss", "ss_dur", "ss_ramp"}, "faultbench does not stop on a steady state: use runtime="},
      {{"startdelay", "start_delay", "wait_for", "exitall", "exitall_on_error", "continue_on_error",
        "ignore_error", "error_dump"},
       "the workers of a stonewall group start together and each runs its own budget: order jobs with stonewall"},
      {{"percentage_random", "rw_sequencer", "number_ios"},
       "not supported: faultbench's offsets follow rw, norandommap and random_distribution, and each loop is "
       "size= (or io_size=) of I/O"},
      {{"thp"},
       "fio's mmap engine maps MAP_PRIVATE with thp=1 (copy-on-write anonymous pages, not the file's): use "
       "mapping=pmd for a MAP_SHARED, 2 MiB aligned mapping with MADV_HUGEPAGE"},
      {{"atomic", "oatomic", "write_hint"}, "a store to a mapping has no O_ATOMIC or write-hint path"},
  };
  return kOptions;
}

std::string Canonical(std::string_view key) { return absl::StrReplaceAll(std::string(key), {{"-", "_"}}); }

const std::string* RefusalReason(const std::string& key) {
  for (const auto& [names, why] : Refused()) {
    for (const std::string& name : names) {
      const bool prefix = name.ends_with("*");
      if (prefix ? key.starts_with(std::string_view(name).substr(0, name.size() - 1)) : key == name) return &why;
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<double> ParseSeconds(std::string_view text) {
  std::string body(text);
  double scale = 1.0;
  for (const auto& [suffix, factor] : {std::pair{"us", 1e-6}, std::pair{"ms", 1e-3}, std::pair{"s", 1.0},
                                       std::pair{"m", 60.0}, std::pair{"h", 3600.0}}) {
    if (absl::EndsWith(body, suffix)) {
      body.resize(body.size() - std::string_view(suffix).size());
      scale = factor;
      break;
    }
  }
  double value = 0;
  if (body.empty() || !absl::SimpleAtod(body, &value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad time '", std::string(text), "': use e.g. 30, 10s, 500ms, 2m"));
  }
  return value * scale;
}

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  for (absl::string_view item : absl::StrSplit(absl::string_view(text.data(), text.size()), ',')) {
    std::pair<std::string, std::string> range = absl::StrSplit(item, absl::MaxSplits('-', 1));
    int first = 0, last = 0;
    if (!absl::SimpleAtoi(range.first, &first) || first < 0 ||
        !absl::SimpleAtoi(range.second.empty() ? range.first : range.second, &last) || last < first) {
      return absl::InvalidArgumentError(absl::StrCat("bad CPU list '", std::string(text), "': use e.g. 0-3,6"));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

absl::Status ApplyJobOption(JobOptions& job, std::string_view raw_key, std::string_view value) {
  const std::string key = Canonical(raw_key);
  if (auto it = Supported().find(key); it != Supported().end()) return it->second(job, raw_key, value);
  if (InertReason(key) != nullptr) {
    job.inert_options.push_back(value.empty() ? key : absl::StrCat(key, "=", std::string(value)));
    return absl::OkStatus();
  }
  if (const std::string* why = RefusalReason(key)) {
    return absl::InvalidArgumentError(absl::StrCat("option '", std::string(raw_key), "' is not supported: ", *why));
  }
  return absl::InvalidArgumentError(absl::StrCat("unsupported option '", std::string(raw_key), "'"));
}

std::vector<std::string> InertOptionNotes(const JobOptions& job) {
  // The options as the job wrote them, grouped by why they change nothing.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  auto add = [&](const std::string& option, const std::string& why) {
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& r) { return r.first == why; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {why, {}});
    it->second.push_back(option);
  };
  for (const std::string& option : job.inert_options) {
    const std::string key = option.substr(0, option.find('='));
    if (const std::string* why = InertReason(key)) add(option, *why);
  }
  if (job.ioengine != JobEngine::kLibpmem) {
    const std::string why = job.ioengine == JobEngine::kMmap
                                ? "change nothing for the mmap engine: loads and stores do not go through O_DIRECT "
                                  "or O_SYNC (they matter to ioengine=libpmem)"
                                : absl::StrCat("change nothing for ", std::string(JobEngineName(job.ioengine)),
                                               ": every write is copied and persisted (flush + drain)");
    if (job.direct) add("direct=1", why);
    if (job.sync) add("sync=1", why);
  }
  std::vector<std::string> notes;
  for (const auto& [why, options] : by_reason) notes.push_back(absl::StrCat(absl::StrJoin(options, ", "), ": ", why));
  return notes;
}

const OptionKinds& FioOptionKinds() {
  static const OptionKinds kKinds = [] {
    OptionKinds kinds;
    for (const auto& [name, handler] : Supported()) kinds.supported.push_back(name);
    for (const auto& [names, why] : Inert()) kinds.inert.insert(kinds.inert.end(), names.begin(), names.end());
    for (const auto& [names, why] : Refused()) {
      for (const std::string& name : names) kinds.refused.emplace_back(name, why);
    }
    return kinds;
  }();
  return kKinds;
}

}  // namespace faultbench

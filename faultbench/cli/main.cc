// The `faultbench` command. Flags live here (ABSL_FLAG belongs in the
// binary's main file); each subcommand copies them into its library's
// config struct and calls one entry function.
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "faultbench/cli/command_io.h"
#include "faultbench/cli/compare_command.h"
#include "faultbench/cli/diff_command.h"
#include "faultbench/cli/matrix_command.h"
#include "faultbench/cli/run_command.h"
#include "faultbench/cli/scale_command.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/workload/job_file.h"
#include "pmstore/base/cli.h"

ABSL_FLAG(bool, json, false, "doctor: print the report as JSON instead of text");

// --- run and compare: fio's names and meanings ------------------------------
ABSL_FLAG(std::string, name, "faultbench", "run: job name (files are DIR/NAME.JOB.0, as fio names them)");
ABSL_FLAG(std::string, filename, "",
          "run: the file to map (inside --directory when relative), or a device DAX device /dev/daxX.Y; every "
          "--numjobs worker maps all of it");
ABSL_FLAG(std::string, directory, "", "run: directory for the job's files (one per --numjobs worker)");
ABSL_FLAG(std::string, size, "", "run: bytes per job, e.g. 256M, 1G (required without a job file)");
ABSL_FLAG(std::string, bs, "4k", "run: block size of each I/O");
ABSL_FLAG(std::string, rw, "read", "run: read, write, randread, randwrite, randrw or rw");
ABSL_FLAG(int, rwmixread, 50, "run: percent of reads in randrw/rw");
ABSL_FLAG(int, numjobs, 1,
          "run: workers, each with its own file of --size (with --filename: all on it; see --shared-file)");
ABSL_FLAG(bool, shared_file, false, "run: the --numjobs workers split one file of --size instead");
ABSL_FLAG(std::string, runtime, "", "run: stop after this long (30, 10s, 500ms, 2m)");
ABSL_FLAG(bool, time_based, false, "run: repeat passes over the file until --runtime");
ABSL_FLAG(int, loops, 1, "run: passes over the file (each covers every block once)");
ABSL_FLAG(std::string, ramp_time, "", "run: run this long before measuring");
ABSL_FLAG(std::string, randseed, "",
          "run: seed of the random block order (default fio's 137); given, it wins over randrepeat=0 of a job file, "
          "as in fio");
ABSL_FLAG(bool, unlink, false, "run: delete the job's files when the run is done (compare: after the last run)");
ABSL_FLAG(std::string, invalidate, "",
          "run: 1 drops the file's cached pages before the job (fio's default, and faultbench's in job files); "
          "0 keeps them (faultbench's default on the command line)");
ABSL_FLAG(std::vector<std::string>, section, {}, "run: run only these job sections of the job files (fio's --section)");
// --- run and compare: faultbench's own ------------------------------------------
ABSL_FLAG(std::string, mapping, "auto",
          "run: pmd (2 MiB aligned), pte (4 KiB colour, no PMD possible), pud (1 GiB aligned: hugetlbfs pagesize=1G, "
          "device DAX align=1G), a folio size 16K, 32K, 64K ... 1M (multi-size THP mapped by PTEs: anonymous "
          "memory and shmem by the per-size knobs, which the run sets and puts back; a file's folios are its file "
          "system's) or auto (as fio)");
ABSL_FLAG(std::string, anon, "",
          "run: anonymous memory instead of a file: --anon (or =private) MAP_PRIVATE|MAP_ANONYMOUS, --anon=shared "
          "shmem (MAP_SHARED|MAP_ANONYMOUS); needs --size, no --filename");
ABSL_FLAG(bool, private, false,
          "run: map the file MAP_PRIVATE: writes are copied on write into anonymous pages (will-it-scale's "
          "page_fault2), never the file's");
ABSL_FLAG(std::string, engine, "mmap",
          "run: mmap (memcpy), pmem2 (libpmem2 memcpy + persist), libpmem or dev-dax (as fio's engines)");
ABSL_FLAG(bool, map_sync, false, "run: require MAP_SYNC (DAX files only)");
ABSL_FLAG(bool, prefault, false, "run: populate every page first, then measure steady state");
ABSL_FLAG(bool, fresh_file, false, "run: delete and recreate the file first, so no mapping state carries over");
ABSL_FLAG(bool, strict, false, "run: exit 3 when the verified mapping differs from --mapping");
ABSL_FLAG(std::string, cpunodebind, "", "run: run workers on these nodes' CPUs (numactl syntax, block:DEV, file:PATH)");
ABSL_FLAG(std::string, membind, "", "run: allocate only from these nodes");
ABSL_FLAG(std::string, preferred, "", "run: allocate from this node first");
ABSL_FLAG(std::string, interleave, "", "run: interleave pages over these nodes");
ABSL_FLAG(std::string, output_format, "normal",
          "run, compare, scale, diff, matrix: normal, json or csv (csv: run only)");
ABSL_FLAG(std::string, output, "",
          "run, compare, scale, diff, matrix: write the report to this file instead of stdout");
// --- compare ------------------------------------------------------------------
ABSL_FLAG(std::string, variants, "",
          "compare: the mappings to run, each a --mapping value (pte, a folio size 16K ... 1M, pmd, pud, auto; "
          "default pte,pmd); each size is judged against the smallest (pte,64K,pmd: 64K/PTE and PMD/PTE); those the "
          "backing cannot give are named, not run");
ABSL_FLAG(std::string, modes, "", "compare: the older name of --variants");
ABSL_FLAG(std::string, engines, "", "compare: engines to run (mmap, pmem2); default: --engine");
ABSL_FLAG(std::string, numa_sets, "", "compare: NUMA sets separated by ';', e.g. 'membind=0;membind=1'");
ABSL_FLAG(std::string, repeat, "3",
          "compare: runs per variant, or auto: rounds until the verdict is decided or --repeat-budget runs out; "
          "scale: runs per point");
ABSL_FLAG(std::string, repeat_budget, "60s", "compare: --repeat=auto stops before a round would end past this time");
ABSL_FLAG(bool, warmup, true, "compare: one unmeasured run first (memory the hypervisor took back is touched again)");
ABSL_FLAG(bool, reuse_file, false, "compare: keep one file across modes (reproduces 4 KiB carryover)");
ABSL_FLAG(std::string, plot, "",
          "compare: write an SVG bar chart (median, min-max, a dot per repeat) to this file; diff: its chart; "
          "matrix: a heatmap per figure that changed; scale: the curve of faults/s against tasks");
ABSL_FLAG(std::string, save_json, "", "compare: also write the JSON document to this file (the report still goes to --output)");
ABSL_FLAG(bool, numa_matrix, false,
          "compare: run every (CPU node, memory node) pair (on DAX: CPU node x the device) and print the matrix; "
          "--plot draws it as a heatmap");
// --- scale ------------------------------------------------------------------
ABSL_FLAG(std::string, tasks, "1,2", "scale: numbers of tasks to run the job with, e.g. 1,2,4");
ABSL_FLAG(std::string, mode, "threads,processes",
          "scale: threads (workers of one process, one address space), processes, or both");
// --- diff -------------------------------------------------------------------
ABSL_FLAG(std::string, base, "", "diff: the base side: result files or directories, comma-separated");
ABSL_FLAG(std::string, new, "", "diff: the new side: result files or directories, comma-separated");
ABSL_FLAG(std::string, under_test, "kernel",
          "diff: what may differ between the sides: kernel, fs, build, machine, workload or package");
ABSL_FLAG(bool, bisect, false, "diff: for git bisect run: every error exits 125 (cannot judge), never 2");
ABSL_FLAG(bool, any_change, false,
          "diff: count every significant change, improvements too: exit 1 when any figure changed, 0 when none did");

namespace {

using faultbench::UsageError;
using pmstore::base::Subcommand;

// The flags run and compare share, each named once, in the order `help`
// lists them: fio's workload flags, then faultbench's engine flags, NUMA
// placement and output. Each subcommand adds its own between and after.
const std::vector<std::string> kFioWorkloadFlags = {
    "name", "filename", "directory", "size", "bs", "rw", "rwmixread", "numjobs", "shared-file", "runtime",
    "time_based", "loops", "ramp_time", "randseed", "unlink", "invalidate"};
const std::vector<std::string> kEngineFlags = {"engine", "map-sync", "prefault"};
const std::vector<std::string> kMemoryFlags = {"anon", "private"};
// --anon alone is private anonymous memory.
const std::map<std::string, std::string> kImplicitValues = {{"anon", "private"}};
const std::vector<std::string> kNumaFlags = {"cpunodebind", "membind", "preferred", "interleave"};
const std::vector<std::string> kOutputFlags = {"output-format", "output"};

std::vector<std::string> Flags(std::initializer_list<std::vector<std::string>> groups) {
  std::vector<std::string> flags;
  for (const std::vector<std::string>& group : groups) flags.insert(flags.end(), group.begin(), group.end());
  return flags;
}

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"doctor", "doctor PATH [--json]",
       "Tell whether PMD (2 MiB) mappings are possible for PATH, and what blocks them.",
       "Reports the file system and its mount options, DAX state (statx and mount),\n"
       "the share of the file's extents that are 2 MiB aligned (FIEMAP), THP settings,\n"
       "tmpfs huge=, the block device and its NUMA node, the kernel, which verification\n"
       "methods work here, and the PAT memtype of a pmem range. Ends with\n"
       "'PMD mappings possible here: yes|no' and, for each blocker, the command that\n"
       "fixes it. PATH may be a file or a directory (the file system of a directory\n"
       "is examined; FIEMAP needs a file), or a device DAX device: then the report is\n"
       "the device's (size, align, namespace and mode, NUMA node; page cache and\n"
       "extents do not apply). On hugetlbfs it shows the mount's page size and the\n"
       "pool of it, with the command that reserves pages.\n\n"
       "Examples:\n  faultbench doctor /mnt/pmem0\n  faultbench doctor --json /dev/shm/test.dat\n"
       "  faultbench doctor /dev/dax0.0\n  faultbench doctor /mnt/huge1g\n\n"
       "Exit status: 0 report printed, 2 bad usage or PATH does not exist.",
       {"json"}},
      {"run", "run [flags] [JOB.fio...]",
       "Run a fio-style workload over mmap'd files or anonymous memory and report what it cost and which "
       "mapping and folio sizes it got.",
       "Each worker maps its file with the requested page size, issues bs-sized memcpys in\n"
       "the order of --rw (random orders cover every block once per loop unless norandommap or\n"
       "random_distribution say otherwise), times every I/O,\n"
       "and reads back after the run which mapping the kernel really gave (PMD vs PTE bytes),\n"
       "the faults it took (getrusage), where its pages live (move_pages), and dTLB misses\n"
       "where the PMU allows. JOB.fio: fio job files ([global] + sections, include, ${VAR}); flags\n"
       "given on the command line are the defaults beneath them. As in fio, stonewall runs a job\n"
       "after the ones before it, group_reporting reports a group as one, and a later job file\n"
       "starts after the earlier ones; --section=NAME runs only that section. In job files fio's\n"
       "defaults apply where faultbench's differ (invalidate=1, fadvise_hint=1, scramble_buffers=1).\n"
       "--filename=/dev/daxX.Y maps a device DAX device, with any engine (fio's dev-dax engine\n"
       "needs one); on it and on hugetlbfs the page size is the backing's (align, pagesize), and\n"
       "another --mapping is a one-line error.\n\n"
       "--anon maps private anonymous memory instead of a file (will-it-scale's page_fault1),\n"
       "--anon=shared shmem, --private a file copy-on-write (page_fault2); fio has none of these,\n"
       "and in job files they are anon=private|shared and private=1. --mapping=16K ... 1M asks for\n"
       "folios of that size mapped by 4 KiB entries: in anonymous memory the run sets the kernel's\n"
       "per-size THP knobs (that size madvise, every other size never; root) and puts them back\n"
       "after it, even if the run is killed; a file's folios are its file system's. The folio\n"
       "sizes behind the range are read back from /proc/self/pagemap and /proc/kpageflags (root)\n"
       "and reported (JSON jobs[].faultbench.folio_sizes) beside the PMD and PUD shares.\n\n"
       "Examples:\n"
       "  faultbench run --directory=/mnt/t --size=1G --rw=randrw --mapping=pmd\n"
       "  faultbench run --filename=/dev/dax0.0 --size=1G --rw=randwrite --mapping=pud\n"
       "  faultbench run --anon --size=1G --rw=randwrite --mapping=64K\n"
       "  faultbench run --filename=/dev/shm/f --size=256M --rw=randread --prefault --output-format=json\n"
       "  faultbench run --cpunodebind=block:pmem0 --preferred=block:pmem0 test.fio\n"
       "  faultbench run --section=libpmem-seqread libpmem.fio\n\n"
       "Exit status: 0 done, 1 a worker failed, 2 bad usage (flag, job file, missing directory,\n"
       "size beyond free space, unknown NUMA node) or a SIGBUS (the file no longer backs the\n"
       "mapping, e.g. truncated underneath the run: the message names file and offset),\n"
       "3 --strict and the mapping differs.",
       Flags({kFioWorkloadFlags, {"mapping"}, kMemoryFlags, kEngineFlags, {"fresh-file", "strict", "section"},
              kNumaFlags, kOutputFlags}),
       kImplicitValues},
      {"compare", "compare [flags]",
       "Run one workload per mapping (pte, a folio size, pmd, pud), repeated in alternating order, and judge "
       "each size against the smallest.",
       "Takes run's workload flags. Each variant (mapping of --variants x engine x NUMA set) runs\n"
       "--repeat times on a fresh file (or fresh anonymous memory), in alternating order; the table\n"
       "shows medians with the min-max spread. Each size is judged against the smallest of its set\n"
       "(--variants=pte,64K,pmd: 64K/PTE and PMD/PTE), and a difference is called only when the\n"
       "spreads do not overlap.\n\n"
       "--numa-matrix runs every (CPU node, memory node) pair instead of --numa-sets and\n"
       "prints the matrix with each cell's verified placement (on DAX: CPU node x the\n"
       "device); --plot then draws a heatmap.\n\n"
       "Examples:\n"
       "  faultbench compare --directory=/mnt/t --size=1G --rw=randrw --repeat=3 --plot=cmp.svg\n"
       "  faultbench compare --anon --size=256M --rw=randwrite --variants=pte,64K,pmd --repeat=auto\n"
       "  faultbench compare --directory=/mnt/t --size=256M --rw=randread --numa-matrix --plot=matrix.svg\n\n"
       "Exit status: 0 done, 1 a run failed, 2 bad usage.",
       Flags({kFioWorkloadFlags, kMemoryFlags, kEngineFlags, kNumaFlags, kOutputFlags,
              {"variants", "modes", "engines", "numa-sets", "numa-matrix", "repeat", "repeat-budget", "warmup",
               "reuse-file", "plot", "save-json"}}),
       kImplicitValues},
      {"scale", "scale --tasks=N[,N...] [--mode=threads|processes|threads,processes] [flags]",
       "How page faults scale with tasks: the job run by 1, 2, 4 ... tasks, as threads and as processes.",
       "Takes run's workload flags for one task's job (will-it-scale's page_fault1 is --anon\n"
       "--rw=write; page_fault2 --private; page_fault3 a file). Each point runs the job with N\n"
       "tasks at once, each with memory or a file of its own: threads are workers of one process\n"
       "(one address space: one mmap_lock, per-VMA locks since 6.4), processes are N processes held\n"
       "at the same two lines as a run's workers. A task's rate is the faults of its fault phase\n"
       "(the first touch of every block: the populate call with --prefault) over that phase's\n"
       "time; the total is their sum. Every point runs --repeat times (default 3), in alternating\n"
       "order, from fresh files or fresh memory. The table shows faults/s in total and per task\n"
       "(median [min-max]) and each point's signature (faults/MiB, PMD share, vmstat, the per-size\n"
       "THP counters, folio sizes); --plot draws total faults/s against tasks, threads against\n"
       "processes. Under emulation (qemu TCG) the counts hold and the rates are not figures.\n\n"
       "Examples:\n"
       "  faultbench scale --anon --size=128M --rw=write --tasks=1,2,4 --plot=scale.svg\n"
       "  faultbench scale --anon --size=64M --rw=write --mapping=64K --tasks=1,2 --mode=processes\n"
       "  faultbench scale --directory=/mnt/t --size=64M --rw=write --private --tasks=1,2\n\n"
       "Exit status: 0 done, 1 a task failed (or --plot could not be written), 2 bad usage.",
       Flags({kFioWorkloadFlags, {"mapping"}, kMemoryFlags, kEngineFlags, kNumaFlags, kOutputFlags,
              {"tasks", "mode", "repeat", "plot"}}),
       kImplicitValues},
      {"diff", "diff --base=PATH[,PATH...] --new=PATH[,PATH...] [flags]",
       "Did anything change between two sets of runs (kernels, builds, file systems, machines), and is it a regression?",
       "PATHs are files or directories of faultbench run or compare JSON, or fio JSON from any\n"
       "engine. Jobs are matched by name and variant (faultbench: mapping/engine; fio: ioengine).\n"
       "Per figure and side it prints min, median, max, mean and %stddev, and the %change of the\n"
       "means, in LKP's layout. A change is called only when the two sides' ranges separate and\n"
       "the difference clears the figure's noise floor, with 3 runs a side at least; each figure\n"
       "knows its worse direction (IOPS down, latency, faults and fallbacks up). Only what\n"
       "--under-test names may differ between the sides (kernel: the release; build: release and\n"
       "debug options; fs: file system and mount options; machine: hypervisor, CPU, governor, THP;\n"
       "workload: job options; package: two distribution kernel packages run by one script, so\n"
       "release, debug options, THP defaults and how it shows mount options); anything else\n"
       "prints 'not comparable because ...'. Under emulation\n"
       "(qemu TCG) only the timing-free signature is judged.\n\n"
       "--any-change hunts behaviour changes, not only regressions: an improvement counts as\n"
       "the change too ('CHANGE: N of M figures changed ...' or 'no change: ...').\n\n"
       "Examples:\n"
       "  faultbench diff --base=results/6.1 --new=results/6.12\n"
       "  faultbench diff --base=a.json,b.json,c.json --new=fio-new/ --under-test=fs --plot=diff.svg\n"
       "  git bisect run faultbench diff --base=good/ --new=run/ --any-change --bisect\n\n"
       "Exit status: 0 no regression, 1 regression, 125 cannot judge (a failed run, not comparable,\n"
       "too few runs), 2 bad usage; with --any-change 0 no change, 1 any figure changed (better\n"
       "or worse); with --bisect every error is 125, for 'git bisect run'.",
       Flags({{"base", "new", "under-test", "any-change", "bisect"}, kOutputFlags, {"plot"}})},
      {"matrix", "matrix DIR [--output-format=normal|json] [--output=FILE] [--plot=FILE.svg]",
       "Report the kernel matrix: per backing, each kernel's signature and what changed from the kernel before.",
       "DIR is what scripts/kernel-matrix leaves:\n"
       "  DIR/kernels.txt   kernel package names, one a line, in version order\n"
       "                    (linux-image-6.1.0-57-amd64, linux-image-6.12.117+deb13-amd64, ...)\n"
       "  DIR/backings.txt  backing names, one a line, in report order (fsdax-ext4, fsdax-xfs,\n"
       "                    devdax-2M, devdax-1G, pagecache-ext4, pagecache-xfs, tmpfs-huge,\n"
       "                    tmpfs-within-size, hugetlbfs-2M, anon-private, anon-shared)\n"
       "  DIR/cells/PACKAGE/BACKING/*.json  'faultbench compare --save-json' documents, one per\n"
       "                    mapping mode (pmd.json, 64K.json, pte.json, pud.json), each with\n"
       "                    several runs\n"
       "  DIR/cells/PACKAGE/BACKING/status  one line, why the cell has no or partial results:\n"
       "                    'hang: soft lockup - ...', 'skipped: ...', 'failed: ...'\n"
       "A cell with neither has not run yet.\n\n"
       "For each backing a table per job variant (pmd/mmap, 64K/mmap, pte/mmap, ...): rows are the\n"
       "kernels, columns the timing-free signature figures diff knows (PMD and PUD share,\n"
       "faults/MiB, the vmstat and THP counters, PageTables, the fs_dax tallies where traced),\n"
       "each the median [min-max] of the cell's runs; figures 0 for every kernel are named, not\n"
       "shown. Each kernel's cell is judged against the nearest earlier kernel whose cell has\n"
       "results by the rule of 'faultbench diff --under-test=package' (ranges separate, noise\n"
       "floor, 3 runs a side): a changed value is marked (up or down, ! a regression) and listed\n"
       "after the tables; a pair diff cannot judge is named with diff's reason. --plot draws\n"
       "a heatmap per changed figure (rows kernels, columns backing and variant, changed cells\n"
       "outlined in red).\n\n"
       "Examples:\n"
       "  faultbench matrix results/kernel-matrix\n"
       "  faultbench matrix results/kernel-matrix --output-format=json --output=matrix.json --plot=matrix.svg\n\n"
       "Exit status: 0 the report was made (changes or not), 2 bad usage (DIR missing, no\n"
       "kernels.txt or backings.txt in it, an --output or --plot that cannot be written).",
       Flags({kOutputFlags, {"plot"}})},
  };
  return kSubcommands;
}

// --output-format for a subcommand whose report is normal text or JSON.
absl::StatusOr<faultbench::OutputFormat> TextOrJson(const char* subcommand) {
  auto format = faultbench::ParseOutputFormat(absl::GetFlag(FLAGS_output_format));
  if (!format.ok()) return format.status();
  if (*format == faultbench::OutputFormat::kCsv) {
    return absl::InvalidArgumentError(absl::StrCat(subcommand, ": --output-format is normal or json"));
  }
  return format;
}

std::vector<std::string> Paths(const std::string& list) {
  std::vector<std::string> paths;
  for (absl::string_view path : absl::StrSplit(list, ',', absl::SkipWhitespace())) paths.emplace_back(path);
  return paths;
}

int Diff(const std::vector<std::string>& args) {
  if (!args.empty()) {
    return UsageError(absl::InvalidArgumentError("diff takes its sides as --base=PATH and --new=PATH, no arguments"));
  }
  faultbench::DiffCommandConfig config;
  config.bisect = absl::GetFlag(FLAGS_bisect);
  config.diff.base_paths = Paths(absl::GetFlag(FLAGS_base));
  config.diff.new_paths = Paths(absl::GetFlag(FLAGS_new));
  auto under_test = faultbench::ParseUnderTest(absl::GetFlag(FLAGS_under_test));
  if (!under_test.ok()) return UsageError(under_test.status());
  config.diff.under_test = *under_test;
  config.diff.rule = absl::GetFlag(FLAGS_any_change) ? faultbench::diff::VerdictRule::kAnyChange
                                                     : faultbench::diff::VerdictRule::kRegressions;
  auto format = TextOrJson("diff");
  if (!format.ok()) return UsageError(format.status());
  config.format = *format;
  config.output_path = absl::GetFlag(FLAGS_output);
  config.plot_path = absl::GetFlag(FLAGS_plot);
  return faultbench::DiffCommand(config);
}

int Matrix(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    return UsageError(absl::InvalidArgumentError(
        "matrix takes exactly one DIR, the directory scripts/kernel-matrix made (see 'faultbench help matrix')"));
  }
  auto format = TextOrJson("matrix");
  if (!format.ok()) return UsageError(format.status());
  faultbench::MatrixCommandConfig config;
  config.dir = args[0];
  config.format = *format;
  config.output_path = absl::GetFlag(FLAGS_output);
  config.plot_path = absl::GetFlag(FLAGS_plot);
  return faultbench::MatrixCommand(config);
}

int RunDoctor(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    return UsageError(absl::InvalidArgumentError("doctor takes exactly one PATH (see 'faultbench help doctor')"));
  }
  auto report = faultbench::doctor::Examine(args[0]);
  if (!report.ok()) return UsageError(report.status());
  const std::string text = absl::GetFlag(FLAGS_json) ? faultbench::doctor::RenderJson(*report)
                                                     : faultbench::doctor::RenderText(*report);
  std::fputs(text.c_str(), stdout);
  return 0;
}

// The workload flags as a job; each value goes through the job-file
// parser so flags and job files accept and reject the same spellings.
absl::StatusOr<faultbench::JobOptions> JobFromFlags() {
  faultbench::JobOptions job;
  const std::pair<const char*, std::string> values[] = {
      {"name", absl::GetFlag(FLAGS_name)},           {"filename", absl::GetFlag(FLAGS_filename)},
      {"directory", absl::GetFlag(FLAGS_directory)}, {"size", absl::GetFlag(FLAGS_size)},
      {"bs", absl::GetFlag(FLAGS_bs)},               {"rw", absl::GetFlag(FLAGS_rw)},
      {"runtime", absl::GetFlag(FLAGS_runtime)},     {"ramp_time", absl::GetFlag(FLAGS_ramp_time)},
      {"mapping", absl::GetFlag(FLAGS_mapping)},     {"engine", absl::GetFlag(FLAGS_engine)},
      {"cpunodebind", absl::GetFlag(FLAGS_cpunodebind)}, {"membind", absl::GetFlag(FLAGS_membind)},
      {"preferred", absl::GetFlag(FLAGS_preferred)}, {"interleave", absl::GetFlag(FLAGS_interleave)},
      {"invalidate", absl::GetFlag(FLAGS_invalidate)}, {"randseed", absl::GetFlag(FLAGS_randseed)},
      {"anon", absl::GetFlag(FLAGS_anon)}};
  for (const auto& [key, value] : values) {
    if (value.empty()) continue;
    if (absl::Status s = faultbench::ApplyJobOption(job, key, value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--", key, ": ", s.message()));
    }
  }
  job.rwmixread = absl::GetFlag(FLAGS_rwmixread);
  job.numjobs = absl::GetFlag(FLAGS_numjobs);
  job.shared_file = absl::GetFlag(FLAGS_shared_file);
  job.time_based = absl::GetFlag(FLAGS_time_based);
  job.loops = absl::GetFlag(FLAGS_loops);
  job.map_sync = absl::GetFlag(FLAGS_map_sync);
  job.prefault = absl::GetFlag(FLAGS_prefault);
  job.fresh_file = absl::GetFlag(FLAGS_fresh_file);
  job.unlink = absl::GetFlag(FLAGS_unlink);
  job.private_mapping = absl::GetFlag(FLAGS_private);
  return job;
}

int Run(const std::vector<std::string>& args) {
  auto job = JobFromFlags();
  if (!job.ok()) return UsageError(job.status());
  auto format = faultbench::ParseOutputFormat(absl::GetFlag(FLAGS_output_format));
  if (!format.ok()) return UsageError(format.status());
  faultbench::RunCommandConfig config;
  config.job = *job;
  config.args = args;
  config.format = *format;
  config.output_path = absl::GetFlag(FLAGS_output);
  config.strict = absl::GetFlag(FLAGS_strict);
  config.sections = absl::GetFlag(FLAGS_section);
  return faultbench::RunCommand(config);
}

// --repeat=N|auto and --repeat-budget=DURATION into `config`.
absl::Status ParseRepeat(faultbench::CompareConfig& config) {
  const std::string repeat = absl::GetFlag(FLAGS_repeat);
  config.repeat_auto = repeat == "auto";
  if (!config.repeat_auto && (!absl::SimpleAtoi(repeat, &config.repeat) || config.repeat < 1)) {
    return absl::InvalidArgumentError("--repeat: '" + repeat + "' is not a count >= 1 or auto");
  }
  auto budget = faultbench::ParseSeconds(absl::GetFlag(FLAGS_repeat_budget));
  if (!budget.ok() || *budget <= 0) {
    return absl::InvalidArgumentError("--repeat-budget: '" + absl::GetFlag(FLAGS_repeat_budget) +
                                      "' is not a duration (60s, 2m)");
  }
  config.repeat_budget_s = *budget;
  config.warmup = absl::GetFlag(FLAGS_warmup);
  return absl::OkStatus();
}

int Compare(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(absl::InvalidArgumentError("compare takes no arguments, only flags"));
  auto job = JobFromFlags();
  if (!job.ok()) return UsageError(job.status());
  auto format = TextOrJson("compare");
  if (!format.ok()) return UsageError(format.status());
  faultbench::CompareCommandConfig command;
  command.format = *format;
  command.output_path = absl::GetFlag(FLAGS_output);
  command.plot_path = absl::GetFlag(FLAGS_plot);
  command.save_json_path = absl::GetFlag(FLAGS_save_json);
  faultbench::CompareConfig& config = command.compare;
  config.job = *job;
  if (absl::Status s = ParseRepeat(config); !s.ok()) return UsageError(s);
  config.reuse_file = absl::GetFlag(FLAGS_reuse_file);
  config.numa_matrix = absl::GetFlag(FLAGS_numa_matrix);
  if (!absl::GetFlag(FLAGS_variants).empty() && !absl::GetFlag(FLAGS_modes).empty()) {
    return UsageError(absl::InvalidArgumentError("--modes is the older name of --variants: give one of them"));
  }
  std::string modes = absl::GetFlag(FLAGS_variants).empty() ? absl::GetFlag(FLAGS_modes) : absl::GetFlag(FLAGS_variants);
  if (modes.empty()) modes = "pte,pmd";
  config.modes.clear();
  for (absl::string_view mode : absl::StrSplit(modes, ',', absl::SkipWhitespace())) {
    auto intent = pmstore::mapping::ParsePageIntent(std::string_view(mode.data(), mode.size()));
    if (!intent.ok()) return UsageError(intent.status());
    config.modes.push_back(*intent);
  }
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_engines), ',', absl::SkipWhitespace())) {
    auto engine = pmstore::mapping::ParseEngine(std::string_view(name.data(), name.size()));
    if (!engine.ok()) return UsageError(engine.status());
    config.engines.push_back(*engine);
  }
  if (!absl::GetFlag(FLAGS_numa_sets).empty()) {
    auto sets = faultbench::ParseNumaSets(absl::GetFlag(FLAGS_numa_sets));
    if (!sets.ok()) return UsageError(sets.status());
    config.numa_sets = *sets;
  }
  return faultbench::CompareCommand(command);
}

int Scale(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(absl::InvalidArgumentError("scale takes no arguments, only flags"));
  auto job = JobFromFlags();
  if (!job.ok()) return UsageError(job.status());
  auto format = TextOrJson("scale");
  if (!format.ok()) return UsageError(format.status());
  faultbench::ScaleCommandConfig command;
  command.format = *format;
  command.output_path = absl::GetFlag(FLAGS_output);
  command.plot_path = absl::GetFlag(FLAGS_plot);
  command.scale.job = *job;
  auto tasks = faultbench::ParseTasks(absl::GetFlag(FLAGS_tasks));
  if (!tasks.ok()) return UsageError(tasks.status());
  command.scale.tasks = *tasks;
  auto modes = faultbench::ParseScaleModes(absl::GetFlag(FLAGS_mode));
  if (!modes.ok()) return UsageError(modes.status());
  command.scale.modes = *modes;
  const std::string repeat = absl::GetFlag(FLAGS_repeat);
  if (!absl::SimpleAtoi(repeat, &command.scale.repeat) || command.scale.repeat < 1) {
    return UsageError(absl::InvalidArgumentError("--repeat: '" + repeat + "' is not a count >= 1"));
  }
  return faultbench::ScaleCommand(command);
}

int Dispatch(const std::string& name, const std::vector<std::string>& args) {
  if (name == "doctor") return RunDoctor(args);
  if (name == "scale") return Scale(args);
  if (name == "run") return Run(args);
  if (name == "diff") return Diff(args);
  if (name == "matrix") return Matrix(args);
  return Compare(args);
}

}  // namespace

int main(int argc, char** argv) {
  // `diff --bisect`: an error found while the flags are parsed, before the
  // subcommand sees them, must reach `git bisect run` as 125 too.
  bool bisect = false;
  for (int i = 1; i < argc; ++i) bisect = bisect || std::string_view(argv[i]) == "--bisect";
  const int status = pmstore::base::RunMain(
      argc, argv, "faultbench",
      "faultbench: a page-fault study tool. Runs fio-style 4 KiB workloads over mmap'd\n"
      "files, device DAX, hugetlbfs and anonymous memory with 4 KiB (PTE), 2 MiB (PMD) or\n"
      "1 GiB (PUD) mappings or 16 KiB - 1 MiB folios, NUMA-pinned, verifies which mapping and\n"
      "which folio sizes the kernel really gave, and measures how faults scale with tasks.",
      Subcommands(), Dispatch);
  return faultbench::BisectStatus(status, bisect);
}

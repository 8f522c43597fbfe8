#include "faultbench/run/thp_knobs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/thp.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/mapping.h"

namespace faultbench {
namespace {

using pmstore::mapping::PageIntent;

bool OneOf(const std::string& value, std::initializer_list<const char*> choices) {
  for (const char* c : choices) {
    if (value == c) return true;
  }
  return false;
}

// Whether a size's knob already lets (or keeps from) a MADV_HUGEPAGE
// mapping what the run needs. `top` is the top-level knob that "inherit"
// follows: enabled for private memory, shmem_enabled for shmem.
bool Allows(const std::string& knob, const std::string& top, bool shared) {
  if (shared) {
    return OneOf(knob, {"always", "advise", "within_size"}) ||
           (knob == "inherit" && OneOf(top, {"always", "advise", "within_size"}));
  }
  return OneOf(knob, {"always", "madvise"}) || (knob == "inherit" && OneOf(top, {"always", "madvise"}));
}
bool Refuses(const std::string& knob, const std::string& top, bool shared) {
  return knob == "never" || (knob == "inherit" && (top == "never" || (shared && top == "deny")));
}

std::string Sizes(const std::vector<MthpSize>& sizes) {
  std::vector<std::string> names;
  for (const MthpSize& s : sizes) names.push_back(pmstore::mapping::SizeName(s.size));
  return absl::StrJoin(names, ", ");
}

// Writes `value` to `path`; the failing call's status otherwise.
absl::Status WriteKnob(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return pmstore::base::ErrnoStatus(errno, "open", path);
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return pmstore::base::ErrnoStatus(n < 0 ? err : EIO, absl::StrCat("write '", value, "'"), path);
  }
  return absl::OkStatus();
}

// The child's whole life: wait for the parent's word or its end, and on
// its end write the old values back. Only async-signal-safe calls: it was
// forked from a process that may have other threads.
[[noreturn]] void Watch(int pipe_read, const std::vector<KnobWrite>& old) {
  setsid();  // not in the terminal's process group: Ctrl-C ends the parent, not this
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  char word = 0;
  ssize_t n;
  while ((n = read(pipe_read, &word, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1) _exit(0);  // the parent put them back itself
  for (const KnobWrite& knob : old) {
    const int fd = open(knob.path.c_str(), O_WRONLY);
    if (fd < 0) continue;
    ssize_t ignored = write(fd, knob.value.data(), knob.value.size());
    (void)ignored;
    close(fd);
  }
  _exit(0);
}

}  // namespace

absl::StatusOr<std::vector<KnobWrite>> KnobWritesFor(const JobOptions& job) {
  if (!job.anonymous()) return std::vector<KnobWrite>{};
  return KnobWritesFor(job, ReadMthpSizes(), ReadThpFacts());
}

absl::StatusOr<std::vector<KnobWrite>> KnobWritesFor(const JobOptions& job, const std::vector<MthpSize>& sizes,
                                                     const ThpFacts& top) {
  const PageIntent intent = job.mapping;
  if (!job.anonymous() || !(intent.is_folio() || intent == PageIntent::kPmd)) return std::vector<KnobWrite>{};
  const bool shared = job.anon == AnonMemory::kShared;
  const uint64_t size = pmstore::mapping::IntentPageSize(intent);
  const std::string name = pmstore::mapping::SizeName(size);
  const std::string knob = shared ? "shmem_enabled" : "enabled";
  const std::string flag = absl::StrCat("--mapping=", std::string(pmstore::mapping::PageIntentName(intent)));
  const std::string& top_knob = shared ? top.shmem_enabled : top.enabled;
  if (sizes.empty()) {
    // Before multi-size THP the top-level knob alone decides 2 MiB folios:
    // it is set for the run as a per-size one is, so that pmd asks for the
    // same thing on every kernel (6.1's shmem_enabled is never by default).
    if (intent == PageIntent::kPmd) {
      if (Allows(top_knob, "", shared) || (shared && top_knob == "force")) return std::vector<KnobWrite>{};
      if (shared && top_knob == "deny") {
        return absl::InvalidArgumentError(absl::StrCat(flag, ": ", kThpDir,
                                                       "/shmem_enabled is deny, which turns THP off for shmem: "
                                                       "set it to never or advise first"));
      }
      return std::vector<KnobWrite>{{absl::StrCat(kThpDir, "/", knob), shared ? "advise" : "madvise"}};
    }
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " in anonymous memory needs the kernel's per-size THP knobs (", kThpDir, "/hugepages-", size >> 10,
        "kB/", knob, "), and this kernel has none: multi-size THP came in Linux 6.8 for anonymous memory and later "
        "for shmem; use --mapping=pte or pmd here"));
  }
  const MthpSize* asked = nullptr;
  for (const MthpSize& s : sizes) {
    if (s.size == size) asked = &s;
  }
  if (asked == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": this kernel offers no ", name,
                                                   " folios (its sizes: ", Sizes(sizes), ")"));
  }
  if ((shared ? asked->shmem_enabled : asked->enabled).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": ", asked->dir, " has no ", knob, " knob: this kernel gives ", name, " folios to ",
        shared ? "private anonymous memory only (drop =shared)" : "shmem only (--anon=shared)"));
  }
  if (shared && (top_knob == "deny" || top_knob == "force")) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": ", kThpDir, "/shmem_enabled is ", top_knob, ", which ",
        top_knob == "deny" ? "turns THP off for shmem of every size" : "gives every shmem mapping 2 MiB folios",
        " whatever the per-size knobs say: set it to never or advise first"));
  }
  std::vector<KnobWrite> writes;
  for (const MthpSize& s : sizes) {
    const std::string& value = shared ? s.shmem_enabled : s.enabled;
    if (value.empty()) continue;  // no knob of this kind for this size: the kernel never uses it here
    const bool wanted = s.size == size;
    if (wanted ? Allows(value, top_knob, shared) : Refuses(value, top_knob, shared)) continue;
    writes.push_back({absl::StrCat(s.dir, "/", knob), wanted ? (shared ? "advise" : "madvise") : "never"});
  }
  return writes;
}

absl::StatusOr<std::vector<KnobWrite>> KnobWritesForRun(const std::vector<JobOptions>& jobs) {
  std::map<std::string, std::string> by_path;
  for (const JobOptions& job : jobs) {
    auto writes = KnobWritesFor(job);
    if (!writes.ok()) return absl::Status(writes.status().code(), absl::StrCat("job '", job.name, "': ", writes.status().message()));
    for (const KnobWrite& w : *writes) {
      const auto [at, added] = by_path.emplace(w.path, w.value);
      if (!added && at->second != w.value) {
        return absl::InvalidArgumentError(absl::StrCat(
            "job '", job.name, "' needs ", w.path, " = ", w.value, " and an earlier job needs it ", at->second,
            ": one run sets the THP knobs one way; run these jobs apart"));
      }
    }
  }
  std::vector<KnobWrite> all;
  for (const auto& [path, value] : by_path) all.push_back({path, value});
  if (!all.empty() && geteuid() != 0) {
    std::vector<std::string> commands;
    for (const KnobWrite& w : all) commands.push_back(absl::StrCat("echo ", w.value, " > ", w.path));
    return absl::PermissionDeniedError(absl::StrCat(
        "this run needs the THP knobs set for it (faultbench sets them and puts them back, as root): run as root, "
        "or set them yourself: ", absl::StrJoin(commands, "; ")));
  }
  return all;
}

absl::StatusOr<std::unique_ptr<KnobSetting>> KnobSetting::Apply(const std::vector<KnobWrite>& writes) {
  std::unique_ptr<KnobSetting> setting(new KnobSetting());
  for (const KnobWrite& w : writes) setting->old_.push_back({w.path, SelectedChoice(ReadFirstLine(w.path))});
  if (writes.empty()) return setting;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return pmstore::base::ErrnoStatus(errno, "pipe2", "THP knob watchdog");
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return pmstore::base::ErrnoStatus(err, "fork", "THP knob watchdog");
  }
  if (pid == 0) {
    close(fds[1]);
    Watch(fds[0], setting->old_);
  }
  close(fds[0]);
  setting->watchdog_pipe_ = fds[1];
  setting->watchdog_ = pid;
  for (size_t i = 0; i < writes.size(); ++i) {
    if (absl::Status s = WriteKnob(writes[i].path, writes[i].value); !s.ok()) {
      setting->old_.resize(i);  // the destructor puts back what was written
      return s;
    }
  }
  return setting;
}

KnobSetting::~KnobSetting() {
  for (const KnobWrite& knob : old_) (void)WriteKnob(knob.path, knob.value);
  if (watchdog_pipe_ >= 0) {
    const char done = 'd';
    ssize_t ignored = write(watchdog_pipe_, &done, 1);
    (void)ignored;
    close(watchdog_pipe_);
  }
  if (watchdog_ > 0) waitpid(watchdog_, nullptr, 0);
}

}  // namespace faultbench

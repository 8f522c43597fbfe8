#include "faultbench/workload/job_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"

namespace faultbench {
namespace {

constexpr int kMaxIncludeDepth = 16;

absl::StatusOr<std::string> ReadText(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is a directory (did you mean --directory?)"));
  }
  std::ifstream in(path);
  if (!in) return pmstore::base::ErrnoStatus(errno, "open (job file)", path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// fio's keywords and their values on this machine.
std::vector<std::pair<std::string, std::string>> Keywords() {
  const long page = sysconf(_SC_PAGESIZE);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  return {{"$pagesize", absl::StrCat(page)},
          {"$mb_memory", absl::StrCat(static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) >> 20)},
          {"$ncpus", absl::StrCat(cpus)}};
}

// Integer arithmetic over + - * / and parentheses, as fio hands a value
// with a keyword to bc (scale 0). nullopt when `text` is not such an
// expression (then the value stays as it is, as in fio).
class Arithmetic {
 public:
  static std::optional<int64_t> Evaluate(std::string_view text) {
    Arithmetic a(text);
    std::optional<int64_t> value = a.Sum();
    a.SkipSpace();
    if (!value || a.pos_ != a.text_.size()) return std::nullopt;
    return value;
  }

 private:
  explicit Arithmetic(std::string_view text) : text_(text) {}
  void SkipSpace() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Take(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  // Sums of products of atoms: one loop for both levels of precedence.
  std::optional<int64_t> Sum() { return Chain("+-"); }
  std::optional<int64_t> Product() { return Chain("*/"); }
  std::optional<int64_t> Chain(std::string_view operators) {
    const bool products = operators == "*/";
    std::optional<int64_t> left = products ? Atom() : Product();
    while (left) {
      SkipSpace();
      if (pos_ >= text_.size() || operators.find(text_[pos_]) == std::string_view::npos) break;
      const char op = text_[pos_++];
      const std::optional<int64_t> right = products ? Atom() : Product();
      if (!right || (op == '/' && *right == 0)) return std::nullopt;
      left = op == '+' ? *left + *right : op == '-' ? *left - *right : op == '*' ? *left * *right : *left / *right;
    }
    return left;
  }
  std::optional<int64_t> Atom() {
    if (Take('(')) {
      auto inner = Sum();
      return inner && Take(')') ? inner : std::nullopt;
    }
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int64_t value = 0;
    if (start == pos_ || !absl::SimpleAtoi(absl::string_view(text_.data() + start, pos_ - start), &value)) {
      return std::nullopt;
    }
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// ${VAR} from the environment, then fio's $keywords (with arithmetic).
absl::StatusOr<std::string> Expand(std::string_view line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line.substr(i, 2) == "${") {
      const size_t close = line.find('}', i + 2);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("unclosed ${ in '", std::string(line), "'"));
      }
      const std::string var(line.substr(i + 2, close - i - 2));
      const char* value = std::getenv(var.c_str());
      if (value == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("${", var, "} is not set in the environment (fio would put "
                                                       "an empty string there): export ", var, "=..."));
      }
      out += value;
      i = close + 1;
    } else {
      out += line[i++];
    }
  }
  bool replaced = false;
  for (const auto& [word, value] : Keywords()) {
    for (size_t at = out.find(word); at != std::string::npos; at = out.find(word, at + value.size())) {
      out.replace(at, word.size(), value);
      replaced = true;
    }
  }
  if (replaced) {
    const size_t eq = out.find('=');
    if (eq != std::string::npos) {
      if (auto number = Arithmetic::Evaluate(out.substr(eq + 1))) out = absl::StrCat(out.substr(0, eq + 1), *number);
    }
  }
  return out;
}

// The state of one ParseJobFile call across a file and its includes.
class Parser {
 public:
  Parser(const JobOptions& defaults, const JobFileOptions& options) : global_(defaults), options_(options) {
    global_.from_job_file = true;
  }

  absl::Status ParseText(std::string_view text, const std::string& path, int depth);
  absl::StatusOr<std::vector<JobOptions>> Finish(const std::string& path);

 private:
  absl::Status Section(std::string_view line);
  absl::Status Include(std::string_view name, const std::string& path, int depth);
  absl::Status Option(std::string_view line);

  JobOptions global_;
  const JobFileOptions& options_;
  std::vector<JobOptions> jobs_;
  std::set<std::string> sections_seen_;
  bool in_global_ = false;
  bool in_job_ = false;   // options go to jobs_.back()
  bool skipping_ = false;  // a section --section leaves out
  bool error_located_ = false;  // the error already names its file and line (an include's)
};

absl::Status Parser::Section(std::string_view line) {
  if (line.back() != ']') return absl::InvalidArgumentError(absl::StrCat("unclosed section '", std::string(line), "'"));
  const std::string name(absl::StripAsciiWhitespace(absl::string_view(line.data() + 1, line.size() - 2)));
  if (name.empty()) return absl::InvalidArgumentError("empty section name []");
  in_global_ = name == "global";
  in_job_ = false;
  skipping_ = false;
  if (in_global_) return absl::OkStatus();
  sections_seen_.insert(name);
  const auto& wanted = options_.sections;
  if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), name) == wanted.end()) {
    skipping_ = true;
    return absl::OkStatus();
  }
  jobs_.push_back(global_);
  jobs_.back().name = name;
  in_job_ = true;
  return absl::OkStatus();
}

absl::Status Parser::Include(std::string_view name, const std::string& path, int depth) {
  if (depth >= kMaxIncludeDepth) return absl::InvalidArgumentError("includes nested too deeply (a loop?)");
  std::string file(absl::StripAsciiWhitespace(absl::string_view(name.data(), name.size())));
  // fio: a name that does not exist as given is looked up next to the job file.
  if (access(file.c_str(), F_OK) != 0 && !file.starts_with("/") && !path.empty()) {
    file = (std::filesystem::path(path).parent_path() / file).string();
  }
  PMSTORE_ASSIGN_OR_RETURN(std::string text, ReadText(file));
  return ParseText(text, file, depth + 1);
}

absl::Status Parser::Option(std::string_view line) {
  if (!in_global_ && !in_job_) return absl::InvalidArgumentError("option outside a section");
  PMSTORE_ASSIGN_OR_RETURN(std::string expanded, Expand(line));
  const size_t eq = expanded.find('=');
  const absl::string_view line_view(expanded);
  const absl::string_view key = absl::StripAsciiWhitespace(line_view.substr(0, eq));
  const absl::string_view value =
      eq == std::string::npos ? absl::string_view() : absl::StripAsciiWhitespace(line_view.substr(eq + 1));
  JobOptions& target = in_global_ ? global_ : jobs_.back();
  return ApplyJobOption(target, std::string_view(key.data(), key.size()), std::string_view(value.data(), value.size()));
}

absl::Status Parser::ParseText(std::string_view text, const std::string& path, int depth) {
  const std::string where = path.empty() ? "" : absl::StrCat(path, ", ");
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    const std::string_view l(line.data(), line.size());
    absl::Status status;
    if (l.front() == '[') {
      status = depth > 0 ? absl::InvalidArgumentError("no sections in an included file (as in fio)") : Section(l);
    } else if (skipping_) {
      continue;
    } else if (l.starts_with("include ") || l.starts_with("include\t")) {
      status = Include(l.substr(8), path, depth);
      if (error_located_) return status;
    } else {
      status = Option(l);
    }
    if (!status.ok()) {
      error_located_ = true;
      return absl::Status(status.code(), absl::StrCat(where, "line ", line_number, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<JobOptions>> Parser::Finish(const std::string& path) {
  if (jobs_.empty()) {
    if (!options_.sections.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--section=", absl::StrJoin(options_.sections, ","),
                                                     ": no such job section (the file has: ",
                                                     absl::StrJoin(sections_seen_, ", "), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat(path.empty() ? "" : path + ": ",
                                                   "no job section ([name] before its options)"));
  }
  return std::move(jobs_);
}

}  // namespace

absl::StatusOr<std::vector<JobOptions>> ParseJobFile(std::string_view text, const JobOptions& defaults,
                                                     const JobFileOptions& options, const std::string& path) {
  Parser parser(defaults, options);
  absl::Status status = parser.ParseText(text, path, 0);
  if (!status.ok()) return status;
  auto jobs = parser.Finish(path);
  if (jobs.ok() && options.stonewall_first) jobs->front().stonewall = true;
  return jobs;
}

absl::StatusOr<std::vector<JobOptions>> ReadJobFile(const std::string& path, const JobOptions& defaults,
                                                    const JobFileOptions& options) {
  PMSTORE_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  auto jobs = ParseJobFile(text, defaults, options, path);
  if (!jobs.ok()) {
    // "job file test.fio, line 3: unsupported option 'verify'"
    return absl::Status(jobs.status().code(), absl::StrCat("job file ", jobs.status().message()));
  }
  return jobs;
}

absl::StatusOr<std::vector<JobOptions>> ReadJobFiles(const std::vector<std::string>& paths,
                                                     const JobOptions& defaults,
                                                     const std::vector<std::string>& sections) {
  std::vector<JobOptions> all;
  for (size_t i = 0; i < paths.size(); ++i) {
    JobFileOptions options{.sections = sections, .stonewall_first = i > 0};
    auto jobs = ReadJobFile(paths[i], defaults, options);
    if (!jobs.ok()) {
      // With several files, a section may live in any one of them.
      if (!sections.empty() && jobs.status().message().find("no such job section") != std::string_view::npos &&
          paths.size() > 1) {
        continue;
      }
      return jobs.status();
    }
    all.insert(all.end(), jobs->begin(), jobs->end());
  }
  if (all.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--section=", absl::StrJoin(sections, ","),
                                                   ": no such job section in ", absl::StrJoin(paths, ", ")));
  }
  return all;
}

}  // namespace faultbench

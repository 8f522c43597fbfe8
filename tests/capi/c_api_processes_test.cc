// A pool and processes, through the C names: a read-only open
// (pmstore_options_set_read_only) reads, refuses writes with
// PMSTORE_PERMISSION_DENIED and shares the pool with other read-only
// opens; a new pool gets the permissions asked for
// (pmstore_options_set_mode); a store used in a forked child fails with
// PMSTORE_FAILED_PRECONDITION there and the parent goes on; pmstore_destroy
// removes a pool no process has open; pmstore_readers lists the opens of
// every process, a killed one's as stale, which
// pmstore_clear_stale_readers frees; an exclusive open
// (pmstore_options_set_exclusive) keeps out what it shuts out, and without
// it a read-only process follows the writer's commits.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <string>

#include "c_api_fixture.h"

namespace pmstore_c_test {
namespace {

class CApiProcessesTest : public CApiFixture {
 protected:
  // A pool holding k -> v, closed.
  void MakePool() {
    Open();
    Put("k", "v");
    ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
    db_ = nullptr;
  }
};

// Another process for the pool at `path`, forked before this one opens it
// (a child forked from an open store may not use that store). It does what
// it is told, one line at a time, and answers each in one line: "open"
// opens the pool with its own options and answers "OK", or the code's name
// and the message; "get KEY" answers the value, or "<CODE>"; "check" runs
// pmstore_check_path and answers "clean KEYS" or the first problem;
// "snapshot" takes a snapshot and answers "OK"; "scan" answers every
// "KEY=VALUE" of that snapshot, space-separated, or the iterator's code
// and message; "close" closes it and answers "OK". Its input closed, it
// exits.
class OtherProcess {
 public:
  OtherProcess(const std::string& path, bool read_only, bool exclusive) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      close(to_child[1]);
      close(from_child[0]);
      _exit(Serve(path, read_only, exclusive, to_child[0], from_child[1]));
    }
    close(to_child[0]);
    close(from_child[1]);
    to_ = to_child[1];
    from_ = from_child[0];
  }
  ~OtherProcess() {
    if (pid_ <= 0) return;
    close(to_);
    close(from_);
    int status = 0;
    EXPECT_EQ(waitpid(pid_, &status, 0), pid_);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  pid_t pid() const { return pid_; }

  // The answer to `request`; "" when the process is gone.
  std::string Ask(const std::string& request) {
    if (pid_ <= 0 || !WriteLine(to_, request)) return "";
    std::string answer;
    return ReadLine(from_, &answer) ? answer : "";
  }

 private:
  static bool WriteLine(int fd, const std::string& line) {
    const std::string text = line + "\n";
    return write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  static bool ReadLine(int fd, std::string* line) {
    line->clear();
    char c;
    while (read(fd, &c, 1) == 1) {
      if (c == '\n') return true;
      line->push_back(c);
    }
    return false;
  }
  // The child's loop: its exit status.
  static int Serve(const std::string& path, bool read_only, bool exclusive, int in, int out) {
    pmstore_options_t* options = pmstore_options_create();
    pmstore_options_set_read_only(options, read_only);
    pmstore_options_set_exclusive(options, exclusive);
    pmstore_t* db = nullptr;
    const pmstore_snapshot_t* snapshot = nullptr;
    std::string request;
    while (ReadLine(in, &request)) {
      std::string answer;
      char* err = nullptr;
      if (request == "open") {
        const pmstore_code_t code = pmstore_open(options, path.c_str(), &db, &err);
        answer = code == PMSTORE_OK ? "OK" : std::string(pmstore_code_name(code)) + " " + (err ? err : "");
      } else if (request.starts_with("get ")) {
        const std::string key = request.substr(4);
        char* val = nullptr;
        size_t len = 0;
        const pmstore_code_t code = pmstore_get(db, nullptr, key.data(), key.size(), &val, &len, nullptr);
        answer = ValueOrCode(code, val, len);
      } else if (request == "check") {
        pmstore_checkreport_t* report = nullptr;
        const pmstore_code_t code = pmstore_check_path(path.c_str(), &report, &err);
        if (code != PMSTORE_OK) {
          answer = std::string(pmstore_code_name(code)) + " " + (err ? err : "");
        } else {
          answer = pmstore_checkreport_clean(report) ? "clean " + std::to_string(pmstore_checkreport_keys(report))
                                                     : std::string(pmstore_checkreport_problem(report, 0));
          pmstore_checkreport_destroy(report);
        }
      } else if (request == "snapshot") {
        snapshot = pmstore_create_snapshot(db);
        answer = snapshot != nullptr ? "OK" : "no snapshot";
      } else if (request == "scan") {
        pmstore_readoptions_t* at = pmstore_readoptions_create();
        pmstore_readoptions_set_snapshot(at, snapshot);
        pmstore_iterator_t* it = pmstore_create_iterator(db, at, nullptr);
        for (pmstore_iter_seek_to_first(it); pmstore_iter_valid(it); pmstore_iter_next(it)) {
          size_t key_len = 0, value_len = 0;
          const char* key = pmstore_iter_key(it, &key_len);
          const char* value = pmstore_iter_value(it, &value_len);
          answer += (answer.empty() ? "" : " ") + std::string(key, key_len) + "=" + std::string(value, value_len);
        }
        if (const pmstore_code_t code = pmstore_iter_get_error(it, &err); code != PMSTORE_OK) {
          answer = std::string(pmstore_code_name(code)) + " " + (err ? err : "");
        }
        pmstore_iter_destroy(it);
        pmstore_readoptions_destroy(at);
      } else if (request == "close") {
        if (snapshot != nullptr) pmstore_release_snapshot(db, snapshot);
        snapshot = nullptr;
        const pmstore_code_t code = pmstore_close(db, &err);
        db = nullptr;
        answer = code == PMSTORE_OK ? "OK" : std::string(pmstore_code_name(code)) + " " + (err ? err : "");
      }
      pmstore_free(err);
      if (!WriteLine(out, answer)) return 1;
    }
    pmstore_options_destroy(options);
    if (snapshot != nullptr) pmstore_release_snapshot(db, snapshot);
    return db == nullptr || pmstore_close(db, nullptr) == PMSTORE_OK ? 0 : 2;
  }

  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

TEST_F(CApiProcessesTest, ReadsAndRefusesWritesWithPermissionDenied) {
  MakePool();
  pmstore_options_set_read_only(options_, true);
  Open();
  EXPECT_EQ(Get("k"), "v");
  pmstore_stats_t* stats = pmstore_get_stats(db_);
  EXPECT_TRUE(pmstore_stats_read_only(stats));
  pmstore_stats_destroy(stats);

  ErrMsg err;
  EXPECT_EQ(pmstore_put(db_, nullptr, "k", 1, "w", 1, err.out()), PMSTORE_PERMISSION_DENIED);
  EXPECT_NE(err.str().find("read-only"), std::string::npos) << err.str();
  EXPECT_EQ(pmstore_delete(db_, nullptr, "k", 1, nullptr), PMSTORE_PERMISSION_DENIED);
  EXPECT_EQ(pmstore_sync(db_, nullptr), PMSTORE_PERMISSION_DENIED);
  EXPECT_EQ(Get("k"), "v");

  // A process opens a pool once: a second open here is refused, read-only
  // or writable, and says why (other processes share a read-only pool).
  for (const bool read_only : {true, false}) {
    pmstore_options_set_read_only(options_, read_only);
    pmstore_t* second = nullptr;
    ErrMsg refused;
    EXPECT_EQ(pmstore_open(options_, path_.c_str(), &second, refused.out()), PMSTORE_FAILED_PRECONDITION);
    EXPECT_EQ(second, nullptr);
    EXPECT_NE(refused.str().find("already open in this process"), std::string::npos) << refused.str();
  }
}

TEST_F(CApiProcessesTest, NeverCreatesAPool) {
  pmstore_options_set_read_only(options_, true);  // create_if_missing is set too
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db_, nullptr), PMSTORE_NOT_FOUND);
  struct stat st;
  EXPECT_NE(stat(path_.c_str(), &st), 0);
}

TEST_F(CApiProcessesTest, ModeSetsANewPoolsPermissions) {
  const mode_t old_umask = umask(022);
  pmstore_options_set_mode(options_, 0640);
  Open();
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  umask(old_umask);

  pmstore_options_set_mode(options_, 01000);
  pmstore_t* other = nullptr;
  const std::string other_path = dir_.File("other");
  EXPECT_EQ(pmstore_open(options_, other_path.c_str(), &other, nullptr), PMSTORE_INVALID_ARGUMENT);
}

// The child's exit status: 0, or the first call that did not fail as it
// must.
int UseInChild(pmstore_t* db) {
  char* val = nullptr;
  size_t len = 0;
  char* err = nullptr;
  if (pmstore_get(db, nullptr, "k", 1, &val, &len, &err) != PMSTORE_FAILED_PRECONDITION) return 1;
  const bool says_why = err != nullptr && std::string(err).find("across fork") != std::string::npos;
  pmstore_free(err);
  if (!says_why) return 2;
  if (pmstore_put(db, nullptr, "k", 1, "c", 1, nullptr) != PMSTORE_FAILED_PRECONDITION) return 3;
  if (pmstore_close(db, nullptr) != PMSTORE_FAILED_PRECONDITION) return 4;
  return 0;
}

TEST_F(CApiProcessesTest, AForkedChildGetsFailedPreconditionAndTheParentGoesOn) {
  Open();
  Put("k", "v");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(UseInChild(db_));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Get("k"), "v");
  Put("k", "w");
  EXPECT_EQ(Get("k"), "w");
}

TEST_F(CApiProcessesTest, DestroyRemovesAClosedPoolAndRefusesAnOpenOne) {
  MakePool();
  Open();
  ErrMsg in_use;
  EXPECT_EQ(pmstore_destroy(path_.c_str(), in_use.out()), PMSTORE_FAILED_PRECONDITION);
  EXPECT_NE(in_use.str().find("already open in this process"), std::string::npos) << in_use.str();
  pmstore_stats_t* stats = pmstore_get_stats(db_);
  EXPECT_EQ(pmstore_stats_device_dax_align(stats), 0u);  // a file
  pmstore_stats_destroy(stats);
  ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
  db_ = nullptr;

  EXPECT_EQ(pmstore_destroy(path_.c_str(), nullptr), PMSTORE_OK);
  struct stat st;
  EXPECT_NE(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(pmstore_destroy(path_.c_str(), nullptr), PMSTORE_NOT_FOUND);
  ErrMsg not_dax;
  EXPECT_EQ(pmstore_destroy("/dev/null", not_dax.out()), PMSTORE_INVALID_ARGUMENT);
  EXPECT_NE(not_dax.str().find("not device DAX"), std::string::npos) << not_dax.str();
  EXPECT_EQ(pmstore_destroy(nullptr, nullptr), PMSTORE_INVALID_ARGUMENT);
}

TEST_F(CApiProcessesTest, ReadersListsEveryProcessAndClearsAKilledOnesSlot) {
  MakePool();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    pmstore_options_set_read_only(options_, true);
    pmstore_t* db = nullptr;
    const char opened = pmstore_open(options_, path_.c_str(), &db, nullptr) == PMSTORE_OK ? 'y' : 'n';
    if (write(ready[1], &opened, 1) != 1) _exit(1);
    pause();  // until killed, the pool open
    _exit(0);
  }
  close(ready[1]);
  char opened = 0;
  ASSERT_EQ(read(ready[0], &opened, 1), 1);
  close(ready[0]);
  ASSERT_EQ(opened, 'y');

  pmstore_readers_t* readers = nullptr;
  ErrMsg err;
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, err.out()), PMSTORE_OK) << err.str();
  ASSERT_EQ(pmstore_readers_count(readers), 1u);
  EXPECT_EQ(pmstore_readers_pid(readers, 0), child);
  EXPECT_FALSE(pmstore_readers_writable(readers, 0));
  EXPECT_FALSE(pmstore_readers_stale(readers, 0));
  EXPECT_GT(pmstore_readers_opened_unix_ns(readers, 0), 0);
  const uint32_t slot = pmstore_readers_slot(readers, 0);
  pmstore_readers_destroy(readers);

  kill(child, SIGKILL);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, err.out()), PMSTORE_OK) << err.str();
  ASSERT_EQ(pmstore_readers_count(readers), 1u);
  EXPECT_EQ(pmstore_readers_slot(readers, 0), slot);
  EXPECT_TRUE(pmstore_readers_stale(readers, 0));
  pmstore_readers_destroy(readers);

  int cleared = -1;
  ASSERT_EQ(pmstore_clear_stale_readers(path_.c_str(), &cleared, err.out()), PMSTORE_OK) << err.str();
  EXPECT_EQ(cleared, 1);
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, err.out()), PMSTORE_OK) << err.str();
  EXPECT_EQ(pmstore_readers_count(readers), 0u);
  pmstore_readers_destroy(readers);

  EXPECT_EQ(pmstore_readers(dir_.File("missing").c_str(), &readers, nullptr), PMSTORE_NOT_FOUND);
  EXPECT_EQ(pmstore_readers("/dev/null", &readers, nullptr), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(pmstore_readers(nullptr, &readers, nullptr), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(pmstore_readers(path_.c_str(), nullptr, nullptr), PMSTORE_INVALID_ARGUMENT);
  EXPECT_EQ(pmstore_clear_stale_readers(path_.c_str(), nullptr, nullptr), PMSTORE_INVALID_ARGUMENT);
  pmstore_readers_destroy(nullptr);
}

TEST_F(CApiProcessesTest, ReadersShowTheOldestCommitAnOpenPins) {
  Open();
  Put("a", "1");
  pmstore_readers_t* readers = nullptr;
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, nullptr), PMSTORE_OK);
  ASSERT_EQ(pmstore_readers_count(readers), 1u);
  uint64_t pinned = 12345;
  EXPECT_FALSE(pmstore_readers_pinned_commit(readers, 0, &pinned)) << "nothing reads";
  EXPECT_EQ(pinned, 12345u) << "left as it was";
  pmstore_readers_destroy(readers);

  const pmstore_snapshot_t* older = pmstore_create_snapshot(db_);
  Put("b", "2");
  const pmstore_snapshot_t* newer = pmstore_create_snapshot(db_);
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, nullptr), PMSTORE_OK);
  ASSERT_TRUE(pmstore_readers_pinned_commit(readers, 0, &pinned));
  EXPECT_EQ(pinned, pmstore_snapshot_sequence(older));
  pmstore_readers_destroy(readers);
  pmstore_release_snapshot(db_, older);
  Put("c", "3");  // the next commit publishes the oldest that remains
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, nullptr), PMSTORE_OK);
  ASSERT_TRUE(pmstore_readers_pinned_commit(readers, 0, nullptr));
  ASSERT_TRUE(pmstore_readers_pinned_commit(readers, 0, &pinned));
  EXPECT_EQ(pinned, pmstore_snapshot_sequence(newer));
  pmstore_readers_destroy(readers);
  pmstore_release_snapshot(db_, newer);
}

TEST_F(CApiProcessesTest, ReadersShowTheLastCommitOfAWritableOpen) {
  Open();
  Put("a", "1");
  const pmstore_snapshot_t* now = pmstore_create_snapshot(db_);
  pmstore_readers_t* readers = nullptr;
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, nullptr), PMSTORE_OK);
  ASSERT_EQ(pmstore_readers_count(readers), 1u);
  uint64_t last = 0;
  ASSERT_TRUE(pmstore_readers_last_commit(readers, 0, nullptr));
  ASSERT_TRUE(pmstore_readers_last_commit(readers, 0, &last));
  EXPECT_EQ(last, pmstore_snapshot_sequence(now));
  pmstore_readers_destroy(readers);
  pmstore_release_snapshot(db_, now);

  Put("b", "2");
  ASSERT_EQ(pmstore_readers(path_.c_str(), &readers, nullptr), PMSTORE_OK);
  uint64_t after = 0;
  ASSERT_TRUE(pmstore_readers_last_commit(readers, 0, &after));
  EXPECT_GT(after, last) << "a commit moves it";
  pmstore_readers_destroy(readers);
}

TEST_F(CApiProcessesTest, AnExclusiveWriterShutsOutReadOnlyProcessesAndTheyShutItOut) {
  MakePool();
  OtherProcess reader(path_, /*read_only=*/true, /*exclusive=*/false);
  pmstore_options_set_exclusive(options_, true);
  Open();
  const std::string refused = reader.Ask("open");
  EXPECT_TRUE(refused.starts_with("FAILED_PRECONDITION ")) << refused;
  EXPECT_NE(refused.find("in use by process " + std::to_string(getpid())), std::string::npos) << refused;
  ASSERT_EQ(pmstore_close(db_, nullptr), PMSTORE_OK);
  db_ = nullptr;

  // The other way round: the reader holds the pool, the exclusive writer
  // is refused, naming it.
  ASSERT_EQ(reader.Ask("open"), "OK");
  ErrMsg err;
  EXPECT_EQ(pmstore_open(options_, path_.c_str(), &db_, err.out()), PMSTORE_FAILED_PRECONDITION);
  EXPECT_EQ(db_, nullptr);
  EXPECT_NE(err.str().find("in use by process " + std::to_string(reader.pid())), std::string::npos) << err.str();
  EXPECT_EQ(reader.Ask("close"), "OK");
}

TEST_F(CApiProcessesTest, AnExclusiveReadOnlyOpenShutsOutWritersButNotReaders) {
  MakePool();
  OtherProcess writer(path_, /*read_only=*/false, /*exclusive=*/false);
  OtherProcess reader(path_, /*read_only=*/true, /*exclusive=*/false);
  pmstore_options_set_read_only(options_, true);
  pmstore_options_set_exclusive(options_, true);
  Open();
  const std::string refused = writer.Ask("open");
  EXPECT_TRUE(refused.starts_with("FAILED_PRECONDITION ")) << refused;
  EXPECT_NE(refused.find("in use by process " + std::to_string(getpid())), std::string::npos) << refused;
  ASSERT_EQ(reader.Ask("open"), "OK");
  EXPECT_EQ(reader.Ask("get k"), "v");
  EXPECT_EQ(Get("k"), "v");
}

TEST_F(CApiProcessesTest, WithoutExclusiveAReadOnlyProcessFollowsTheWritersCommits) {
  MakePool();
  OtherProcess reader(path_, /*read_only=*/true, /*exclusive=*/false);
  Open();  // for writing
  ASSERT_EQ(reader.Ask("open"), "OK");
  EXPECT_EQ(reader.Ask("get k"), "v");
  EXPECT_EQ(reader.Ask("get late"), "<NOT_FOUND>");
  Put("late", "after the reader opened");  // durable: the fixture's writes sync
  EXPECT_EQ(reader.Ask("get late"), "after the reader opened");
  Put("k", "w");
  EXPECT_EQ(reader.Ask("get k"), "w");
}

// A snapshot of a read-only process reads its commit after the writer
// rewrote every key (the leaves as they were, from the lock region's
// leaf image ring), while a Get reads the newest.
TEST_F(CApiProcessesTest, ASnapshotOfAReadOnlyProcessReadsItsCommitAfterTheWriterRewritesEveryKey) {
  MakePool();
  OtherProcess reader(path_, /*read_only=*/true, /*exclusive=*/false);
  Open();  // for writing
  Put("k", "v");
  Put("k2", "v2");
  ASSERT_EQ(reader.Ask("open"), "OK");
  ASSERT_EQ(reader.Ask("snapshot"), "OK");
  for (int round = 0; round < 50; ++round) {
    Put("k", "w" + std::to_string(round));
    Put("k2", "w" + std::to_string(round));
    Put("k3", "new");
  }
  EXPECT_EQ(reader.Ask("scan"), "k=v k2=v2");
  EXPECT_EQ(reader.Ask("get k"), "w49");
}

// pmstore_check_path beside a writer of this process checks its newest
// commit, and the writer's next commit goes through after it.
TEST_F(CApiProcessesTest, ACheckOfAnotherProcessChecksTheWritersNewestCommit) {
  MakePool();
  OtherProcess checker(path_, /*read_only=*/true, /*exclusive=*/false);
  Open();  // for writing
  Put("late", "before the check");
  EXPECT_EQ(checker.Ask("check"), "clean 2");
  Put("later", "after the check");
  EXPECT_EQ(checker.Ask("check"), "clean 3");
}

}  // namespace
}  // namespace pmstore_c_test

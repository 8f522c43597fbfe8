// Every system call the store makes about its pools (through the Env seam,
// pmstore/env/env.h) fails in turn, with the errno a real failure gives,
// as the mutants test removes each persistence site in turn.
//
// A scenario (create, durable puts, growth, an unsynced run and Sync, a
// close, a reopen, a copy, an overwrite, a close, a check of the copy) runs
// once to record its calls; then once per recorded call, failing that one.
// Calls that only a failure reaches (the ftruncate that undoes a failed
// grow) are found in those runs and failed on top of the first failure.
// Each time:
//   - a call of the scenario returns the failure, naming the call and the
//     pool or copy it was about; nothing aborts;
//   - the pool reopens clean (the real Env) and holds every write that was
//     acknowledged before the failure; a copy exists only whole;
//   - where a signal may interrupt the call (EINTR), it is repeated and
//     the scenario succeeds;
//   - the few calls whose failure loses nothing (close of a descriptor
//     nothing was written through, munmap, the unlink of a file that is
//     visibly no pool) do not fail the scenario.
// Removing any one error path from the store makes this test fail: the
// failure would then go unreported, or be reported as something else.
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/db/store_impl.h"
#include "store/store_test_util.h"
#include "support/fault_injection_env.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::FaultInjectionEnv;
using Call = FaultInjectionEnv::Call;

// What a run of the scenario left: the first failure (OK: none), the step
// it came from, and what the store had acknowledged by then.
struct Outcome {
  absl::Status failure;
  std::string step;
  std::map<std::string, std::string> pool;  // acknowledged in the pool
  std::map<std::string, std::string> copy;  // what a copy holds, once it was acknowledged
  bool copied = false;
};

std::string Value(int i, size_t size) { return std::string(size, static_cast<char>('a' + i % 26)); }

Outcome RunScenario(const std::string& dir, env::Env* env) {
  Outcome out;
  const std::string pool = dir + "/pool";
  const std::string copy = dir + "/copy";
  std::unique_ptr<StoreImpl> store;
  const auto fail = [&](const std::string& step, const absl::Status& status) {
    out.step = step;
    out.failure = status;
    // A store that failed is closed (what Close reports then is the same
    // failure, or another the run does not look at).
    if (!status.ok() && store != nullptr) store->Close().IgnoreError();
    return out.failure.ok();
  };
  const auto open = [&](const std::string& step, const Options& options) {
    auto opened = StoreImpl::OpenWith(pool, options, &internal::MakeMappingPersister, env);
    if (opened.ok()) store = std::move(*opened);
    return fail(step, opened.status());
  };
  const auto put = [&](const std::string& step, const std::string& key, const std::string& value, bool sync) {
    if (!fail(step, store->Put(WriteOptions{.sync = sync}, key, value))) return false;
    if (sync) out.pool[key] = value;
    return true;
  };

  if (!open("create", testing::SmallPool(8ull << 20, 64ull << 20))) return out;
  for (int i = 0; i < 10; ++i) {
    if (!put("durable put", absl::StrCat("small", i), Value(i, 100), true)) return out;
  }
  // Past the initial 8 MiB: the pool grows (fallocate, fdatasync, a new map).
  for (int i = 0; i < 8; ++i) {
    if (!put("growing put", absl::StrCat("large", i), Value(i, 1 << 20), true)) return out;
  }
  std::map<std::string, std::string> unsynced;
  for (int i = 0; i < 10; ++i) {
    if (!put("unsynced put", absl::StrCat("run", i), Value(i, 200), false)) return out;
    unsynced[absl::StrCat("run", i)] = Value(i, 200);
  }
  if (!fail("sync", store->Sync())) return out;
  out.pool.insert(unsynced.begin(), unsynced.end());
  if (!fail("close", store->Close())) return out;
  store.reset();
  if (!open("reopen", Options())) return out;
  if (!fail("copy", store->CopyTo(copy))) return out;
  out.copy = out.pool;
  out.copied = true;
  if (!put("overwrite", "small0", "new", true)) return out;
  if (!fail("second close", store->Close())) return out;
  store.reset();
  auto check = StoreImpl::OpenWith(copy, Options(), &internal::MakeMappingPersister, env);
  if (!fail("open the copy", check.status())) return out;
  const CheckReport report = (*check)->CheckNow();
  if (!report.clean()) out.failure = absl::DataLossError(report.problems.front());
  if (!fail("close the copy", (*check)->Close())) return out;
  return out;
}

// The errno a real failure of `call` gives (a full file system for
// fallocate, a failing device for the syncs and reads, ...).
int FailureOf(Call call) {
  switch (call) {
    case Call::kOpen: return EACCES;
    case Call::kFallocate: return ENOSPC;
    case Call::kLock: return ENOLCK;
    case Call::kMmap:
    case Call::kPmem2MapNew:
    case Call::kPmem2VmReservationNew: return ENOMEM;
    default: return EIO;
  }
}

// Calls a signal may interrupt, which the store repeats.
bool MayBeInterrupted(Call call) {
  return call == Call::kOpen || call == Call::kPread || call == Call::kFallocate || call == Call::kFtruncate ||
         call == Call::kFsync || call == Call::kFdatasync;
}

// Calls whose failure loses nothing, and which the store therefore does
// not report: the close of a descriptor everything written through was
// synced before; munmap (address space, never data); the unlink of a
// half-made pool or copy, which is named as one.
bool LosesNothing(Call call) { return call == Call::kClose || call == Call::kMunmap || call == Call::kUnlink; }

std::set<std::string> Leftovers(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != "pool" && name != "copy") names.insert(name);
  }
  return names;
}

// What the pool and the copy hold after a run that failed as `out` says,
// opened with the real Env.
void ExpectNothingAcknowledgedLost(const std::string& dir, const Outcome& out, const std::string& what) {
  SCOPED_TRACE(what);
  const std::string pool = dir + "/pool";
  if (!std::filesystem::exists(pool)) {
    EXPECT_TRUE(out.pool.empty()) << "the pool is gone, with acknowledged writes";
    EXPECT_EQ(out.step, "create");
  } else {
    auto store = Store::Open(pool, Options());
    ASSERT_TRUE(store.ok()) << store.status();
    for (const auto& [key, value] : out.pool) {
      std::string read;
      const absl::Status got = (*store)->Get(key, &read);
      EXPECT_TRUE(got.ok() && (read == value || (key == "small0" && read == "new")))
          << key << ": " << got << " (" << read.size() << " bytes)";
    }
    const CheckReport report = (*store)->CheckNow();
    EXPECT_TRUE(report.clean()) << report.problems.front();
  }
  const std::string copy = dir + "/copy";
  if (std::filesystem::exists(copy)) {
    auto store = Store::Open(copy, Options());
    ASSERT_TRUE(store.ok()) << "a copy under its name opens: " << store.status();
    for (const auto& [key, value] : out.copied ? out.copy : out.pool) {
      std::string read;
      EXPECT_TRUE((*store)->Get(key, &read).ok() && read == value) << "the copy lacks " << key;
    }
    EXPECT_TRUE((*store)->CheckNow().clean());
  }
  for (const std::string& name : Leftovers(dir)) {
    // A temporary name of a half-made pool or copy is visibly not a pool;
    // only a failed unlink of one may leave it.
    EXPECT_TRUE(name.find(".creating.") != std::string::npos || name.find(".copying.") != std::string::npos) << name;
  }
}

// Every call in the plain build; in the sanitizer builds, which run the
// same code several times slower, every fourth, every fallocate (whose
// failure leads to the undo of a grow) and the doubles.
#if defined(PMSTORE_SANITIZE_BUILD)
constexpr size_t kStride = 4;
#else
constexpr size_t kStride = 1;
#endif

class SyscallFaultTest : public ::testing::Test {
 protected:
  // Runs the scenario in a new directory with the failures set in env_.
  Outcome Run(TempDir* dir) {
    env_.Reset();
    return RunScenario(dir->path(), &env_);
  }

  FaultInjectionEnv env_;
};

TEST_F(SyscallFaultTest, EveryFailingSystemCallIsReportedAndLosesNothingAcknowledged) {
  std::vector<FaultInjectionEnv::Record> clean;
  // Twice: the mapping layer keeps the address space reservations of
  // closed pools for the next (mapping/mapping.cc), so from the second run
  // on every run makes the same calls. (Reservations are failed apart.)
  for (int warm = 0; warm < 2; ++warm) {
    TempDir dir("/dev/shm");
    const Outcome out = Run(&dir);
    ASSERT_TRUE(out.failure.ok()) << out.step << ": " << out.failure;
    clean = env_.trace();
  }
  std::set<Call> seen;
  for (const auto& record : clean) seen.insert(record.call);
  // The scenario reaches every kind of call the store makes about a pool.
  for (Call call : {Call::kOpen, Call::kStat, Call::kLstat, Call::kFstat, Call::kPread, Call::kFallocate, Call::kFsync,
                    Call::kFdatasync, Call::kRename, Call::kLock, Call::kMsync, Call::kPmem2MapNew, Call::kClose}) {
    EXPECT_TRUE(seen.count(call)) << FaultInjectionEnv::Name(call) << " never called: the scenario misses it";
  }
  std::printf("the scenario makes %zu system calls through the Env\n", clean.size());

  // Calls only a failure's run reaches (the undo of a failed grow), failed
  // on top of that failure: one pair of kinds each, at its first place.
  struct Double {
    size_t first;
    size_t second;
    Call call;
  };
  std::map<std::pair<Call, Call>, Double> doubles;
  size_t reported = 0, interrupted = 0, tolerated = 0;
  for (size_t i = 0; i < clean.size(); ++i) {
    const Call call = clean[i].call;
    if (i % kStride != 0 && call != Call::kFallocate) continue;
    const std::string what = absl::StrCat("call ", i, " (", FaultInjectionEnv::Name(call), " ", clean[i].subject, ")");
    SCOPED_TRACE(what);
    TempDir dir("/dev/shm");
    env_.Reset();
    env_.FailAt(i, FailureOf(call));
    const Outcome out = RunScenario(dir.path(), &env_);
    for (size_t j = i + 1; j < env_.trace().size(); ++j) {
      const Call second = env_.trace()[j].call;
      if (!seen.count(second)) doubles.try_emplace({call, second}, Double{i, j, second});
    }
    if (LosesNothing(call)) {
      EXPECT_TRUE(out.failure.ok()) << out.step << ": " << out.failure;
      ++tolerated;
    } else {
      ASSERT_FALSE(out.failure.ok()) << "the failure went unreported";
      const std::string message(out.failure.message());
      EXPECT_NE(message.find(FaultInjectionEnv::Name(call)), std::string::npos) << out.step << ": " << message;
      EXPECT_TRUE(message.find(dir.File("pool")) != std::string::npos ||
                  message.find(dir.File("copy")) != std::string::npos)
          << out.step << ": " << message;
      if (call == Call::kFallocate) {
        EXPECT_TRUE(absl::IsResourceExhausted(out.failure)) << "a full file system: " << out.failure;
      }
      ++reported;
    }
    ExpectNothingAcknowledgedLost(dir.path(), out, what);
    if (MayBeInterrupted(call)) {
      TempDir again("/dev/shm");
      env_.Reset();
      env_.FailAt(i, EINTR);
      const Outcome interrupted_run = RunScenario(again.path(), &env_);
      EXPECT_TRUE(interrupted_run.failure.ok())
          << "an interrupted " << FaultInjectionEnv::Name(call) << " is repeated: " << interrupted_run.step << ": "
          << interrupted_run.failure;
      ++interrupted;
    }
  }
  size_t second_failures = 0;
  std::set<Call> found_by_failures;
  for (const auto& [kinds, pair] : doubles) {
    found_by_failures.insert(pair.call);
    const std::string what =
        absl::StrCat("call ", pair.first, " then ", pair.second, " (", FaultInjectionEnv::Name(pair.call), ")");
    SCOPED_TRACE(what);
    TempDir dir("/dev/shm");
    env_.Reset();
    env_.FailAt(pair.first, FailureOf(clean[pair.first].call));
    env_.FailAt(pair.second, FailureOf(pair.call));
    const Outcome out = RunScenario(dir.path(), &env_);
    if (!LosesNothing(pair.call)) {
      ASSERT_FALSE(out.failure.ok());
      EXPECT_NE(std::string(out.failure.message()).find(FaultInjectionEnv::Name(pair.call)), std::string::npos)
          << "the second failure is the one reported: " << out.failure;
    }
    ExpectNothingAcknowledgedLost(dir.path(), out, what);
    ++second_failures;
  }
  EXPECT_TRUE(found_by_failures.count(Call::kFtruncate)) << "a failed grow's undo was never reached";
  std::printf("failed: %zu reported, %zu losing nothing, %zu interrupted and repeated, %zu on top of another\n",
              reported, tolerated, interrupted, second_failures);
}

// The address space reservation, which the mapping layer makes only when
// none of those it kept is large enough: for a pool larger than any before.
TEST_F(SyscallFaultTest, AFailingReservationOfAddressSpaceFailsTheOpenNamingIt) {
  TempDir dir("/dev/shm");
  env_.Reset();
  // Where among the calls of a create the reservation comes. (64 and 128
  // GiB: under TSan, whose shadow takes most of the address space, a
  // reservation of 3 TiB fails for want of room.)
  auto first = StoreImpl::OpenWith(dir.File("first"), testing::SmallPool(8ull << 20, 64ull << 30),
                                   &internal::MakeMappingPersister, &env_);
  ASSERT_TRUE(first.ok()) << first.status();
  size_t index = 0;
  while (index < env_.trace().size() && env_.trace()[index].call != Call::kPmem2VmReservationNew) ++index;
  ASSERT_LT(index, env_.trace().size()) << "a pool of 64 GiB needs a reservation of its own";
  ASSERT_TRUE((*first)->Close().ok());
  env_.Reset();
  env_.FailAt(index, ENOMEM);
  auto second = StoreImpl::OpenWith(dir.File("second"), testing::SmallPool(8ull << 20, 128ull << 30),
                                    &internal::MakeMappingPersister, &env_);
  ASSERT_FALSE(second.ok());
  const std::string message(second.status().message());
  EXPECT_NE(message.find("pmem2_vm_reservation_new"), std::string::npos) << message;
  EXPECT_NE(message.find(dir.File("second")), std::string::npos) << message;
  EXPECT_NE(message.find("Cannot allocate memory"), std::string::npos) << message;
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) names.insert(entry.path().filename());
  EXPECT_EQ(names, (std::set<std::string>{"first"})) << "a create that failed leaves nothing";
}

// A lock refused by a holder that closes the pool before it can be named
// (the kernel's lock table then shows nobody): the pool is free, and the
// open takes it rather than blaming a process that is gone. Injected here
// as EAGAIN from the lock while no process holds the pool.
TEST_F(SyscallFaultTest, ALockRefusedByAHolderThatLeftIsAskedForAgain) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto created = StoreImpl::OpenWith(path, testing::SmallPool(), &internal::MakeMappingPersister, &env_);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE((*created)->Close().ok());
  env_.Reset();
  auto traced = StoreImpl::OpenWith(path, Options(), &internal::MakeMappingPersister, &env_);
  ASSERT_TRUE(traced.ok()) << traced.status();
  ASSERT_TRUE((*traced)->Close().ok());
  size_t lock = 0;
  while (lock < env_.trace().size() && env_.trace()[lock].call != Call::kLock) ++lock;
  ASSERT_LT(lock, env_.trace().size()) << "an open locks the pool";

  env_.Reset();
  env_.FailAt(lock, EAGAIN);
  auto once = StoreImpl::OpenWith(path, Options(), &internal::MakeMappingPersister, &env_);
  EXPECT_TRUE(once.ok()) << "a holder gone once: " << once.status();
  ASSERT_GT(env_.trace().size(), lock + 2);
  EXPECT_EQ(env_.trace()[lock + 1].call, Call::kLock) << "the holder is asked for";
  EXPECT_EQ(env_.trace()[lock + 2].call, Call::kLock) << "and the lock again";
  if (once.ok()) {
    ASSERT_TRUE((*once)->Close().ok());
  }

  // Refused again and again, each time by a holder gone before it is
  // named (the lock, the question, the lock, ...): the open gives up.
  env_.Reset();
  for (size_t i = 0; i < 3; ++i) env_.FailAt(lock + 2 * i, EAGAIN);
  auto never = StoreImpl::OpenWith(path, Options(), &internal::MakeMappingPersister, &env_);
  ASSERT_FALSE(never.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(never.status())) << never.status();
  EXPECT_NE(never.status().message().find("in use by other processes, which open and close it in turn"),
            std::string::npos)
      << never.status();
}

}  // namespace
}  // namespace pmstore

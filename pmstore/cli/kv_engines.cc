#include <lmdb.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <atomic>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/cli/kv_engine.h"
#include "pmstore/store.h"

namespace pmstore::cli {
namespace {

class PmstoreEngine final : public KvEngine {
 public:
  PmstoreEngine(std::unique_ptr<Store> store, bool sync) : store_(std::move(store)), write_{.sync = sync} {}
  std::string name() const override { return "pmstore"; }
  std::string Describe() override {
    const Stats stats = store_->GetStats();
    return absl::StrCat(std::string(GranularityName(stats.granularity)), " granularity, dax ", stats.dax ? "yes" : "no",
                        ", pmd-mapped share ", stats.pmd_mapped_share, " (", stats.pmd_verify_method, ")");
  }
  absl::Status Put(std::string_view key, std::string_view value) override { return store_->Put(write_, key, value); }
  absl::Status Delete(std::string_view key) override { return store_->Delete(write_, key); }
  absl::Status Get(std::string_view key, std::string* value, bool* found) override {
    const absl::Status status = store_->Get(ReadOptions(), key, value);
    *found = status.ok();
    return absl::IsNotFound(status) ? absl::OkStatus() : status;
  }
  absl::Status Update(std::string_view key, std::string_view value, bool transaction, std::string* old_value,
                      bool* found, uint64_t* aborts) override {
    if (!transaction) {
      PMSTORE_RETURN_IF_ERROR(Get(key, old_value, found));
      return Put(key, value);
    }
    // A bound, so that a bug that aborts every commit fails the run instead
    // of spinning: with each thread on keys of its own none should abort.
    constexpr int kMaxAttempts = 1000;
    absl::Status status;
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
      std::unique_ptr<Transaction> txn = store_->BeginTransaction();
      status = txn->Get(key, old_value);
      *found = status.ok();
      if (!status.ok() && !absl::IsNotFound(status)) return status;
      status = txn->Put(key, value);
      if (status.ok()) status = txn->Commit(write_);
      if (!absl::IsAborted(status)) return status;
      ++*aborts;
    }
    return absl::AbortedError(absl::StrCat("updaterandom: ", kMaxAttempts, " commits in a row of key '",
                                           std::string(key), "' aborted: ", status.message()));
  }
  absl::Status MultiGet(std::span<const std::string_view> keys, std::vector<std::string>* values,
                        uint64_t* found) override {
    *found = 0;
    for (const absl::Status& status : store_->MultiGet(ReadOptions(), keys, values)) {
      if (status.ok()) {
        ++*found;
      } else if (!absl::IsNotFound(status)) {
        return status;
      }
    }
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> Scan(uint64_t limit, uint64_t* bytes, bool reverse) override {
    auto it = store_->NewIterator(ReadOptions(), {});
    uint64_t n = 0;
    for (reverse ? it->SeekToLast() : it->SeekToFirst(); it->Valid() && n < limit; reverse ? it->Prev() : it->Next()) {
      *bytes += it->key().size() + it->value().size();
      ++n;
    }
    if (!it->status().ok()) return it->status();
    return n;
  }

  class IteratorCursor final : public Cursor {
   public:
    explicit IteratorCursor(std::unique_ptr<Iterator> it) : it_(std::move(it)) {}
    absl::StatusOr<uint64_t> Seek(std::string_view target, int nexts, bool reverse, uint64_t* bytes) override {
      uint64_t n = 0;
      reverse ? it_->SeekForPrev(target) : it_->Seek(target);
      for (; it_->Valid() && n <= static_cast<uint64_t>(nexts); reverse ? it_->Prev() : it_->Next()) {
        *bytes += it_->key().size() + it_->value().size();
        ++n;
      }
      if (!it_->status().ok()) return it_->status();
      return n;
    }

   private:
    std::unique_ptr<Iterator> it_;
  };
  absl::StatusOr<std::unique_ptr<Cursor>> NewCursor() override {
    return std::make_unique<IteratorCursor>(store_->NewIterator(ReadOptions(), {}));
  }

 private:
  std::unique_ptr<Store> store_;
  WriteOptions write_;
};

absl::Status LmdbError(int rc, std::string_view call, const std::string& path) {
  return absl::InternalError(absl::StrCat(path, ": ", std::string(call), ": ", mdb_strerror(rc)));
}

class LmdbEngine final : public KvEngine {
 public:
  ~LmdbEngine() override {
    for (MDB_txn* txn : readers_) mdb_txn_abort(txn);
    if (env_ != nullptr) mdb_env_close(env_);
  }
  std::string name() const override { return "lmdb"; }
  std::string Describe() override { return absl::StrCat("liblmdb ", MDB_VERSION_STRING, ", MDB_WRITEMAP"); }

  absl::Status Open(const EngineConfig& config) {
    path_ = config.path;
    if (config.fresh) {
      unlink(path_.c_str());
      unlink((path_ + "-lock").c_str());
    }
    int rc = mdb_env_create(&env_);
    if (rc == 0) rc = mdb_env_set_mapsize(env_, config.size);
    if (rc == 0) rc = mdb_env_set_maxreaders(env_, 256);
    const unsigned flags =
        MDB_WRITEMAP | MDB_NOSUBDIR | MDB_NOTLS | MDB_NORDAHEAD | (config.sync ? 0 : (MDB_NOSYNC | MDB_NOMETASYNC)) |
        (config.read_only ? MDB_RDONLY : 0);
    if (rc == 0) rc = mdb_env_open(env_, path_.c_str(), flags, 0644);
    if (rc != 0) return LmdbError(rc, "mdb_env_open", path_);
    MDB_txn* txn = nullptr;
    rc = mdb_txn_begin(env_, nullptr, config.read_only ? MDB_RDONLY : 0, &txn);
    if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc == 0) rc = mdb_txn_commit(txn);
    return rc == 0 ? absl::OkStatus() : LmdbError(rc, "mdb_dbi_open", path_);
  }

  absl::Status Put(std::string_view key, std::string_view value) override {
    return Write([&](MDB_txn* txn) {
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      MDB_val v{value.size(), const_cast<char*>(value.data())};
      return mdb_put(txn, dbi_, &k, &v, 0);
    });
  }
  absl::Status Delete(std::string_view key) override {
    return Write([&](MDB_txn* txn) {
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      const int rc = mdb_del(txn, dbi_, &k, nullptr);
      return rc == MDB_NOTFOUND ? 0 : rc;
    });
  }

  absl::Status Get(std::string_view key, std::string* value, bool* found) override {
    // One read transaction per thread, reset between reads and renewed, as
    // LMDB advises for many short reads; the engine aborts them at close.
    thread_local uint64_t txn_engine = 0;
    thread_local MDB_txn* txn = nullptr;
    int rc = 0;
    if (txn_engine != id_) {
      rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
      if (rc == 0) {
        txn_engine = id_;
        std::lock_guard<std::mutex> lock(write_mu_);
        readers_.push_back(txn);
      }
    } else {
      rc = mdb_txn_renew(txn);
    }
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    MDB_val v;
    rc = mdb_get(txn, dbi_, &k, &v);
    *found = rc == 0;
    if (rc == 0) value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_txn_reset(txn);
    return rc == 0 || rc == MDB_NOTFOUND ? absl::OkStatus() : LmdbError(rc, "mdb_get", path_);
  }

  // The old value is copied out before the put, as pmstore's Get copies
  // it: mdb_get points into the map, at a page the put may copy.
  absl::Status Update(std::string_view key, std::string_view value, bool /*transaction*/, std::string* old_value,
                      bool* found, uint64_t* /*aborts*/) override {
    return Write([&](MDB_txn* txn) {
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      MDB_val v;
      int rc = mdb_get(txn, dbi_, &k, &v);
      *found = rc == 0;
      if (rc == 0) old_value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
      if (rc != 0 && rc != MDB_NOTFOUND) return rc;
      v = MDB_val{value.size(), const_cast<char*>(value.data())};
      return mdb_put(txn, dbi_, &k, &v, 0);
    });
  }

  absl::Status MultiGet(std::span<const std::string_view>, std::vector<std::string>*, uint64_t*) override {
    return absl::UnimplementedError("LMDB has no batched read: the bench runs readrandom in place of multiget");
  }

  absl::StatusOr<uint64_t> Scan(uint64_t limit, uint64_t* bytes, bool reverse) override {
    MDB_txn* txn = nullptr;
    MDB_cursor* cursor = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
    if (rc == 0) rc = mdb_cursor_open(txn, dbi_, &cursor);
    if (rc != 0) return LmdbError(rc, "mdb_cursor_open", path_);
    MDB_val k, v;
    uint64_t n = 0;
    for (rc = mdb_cursor_get(cursor, &k, &v, reverse ? MDB_LAST : MDB_FIRST); rc == 0 && n < limit;
         rc = mdb_cursor_get(cursor, &k, &v, reverse ? MDB_PREV : MDB_NEXT), ++n) {
      *bytes += k.mv_size + v.mv_size;
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return n;
  }

  // A read transaction and a cursor, for one thread's seeks.
  class LmdbCursor final : public Cursor {
   public:
    LmdbCursor(MDB_txn* txn, MDB_cursor* cursor) : txn_(txn), cursor_(cursor) {}
    ~LmdbCursor() override {
      mdb_cursor_close(cursor_);
      mdb_txn_abort(txn_);
    }
    absl::StatusOr<uint64_t> Seek(std::string_view target, int nexts, bool reverse, uint64_t* bytes) override {
      MDB_val k{target.size(), const_cast<char*>(target.data())};
      MDB_val v;
      int rc = mdb_cursor_get(cursor_, &k, &v, MDB_SET_RANGE);  // the first key >= target
      if (reverse) {
        // The last key <= target: the one found when it is the target, else the one before it.
        const bool exact = rc == 0 && k.mv_size == target.size() && std::memcmp(k.mv_data, target.data(), k.mv_size) == 0;
        if (rc == MDB_NOTFOUND) {
          rc = mdb_cursor_get(cursor_, &k, &v, MDB_LAST);
        } else if (rc == 0 && !exact) {
          rc = mdb_cursor_get(cursor_, &k, &v, MDB_PREV);
        }
      }
      uint64_t n = 0;
      while (rc == 0) {
        *bytes += k.mv_size + v.mv_size;
        if (++n > static_cast<uint64_t>(nexts)) break;
        rc = mdb_cursor_get(cursor_, &k, &v, reverse ? MDB_PREV : MDB_NEXT);
      }
      if (rc != 0 && rc != MDB_NOTFOUND) return absl::InternalError(mdb_strerror(rc));
      return n;
    }

   private:
    MDB_txn* txn_;
    MDB_cursor* cursor_;
  };
  absl::StatusOr<std::unique_ptr<Cursor>> NewCursor() override {
    MDB_txn* txn = nullptr;
    MDB_cursor* cursor = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
    if (rc == 0) rc = mdb_cursor_open(txn, dbi_, &cursor);
    if (rc != 0) {
      if (txn != nullptr) mdb_txn_abort(txn);
      return LmdbError(rc, "mdb_cursor_open", path_);
    }
    return std::make_unique<LmdbCursor>(txn, cursor);
  }

 private:
  template <typename Fn>
  absl::Status Write(Fn fn) {
    std::lock_guard<std::mutex> lock(write_mu_);
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    if (rc != 0) return LmdbError(rc, "mdb_txn_begin", path_);
    rc = fn(txn);
    if (rc != 0) {
      mdb_txn_abort(txn);
      return LmdbError(rc, "write", path_);
    }
    rc = mdb_txn_commit(txn);
    return rc == 0 ? absl::OkStatus() : LmdbError(rc, "mdb_txn_commit", path_);
  }

  static inline std::atomic<uint64_t> next_id_{1};
  const uint64_t id_ = next_id_++;
  std::vector<MDB_txn*> readers_;  // guarded by write_mu_
  std::string path_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  std::mutex write_mu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<KvEngine>> OpenPmstoreEngine(const EngineConfig& config) {
  if (config.fresh) unlink(config.path.c_str());
  Options options;
  options.create_if_missing = true;
  options.initial_size = config.size;
  options.max_size = config.size;
  options.read_only = config.read_only;
  options.exclusive = config.exclusive;
  auto store = Store::Open(config.path, options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<KvEngine>(new PmstoreEngine(std::move(*store), config.sync));
}

absl::StatusOr<std::unique_ptr<KvEngine>> OpenLmdbEngine(const EngineConfig& config) {
  auto engine = std::make_unique<LmdbEngine>();
  absl::Status status = engine->Open(config);
  if (!status.ok()) return status;
  return std::unique_ptr<KvEngine>(std::move(engine));
}

}  // namespace pmstore::cli

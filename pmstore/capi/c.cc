// The C API (pmstore/c.h) over the C++ one: each C object wraps the C++
// object it names, each call translates its arguments, calls one C++
// method and turns the absl::Status into a code and a message. Nothing
// here may depend on the store's internals: only include/pmstore/.
#include "pmstore/c.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pmstore/store.h"
#include "pmstore/version.h"

// The codes are absl's values; a new absl code would need a new C name.
static_assert(PMSTORE_NOT_FOUND == static_cast<int>(absl::StatusCode::kNotFound));
static_assert(PMSTORE_FAILED_PRECONDITION == static_cast<int>(absl::StatusCode::kFailedPrecondition));
static_assert(PMSTORE_UNAUTHENTICATED == static_cast<int>(absl::StatusCode::kUnauthenticated));
static_assert(PMSTORE_GRANULARITY_PAGE == static_cast<int>(pmstore::Granularity::kPage));

struct pmstore_t {
  std::unique_ptr<pmstore::Store> store;
  std::string path;
  // Objects that must go before the store does (pmstore_close checks).
  std::atomic<int64_t> live_iterators{0};
  std::atomic<int64_t> live_pins{0};
  std::atomic<int64_t> live_snapshots{0};
  std::atomic<int64_t> live_transactions{0};
};
struct pmstore_options_t {
  pmstore::Options rep;
};
struct pmstore_readoptions_t {
  pmstore::ReadOptions rep;
};
struct pmstore_writeoptions_t {
  pmstore::WriteOptions rep;
};
struct pmstore_iteroptions_t {
  pmstore::IterateOptions rep;
};
struct pmstore_transactionoptions_t {
  pmstore::TransactionOptions rep;
};
struct pmstore_writebatch_t {
  pmstore::WriteBatch rep;
};
struct pmstore_iterator_t {
  pmstore_t* db;
  std::unique_ptr<pmstore::Iterator> rep;
};
struct pmstore_snapshot_t {
  pmstore_t* db;
  std::unique_ptr<pmstore::Snapshot> rep;
};
struct pmstore_transaction_t {
  pmstore_t* db;
  std::unique_ptr<pmstore::Transaction> rep;
  // Set by commit and rollback. The C++ Rollback returns nothing, so a
  // second end can only be reported from here.
  bool ended = false;
};
struct pmstore_pinnedvalue_t {
  pmstore_t* db;
  pmstore::PinnedValue rep;
};
struct pmstore_stats_t {
  pmstore::Stats rep;
};
struct pmstore_checkreport_t {
  pmstore::CheckReport rep;
};
struct pmstore_readers_t {
  std::vector<pmstore::ReaderInfo> rep;
};

namespace {

char* CopyToMalloc(std::string_view bytes) {
  if (bytes.empty()) return nullptr;
  char* out = static_cast<char*>(std::malloc(bytes.size()));
  if (out != nullptr) std::memcpy(out, bytes.data(), bytes.size());
  return out;
}

void SetMessage(char** errmsg, const std::string& message) {
  if (errmsg == nullptr) return;
  std::free(*errmsg);
  *errmsg = static_cast<char*>(std::malloc(message.size() + 1));
  if (*errmsg == nullptr) return;
  std::memcpy(*errmsg, message.data(), message.size());
  (*errmsg)[message.size()] = '\0';
}

pmstore_code_t ToCode(absl::StatusCode code) {
  const int value = static_cast<int>(code);
  return value >= PMSTORE_OK && value <= PMSTORE_UNAUTHENTICATED ? static_cast<pmstore_code_t>(value) : PMSTORE_UNKNOWN;
}

pmstore_code_t Report(const absl::Status& status, char** errmsg) {
  if (status.ok()) return PMSTORE_OK;
  SetMessage(errmsg, std::string(status.message()));
  return ToCode(status.code());
}

pmstore_code_t BadArgument(const char* call, const char* what, char** errmsg) {
  SetMessage(errmsg, absl::StrCat(call, ": ", what));
  return PMSTORE_INVALID_ARGUMENT;
}

// A (pointer, length) pair that may be (NULL, 0); NULL with a length is a
// caller's mistake.
bool ValidBytes(const char* data, size_t len) { return data != nullptr || len == 0; }
std::string_view Bytes(const char* data, size_t len) {
  return len == 0 ? std::string_view() : std::string_view(data, len);
}

// Checks the arguments every keyed call shares; "" when they are fine.
const char* KeyedCallProblem(const pmstore_t* db, const char* key, size_t keylen) {
  if (db == nullptr) return "db is NULL";
  if (!ValidBytes(key, keylen)) return "key is NULL but keylen is not 0";
  return "";
}
const char* KeyedCallProblem(const pmstore_transaction_t* txn, const char* key, size_t keylen) {
  if (txn == nullptr) return "txn is NULL";
  if (!ValidBytes(key, keylen)) return "key is NULL but keylen is not 0";
  return "";
}

// Hands a Get's result to the caller as pmstore_get promises: a malloc()ed
// copy, or NULL and 0 when the key is absent. `call` names the C call in
// the out-of-memory message.
pmstore_code_t CopyOutValue(const char* call, const absl::Status& status, std::string_view value, char** val,
                            size_t* vallen, char** errmsg) {
  if (!status.ok()) {
    if (absl::IsNotFound(status)) {
      *val = nullptr;
      *vallen = 0;
      return Report(absl::NotFoundError("key not found"), errmsg);
    }
    return Report(status, errmsg);
  }
  char* copy = CopyToMalloc(value);
  if (copy == nullptr && !value.empty()) {
    return Report(absl::ResourceExhaustedError(absl::StrCat(call, ": out of memory")), errmsg);
  }
  *val = copy;
  *vallen = value.size();
  return PMSTORE_OK;
}

const pmstore::WriteOptions* WriteOptionsOrNull(const pmstore_writeoptions_t* options) {
  return options == nullptr ? nullptr : &options->rep;
}

pmstore::ReadOptions ReadOptionsOf(const pmstore_readoptions_t* options) {
  return options == nullptr ? pmstore::ReadOptions() : options->rep;
}

}  // namespace

extern "C" {

const char* pmstore_code_name(pmstore_code_t code) {
  if (code == PMSTORE_BUSY) return "BUSY";
  const int value = static_cast<int>(code);
  if (value < PMSTORE_OK || value > PMSTORE_UNAUTHENTICATED) return "UNKNOWN";
  // absl's names are std::strings made on each call; these last forever.
  static const char* const kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  return kNames[value];
}

void pmstore_free(void* ptr) { std::free(ptr); }

const char* pmstore_version(void) {
  static const std::string version(pmstore::Version());
  return version.c_str();
}

const char* pmstore_granularity_name(pmstore_granularity_t granularity) {
  switch (granularity) {
    case PMSTORE_GRANULARITY_BYTE: return "byte";
    case PMSTORE_GRANULARITY_CACHE_LINE: return "cache_line";
    case PMSTORE_GRANULARITY_PAGE: return "page";
  }
  return "unknown";
}

// ---- Options -------------------------------------------------------------

pmstore_options_t* pmstore_options_create(void) { return new pmstore_options_t; }
void pmstore_options_destroy(pmstore_options_t* options) { delete options; }
void pmstore_options_set_create_if_missing(pmstore_options_t* options, bool value) {
  options->rep.create_if_missing = value;
}
void pmstore_options_set_error_if_exists(pmstore_options_t* options, bool value) {
  options->rep.error_if_exists = value;
}
void pmstore_options_set_initial_size(pmstore_options_t* options, uint64_t bytes) { options->rep.initial_size = bytes; }
void pmstore_options_set_max_size(pmstore_options_t* options, uint64_t bytes) { options->rep.max_size = bytes; }
void pmstore_options_set_required_granularity(pmstore_options_t* options, pmstore_granularity_t granularity) {
  options->rep.required_granularity = static_cast<pmstore::Granularity>(granularity);
}
void pmstore_options_set_sync(pmstore_options_t* options, bool value) { options->rep.sync = value; }
void pmstore_options_set_read_only(pmstore_options_t* options, bool value) { options->rep.read_only = value; }
void pmstore_options_set_exclusive(pmstore_options_t* options, bool value) { options->rep.exclusive = value; }
void pmstore_options_set_mode(pmstore_options_t* options, uint32_t mode) { options->rep.mode = mode; }

pmstore_readoptions_t* pmstore_readoptions_create(void) { return new pmstore_readoptions_t; }
void pmstore_readoptions_destroy(pmstore_readoptions_t* options) { delete options; }
void pmstore_readoptions_set_verify_checksums(pmstore_readoptions_t* options, bool value) {
  options->rep.verify_checksums = value;
}
void pmstore_readoptions_set_snapshot(pmstore_readoptions_t* options, const pmstore_snapshot_t* snapshot) {
  options->rep.snapshot = snapshot == nullptr ? nullptr : snapshot->rep.get();
}

pmstore_writeoptions_t* pmstore_writeoptions_create(void) { return new pmstore_writeoptions_t; }
void pmstore_writeoptions_destroy(pmstore_writeoptions_t* options) { delete options; }
void pmstore_writeoptions_set_sync(pmstore_writeoptions_t* options, bool value) { options->rep.sync = value; }

pmstore_iteroptions_t* pmstore_iteroptions_create(void) { return new pmstore_iteroptions_t; }
void pmstore_iteroptions_destroy(pmstore_iteroptions_t* options) { delete options; }
void pmstore_iteroptions_set_prefix(pmstore_iteroptions_t* options, const char* prefix, size_t len) {
  options->rep.prefix = std::string(Bytes(prefix, len));
}
void pmstore_iteroptions_set_lower_bound(pmstore_iteroptions_t* options, const char* key, size_t len) {
  options->rep.lower_bound = std::string(Bytes(key, len));
}
void pmstore_iteroptions_set_upper_bound(pmstore_iteroptions_t* options, const char* key, size_t len) {
  options->rep.upper_bound = std::string(Bytes(key, len));
}

pmstore_transactionoptions_t* pmstore_transactionoptions_create(void) { return new pmstore_transactionoptions_t; }
void pmstore_transactionoptions_destroy(pmstore_transactionoptions_t* options) { delete options; }
void pmstore_transactionoptions_set_verify_checksums(pmstore_transactionoptions_t* options, bool value) {
  options->rep.verify_checksums = value;
}

// ---- Opening and closing -----------------------------------------------

pmstore_code_t pmstore_open(const pmstore_options_t* options, const char* path, pmstore_t** db, char** errmsg) {
  if (path == nullptr) return BadArgument("pmstore_open", "path is NULL", errmsg);
  if (db == nullptr) return BadArgument("pmstore_open", "db (the output) is NULL", errmsg);
  auto store = pmstore::Store::Open(path, options == nullptr ? pmstore::Options() : options->rep);
  if (!store.ok()) return Report(store.status(), errmsg);
  *db = new pmstore_t;
  (*db)->store = std::move(*store);
  (*db)->path = path;
  return PMSTORE_OK;
}

pmstore_code_t pmstore_close(pmstore_t* db, char** errmsg) {
  if (db == nullptr) return PMSTORE_OK;
  const int64_t iterators = db->live_iterators.load();
  const int64_t pins = db->live_pins.load();
  const int64_t snapshots = db->live_snapshots.load();
  const int64_t transactions = db->live_transactions.load();
  if (iterators != 0 || pins != 0 || snapshots != 0 || transactions != 0) {
    SetMessage(errmsg, absl::StrCat("pmstore_close(", db->path, "): ", iterators, " iterator(s), ", pins,
                                    " pinned value(s), ", snapshots, " snapshot(s) and ", transactions,
                                    " transaction(s) are still alive; destroy them first (nothing was closed)"));
    return PMSTORE_BUSY;
  }
  // Close unmaps and unlocks even when it fails, so db goes either way; the
  // code says whether everything acknowledged is durable.
  const absl::Status closed = db->store->Close();
  delete db;
  return Report(closed, errmsg);
}

// ---- Writes --------------------------------------------------------------

pmstore_code_t pmstore_put(pmstore_t* db, const pmstore_writeoptions_t* options, const char* key, size_t keylen,
                           const char* val, size_t vallen, char** errmsg) {
  if (const char* problem = KeyedCallProblem(db, key, keylen); *problem) {
    return BadArgument("pmstore_put", problem, errmsg);
  }
  if (!ValidBytes(val, vallen)) return BadArgument("pmstore_put", "val is NULL but vallen is not 0", errmsg);
  const pmstore::WriteOptions* write = WriteOptionsOrNull(options);
  const std::string_view k = Bytes(key, keylen), v = Bytes(val, vallen);
  return Report(write == nullptr ? db->store->Put(k, v) : db->store->Put(*write, k, v), errmsg);
}

pmstore_code_t pmstore_delete(pmstore_t* db, const pmstore_writeoptions_t* options, const char* key, size_t keylen,
                              char** errmsg) {
  if (const char* problem = KeyedCallProblem(db, key, keylen); *problem) {
    return BadArgument("pmstore_delete", problem, errmsg);
  }
  const pmstore::WriteOptions* write = WriteOptionsOrNull(options);
  const std::string_view k = Bytes(key, keylen);
  return Report(write == nullptr ? db->store->Delete(k) : db->store->Delete(*write, k), errmsg);
}

pmstore_code_t pmstore_write(pmstore_t* db, const pmstore_writeoptions_t* options, const pmstore_writebatch_t* batch,
                             char** errmsg) {
  if (db == nullptr) return BadArgument("pmstore_write", "db is NULL", errmsg);
  if (batch == nullptr) return BadArgument("pmstore_write", "batch is NULL", errmsg);
  const pmstore::WriteOptions* write = WriteOptionsOrNull(options);
  return Report(write == nullptr ? db->store->Write(batch->rep) : db->store->Write(*write, batch->rep), errmsg);
}

pmstore_code_t pmstore_sync(pmstore_t* db, char** errmsg) {
  if (db == nullptr) return BadArgument("pmstore_sync", "db is NULL", errmsg);
  return Report(db->store->Sync(), errmsg);
}

// ---- Reads ---------------------------------------------------------------

pmstore_code_t pmstore_get(pmstore_t* db, const pmstore_readoptions_t* options, const char* key, size_t keylen,
                           char** val, size_t* vallen, char** errmsg) {
  if (const char* problem = KeyedCallProblem(db, key, keylen); *problem) {
    return BadArgument("pmstore_get", problem, errmsg);
  }
  if (val == nullptr || vallen == nullptr)
    return BadArgument("pmstore_get", "val or vallen (the outputs) is NULL", errmsg);
  std::string value;
  const absl::Status status = db->store->Get(ReadOptionsOf(options), Bytes(key, keylen), &value);
  return CopyOutValue("pmstore_get", status, value, val, vallen, errmsg);
}

pmstore_code_t pmstore_multiget(pmstore_t* db, const pmstore_readoptions_t* options, size_t num_keys,
                                const char* const* keys, const size_t* keylens, char** vals, size_t* vallens,
                                pmstore_code_t* codes, char** errmsg) {
  if (db == nullptr) return BadArgument("pmstore_multiget", "db is NULL", errmsg);
  if (num_keys > 0 && (keys == nullptr || keylens == nullptr)) {
    return BadArgument("pmstore_multiget", "keys or keylens is NULL", errmsg);
  }
  if (num_keys > 0 && (vals == nullptr || vallens == nullptr || codes == nullptr)) {
    return BadArgument("pmstore_multiget", "vals, vallens or codes (the outputs) is NULL", errmsg);
  }
  std::vector<std::string_view> views(num_keys);
  for (size_t i = 0; i < num_keys; ++i) {
    if (!ValidBytes(keys[i], keylens[i])) {
      const std::string problem = absl::StrCat("keys[", i, "] is NULL but keylens[", i, "] is not 0");
      return BadArgument("pmstore_multiget", problem.c_str(), errmsg);
    }
    views[i] = Bytes(keys[i], keylens[i]);
  }
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses = db->store->MultiGet(ReadOptionsOf(options), views, &values);
  pmstore_code_t result = PMSTORE_OK;
  for (size_t i = 0; i < num_keys; ++i) {
    absl::Status status = statuses[i];
    vals[i] = nullptr;
    vallens[i] = 0;
    if (status.ok()) {
      vals[i] = CopyToMalloc(values[i]);
      if (vals[i] == nullptr && !values[i].empty()) {
        status = absl::ResourceExhaustedError("pmstore_multiget: out of memory");
      } else {
        vallens[i] = values[i].size();
      }
    }
    codes[i] = ToCode(status.code());
    if (result == PMSTORE_OK && !status.ok() && !absl::IsNotFound(status)) result = Report(status, errmsg);
  }
  return result;
}

pmstore_code_t pmstore_contains(pmstore_t* db, const char* key, size_t keylen, bool* found, char** errmsg) {
  if (const char* problem = KeyedCallProblem(db, key, keylen); *problem) {
    return BadArgument("pmstore_contains", problem, errmsg);
  }
  if (found == nullptr) return BadArgument("pmstore_contains", "found (the output) is NULL", errmsg);
  auto present = db->store->Contains(Bytes(key, keylen));
  if (!present.ok()) return Report(present.status(), errmsg);
  *found = *present;
  return PMSTORE_OK;
}

pmstore_code_t pmstore_get_pinned(pmstore_t* db, const pmstore_readoptions_t* options, const char* key, size_t keylen,
                                  pmstore_pinnedvalue_t** pinned, char** errmsg) {
  if (const char* problem = KeyedCallProblem(db, key, keylen); *problem) {
    return BadArgument("pmstore_get_pinned", problem, errmsg);
  }
  if (pinned == nullptr) return BadArgument("pmstore_get_pinned", "pinned (the output) is NULL", errmsg);
  auto holder = std::make_unique<pmstore_pinnedvalue_t>();
  const absl::Status status = db->store->Get(ReadOptionsOf(options), Bytes(key, keylen), &holder->rep);
  if (!status.ok()) {
    if (absl::IsNotFound(status)) {
      *pinned = nullptr;
      return Report(absl::NotFoundError("key not found"), errmsg);
    }
    return Report(status, errmsg);
  }
  holder->db = db;
  ++db->live_pins;
  *pinned = holder.release();
  return PMSTORE_OK;
}

const char* pmstore_pinnedvalue_data(const pmstore_pinnedvalue_t* pinned, size_t* vallen) {
  *vallen = pinned->rep.value().size();
  return pinned->rep.value().data();
}

void pmstore_pinnedvalue_destroy(pmstore_pinnedvalue_t* pinned) {
  if (pinned == nullptr) return;
  pmstore_t* db = pinned->db;
  delete pinned;  // unpins first
  --db->live_pins;
}

// ---- Write batches -------------------------------------------------------

pmstore_writebatch_t* pmstore_writebatch_create(void) { return new pmstore_writebatch_t; }
void pmstore_writebatch_destroy(pmstore_writebatch_t* batch) { delete batch; }
void pmstore_writebatch_put(pmstore_writebatch_t* batch, const char* key, size_t keylen, const char* val,
                            size_t vallen) {
  batch->rep.Put(Bytes(key, keylen), Bytes(val, vallen));
}
void pmstore_writebatch_delete(pmstore_writebatch_t* batch, const char* key, size_t keylen) {
  batch->rep.Delete(Bytes(key, keylen));
}
void pmstore_writebatch_clear(pmstore_writebatch_t* batch) { batch->rep.Clear(); }
size_t pmstore_writebatch_count(const pmstore_writebatch_t* batch) { return batch->rep.Count(); }
size_t pmstore_writebatch_approximate_size(const pmstore_writebatch_t* batch) { return batch->rep.ApproximateSize(); }

// ---- Iterators -----------------------------------------------------------

pmstore_iterator_t* pmstore_create_iterator(pmstore_t* db, const pmstore_readoptions_t* options,
                                            const pmstore_iteroptions_t* range) {
  if (db == nullptr) return nullptr;
  auto* iter = new pmstore_iterator_t{
      db, db->store->NewIterator(ReadOptionsOf(options), range == nullptr ? pmstore::IterateOptions() : range->rep)};
  ++db->live_iterators;
  return iter;
}

void pmstore_iter_destroy(pmstore_iterator_t* iter) {
  if (iter == nullptr) return;
  pmstore_t* db = iter->db;
  delete iter;
  --db->live_iterators;
}

void pmstore_iter_seek_to_first(pmstore_iterator_t* iter) { iter->rep->SeekToFirst(); }
void pmstore_iter_seek(pmstore_iterator_t* iter, const char* key, size_t keylen) {
  iter->rep->Seek(Bytes(key, keylen));
}
void pmstore_iter_next(pmstore_iterator_t* iter) { iter->rep->Next(); }
void pmstore_iter_seek_to_last(pmstore_iterator_t* iter) { iter->rep->SeekToLast(); }
void pmstore_iter_seek_for_prev(pmstore_iterator_t* iter, const char* key, size_t keylen) {
  iter->rep->SeekForPrev(Bytes(key, keylen));
}
void pmstore_iter_prev(pmstore_iterator_t* iter) { iter->rep->Prev(); }
bool pmstore_iter_valid(const pmstore_iterator_t* iter) { return iter->rep->Valid(); }
const char* pmstore_iter_key(const pmstore_iterator_t* iter, size_t* keylen) {
  *keylen = iter->rep->key().size();
  return iter->rep->key().data();
}
const char* pmstore_iter_value(const pmstore_iterator_t* iter, size_t* vallen) {
  *vallen = iter->rep->value().size();
  return iter->rep->value().data();
}
pmstore_code_t pmstore_iter_get_error(const pmstore_iterator_t* iter, char** errmsg) {
  if (iter == nullptr) return BadArgument("pmstore_iter_get_error", "iter is NULL", errmsg);
  return Report(iter->rep->status(), errmsg);
}

// ---- Snapshots -----------------------------------------------------------

const pmstore_snapshot_t* pmstore_create_snapshot(pmstore_t* db) {
  if (db == nullptr) return nullptr;
  auto* snapshot = new pmstore_snapshot_t{db, db->store->GetSnapshot()};
  ++db->live_snapshots;
  return snapshot;
}

void pmstore_release_snapshot(pmstore_t*, const pmstore_snapshot_t* snapshot) {
  if (snapshot == nullptr) return;
  pmstore_t* owner = snapshot->db;
  delete snapshot;
  --owner->live_snapshots;
}

uint64_t pmstore_snapshot_sequence(const pmstore_snapshot_t* snapshot) { return snapshot->rep->sequence(); }

// ---- Transactions --------------------------------------------------------

pmstore_code_t pmstore_transaction_begin(pmstore_t* db, const pmstore_transactionoptions_t* options,
                                         pmstore_transaction_t** txn, char** errmsg) {
  if (db == nullptr) return BadArgument("pmstore_transaction_begin", "db is NULL", errmsg);
  if (txn == nullptr) return BadArgument("pmstore_transaction_begin", "txn (the output) is NULL", errmsg);
  *txn = new pmstore_transaction_t{
      db, db->store->BeginTransaction(options == nullptr ? pmstore::TransactionOptions() : options->rep)};
  ++db->live_transactions;
  return PMSTORE_OK;
}

pmstore_code_t pmstore_transaction_get(pmstore_transaction_t* txn, const char* key, size_t keylen, char** val,
                                       size_t* vallen, char** errmsg) {
  if (const char* problem = KeyedCallProblem(txn, key, keylen); *problem) {
    return BadArgument("pmstore_transaction_get", problem, errmsg);
  }
  if (val == nullptr || vallen == nullptr) {
    return BadArgument("pmstore_transaction_get", "val or vallen (the outputs) is NULL", errmsg);
  }
  std::string value;
  const absl::Status status = txn->rep->Get(Bytes(key, keylen), &value);
  return CopyOutValue("pmstore_transaction_get", status, value, val, vallen, errmsg);
}

pmstore_code_t pmstore_transaction_put(pmstore_transaction_t* txn, const char* key, size_t keylen, const char* val,
                                       size_t vallen, char** errmsg) {
  if (const char* problem = KeyedCallProblem(txn, key, keylen); *problem) {
    return BadArgument("pmstore_transaction_put", problem, errmsg);
  }
  if (!ValidBytes(val, vallen)) {
    return BadArgument("pmstore_transaction_put", "val is NULL but vallen is not 0", errmsg);
  }
  return Report(txn->rep->Put(Bytes(key, keylen), Bytes(val, vallen)), errmsg);
}

pmstore_code_t pmstore_transaction_delete(pmstore_transaction_t* txn, const char* key, size_t keylen, char** errmsg) {
  if (const char* problem = KeyedCallProblem(txn, key, keylen); *problem) {
    return BadArgument("pmstore_transaction_delete", problem, errmsg);
  }
  return Report(txn->rep->Delete(Bytes(key, keylen)), errmsg);
}

pmstore_code_t pmstore_transaction_write(pmstore_transaction_t* txn, const pmstore_writebatch_t* batch,
                                         char** errmsg) {
  if (txn == nullptr) return BadArgument("pmstore_transaction_write", "txn is NULL", errmsg);
  if (batch == nullptr) return BadArgument("pmstore_transaction_write", "batch is NULL", errmsg);
  return Report(txn->rep->Write(batch->rep), errmsg);
}

pmstore_iterator_t* pmstore_transaction_create_iterator(pmstore_transaction_t* txn,
                                                        const pmstore_iteroptions_t* range) {
  if (txn == nullptr) return nullptr;
  // Counted against the store, as any iterator: pmstore_close waits for it.
  auto* iter = new pmstore_iterator_t{
      txn->db, txn->rep->NewIterator(range == nullptr ? pmstore::IterateOptions() : range->rep)};
  ++txn->db->live_iterators;
  return iter;
}

pmstore_code_t pmstore_transaction_commit(pmstore_transaction_t* txn, const pmstore_writeoptions_t* options,
                                          char** errmsg) {
  if (txn == nullptr) return BadArgument("pmstore_transaction_commit", "txn is NULL", errmsg);
  const pmstore::WriteOptions* write = WriteOptionsOrNull(options);
  const absl::Status committed = write == nullptr ? txn->rep->Commit() : txn->rep->Commit(*write);
  txn->ended = true;  // whatever Commit returned
  return Report(committed, errmsg);
}

pmstore_code_t pmstore_transaction_rollback(pmstore_transaction_t* txn, char** errmsg) {
  if (txn == nullptr) return BadArgument("pmstore_transaction_rollback", "txn is NULL", errmsg);
  if (txn->ended) {
    return Report(absl::FailedPreconditionError(
                      "pmstore_transaction_rollback: the transaction has already ended (committed or rolled back)"),
                  errmsg);
  }
  txn->rep->Rollback();
  txn->ended = true;
  return PMSTORE_OK;
}

void pmstore_transaction_destroy(pmstore_transaction_t* txn) {
  if (txn == nullptr) return;
  pmstore_t* db = txn->db;
  delete txn;  // the C++ destructor rolls back a transaction that did not end
  --db->live_transactions;
}

uint64_t pmstore_transaction_begin_sequence(const pmstore_transaction_t* txn) { return txn->rep->begin_sequence(); }
size_t pmstore_transaction_staged_writes(const pmstore_transaction_t* txn) { return txn->rep->staged_writes(); }

// ---- Copy ----------------------------------------------------------------

pmstore_code_t pmstore_copy_to(pmstore_t* db, const pmstore_readoptions_t* options, const char* dest_path,
                               char** errmsg) {
  if (db == nullptr) return BadArgument("pmstore_copy_to", "db is NULL", errmsg);
  if (dest_path == nullptr) return BadArgument("pmstore_copy_to", "dest_path is NULL", errmsg);
  return Report(db->store->CopyTo(ReadOptionsOf(options), dest_path), errmsg);
}

// ---- Stats and check -----------------------------------------------------

pmstore_stats_t* pmstore_get_stats(pmstore_t* db) {
  return db == nullptr ? nullptr : new pmstore_stats_t{db->store->GetStats()};
}
void pmstore_stats_destroy(pmstore_stats_t* stats) { delete stats; }
const char* pmstore_stats_path(const pmstore_stats_t* stats) { return stats->rep.path.c_str(); }
uint64_t pmstore_stats_keys(const pmstore_stats_t* stats) { return stats->rep.keys; }
uint64_t pmstore_stats_pool_bytes(const pmstore_stats_t* stats) { return stats->rep.pool_bytes; }
uint64_t pmstore_stats_max_pool_bytes(const pmstore_stats_t* stats) { return stats->rep.max_pool_bytes; }
uint64_t pmstore_stats_live_bytes(const pmstore_stats_t* stats) { return stats->rep.live_bytes; }
uint64_t pmstore_stats_free_bytes(const pmstore_stats_t* stats) { return stats->rep.free_bytes; }
double pmstore_stats_fragmentation(const pmstore_stats_t* stats) { return stats->rep.fragmentation; }
pmstore_granularity_t pmstore_stats_granularity(const pmstore_stats_t* stats) {
  return static_cast<pmstore_granularity_t>(stats->rep.granularity);
}
bool pmstore_stats_dax(const pmstore_stats_t* stats) { return stats->rep.dax; }
bool pmstore_stats_map_sync(const pmstore_stats_t* stats) { return stats->rep.map_sync; }
bool pmstore_stats_read_only(const pmstore_stats_t* stats) { return stats->rep.read_only; }
double pmstore_stats_pmd_mapped_share(const pmstore_stats_t* stats) { return stats->rep.pmd_mapped_share; }
const char* pmstore_stats_pmd_verify_method(const pmstore_stats_t* stats) {
  return stats->rep.pmd_verify_method.c_str();
}

uint64_t pmstore_stats_device_dax_align(const pmstore_stats_t* stats) { return stats->rep.device_dax_align; }

pmstore_code_t pmstore_destroy(const char* path, char** errmsg) {
  if (path == nullptr) return BadArgument("pmstore_destroy", "path is NULL", errmsg);
  return Report(pmstore::Store::Destroy(path), errmsg);
}

pmstore_code_t pmstore_check_path(const char* path, pmstore_checkreport_t** report, char** errmsg) {
  if (path == nullptr) return BadArgument("pmstore_check_path", "path is NULL", errmsg);
  if (report == nullptr) return BadArgument("pmstore_check_path", "report (the output) is NULL", errmsg);
  auto result = pmstore::Store::Check(path);
  if (!result.ok()) return Report(result.status(), errmsg);
  *report = new pmstore_checkreport_t{std::move(*result)};
  return PMSTORE_OK;
}

pmstore_code_t pmstore_check(pmstore_t* db, pmstore_checkreport_t** report, char** errmsg) {
  if (db == nullptr) return BadArgument("pmstore_check", "db is NULL", errmsg);
  if (report == nullptr) return BadArgument("pmstore_check", "report (the output) is NULL", errmsg);
  *report = new pmstore_checkreport_t{db->store->CheckNow()};
  return PMSTORE_OK;
}

void pmstore_checkreport_destroy(pmstore_checkreport_t* report) { delete report; }
bool pmstore_checkreport_clean(const pmstore_checkreport_t* report) { return report->rep.clean(); }
uint64_t pmstore_checkreport_keys(const pmstore_checkreport_t* report) { return report->rep.keys; }
uint64_t pmstore_checkreport_leaves(const pmstore_checkreport_t* report) { return report->rep.leaves; }
uint64_t pmstore_checkreport_records_verified(const pmstore_checkreport_t* report) {
  return report->rep.records_verified;
}
uint64_t pmstore_checkreport_bytes_verified(const pmstore_checkreport_t* report) { return report->rep.bytes_verified; }
size_t pmstore_checkreport_problem_count(const pmstore_checkreport_t* report) { return report->rep.problems.size(); }
const char* pmstore_checkreport_problem(const pmstore_checkreport_t* report, size_t index) {
  return index < report->rep.problems.size() ? report->rep.problems[index].c_str() : nullptr;
}

pmstore_code_t pmstore_readers(const char* path, pmstore_readers_t** readers, char** errmsg) {
  if (path == nullptr) return BadArgument("pmstore_readers", "path is NULL", errmsg);
  if (readers == nullptr) return BadArgument("pmstore_readers", "readers (the output) is NULL", errmsg);
  auto result = pmstore::Store::Readers(path);
  if (!result.ok()) return Report(result.status(), errmsg);
  *readers = new pmstore_readers_t{std::move(*result)};
  return PMSTORE_OK;
}

void pmstore_readers_destroy(pmstore_readers_t* readers) { delete readers; }
size_t pmstore_readers_count(const pmstore_readers_t* readers) { return readers->rep.size(); }
uint32_t pmstore_readers_slot(const pmstore_readers_t* readers, size_t index) { return readers->rep[index].slot; }
int64_t pmstore_readers_pid(const pmstore_readers_t* readers, size_t index) { return readers->rep[index].pid; }
bool pmstore_readers_writable(const pmstore_readers_t* readers, size_t index) {
  return readers->rep[index].writable;
}
bool pmstore_readers_stale(const pmstore_readers_t* readers, size_t index) { return readers->rep[index].stale; }
int64_t pmstore_readers_opened_unix_ns(const pmstore_readers_t* readers, size_t index) {
  return readers->rep[index].opened_unix_ns;
}
bool pmstore_readers_pinned_commit(const pmstore_readers_t* readers, size_t index, uint64_t* commit) {
  const std::optional<uint64_t>& pinned = readers->rep[index].pinned_commit;
  if (pinned.has_value() && commit != nullptr) *commit = *pinned;
  return pinned.has_value();
}
bool pmstore_readers_last_commit(const pmstore_readers_t* readers, size_t index, uint64_t* commit) {
  const std::optional<uint64_t>& last = readers->rep[index].last_commit;
  if (last.has_value() && commit != nullptr) *commit = *last;
  return last.has_value();
}

pmstore_code_t pmstore_clear_stale_readers(const char* path, int* cleared, char** errmsg) {
  if (path == nullptr) return BadArgument("pmstore_clear_stale_readers", "path is NULL", errmsg);
  if (cleared == nullptr) return BadArgument("pmstore_clear_stale_readers", "cleared (the output) is NULL", errmsg);
  auto result = pmstore::Store::ClearStaleReaders(path);
  if (!result.ok()) return Report(result.status(), errmsg);
  *cleared = *result;
  return PMSTORE_OK;
}

}  // extern "C"

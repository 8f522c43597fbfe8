/* pmstore's C API: the whole store from C (and from any language that can
 * call C), in the manner of LevelDB's leveldb/c.h. It compiles as C99 and
 * as C++ and holds no C++ type; link -lpmstore (pkg-config pmstore, or
 * CMake's pmstore::pmstore).
 *
 *   pmstore_options_t* options = pmstore_options_create();
 *   pmstore_options_set_create_if_missing(options, true);
 *   pmstore_t* db;
 *   char* err = NULL;
 *   if (pmstore_open(options, "/mnt/pmem0/pool", &db, &err) != PMSTORE_OK) {
 *     fprintf(stderr, "%s\n", err);
 *     pmstore_free(err);
 *   }
 *
 * Errors. Every call that can fail returns a pmstore_code_t: PMSTORE_OK (0)
 * on success, else the code of the failure. Its last argument, `errmsg`,
 * may be NULL. When it is not and the call fails, the old *errmsg is freed
 * (so one variable serves a whole sequence of calls) and *errmsg is set to
 * a malloc()ed one-line message naming the file and the problem; free it
 * with pmstore_free(). On success *errmsg is left as it was. Outputs are
 * written only on success, except where a call says otherwise. A NULL db,
 * path, key or output to such a call is PMSTORE_INVALID_ARGUMENT; calls
 * that return no code (accessors, setters) need valid objects, and every
 * *_destroy accepts NULL.
 *
 * The codes are those of the C++ API's absl::Status (and of gRPC), with the
 * same values, so a newer library never returns a code this header lacks.
 * What the store returns today:
 *   PMSTORE_NOT_FOUND            pmstore_get on a missing key (and a
 *                                missing key's code from pmstore_multiget);
 *                                pmstore_open
 *                                on a missing file without create_if_missing
 *   PMSTORE_ALREADY_EXISTS       pmstore_open with error_if_exists on an
 *                                existing file
 *   PMSTORE_INVALID_ARGUMENT     a NULL or oversized argument; the file is
 *                                not a pool (bad magic); a batch too large
 *                                for one commit; a read through another
 *                                store's snapshot
 *   PMSTORE_FAILED_PRECONDITION  unsupported format version; granularity
 *                                weaker than required; the pool is in use by
 *                                another process (the message names its pid)
 *                                or already open in this one (a process
 *                                opens a pool once);
 *                                any call in a child forked after the open
 *                                (a store must not be used across fork);
 *                                a call on a transaction that has ended
 *   PMSTORE_ABORTED              pmstore_transaction_commit when another
 *                                commit changed a key the transaction read
 *                                or wrote; it wrote nothing
 *   PMSTORE_DATA_LOSS            truncated file; checksum failure
 *   PMSTORE_RESOURCE_EXHAUSTED   the pool is full and may not grow; the
 *                                failed write changed nothing
 *   PMSTORE_BUSY                 pmstore_close while iterators, pinned
 *                                values, snapshots or transactions of the
 *                                store are alive (C API only)
 *   any other                    a system call failed; the message names it
 *                                and strerror (errno mapped as absl does:
 *                                EACCES -> PERMISSION_DENIED, ENOSPC ->
 *                                RESOURCE_EXHAUSTED, ...)
 *
 * Threads. A pmstore_t may be used by any number of threads at once
 * (readers never block each other; writers take turns). Options, batches,
 * iterators, transactions and pinned values are thread-compatible: one
 * thread at a time, or external locking (any number of threads may each
 * have a transaction of their own); a snapshot may be read through by any
 * number of threads at once. One process at a time may open a pool.
 *
 * Lifetimes. Every object made by a *_create or returned through an output
 * argument is the caller's, freed by its *_destroy (pmstore_close for the
 * store, pmstore_release_snapshot for snapshots, pmstore_free for strings
 * and values). Iterators, pinned values, snapshots and transactions must
 * be destroyed before their store is closed; pmstore_close refuses while
 * any is alive. An iterator made from a transaction must be destroyed
 * before the transaction ends (commit or rollback, or its destroy).
 */
#ifndef PMSTORE_C_H_
#define PMSTORE_C_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Codes ------------------------------------------------------------ */

typedef enum pmstore_code_t {
  PMSTORE_OK = 0,
  PMSTORE_CANCELLED = 1,
  PMSTORE_UNKNOWN = 2,
  PMSTORE_INVALID_ARGUMENT = 3,
  PMSTORE_DEADLINE_EXCEEDED = 4,
  PMSTORE_NOT_FOUND = 5,
  PMSTORE_ALREADY_EXISTS = 6,
  PMSTORE_PERMISSION_DENIED = 7,
  PMSTORE_RESOURCE_EXHAUSTED = 8,
  PMSTORE_FAILED_PRECONDITION = 9,
  PMSTORE_ABORTED = 10,
  PMSTORE_OUT_OF_RANGE = 11,
  PMSTORE_UNIMPLEMENTED = 12,
  PMSTORE_INTERNAL = 13,
  PMSTORE_UNAVAILABLE = 14,
  PMSTORE_DATA_LOSS = 15,
  PMSTORE_UNAUTHENTICATED = 16,
  /* Not an absl code: pmstore_close found live iterators, pinned values,
   * snapshots or transactions and closed nothing (as sqlite3_close's
   * SQLITE_BUSY). */
  PMSTORE_BUSY = 100
} pmstore_code_t;

/* "OK", "NOT_FOUND", ... ("UNKNOWN" for a value that is no code). Static
 * storage; never free it. */
const char* pmstore_code_name(pmstore_code_t code);

/* Frees a string or value the library malloc()ed for the caller. */
void pmstore_free(void* ptr);

/* "MAJOR.MINOR.PATCH" of the library linked at run time. Static storage. */
const char* pmstore_version(void);

/* Keys are 0 to PMSTORE_MAX_KEY_SIZE bytes; values any size the pool holds. */
#define PMSTORE_MAX_KEY_SIZE ((size_t)64 * 1024)

/* ---- Types (all opaque) ------------------------------------------------ */

typedef struct pmstore_t pmstore_t;
typedef struct pmstore_options_t pmstore_options_t;
typedef struct pmstore_readoptions_t pmstore_readoptions_t;
typedef struct pmstore_writeoptions_t pmstore_writeoptions_t;
typedef struct pmstore_iteroptions_t pmstore_iteroptions_t;
typedef struct pmstore_transactionoptions_t pmstore_transactionoptions_t;
typedef struct pmstore_writebatch_t pmstore_writebatch_t;
typedef struct pmstore_iterator_t pmstore_iterator_t;
typedef struct pmstore_snapshot_t pmstore_snapshot_t;
typedef struct pmstore_transaction_t pmstore_transaction_t;
typedef struct pmstore_pinnedvalue_t pmstore_pinnedvalue_t;
typedef struct pmstore_stats_t pmstore_stats_t;
typedef struct pmstore_checkreport_t pmstore_checkreport_t;
typedef struct pmstore_readers_t pmstore_readers_t;

/* Smallest unit that reaches persistence without a system call, weakest
 * last (see pmstore/options.h). */
typedef enum pmstore_granularity_t {
  PMSTORE_GRANULARITY_BYTE = 0,       /* eADR: caches are persistent */
  PMSTORE_GRANULARITY_CACHE_LINE = 1, /* flush the written lines, fence */
  PMSTORE_GRANULARITY_PAGE = 2        /* msync the dirtied pages */
} pmstore_granularity_t;

/* "byte", "cache_line", "page". Static storage. */
const char* pmstore_granularity_name(pmstore_granularity_t granularity);

/* ---- Options: the defaults of pmstore/options.h ------------------------ */

/* Open options. Defaults: no create, no error if it exists, 64 MiB initial
 * size growing to 16 GiB, any granularity, sync writes. NULL where an
 * options argument is taken means these defaults. */
pmstore_options_t* pmstore_options_create(void);
void pmstore_options_destroy(pmstore_options_t* options);
void pmstore_options_set_create_if_missing(pmstore_options_t* options, bool value);
void pmstore_options_set_error_if_exists(pmstore_options_t* options, bool value);
/* Size of a new pool file, rounded up to 2 MiB; ignored when it exists. */
void pmstore_options_set_initial_size(pmstore_options_t* options, uint64_t bytes);
/* The most the pool may grow to (fixed at creation); 0: no growth. */
void pmstore_options_set_max_size(pmstore_options_t* options, uint64_t bytes);
/* Open fails (FAILED_PRECONDITION) when the mapping offers only a coarser
 * granularity than this. */
void pmstore_options_set_required_granularity(pmstore_options_t* options, pmstore_granularity_t granularity);
/* The store's default for writes made with NULL write options. */
void pmstore_options_set_sync(pmstore_options_t* options, bool value);
/* Open to read only (LMDB's MDB_RDONLY; Options::read_only in
 * pmstore/options.h): the file is opened read-only and never written;
 * every write, commit and pmstore_sync returns PMSTORE_PERMISSION_DENIED.
 * Any number of processes may open a pool read-only beside one that opens
 * it for writing, each read seeing the writer's commits made before it
 * began (unless an open is exclusive, below). Never creates a pool. */
void pmstore_options_set_read_only(pmstore_options_t* options, bool value);
/* Be alone with the pool (Options::exclusive in pmstore/options.h). A
 * writable exclusive open shuts out every other open, read-only ones
 * included; a read-only exclusive open shuts out writers, not other
 * read-only opens. Either fails with PMSTORE_FAILED_PRECONDITION, the
 * message naming a holder's pid ("pool in use by process 1234, ..."),
 * while an open it would shut out holds the pool, and opens it shuts out
 * fail likewise while it is open. Default false: one writable open and any
 * number of read-only opens of other processes share a pool, the
 * read-only ones following the writer's commits. */
void pmstore_options_set_exclusive(pmstore_options_t* options, bool value);
/* Permission bits of a new pool file, less the umask (mdb_env_open's
 * mode); default 0644. Above 0777: pmstore_open fails INVALID_ARGUMENT. */
void pmstore_options_set_mode(pmstore_options_t* options, uint32_t mode);

/* Per-read options. Default: no checksum verification. NULL: the default. */
pmstore_readoptions_t* pmstore_readoptions_create(void);
void pmstore_readoptions_destroy(pmstore_readoptions_t* options);
/* Verify the record's checksum on every read (DATA_LOSS on a mismatch). */
void pmstore_readoptions_set_verify_checksums(pmstore_readoptions_t* options, bool value);
/* Read as of `snapshot` (pmstore_create_snapshot; NULL: the latest state),
 * which must outlive the reads and iterators made with these options. */
void pmstore_readoptions_set_snapshot(pmstore_readoptions_t* options, const pmstore_snapshot_t* snapshot);

/* Per-write options. Default: sync. NULL: the store's default (its open
 * options' sync). */
pmstore_writeoptions_t* pmstore_writeoptions_create(void);
void pmstore_writeoptions_destroy(pmstore_writeoptions_t* options);
/* true: durable when the call returns. false: durable only after
 * pmstore_sync or close; a killed process loses nothing (the next open in
 * the same boot keeps it), a power failure may (see pmstore/options.h). */
void pmstore_writeoptions_set_sync(pmstore_writeoptions_t* options, bool value);

/* Which keys an iterator visits: all by default. Bounds are copied. */
pmstore_iteroptions_t* pmstore_iteroptions_create(void);
void pmstore_iteroptions_destroy(pmstore_iteroptions_t* options);
/* Only keys that start with this (empty: all). */
void pmstore_iteroptions_set_prefix(pmstore_iteroptions_t* options, const char* prefix, size_t len);
/* First key considered, inclusive (empty: none). */
void pmstore_iteroptions_set_lower_bound(pmstore_iteroptions_t* options, const char* key, size_t len);
/* Keys must be < this (empty: no bound). */
void pmstore_iteroptions_set_upper_bound(pmstore_iteroptions_t* options, const char* key, size_t len);

/* Transaction options. Default: no checksum verification. NULL: the
 * default. */
pmstore_transactionoptions_t* pmstore_transactionoptions_create(void);
void pmstore_transactionoptions_destroy(pmstore_transactionoptions_t* options);
/* Verify the record's checksum on every read the transaction makes from
 * the store (DATA_LOSS on a mismatch). */
void pmstore_transactionoptions_set_verify_checksums(pmstore_transactionoptions_t* options, bool value);

/* ---- Opening and closing ----------------------------------------------- */

/* Opens (or creates, per `options`) the pool at `path` and sets *db.
 * Errors: see the table above; *db is untouched on failure. */
pmstore_code_t pmstore_open(const pmstore_options_t* options, const char* path, pmstore_t** db, char** errmsg);

/* Makes every write durable, unmaps and unlocks the pool, and frees db.
 * PMSTORE_BUSY: iterators, pinned values, snapshots or transactions made
 * from db are still alive; nothing was closed and db stays usable. Any other code: db has been
 * freed, and the code says whether the last writes reached persistence
 * (in a child forked after the open: FAILED_PRECONDITION, and nothing is
 * persisted there). NULL db: OK. */
pmstore_code_t pmstore_close(pmstore_t* db, char** errmsg);

/* ---- Writes (durable on return unless the write options say otherwise) - */

/* Stores `val` under `key`, replacing any old value. */
pmstore_code_t pmstore_put(pmstore_t* db, const pmstore_writeoptions_t* options, const char* key, size_t keylen,
                           const char* val, size_t vallen, char** errmsg);
/* Removes `key`; OK when it was absent too. */
pmstore_code_t pmstore_delete(pmstore_t* db, const pmstore_writeoptions_t* options, const char* key, size_t keylen,
                              char** errmsg);
/* Applies all of `batch` as one commit: all or nothing, across a crash too. */
pmstore_code_t pmstore_write(pmstore_t* db, const pmstore_writeoptions_t* options, const pmstore_writebatch_t* batch,
                             char** errmsg);
/* Makes writes made with sync=false durable. */
pmstore_code_t pmstore_sync(pmstore_t* db, char** errmsg);

/* ---- Reads -------------------------------------------------------------- */

/* Copies the value of `key` into a malloc()ed buffer: *val (free it with
 * pmstore_free; NULL when the value is empty) and *vallen. NOT_FOUND when
 * absent: then *val is NULL and *vallen 0. */
pmstore_code_t pmstore_get(pmstore_t* db, const pmstore_readoptions_t* options, const char* key, size_t keylen,
                           char** val, size_t* vallen, char** errmsg);
/* pmstore_get for `num_keys` keys at once, faster than a loop of it from a
 * few keys on: the lookups' memory accesses overlap (Store::MultiGet in
 * pmstore/store.h; not a snapshot of the batch unless the read options
 * name one). In: keys[i], keylens[i].
 * Out, for each key: codes[i], the code pmstore_get would return
 * (PMSTORE_OK, PMSTORE_NOT_FOUND, ...); vals[i], a malloc()ed copy of the
 * value when codes[i] is PMSTORE_OK (free each with pmstore_free; NULL when
 * the value is empty or codes[i] is not OK); vallens[i] (0 unless OK).
 * Returns PMSTORE_OK when every key was looked up, found or not; else the
 * first codes[i] that is neither OK nor NOT_FOUND, with its message (the
 * outputs are all written all the same). A NULL array (with num_keys > 0)
 * or a NULL key with a length is PMSTORE_INVALID_ARGUMENT, and nothing is
 * written. A key may appear more than once. */
pmstore_code_t pmstore_multiget(pmstore_t* db, const pmstore_readoptions_t* options, size_t num_keys,
                                const char* const* keys, const size_t* keylens, char** vals, size_t* vallens,
                                pmstore_code_t* codes, char** errmsg);
/* *found: whether `key` is present. */
pmstore_code_t pmstore_contains(pmstore_t* db, const char* key, size_t keylen, bool* found, char** errmsg);

/* The value of `key` in place, without a copy: *pinned stays valid, even if
 * the key is overwritten or deleted meanwhile, until
 * pmstore_pinnedvalue_destroy. NOT_FOUND when absent (*pinned NULL).
 * Holding pins only delays space reuse; it blocks no reader or writer. */
pmstore_code_t pmstore_get_pinned(pmstore_t* db, const pmstore_readoptions_t* options, const char* key, size_t keylen,
                                  pmstore_pinnedvalue_t** pinned, char** errmsg);
const char* pmstore_pinnedvalue_data(const pmstore_pinnedvalue_t* pinned, size_t* vallen);
void pmstore_pinnedvalue_destroy(pmstore_pinnedvalue_t* pinned);

/* ---- Write batches ------------------------------------------------------ */

/* Puts and deletes applied together by pmstore_write; later operations on
 * the same key win. Keys and values are copied. */
pmstore_writebatch_t* pmstore_writebatch_create(void);
void pmstore_writebatch_destroy(pmstore_writebatch_t* batch);
void pmstore_writebatch_put(pmstore_writebatch_t* batch, const char* key, size_t keylen, const char* val,
                            size_t vallen);
void pmstore_writebatch_delete(pmstore_writebatch_t* batch, const char* key, size_t keylen);
void pmstore_writebatch_clear(pmstore_writebatch_t* batch);
size_t pmstore_writebatch_count(const pmstore_writebatch_t* batch);
/* Bytes of keys and values held: a guide for splitting large loads. */
size_t pmstore_writebatch_approximate_size(const pmstore_writebatch_t* batch);

/* ---- Iterators ---------------------------------------------------------- */

/* Iteration in key order (bytewise, shorter first), and its reverse, over
 * the keys `range` selects (NULL: all), as of the snapshot the read
 * options name, or else of one it takes itself: writes made while it runs
 * are never seen; keys come out strictly increasing with next and strictly
 * decreasing with prev, which may be mixed freely. Starts unpositioned:
 * call a seek first. NULL when db is NULL. */
pmstore_iterator_t* pmstore_create_iterator(pmstore_t* db, const pmstore_readoptions_t* options,
                                            const pmstore_iteroptions_t* range);
void pmstore_iter_destroy(pmstore_iterator_t* iter);
/* Positions at the first key in range, or at the first key >= `key` in
 * range. */
void pmstore_iter_seek_to_first(pmstore_iterator_t* iter);
void pmstore_iter_seek(pmstore_iterator_t* iter, const char* key, size_t keylen);
/* Positions at the last key in range (LMDB's MDB_LAST), or at the last
 * key <= `key` in range (RocksDB's SeekForPrev). */
void pmstore_iter_seek_to_last(pmstore_iterator_t* iter);
void pmstore_iter_seek_for_prev(pmstore_iterator_t* iter, const char* key, size_t keylen);
/* To the next key in range, or the one before it. Require
 * pmstore_iter_valid. */
void pmstore_iter_next(pmstore_iterator_t* iter);
void pmstore_iter_prev(pmstore_iterator_t* iter);
bool pmstore_iter_valid(const pmstore_iterator_t* iter);
/* Views into the iterator's own copy, valid until it moves; require
 * pmstore_iter_valid. */
const char* pmstore_iter_key(const pmstore_iterator_t* iter, size_t* keylen);
const char* pmstore_iter_value(const pmstore_iterator_t* iter, size_t* vallen);
/* Not OK when iteration stopped on damaged data (DATA_LOSS). */
pmstore_code_t pmstore_iter_get_error(const pmstore_iterator_t* iter, char** errmsg);

/* ---- Snapshots ---------------------------------------------------------- */

/* The state after the last acknowledged commit, for reads that name it
 * with pmstore_readoptions_set_snapshot (pmstore/snapshot.h): pmstore_get,
 * pmstore_multiget, pmstore_get_pinned and iterators then see that state
 * while writes go on. Space freed after it is reused only once it is
 * released. NULL when db is NULL. Waits for a write in progress. */
const pmstore_snapshot_t* pmstore_create_snapshot(pmstore_t* db);
/* Releases `snapshot` (NULL: nothing), which must come from `db`; it is
 * released from its own store all the same. */
void pmstore_release_snapshot(pmstore_t* db, const pmstore_snapshot_t* snapshot);
/* The number of the last commit `snapshot` sees. */
uint64_t pmstore_snapshot_sequence(const pmstore_snapshot_t* snapshot);

/* ---- Transactions ------------------------------------------------------- */

/* A read-write transaction (pmstore/transaction.h; LMDB's write
 * transaction, RocksDB's optimistic one). It begins at the state after the
 * last acknowledged commit and reads it as a snapshot does, with its own
 * writes laid over it; its writes are staged in memory, seen by nothing
 * else, until pmstore_transaction_commit applies them as one commit: all,
 * or nothing when another commit got in the way.
 *
 *   pmstore_code_t code;
 *   do {
 *     pmstore_transaction_t* txn = NULL;
 *     char* old = NULL;
 *     size_t oldlen = 0;
 *     code = pmstore_transaction_begin(db, NULL, &txn, &err);
 *     if (code == PMSTORE_OK)
 *       code = pmstore_transaction_get(txn, "acct/1", 6, &old, &oldlen, &err);
 *     if (code == PMSTORE_OK || code == PMSTORE_NOT_FOUND)
 *       code = pmstore_transaction_put(txn, "acct/1", 6, sum, sumlen, &err);
 *     if (code == PMSTORE_OK) code = pmstore_transaction_commit(txn, NULL, &err);
 *     pmstore_free(old);
 *     pmstore_transaction_destroy(txn);
 *   } while (code == PMSTORE_ABORTED);  // another commit won: try again
 *
 * Conflicts are checked once, at commit: PMSTORE_ABORTED, and nothing
 * written, when a key the transaction read or wrote was changed by another
 * commit since it began. Read means returned (or found absent) by
 * pmstore_transaction_get, or landed on by one of its iterators, unless the
 * transaction had written the key first. A key another commit adds inside
 * a range an iterator went over, between keys it landed on, is no conflict
 * (transaction.h says what else is not).
 *
 * A transaction ends with pmstore_transaction_commit, whatever it returns,
 * or with pmstore_transaction_rollback; every later call on it returns
 * PMSTORE_FAILED_PRECONDITION (begin a new one to retry). Until it ends it
 * holds a snapshot, with a snapshot's cost: space freed meanwhile waits. */

/* Begins a transaction and sets *txn (free it with
 * pmstore_transaction_destroy). NULL options: the defaults. Waits for a
 * write in progress to finish, as pmstore_create_snapshot does. */
pmstore_code_t pmstore_transaction_begin(pmstore_t* db, const pmstore_transactionoptions_t* options,
                                         pmstore_transaction_t** txn, char** errmsg);
/* pmstore_get through the transaction: the value it wrote to `key` when it
 * wrote one, else the key's value in the state it began from (and then the
 * key counts as read, found or not). The same outputs as pmstore_get. */
pmstore_code_t pmstore_transaction_get(pmstore_transaction_t* txn, const char* key, size_t keylen, char** val,
                                       size_t* vallen, char** errmsg);
/* Stage a put, a delete, or every operation of `batch` in order (keys and
 * values are copied) for pmstore_transaction_commit; the transaction's own
 * reads see them at once. The checks of pmstore_put (INVALID_ARGUMENT for
 * an oversized key); nothing is written to the store yet. */
pmstore_code_t pmstore_transaction_put(pmstore_transaction_t* txn, const char* key, size_t keylen, const char* val,
                                       size_t vallen, char** errmsg);
pmstore_code_t pmstore_transaction_delete(pmstore_transaction_t* txn, const char* key, size_t keylen, char** errmsg);
pmstore_code_t pmstore_transaction_write(pmstore_transaction_t* txn, const pmstore_writebatch_t* batch,
                                         char** errmsg);
/* An iterator (the pmstore_iter_* calls) over the keys `range` selects
 * (NULL: all) as the transaction sees them: the state it began from with
 * the writes staged so far laid over it (writes staged after this call are
 * not seen by it). Each key it lands on that the transaction did not write
 * counts as read. Destroy it with pmstore_iter_destroy before the
 * transaction is destroyed; after the transaction ends it goes on reading
 * what the transaction saw. Made after the end, it is never valid and
 * pmstore_iter_get_error returns FAILED_PRECONDITION. NULL when txn is
 * NULL. */
pmstore_iterator_t* pmstore_transaction_create_iterator(pmstore_transaction_t* txn, const pmstore_iteroptions_t* range);
/* Applies the staged writes as one commit, as pmstore_write applies a
 * batch: all or nothing, durable on return unless `options` say otherwise
 * (NULL: the store's default). PMSTORE_ABORTED: another commit changed a
 * key the transaction read or wrote since it began; nothing was written.
 * Other failures are pmstore_write's. Ends the transaction, whatever it
 * returns. A transaction without writes commits without waiting for the
 * writers' turn. */
pmstore_code_t pmstore_transaction_commit(pmstore_transaction_t* txn, const pmstore_writeoptions_t* options,
                                          char** errmsg);
/* Drops the staged writes and ends the transaction. FAILED_PRECONDITION
 * when it had already ended (by a commit, too). */
pmstore_code_t pmstore_transaction_rollback(pmstore_transaction_t* txn, char** errmsg);
/* Rolls back a transaction that has not ended, and frees it. */
void pmstore_transaction_destroy(pmstore_transaction_t* txn);
/* The number of the commit the transaction began from (as
 * pmstore_snapshot_sequence), and the writes it has staged (later writes
 * to the same key count once). */
uint64_t pmstore_transaction_begin_sequence(const pmstore_transaction_t* txn);
size_t pmstore_transaction_staged_writes(const pmstore_transaction_t* txn);

/* ---- Copy ---------------------------------------------------------------- */

/* Copies the store into a new pool at `dest_path` while db stays open and
 * other threads go on writing (Store::CopyTo in pmstore/store.h), as of
 * the snapshot `options` names (pmstore_readoptions_set_snapshot; NULL
 * options or none named: as of one the copy takes). The copy is built as
 * DEST.copying.PID.N, made durable, then renamed to `dest_path`, which
 * therefore never names a half-made pool; it has the source's size,
 * maximum size and permission bits (less the umask). PMSTORE_ALREADY_EXISTS when `dest_path` exists (it is left
 * untouched); PMSTORE_NOT_FOUND when its directory is missing;
 * PMSTORE_RESOURCE_EXHAUSTED when the file system is full. On any failure
 * nothing is left behind. Values are copied as read, and get checksums
 * of their own: run pmstore_check first when the source may be damaged. */
pmstore_code_t pmstore_copy_to(pmstore_t* db, const pmstore_readoptions_t* options, const char* dest_path,
                               char** errmsg);

/* ---- Stats and check ---------------------------------------------------- */

/* What the store reports about itself (pmstore/stats.h). Never NULL for a
 * valid db; NULL for a NULL one. */
pmstore_stats_t* pmstore_get_stats(pmstore_t* db);
void pmstore_stats_destroy(pmstore_stats_t* stats);
/* Valid while `stats` lives. */
const char* pmstore_stats_path(const pmstore_stats_t* stats);
uint64_t pmstore_stats_keys(const pmstore_stats_t* stats);
uint64_t pmstore_stats_pool_bytes(const pmstore_stats_t* stats);
uint64_t pmstore_stats_max_pool_bytes(const pmstore_stats_t* stats);
uint64_t pmstore_stats_live_bytes(const pmstore_stats_t* stats);
uint64_t pmstore_stats_free_bytes(const pmstore_stats_t* stats);
double pmstore_stats_fragmentation(const pmstore_stats_t* stats);
pmstore_granularity_t pmstore_stats_granularity(const pmstore_stats_t* stats);
bool pmstore_stats_dax(const pmstore_stats_t* stats);
bool pmstore_stats_map_sync(const pmstore_stats_t* stats);
/* Opened read-only: granularity, dax and map_sync then describe its
 * private mapping. */
bool pmstore_stats_read_only(const pmstore_stats_t* stats);
/* Share of resident pages mapped with huge entries (2 MiB; 1 GiB on a
 * device DAX pool with that align); -1 when unmeasured. */
double pmstore_stats_pmd_mapped_share(const pmstore_stats_t* stats);
/* "pagemap_scan", "smaps", "page_size" (device DAX on a kernel without
 * PAGEMAP_SCAN), or why none; valid while `stats` lives. */
const char* pmstore_stats_pmd_verify_method(const pmstore_stats_t* stats);
/* A pool on device DAX: the device's align (2 MiB or 1 GiB), the page
 * size its mapping gets; 0 for a pool in a file. */
uint64_t pmstore_stats_device_dax_align(const pmstore_stats_t* stats);

/* Removes the pool at `path` (Store::Destroy, RocksDB's DestroyDB): a
 * file is unlinked, a device DAX device's superblock erased, so that it
 * holds no pool. PMSTORE_FAILED_PRECONDITION when the pool is open
 * anywhere, PMSTORE_INVALID_ARGUMENT when `path` holds no pool's magic,
 * PMSTORE_NOT_FOUND when nothing is there. */
pmstore_code_t pmstore_destroy(const char* path, char** errmsg);

/* Verifies every checksum and structure of the pool at `path` without
 * changing it (a read-only open: read permission suffices). Beside a
 * process that has the pool open for writing it checks the newest commit,
 * holding that writer's next commit off meanwhile. A code other than OK
 * means it could not be examined at all (missing, not a pool, open
 * exclusively); damage found is in the report. */
pmstore_code_t pmstore_check_path(const char* path, pmstore_checkreport_t** report, char** errmsg);
/* The same check on an open store (readers go on meanwhile). */
pmstore_code_t pmstore_check(pmstore_t* db, pmstore_checkreport_t** report, char** errmsg);
void pmstore_checkreport_destroy(pmstore_checkreport_t* report);
bool pmstore_checkreport_clean(const pmstore_checkreport_t* report);
uint64_t pmstore_checkreport_keys(const pmstore_checkreport_t* report);
uint64_t pmstore_checkreport_leaves(const pmstore_checkreport_t* report);
uint64_t pmstore_checkreport_records_verified(const pmstore_checkreport_t* report);
uint64_t pmstore_checkreport_bytes_verified(const pmstore_checkreport_t* report);
size_t pmstore_checkreport_problem_count(const pmstore_checkreport_t* report);
/* One line each; NULL past the end. Valid while `report` lives. */
const char* pmstore_checkreport_problem(const pmstore_checkreport_t* report, size_t index);

/* ---- Who has a pool open ------------------------------------------------ */

/* The reader table of the pool at `path` (Store::Readers; LMDB's
 * mdb_reader_list): one entry per open of the pool by any process, in slot
 * order, those of processes that died with it open marked stale. Reads
 * the table only, never the pool, so it answers while another process
 * holds the pool for writing. Empty when no process has it open.
 * PMSTORE_NOT_FOUND when nothing is at `path`; PMSTORE_INVALID_ARGUMENT
 * for a directory or a file that holds no pool. */
pmstore_code_t pmstore_readers(const char* path, pmstore_readers_t** readers, char** errmsg);
void pmstore_readers_destroy(pmstore_readers_t* readers);
size_t pmstore_readers_count(const pmstore_readers_t* readers);
/* The entry `index` (below the count): its slot, pid, whether it may
 * write, whether its process is gone, when it opened the pool
 * (CLOCK_REALTIME nanoseconds). pmstore_readers_pinned_commit: whether
 * a pinned value, snapshot, iterator or transaction of that open still
 * reads, and *commit the oldest commit one reads (compare
 * pmstore_snapshot_sequence; Store::Readers has the fine print).
 * pmstore_readers_last_commit: whether the open may write, and *commit
 * the newest commit it made (or found when it opened the pool). */
uint32_t pmstore_readers_slot(const pmstore_readers_t* readers, size_t index);
int64_t pmstore_readers_pid(const pmstore_readers_t* readers, size_t index);
bool pmstore_readers_writable(const pmstore_readers_t* readers, size_t index);
bool pmstore_readers_stale(const pmstore_readers_t* readers, size_t index);
int64_t pmstore_readers_opened_unix_ns(const pmstore_readers_t* readers, size_t index);
bool pmstore_readers_pinned_commit(const pmstore_readers_t* readers, size_t index, uint64_t* commit);
bool pmstore_readers_last_commit(const pmstore_readers_t* readers, size_t index, uint64_t* commit);

/* Frees the stale slots of the pool at `path` (Store::ClearStaleReaders;
 * LMDB's mdb_reader_check); *cleared: how many. PMSTORE_PERMISSION_DENIED
 * when this user may not write the table (it has the pool file's
 * permission bits). */
pmstore_code_t pmstore_clear_stale_readers(const char* path, int* cleared, char** errmsg);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMSTORE_C_H_ */

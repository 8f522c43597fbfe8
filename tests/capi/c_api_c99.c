/* Compiled as C99 with -Wpedantic: proves pmstore/c.h is C, and gives the
 * gtest suite one whole round trip written in C. */
#include "capi/c_api_c99.h"

#include <stdio.h>
#include <string.h>

#include "pmstore/c.h"

int c99_round_trip(const char* path, char* out, size_t outlen) {
  pmstore_options_t* options = pmstore_options_create();
  pmstore_options_set_create_if_missing(options, true);
  pmstore_t* db = NULL;
  char* err = NULL;
  int result = 1;
  if (pmstore_open(options, path, &db, &err) != PMSTORE_OK) goto done;
  if (pmstore_put(db, NULL, "c99", 3, "from C", 6, &err) != PMSTORE_OK) goto done;

  char* val = NULL;
  size_t vallen = 0;
  if (pmstore_get(db, NULL, "c99", 3, &val, &vallen, &err) != PMSTORE_OK) goto done;
  {
    /* MultiGet from C: "c99" twice and a missing key. */
    const char* keys[3] = {"c99", "none", "c99"};
    const size_t keylens[3] = {3, 4, 3};
    char* vals[3];
    size_t vallens[3];
    pmstore_code_t codes[3];
    if (pmstore_multiget(db, NULL, 3, keys, keylens, vals, vallens, codes, &err) != PMSTORE_OK) goto done;
    int same = codes[0] == PMSTORE_OK && codes[1] == PMSTORE_NOT_FOUND && codes[2] == PMSTORE_OK &&
               vals[1] == NULL && vallens[0] == vallen && memcmp(vals[0], val, vallen) == 0 &&
               memcmp(vals[2], val, vallen) == 0;
    for (int i = 0; i < 3; ++i) pmstore_free(vals[i]);
    if (!same) {
      snprintf(out, outlen, "pmstore_multiget differs from pmstore_get");
      pmstore_free(val);
      goto done;
    }
  }
  {
    /* A snapshot from C: a later put is not seen through it. */
    const pmstore_snapshot_t* snapshot = pmstore_create_snapshot(db);
    pmstore_readoptions_t* at = pmstore_readoptions_create();
    pmstore_readoptions_set_snapshot(at, snapshot);
    char* later = NULL;
    size_t laterlen = 0;
    pmstore_code_t code = pmstore_put(db, NULL, "c99-later", 9, "x", 1, &err);
    if (code == PMSTORE_OK) code = pmstore_get(db, at, "c99-later", 9, &later, &laterlen, &err);
    pmstore_free(later);
    pmstore_readoptions_destroy(at);
    pmstore_release_snapshot(db, snapshot);
    if (code != PMSTORE_NOT_FOUND) {
      snprintf(out, outlen, "a put after the snapshot is seen through it (%s)", pmstore_code_name(code));
      pmstore_free(val);
      goto done;
    }
    pmstore_free(err);
    err = NULL;
  }
  {
    /* A transaction from C: it reads its own put, its iterator sees the
     * put among the store's keys both ways, and the commit publishes it. */
    pmstore_transactionoptions_t* txn_options = pmstore_transactionoptions_create();
    pmstore_transactionoptions_set_verify_checksums(txn_options, true);
    pmstore_transaction_t* txn = NULL;
    pmstore_code_t code = pmstore_transaction_begin(db, txn_options, &txn, &err);
    pmstore_transactionoptions_destroy(txn_options);
    char* mine = NULL;
    size_t minelen = 0;
    if (code == PMSTORE_OK) code = pmstore_transaction_put(txn, "c99-txn", 7, "staged", 6, &err);
    if (code == PMSTORE_OK) code = pmstore_transaction_get(txn, "c99-txn", 7, &mine, &minelen, &err);
    size_t forward = 0, back = 0;
    if (code == PMSTORE_OK) {
      pmstore_iterator_t* staged = pmstore_transaction_create_iterator(txn, NULL);
      for (pmstore_iter_seek_to_first(staged); pmstore_iter_valid(staged); pmstore_iter_next(staged)) ++forward;
      for (pmstore_iter_seek_to_last(staged); pmstore_iter_valid(staged); pmstore_iter_prev(staged)) ++back;
      code = pmstore_iter_get_error(staged, &err);
      pmstore_iter_destroy(staged);
    }
    if (code == PMSTORE_OK) code = pmstore_transaction_commit(txn, NULL, &err);
    const bool ended = pmstore_transaction_rollback(txn, NULL) == PMSTORE_FAILED_PRECONDITION;
    pmstore_transaction_destroy(txn);
    const bool read_own = mine != NULL && minelen == 6 && memcmp(mine, "staged", 6) == 0;
    pmstore_free(mine);
    if (code != PMSTORE_OK) {
      pmstore_free(val);
      goto done;
    }
    if (!read_own || !ended || forward != 3 || back != 3) {
      snprintf(out, outlen, "transaction: read own put %d, ended %d, %zu key(s) forward, %zu back", read_own,
               ended, forward, back);
      pmstore_free(val);
      goto done;
    }
  }
  pmstore_iterator_t* iter = pmstore_create_iterator(db, NULL, NULL);
  size_t keys = 0;
  size_t backward = 0;
  for (pmstore_iter_seek_to_first(iter); pmstore_iter_valid(iter); pmstore_iter_next(iter)) ++keys;
  for (pmstore_iter_seek_to_last(iter); pmstore_iter_valid(iter); pmstore_iter_prev(iter)) ++backward;
  pmstore_iter_destroy(iter);
  if (backward != keys) {
    snprintf(out, outlen, "%zu key(s) forward, %zu backward", keys, backward);
    pmstore_free(val);
    goto done;
  }
  snprintf(out, outlen, "%.*s, %zu key(s)", (int)vallen, val, keys);
  pmstore_free(val);
  result = 0;

done:
  if (err != NULL) snprintf(out, outlen, "%s", err);
  pmstore_free(err);
  if (pmstore_close(db, NULL) != PMSTORE_OK) result = 1;
  pmstore_options_destroy(options);
  return result;
}

/* The C API from a C program linked against an installed pmstore: open (or
 * create) a pool, write, read back without copying, iterate a prefix,
 * report the pool's state, close and say whether everything persisted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmstore/c.h>

static int fail(const char* what, pmstore_code_t code, char* err) {
  fprintf(stderr, "%s failed (%s): %s\n", what, pmstore_code_name(code), err != NULL ? err : "");
  pmstore_free(err);
  return 2;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/dev/shm/quickstart-c.pool";
  pmstore_options_t* options = pmstore_options_create();
  pmstore_options_set_create_if_missing(options, true);
  pmstore_t* db = NULL;
  char* err = NULL;
  pmstore_code_t code = pmstore_open(options, path, &db, &err);
  pmstore_options_destroy(options);
  if (code != PMSTORE_OK) return fail("open", code, err);

  const char* users[][2] = {{"user/1", "Ada"}, {"user/2", "Grace"}, {"zone", "eu"}};
  pmstore_writebatch_t* batch = pmstore_writebatch_create();
  for (size_t i = 0; i < 3; ++i) {
    pmstore_writebatch_put(batch, users[i][0], strlen(users[i][0]), users[i][1], strlen(users[i][1]));
  }
  code = pmstore_write(db, NULL, batch, &err); /* one durable, all-or-nothing commit */
  pmstore_writebatch_destroy(batch);
  if (code != PMSTORE_OK) return fail("write", code, err);

  pmstore_pinnedvalue_t* pinned = NULL; /* zero copy: a view into the pool */
  code = pmstore_get_pinned(db, NULL, "user/2", 6, &pinned, &err);
  if (code != PMSTORE_OK) return fail("get", code, err);
  size_t len = 0;
  const char* value = pmstore_pinnedvalue_data(pinned, &len);
  printf("pmstore %s: user/2 = %.*s\n", pmstore_version(), (int)len, value);
  pmstore_pinnedvalue_destroy(pinned);

  char* copy = NULL;
  code = pmstore_get(db, NULL, "user/3", 6, &copy, &len, &err);
  printf("user/3: %s\n", code == PMSTORE_NOT_FOUND ? "absent" : "?");

  pmstore_iteroptions_t* range = pmstore_iteroptions_create();
  pmstore_iteroptions_set_prefix(range, "user/", 5);
  pmstore_iterator_t* iter = pmstore_create_iterator(db, NULL, range);
  for (pmstore_iter_seek_to_first(iter); pmstore_iter_valid(iter); pmstore_iter_next(iter)) {
    size_t klen = 0, vlen = 0;
    const char* key = pmstore_iter_key(iter, &klen);
    const char* val = pmstore_iter_value(iter, &vlen);
    printf("  %.*s = %.*s\n", (int)klen, key, (int)vlen, val);
  }
  code = pmstore_iter_get_error(iter, &err);
  pmstore_iter_destroy(iter);
  pmstore_iteroptions_destroy(range);
  if (code != PMSTORE_OK) return fail("iterate", code, err);

  pmstore_stats_t* stats = pmstore_get_stats(db);
  printf("%llu keys, %s granularity\n", (unsigned long long)pmstore_stats_keys(stats),
         pmstore_granularity_name(pmstore_stats_granularity(stats)));
  pmstore_stats_destroy(stats);

  code = pmstore_close(db, &err);
  if (code != PMSTORE_OK) return fail("close", code, err);
  pmstore_free(err);
  return 0;
}

/* A C function the C API's gtest suite calls. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens (creating) the pool at `path`, puts "c99" -> "from C", reads it
 * back, reads through a snapshot, commits "c99-txn" in a transaction and
 * counts the keys; writes "VALUE, N key(s)" (or the error) into out. 0 on
 * success. */
int c99_round_trip(const char* path, char* out, size_t outlen);

#ifdef __cplusplus
}
#endif

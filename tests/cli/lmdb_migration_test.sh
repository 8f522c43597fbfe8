#!/usr/bin/env bash
# Migration to and from LMDB with LMDB's own tools: py-lmdb (python3-lmdb)
# makes a database of awkward keys and values, mdb_dump (lmdb-utils) dumps
# it, `pmstore load` loads it, and every key and value must come out equal;
# then the reverse through `pmstore dump | mdb_load`. Also what load refuses
# (named sub-databases, DUPSORT, truncated input) and dump on a pool that
# another process holds alone (Options::exclusive).
# Usage: lmdb_migration_test.sh PATH/TO/pmstore [DIR_OF_THE_PYTHON_MODULE]
set -u
PMSTORE=$1
MODULE_DIR=${2:-}
PYTHON=/usr/bin/python3  # Debian's: python3-lmdb belongs to it
DIR=$(mktemp -d /dev/shm/pmstore-migration-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
data_of() { sed '1,/^HEADER=END$/d' "$1"; }  # a dump's data lines, header dropped

# The databases. lmdb: random binary pairs, every byte value, backslashes
# before hex digits, newlines, an empty value, LMDB's longest key, a 300 KiB
# value. lmdb-text: what mdb_dump -p can write unambiguously (it leaves a
# backslash unescaped, so one before two hex digits reads as an escape).
"$PYTHON" - "$DIR/lmdb" "$DIR/lmdb-text" <<'EOF' || { echo "FAIL: cannot make the LMDB databases"; exit 1; }
import random, sys, lmdb
rng = random.Random(14)
env = lmdb.open(sys.argv[1], map_size=1 << 28)
with env.begin(write=True) as txn:
    for i in range(3000):
        txn.put(b"%05d/" % i + rng.randbytes(rng.randrange(0, 40)), rng.randbytes(rng.randrange(0, 300)))
    txn.put(bytes(range(1, 256)), bytes(range(256)))
    txn.put(b"back\\slash\\5c\\\\", b"\\0a\\ff\n\n")
    txn.put(b"empty value", b"")
    txn.put(b"k" * env.max_key_size(), b"longest key")
    txn.put(b"large value", rng.randbytes(300 << 10))
env = lmdb.open(sys.argv[2], map_size=1 << 28)
no_backslash = bytes(c for c in range(256) if c != 0x5c)
with env.begin(write=True) as txn:
    for i in range(1000):
        txn.put(b"text/%04d" % i, bytes(rng.choice(no_backslash) for _ in range(rng.randrange(0, 120))))
    txn.put(b"a\\b", b"x\\zy\\")
    txn.put(b"empty value", b"")
EOF

# LMDB -> pmstore, hex and print dumps.
mdb_dump "$DIR/lmdb" >"$DIR/lmdb.hex" || fail "mdb_dump"
"$PMSTORE" load "$DIR/pool" <"$DIR/lmdb.hex" >"$DIR/out" 2>"$DIR/err" || fail "load of mdb_dump's hex: $(cat "$DIR/err")"
grep -q "^loaded 3005 entries from stdin into $DIR/pool$" "$DIR/out" || fail "load summary: $(cat "$DIR/out")"
"$PMSTORE" dump "$DIR/pool" >"$DIR/pool.hex" || fail "dump"
cmp -s <(data_of "$DIR/lmdb.hex") <(data_of "$DIR/pool.hex") ||
  fail "every key and value of the LMDB database, in order: pmstore's dump differs from mdb_dump's"
"$PMSTORE" check "$DIR/pool" >/dev/null || fail "check after load"
"$PMSTORE" get "$DIR/pool" "empty value" >"$DIR/out" && [ ! -s "$DIR/out" ] || fail "get of the empty value"

mdb_dump -p "$DIR/lmdb-text" >"$DIR/text.print" || fail "mdb_dump -p"
"$PMSTORE" load "$DIR/pool-text" --file="$DIR/text.print" >/dev/null 2>"$DIR/err" ||
  fail "load of mdb_dump -p: $(cat "$DIR/err")"
"$PMSTORE" dump "$DIR/pool-text" >"$DIR/pool-text.hex"
cmp -s <(mdb_dump "$DIR/lmdb-text" | data_of /dev/stdin) <(data_of "$DIR/pool-text.hex") ||
  fail "load of mdb_dump -p: pmstore's dump differs from mdb_dump's"

# pmstore -> LMDB: mdb_load reads both of pmstore's formats.
for format in hex print; do
  mkdir "$DIR/back-$format"
  flag=""; [ $format = print ] && flag=--print
  "$PMSTORE" dump "$DIR/pool" $flag | mdb_load "$DIR/back-$format" 2>"$DIR/err" ||
    fail "pmstore dump $flag | mdb_load: $(cat "$DIR/err")"
  mdb_dump "$DIR/back-$format" >"$DIR/back.hex"
  cmp -s <(data_of "$DIR/lmdb.hex") <(data_of "$DIR/back.hex") || fail "LMDB -> pmstore -> LMDB ($format) changed data"
done

# Refused before anything is written: named sub-databases and DUPSORT.
"$PYTHON" - "$DIR/multi" <<'EOF' || { echo "FAIL: cannot make the sub-databases"; exit 1; }
import sys, lmdb
env = lmdb.open(sys.argv[1], max_dbs=4)
users, tags = env.open_db(b"users"), env.open_db(b"tags", dupsort=True)
with env.begin(write=True) as txn:
    txn.put(b"ada", b"1", db=users)
    txn.put(b"red", b"apple", db=tags)
    txn.put(b"red", b"cherry", db=tags)
EOF
refused() {  # refused DESCRIPTION WORDS < input
  "$PMSTORE" load "$DIR/refused" >"$DIR/out" 2>"$DIR/err"
  local status=$?
  [ $status = 2 ] || fail "$1: exit $status, wanted 2"
  grep -q "$2" "$DIR/err" || fail "$1: stderr '$(cat "$DIR/err")' lacks '$2'"
  [ "$(wc -l <"$DIR/err")" = 1 ] || fail "$1: more than one line: $(cat "$DIR/err")"
  [ ! -e "$DIR/refused" ] || fail "$1: the pool was created anyway"
}
mdb_dump -s users "$DIR/multi" | refused "a named sub-database" "stdin line 3: named sub-database 'users'"
mdb_dump -a "$DIR/multi" | refused "mdb_dump -a" "named sub-database"
mdb_dump -s tags "$DIR/multi" | sed '/^database=/d' | refused "DUPSORT" "a DUPSORT database (duplicates=1)"
refused "empty input" "empty input" </dev/null

# A truncated dump: what came before the break is loaded, and said so.
head -n -1 "$DIR/lmdb.hex" | "$PMSTORE" load "$DIR/truncated" >/dev/null 2>"$DIR/err"
[ $? = 2 ] || fail "a truncated dump is an error"
grep -q "the dump is truncated (the first 3005 entries were loaded into $DIR/truncated)" "$DIR/err" ||
  fail "truncated: $(cat "$DIR/err")"

# dump is refused by a writer that holds the pool alone.
if [ -n "$MODULE_DIR" ]; then
  PYTHONPATH="$MODULE_DIR" "$PYTHON" -c "
import sys, time, pmstore
store = pmstore.Store(sys.argv[1], exclusive=True)
print('ready', flush=True)
time.sleep(120)" "$DIR/pool" >"$DIR/holder" 2>&1 &
  holder=$!
  for _ in $(seq 100); do grep -q ready "$DIR/holder" && break; sleep 0.1; done
  grep -q ready "$DIR/holder" || fail "the holding process did not start: $(cat "$DIR/holder")"
  "$PMSTORE" dump "$DIR/pool" >/dev/null 2>"$DIR/err"
  [ $? = 2 ] || fail "dump of a pool held by another process"
  grep -q "pool in use by process $holder, which has it open for writing" "$DIR/err" ||
    fail "dump of a held pool: $(cat "$DIR/err")"
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
else
  echo "note: no Python module in this build; the held-pool case is covered by the C API and Python tests"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "LMDB migration checks passed"

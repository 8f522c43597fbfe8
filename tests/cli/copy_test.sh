#!/usr/bin/env bash
# `pmstore copy POOL DEST` end to end: the copy holds what POOL holds
# (their dumps are equal) and passes check; --json; and each error (DEST
# exists, POOL missing, DEST's directory missing, POOL held alone by
# another process) exits 2 with one line saying so, leaving nothing behind.
# Usage: copy_test.sh PATH/TO/pmstore
set -u
PMSTORE=$1
. "$(dirname "$0")/../support/pool_lock.sh"
DIR=$(mktemp -d /var/tmp/pmstore-copy-XXXXXX)  # ext4 here: a real file system with fsync
holder=""
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$DIR"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
data_of() { sed '1,/^HEADER=END$/d' "$1"; }  # a dump's data lines, header dropped
only_names() {  # only_names DESCRIPTION NAME...: the directory holds exactly these
  want=$(printf '%s\n' "${@:2}" | sort)
  got=$(ls "$DIR" | grep -v '^out$\|^err$\|^fifo$\|\.dump$' | sort)
  [ "$got" = "$want" ] || fail "$1: the directory holds '$(echo $got)', wanted '$(echo $want)'"
}

# A pool of 20000 entries, loaded from a dump made here.
python3 - "$DIR/input.dump" <<'PY' || { echo "FAIL: cannot write the input dump"; exit 1; }
import sys
with open(sys.argv[1], "w") as out:
    out.write("VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n")
    for i in range(20000):
        out.write(" %s\n %s\n" % ((b"key%06d" % i).hex(), (b"%d/" % i * (i % 40)).hex()))
    out.write("DATA=END\n")
PY
"$PMSTORE" load "$DIR/pool" --file "$DIR/input.dump" --size=16M >/dev/null 2>"$DIR/err" || fail "load: $(cat "$DIR/err")"

"$PMSTORE" copy "$DIR/pool" "$DIR/copy" >"$DIR/out" 2>"$DIR/err"
rc=$?; [ $rc = 0 ] || fail "copy: exit $rc: $(cat "$DIR/err")"
grep -q "^copied 20000 keys .* from $DIR/pool to $DIR/copy in .* MB/s); 16.0 MiB, may grow to 256.0 MiB$" "$DIR/out" ||
  fail "copy summary: $(cat "$DIR/out")"
"$PMSTORE" check "$DIR/copy" >"$DIR/out" 2>&1 || fail "check of the copy: $(cat "$DIR/out")"
"$PMSTORE" dump "$DIR/pool" >"$DIR/pool.dump" && "$PMSTORE" dump "$DIR/copy" >"$DIR/copy.dump" || fail "dump"
[ "$(grep -c "^ " "$DIR/pool.dump")" = 40000 ] || fail "the source dump has $(grep -c "^ " "$DIR/pool.dump") data lines"
cmp -s <(data_of "$DIR/pool.dump") <(data_of "$DIR/copy.dump") || fail "the copy's entries differ from the pool's"
only_names "after a copy" pool copy

"$PMSTORE" copy "$DIR/pool" "$DIR/copy2" --json >"$DIR/out" 2>"$DIR/err" || fail "copy --json: $(cat "$DIR/err")"
jq -e --arg d "$DIR/copy2" '.keys == 20000 and .dest == $d and .bytes > 0 and .dest_pool_bytes == 16777216
       and .dest_max_pool_bytes == 268435456' "$DIR/out" >/dev/null || fail "copy --json: $(cat "$DIR/out")"
rm -f "$DIR/copy2"

chmod 0600 "$DIR/pool"
(umask 022; "$PMSTORE" copy "$DIR/pool" "$DIR/copy2" >/dev/null 2>"$DIR/err") || fail "copy of a 0600 pool: $(cat "$DIR/err")"
[ "$(stat -c %a "$DIR/copy2")" = 600 ] || fail "a copy of a 0600 pool is $(stat -c %a "$DIR/copy2")"
chmod 0644 "$DIR/pool"
rm -f "$DIR/copy2"

# Errors: exit 2, one line, nothing left behind.
printf 'keep me' >"$DIR/taken"
"$PMSTORE" copy "$DIR/pool" "$DIR/taken" >"$DIR/out" 2>"$DIR/err"
rc=$?; [ $rc = 2 ] || fail "copy onto an existing file: exit $rc"
grep -q "^pmstore: $DIR/taken: already exists (a copy never replaces a file" "$DIR/err" || fail "exists: $(cat "$DIR/err")"
[ "$(cat "$DIR/taken")" = "keep me" ] || fail "the existing destination was changed"
"$PMSTORE" copy "$DIR/nope" "$DIR/c3" >"$DIR/out" 2>"$DIR/err"
rc=$?; [ $rc = 2 ] || fail "copy of a missing pool: exit $rc"
grep -q "^pmstore: $DIR/nope: no such pool file" "$DIR/err" || fail "missing pool: $(cat "$DIR/err")"
"$PMSTORE" copy "$DIR/pool" "$DIR/no/such/dir" >"$DIR/out" 2>"$DIR/err"
rc=$?; [ $rc = 2 ] || fail "copy into a missing directory: exit $rc"
grep -q "$DIR/no/such/dir" "$DIR/err" || fail "missing directory: $(cat "$DIR/err")"
"$PMSTORE" copy "$DIR/pool" >"$DIR/out" 2>"$DIR/err"
rc=$?; [ $rc = 2 ] || fail "copy without DEST: exit $rc"
grep -q "wrong arguments for 'copy'" "$DIR/err" || fail "usage: $(cat "$DIR/err")"
only_names "after the errors" pool copy taken

# POOL held alone by another process: a load --exclusive that waits on a
# FIFO holds it open (a plain one would let the copy read beside it).
mkfifo "$DIR/fifo"
"$PMSTORE" load "$DIR/pool" --file "$DIR/fifo" --exclusive >/dev/null 2>&1 &
holder=$!
exec 3>"$DIR/fifo"
printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n' >&3
# The load opens the pool once it has read the header; a copy before that
# would take the pool and refuse the load.
wait_for_pool_lock "$DIR/pool" WRITE || fail "the load never locked the pool"
"$PMSTORE" copy "$DIR/pool" "$DIR/c4" >"$DIR/out" 2>"$DIR/err"
grep -q "pool in use by process $holder, which has it open for writing" "$DIR/err" ||
  fail "copy of a pool held by process $holder: $(cat "$DIR/err")"
printf 'DATA=END\n' >&3
exec 3>&-
wait "$holder" || fail "the holding load failed"
holder=""
only_names "after the held pool" pool copy taken

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "copy checks passed"

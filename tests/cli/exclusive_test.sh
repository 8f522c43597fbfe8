#!/usr/bin/env bash
# --exclusive across processes, with the pmstore command alone. Holders: a
# load waiting on a FIFO for its input holds a pool for writing; a dump
# waiting for its FIFO output to be read holds it read-only.
#  - a load --exclusive refuses a get (exit 2, naming the load's pid);
#  - a dump --exclusive refuses a put likewise, and lets a get in;
#  - a put --exclusive is refused while a plain dump holds the pool;
#  - without --exclusive, a dump that opened the pool before the load's
#    commit writes out what that commit put, and a check beside the load
#    checks its newest commit.
# And every command that takes the flag explains it in its help.
# Usage: exclusive_test.sh PATH/TO/pmstore
set -u
PMSTORE=$1
DIR=$(mktemp -d /dev/shm/pmstore-exclusive-XXXXXX)
POOL=$DIR/pool
loader="" dumper=""
trap '[ -n "$loader" ] && kill "$loader" 2>/dev/null; [ -n "$dumper" ] && kill "$dumper" 2>/dev/null; rm -rf "$DIR"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

# The pool's reader table entry of process $1, as JSON ("" when none).
slot_of() { "$PMSTORE" readers "$POOL" --json 2>/dev/null | jq -c --argjson pid "$1" '.readers[] | select(.pid == $pid)'; }

# wait_for_open PID: until the reader table lists PID (its open holds the
# pool lock by then: the lock comes first). Status 1 when PID died first or 30 s passed.
wait_for_open() {
  for _ in $(seq 300); do
    [ -n "$(slot_of "$1")" ] && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# start_load [FLAGS]: a load into $POOL, fed through fd 3, that holds the
# pool open once it has read the header; $loader is its pid.
start_load() {
  rm -f "$DIR/in"
  mkfifo "$DIR/in"
  "$PMSTORE" load "$POOL" --file "$DIR/in" "$@" >/dev/null 2>"$DIR/load.err" &
  loader=$!
  exec 3<>"$DIR/in"  # read-write: never blocks, even when the load died
  printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n' >&3
  wait_for_open "$loader" || fail "load $*: never opened the pool: $(cat "$DIR/load.err")"
}
end_load() {
  printf 'DATA=END\n' >&3
  exec 3>&-
  wait "$loader" || fail "load: $(cat "$DIR/load.err")"
  loader=""
}

# start_dump [FLAGS]: a dump of $POOL that holds the pool open until its
# output FIFO is read (end_dump, into $DIR/dump); $dumper is its pid.
start_dump() {
  rm -f "$DIR/out"
  mkfifo "$DIR/out"
  "$PMSTORE" dump "$POOL" --file "$DIR/out" "$@" 2>"$DIR/dump.err" &
  dumper=$!
  wait_for_open "$dumper" || fail "dump $*: never opened the pool: $(cat "$DIR/dump.err")"
}
end_dump() {
  : >"$DIR/dump"
  kill -0 "$dumper" 2>/dev/null && timeout 30 cat "$DIR/out" >"$DIR/dump"
  wait "$dumper" || fail "dump: $(cat "$DIR/dump.err")"
  dumper=""
}

# refused WHAT HOLDER_PID COMMAND...: COMMAND exits 2 naming the holder.
refused() {
  "${@:3}" >"$DIR/probe.out" 2>"$DIR/probe.err"
  rc=$?
  [ $rc = 2 ] || fail "$1: exit $rc (wanted 2, the pool in use): $(cat "$DIR/probe.out" "$DIR/probe.err")"
  grep -q "pool in use by process $2\b" "$DIR/probe.err" || fail "$1: the message names no process $2: $(cat "$DIR/probe.err")"
}

for command in put del load get list stats dump copy bench; do
  "$PMSTORE" help "$command" 2>&1 | grep -q -- "--exclusive" || fail "'pmstore help $command' says nothing of --exclusive"
done
"$PMSTORE" create "$POOL" --size=8M >/dev/null || fail "create"
"$PMSTORE" put "$POOL" k v || fail "put"

# A writer alone: read-only opens are shut out.
start_load --exclusive
refused "get beside a load --exclusive" "$loader" "$PMSTORE" get "$POOL" k
refused "list beside a load --exclusive" "$loader" "$PMSTORE" list "$POOL"
end_load

# A reader alone: writers are shut out, readers are not.
start_dump --exclusive
refused "put beside a dump --exclusive" "$dumper" "$PMSTORE" put "$POOL" k w
[ "$("$PMSTORE" get "$POOL" k 2>&1)" = v ] || fail "get beside a dump --exclusive: $("$PMSTORE" get "$POOL" k 2>&1)"
end_dump
grep -qx " $(hex k)" "$DIR/dump" || fail "the exclusive dump lacks k: $(cat "$DIR/dump")"

# An exclusive writer is shut out by a reader that holds the pool.
start_dump
refused "put --exclusive beside a dump" "$dumper" "$PMSTORE" put "$POOL" k w --exclusive
end_dump

# Without --exclusive a reader shares the pool with the writer and reads
# its commits: the dump opens the pool, then the load commits (it commits
# every 1024 entries), then the dump writes out.
start_load
start_dump
last_commit() { slot_of "$loader" | jq '.last_commit // 0'; }
before=$(last_commit)
{
  printf ' %s\n %s\n' "$(hex late)" "$(hex 'after the dump opened')"
  python3 -c 'for i in range(1023): print(" %s\n 78" % (b"fill%04d" % i).hex())'
} >&3
for _ in $(seq 300); do
  [ "$(last_commit)" -gt "${before:-0}" ] 2>/dev/null && break
  sleep 0.1
done
[ "$(last_commit)" -gt "${before:-0}" ] 2>/dev/null || fail "the load's commit never showed in the reader table"
end_dump
grep -A1 -x " $(hex late)" "$DIR/dump" | tail -n 1 | grep -qx " $(hex 'after the dump opened')" ||
  fail "the dump, opened before the load's commit, lacks what it put ($(grep -c '^ ' "$DIR/dump") data lines)"
# A check beside the writer checks its newest commit: the 1 024 keys the
# load committed, with k and the late key.
check=$("$PMSTORE" check "$POOL" --json 2>&1) || fail "check beside a load: $check"
[ "$(printf '%s' "$check" | jq '.keys' 2>/dev/null)" = 1025 ] || fail "check beside a load: $check"
end_load

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "exclusive checks passed"

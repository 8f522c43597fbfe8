#!/usr/bin/env bash
# `pmstore dump` of a pool that another process is rewriting: the dump
# reads one commit, every key once, while the writer overwrites random
# keys of the whole pool many times over during it. The pool has more
# leaves (some 23 000) than a snapshot could once outlive changes of
# (4 096, every change an image): the dump needs one image per leaf. A
# check of the pool after the writers were killed finds it clean.
# Usage: live_dump_test.sh PATH/TO/pmstore
set -u
# Cache-line flushes on tmpfs (no msync per commit): a faster fill and writer.
export PMEM2_FORCE_GRANULARITY=CACHE_LINE
PMSTORE=$1
KEYS=1000000
DIR=$(mktemp -d /dev/shm/pmstore-live-dump-XXXXXX)
POOL=$DIR/pool
writer=""
trap '[ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$DIR"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$PMSTORE" bench "$POOL" --benchmarks=fillseq --num=$KEYS >/dev/null 2>"$DIR/fill.err" ||
  { echo "FAIL: fill: $(cat "$DIR/fill.err")"; exit 1; }

# The writer: db_bench's readwhilewriting, whose writer thread overwrites
# random keys of the pool (durable puts) for as long as its reader thread
# reads, longer than any dump here; stopped by a kill after the dump (the
# next open recovers what the kill cut short).
start_writer() {
  "$PMSTORE" bench "$POOL" --benchmarks=readwhilewriting --num=$KEYS --reads=1000000000 --threads=1 \
    >/dev/null 2>"$DIR/writer.err" &
  writer=$!
  # Until its slot shows in the reader table, writable, and a second has
  # passed for the overwrites to be under way.
  for _ in $(seq 100); do
    "$PMSTORE" readers "$POOL" --json 2>/dev/null | grep -q "\"pid\": *$writer" && break
    sleep 0.1
  done
  sleep 1
}

for round in 1 2; do
  start_writer
  kill -0 "$writer" 2>/dev/null || fail "round $round: the writer ended before the dump began: $(cat "$DIR/writer.err")"
  if ! "$PMSTORE" dump "$POOL" --file "$DIR/dump" 2>"$DIR/dump.err"; then
    fail "round $round: dump beside the writer: $(cat "$DIR/dump.err")"
  else
    kill -0 "$writer" 2>/dev/null || fail "round $round: the writer ended before the dump did"
    # mdb_dump's text: key and value lines start with a space, between
    # HEADER=END and DATA=END.
    lines=$(sed -n '/^HEADER=END$/,/^DATA=END$/p' "$DIR/dump" | grep -c '^ ')
    [ "$lines" -eq $((2 * KEYS)) ] || fail "round $round: the dump holds $lines key and value lines, not $((2 * KEYS))"
    keys=$(sed -n '/^HEADER=END$/,/^DATA=END$/p' "$DIR/dump" | grep '^ ' | awk 'NR % 2 == 1' | sort -u | wc -l)
    [ "$keys" -eq $KEYS ] || fail "round $round: $keys distinct keys dumped, not $KEYS"
  fi
  kill "$writer" 2>/dev/null
  wait "$writer" 2>/dev/null
  writer=""
done
"$PMSTORE" check "$POOL" >"$DIR/check.out" 2>&1 || fail "check after the killed writers: $(cat "$DIR/check.out")"

[ "$failures" -eq 0 ] && echo "live_dump_test: 2 dumps of $KEYS keys, each beside a writer overwriting random keys"
exit $((failures > 0))

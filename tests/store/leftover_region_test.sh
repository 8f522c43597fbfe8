#!/bin/sh
# A lock region that a killed process left in /dev/shm is removed by the
# first open of any pool that makes its own region a day later, and not
# before (doc/FORMAT.md, "Leftovers"). The day passes through a preloaded
# shim that moves CLOCK_REALTIME on. Runs alone (RUN_SERIAL): a moved clock
# makes every leftover of the machine a day old, other tests' included.
#
#   leftover_region_test.sh PMSTORE CLOCK_SHIFT_SHIM
set -u
PMSTORE=$1
SHIM=$2
DIR=$(mktemp -d /var/tmp/pmstore-leftover.XXXXXX)
holder=
left=
# Whatever happened, no leftover of this test's stays behind.
trap '[ -n "$holder" ] && kill -9 "$holder" 2>/dev/null; [ -n "$left" ] && rm -f "$left"; rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

region_of() { echo "/dev/shm/pmstore-$(stat -c '%Hd.%Ld-%i' "$1").lock"; }

# A process that makes a pool and holds it open until it is killed (its
# fill makes the file anew: the region is named for the file it opens).
"$PMSTORE" bench "$DIR/killed" --benchmarks=fillseq,readwhilewriting --num=1000 --reads=1000000000 --threads=1 \
  --size=64M >/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do
  [ -e "$DIR/killed" ] && left=$(region_of "$DIR/killed") && [ -e "$left" ] && break
  sleep 0.1
done
[ -n "$left" ] && [ -e "$left" ] || fail "the holder made no region (${left:-no pool file})"
sleep 0.5
kill -9 "$holder"
wait "$holder" 2>/dev/null
holder=
[ -e "$left" ] || fail "the killed holder's region went with it"

# A day has not passed: an open that makes its region leaves the leftover.
"$PMSTORE" create "$DIR/today" --size=64M >/dev/null || fail "create today"
"$PMSTORE" stats "$DIR/today" >/dev/null || fail "stats today"
[ -e "$left" ] || fail "an open removed a leftover of a moment ago"

# A day and an hour later it does.
LD_PRELOAD=$SHIM PMSTORE_CLOCK_SHIFT_S=90000 "$PMSTORE" stats "$DIR/today" >/dev/null || fail "stats a day later"
[ -e "$left" ] && fail "a day-old leftover stayed: $left"
"$PMSTORE" readers "$DIR/killed" --json | grep -q '"readers": *\[\]' || fail "readers of the killed pool: $("$PMSTORE" readers "$DIR/killed" --json)"
echo "PASS"

#!/bin/sh
# The `pmstore` command end to end: every subcommand, its output and its
# exit status (0 ok, 1 missing key / damaged pool, 2 error or bad usage).
# Usage: cli_test.sh PATH/TO/pmstore PATH/TO/failing_sync_shim.so
set -u
PMSTORE=$1
SHIM=$2
. "$(dirname "$0")/../support/pool_lock.sh"
DIR=$(mktemp -d /dev/shm/pmstore-cli-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
POOL=$DIR/pool
failures=0

expect() {  # expect WANTED_STATUS DESCRIPTION -- command...
  want=$1; what=$2; shift 3
  "$@" >"$DIR/out" 2>"$DIR/err"
  got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, wanted $want; stderr: $(cat "$DIR/err")"
    failures=$((failures + 1))
  fi
}
output_is() {  # output_is DESCRIPTION EXPECTED
  if [ "$(cat "$DIR/out")" != "$2" ]; then
    echo "FAIL: $1: got '$(cat "$DIR/out")', wanted '$2'"
    failures=$((failures + 1))
  fi
}
stderr_has() {
  if ! grep -q "$2" "$DIR/err"; then
    echo "FAIL: $1: stderr '$(cat "$DIR/err")' lacks '$2'"
    failures=$((failures + 1))
  fi
}

expect 2 "get on a missing pool" -- "$PMSTORE" get "$POOL" k
stderr_has "missing pool names the file" "$POOL"
expect 2 "create without --size" -- "$PMSTORE" create "$POOL"
expect 0 "create" -- "$PMSTORE" create "$POOL" --size=16M
expect 2 "create twice" -- "$PMSTORE" create "$POOL" --size=16M
stderr_has "create twice says why" "already exists"
expect 0 "put with value" -- "$PMSTORE" put "$POOL" b/1 one
printf 'from stdin' >"$DIR/stdin"
expect 0 "put from stdin" -- sh -c "\"$PMSTORE\" put \"$POOL\" b/2 <\"$DIR/stdin\""
printf 'from\0file' >"$DIR/value"
expect 0 "put --file" -- "$PMSTORE" put "$POOL" a --file "$DIR/value"
expect 0 "get" -- "$PMSTORE" get "$POOL" b/1
output_is "get prints the raw value" "one"
expect 0 "get binary" -- "$PMSTORE" get "$POOL" a
if ! cmp -s "$DIR/out" "$DIR/value"; then echo "FAIL: binary value differs"; failures=$((failures + 1)); fi
expect 1 "get of a missing key" -- "$PMSTORE" get "$POOL" nope
expect 0 "list" -- "$PMSTORE" list "$POOL"
output_is "list is sorted" "$(printf 'a\nb/1\nb/2')"
expect 0 "list --prefix --limit" -- "$PMSTORE" list "$POOL" --prefix b/ --limit 1
output_is "list --prefix --limit" "b/1"
expect 0 "list --reverse" -- "$PMSTORE" list "$POOL" --reverse
output_is "list --reverse is in descending order" "$(printf 'b/2\nb/1\na')"
expect 0 "list --reverse --prefix --limit" -- "$PMSTORE" list "$POOL" --reverse --prefix b/ --limit 1
output_is "list --reverse --limit: the last key" "b/2"
expect 0 "del" -- "$PMSTORE" del "$POOL" b/1
expect 1 "get after del" -- "$PMSTORE" get "$POOL" b/1
expect 0 "stats" -- "$PMSTORE" stats "$POOL"
grep -q "^keys *2$" "$DIR/out" || { echo "FAIL: stats keys: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "stats --json" -- "$PMSTORE" stats "$POOL" --json
grep -q '"keys": 2' "$DIR/out" || { echo "FAIL: stats --json keys"; failures=$((failures + 1)); }
expect 0 "check of a clean pool" -- "$PMSTORE" check "$POOL"
grep -q "^clean$" "$DIR/out" || { echo "FAIL: check output: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench" -- "$PMSTORE" bench "$DIR/bench" --size=64M --num=2000 --benchmarks=fillseq,readrandom,readseq,overwrite,deleterandom,reopen --output-format=json
grep -q '"name": "readrandom"' "$DIR/out" && grep -q '"p999_us"' "$DIR/out" || { echo "FAIL: bench json: $(head -c 300 "$DIR/out")"; failures=$((failures + 1)); }
jq -e '.benchmarks[] | select(.name == "reopen") | .ops == 1 and .seconds > 0' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench reopen: $(jq -c '.benchmarks[-1]' "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench reopenreadonly" -- "$PMSTORE" bench "$DIR/bench" --size=64M --num=2000 --benchmarks=fillseq,reopenreadonly,readrandom --compare=lmdb --output-format=json
jq -e '[.benchmarks[].name] == ["fillseq", "reopenreadonly", "readrandom.readonly"] and .benchmarks[2].found == 2000
       and .compare.benchmarks[2].found == 2000 and .compare.ratios["readrandom.readonly"] > 0' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench reopenreadonly: $(jq -c '[.benchmarks[] | {name, found}]' "$DIR/out")"; failures=$((failures + 1)); }
expect 2 "bench: a write after reopenreadonly" -- "$PMSTORE" bench "$DIR/bench" --size=64M --num=2000 --benchmarks=reopenreadonly,overwrite
stderr_has "a write after reopenreadonly says why" "open read-only"
# The first read and the first write after the open are timed apart.
jq -e '[.benchmarks[] | select(.name == "reopen.firstread" and .ops == 1)] | length == 1' "$DIR/out" >/dev/null \
  && jq -e '[.benchmarks[] | select(.name == "reopen.firstwrite" and .ops == 1)] | length == 1' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench reopen.firstread/firstwrite: $(jq -c '.benchmarks' "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench readwhilewriting" -- "$PMSTORE" bench "$DIR/rww" --size=64M --num=2000 --reads=20000 --threads=2 --benchmarks=fillseq,readwhilewriting --output-format=json
jq -e '[.benchmarks[].name] == ["fillseq", "readwhilewriting", "readwhilewriting.writer"] and .benchmarks[1].ops == 20000 and .benchmarks[1].found == 20000' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench readwhilewriting: $(jq -c '.benchmarks' "$DIR/out")"; failures=$((failures + 1)); }
# updaterandom: every key of a fill is found and updated; two threads on
# keys of their own never abort a transaction; LMDB's row has no abort count
# (its write transactions wait for each other, never abort).
expect 0 "bench updaterandom --transactions" -- "$PMSTORE" bench "$DIR/upd" --size=64M --num=2000 --threads=2 \
  --benchmarks=fillseq,updaterandom --transactions --compare=lmdb --output-format=json
jq -e '.transactions and [.benchmarks[].name] == ["fillseq", "updaterandom"]
       and (.benchmarks[1] | .ops == 2000 and .found == 2000 and .aborts == 0 and .p99_us > 0)
       and (.compare.benchmarks[1] | .name == "updaterandom" and .ops == 2000 and .found == 2000 and (has("aborts") | not))
       and .compare.ratios.updaterandom > 0' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench updaterandom --transactions: $(jq -c '[.benchmarks, .compare.benchmarks]' "$DIR/out")"; failures=$((failures + 1)); }
# Without a fill the first pass misses keys, and inserts them; the second
# draws the same keys (the same seed), so it finds every one: each update's
# Put landed. No --transactions: no aborts field.
expect 0 "bench updaterandom unfilled" -- "$PMSTORE" bench "$DIR/upd2" --size=64M --num=2000 \
  --benchmarks=updaterandom,updaterandom --output-format=json
jq -e '(.transactions | not) and .benchmarks[0].found < 1000 and .benchmarks[1].found == 2000
       and (.benchmarks[0] | has("aborts") | not)' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench updaterandom unfilled: $(jq -c '.benchmarks' "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench --compare=lmdb" -- "$PMSTORE" bench "$DIR/bench2" --size=64M --num=1000 --compare=lmdb
grep -q "ratio pmstore/lmdb" "$DIR/out" || { echo "FAIL: bench compare output"; failures=$((failures + 1)); }
# The order of the engines: LMDB first on request, said in the output.
expect 0 "bench --lmdb-first" -- "$PMSTORE" bench "$DIR/bench3" --size=64M --num=1000 --benchmarks=fillseq,readrandom \
  --compare=lmdb --lmdb-first --output-format=json
jq -e '.compare.ran_first == true and [.benchmarks[].ops] == [1000, 1000] and [.compare.benchmarks[].found] == [0, 1000]' \
  "$DIR/out" >/dev/null || { echo "FAIL: bench --lmdb-first: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench --lmdb-first, text" -- "$PMSTORE" bench "$DIR/bench3" --size=64M --num=1000 --benchmarks=fillseq \
  --compare=lmdb --lmdb-first
grep -q "^  lmdb (ran first):" "$DIR/out" || { echo "FAIL: bench --lmdb-first text: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 2 "bench --lmdb-first without --compare" -- "$PMSTORE" bench "$DIR/bench3" --lmdb-first
stderr_has "--lmdb-first alone says what it needs" "needs --compare=lmdb"
# Hits, misses and batches reported apart; LMDB runs readrandom for multiget.
expect 0 "bench multiget readmissing" -- "$PMSTORE" bench "$DIR/mg" --size=64M --num=2000 --reads=3000 --batch=7 \
  --benchmarks=fillseq,readrandom,multiget,readmissing --compare=lmdb --output-format=json
jq -e '[.benchmarks[] | [.name, .ops, .found]]
         == [["fillseq", 2000, 0], ["readrandom", 3000, 3000], ["multiget", 3000, 3000], ["readmissing", 3000, 0]]
       and [.compare.benchmarks[].name] == ["fillseq", "readrandom", "readrandom", "readmissing"]
       and (.compare.ratios | has("multiget/readrandom") and has("readmissing")) and .batch == 7' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench multiget/readmissing: $(jq -c '[.benchmarks, .compare.ratios]' "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench fillrandom note" -- "$PMSTORE" bench "$DIR/mg" --size=64M --num=2000 --benchmarks=fillrandom,readrandom
grep -q "note: readrandom found 6[0-9].[0-9]% of its keys" "$DIR/out" || { echo "FAIL: no note on readrandom's misses: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "bench 4 MiB values" -- "$PMSTORE" bench "$DIR/big" --num=12 --value-size=4M --benchmarks=fillseq,multiget --output-format=json
jq -e '.value_size == 4194304 and .benchmarks[1].found == 12 and .benchmarks[1].mb_per_sec > 0' "$DIR/out" >/dev/null \
  || { echo "FAIL: bench 4 MiB values: $(head -c 300 "$DIR/out")"; failures=$((failures + 1)); }
expect 2 "bench value over 4 MiB" -- "$PMSTORE" bench "$DIR/big" --value-size=5M
stderr_has "bench names the value limit" "value-size is 0 to 4M"
expect 2 "bench pool larger than the file system" -- "$PMSTORE" bench "$DIR/huge" --value-size=4M --num=100000000
stderr_has "bench says the pool does not fit" "lower --num or --value-size, or give --size"

# Damage: garbage, wrong version, truncation, a flipped leaf pointer.
head -c 1048576 /dev/urandom >"$DIR/garbage"
expect 2 "garbage is not a pool" -- "$PMSTORE" get "$DIR/garbage" k
stderr_has "garbage names the problem" "bad magic"
cp "$POOL" "$DIR/v2"; printf '\143' | dd of="$DIR/v2" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 2 "other version" -- "$PMSTORE" list "$DIR/v2"
stderr_has "other version names the problem" "unsupported pool format version"
cp "$POOL" "$DIR/short"; truncate -s 12288 "$DIR/short"
expect 2 "truncated" -- "$PMSTORE" stats "$DIR/short"
stderr_has "truncated names the problem" "truncated"
cp "$POOL" "$DIR/flip"; printf '\377' | dd of="$DIR/flip" bs=1 seek=$((4096 + 2)) conv=notrunc 2>/dev/null
expect 2 "root checksum" -- "$PMSTORE" get "$DIR/flip" a
stderr_has "root checksum names the problem" "checksum failure"
expect 2 "check of an unopenable pool" -- "$PMSTORE" check "$DIR/garbage"
expect 2 "unknown subcommand" -- "$PMSTORE" frobnicate
expect 2 "unknown flag" -- "$PMSTORE" get "$POOL" a --bogus
expect 0 "help" -- "$PMSTORE" help bench
grep -q -- "--transactions --compare=lmdb" "$DIR/out" || { echo "FAIL: help bench lacks the updaterandom example"; failures=$((failures + 1)); }

# destroy and create --force: a pool goes, a file that is not a pool stays,
# and a character device that is not device DAX is refused with the reason.
DPOOL=$DIR/destroyed
expect 0 "create a pool to destroy" -- "$PMSTORE" create "$DPOOL" --size=4M
expect 0 "put into it" -- "$PMSTORE" put "$DPOOL" k v
expect 0 "create --force over a pool" -- "$PMSTORE" create "$DPOOL" --size=4M --force
expect 0 "list after create --force" -- "$PMSTORE" list "$DPOOL"
output_is "create --force makes an empty pool" ""
expect 0 "destroy" -- "$PMSTORE" destroy "$DPOOL"
[ ! -e "$DPOOL" ] || { echo "FAIL: destroy left $DPOOL"; failures=$((failures + 1)); }
expect 2 "destroy of a missing pool" -- "$PMSTORE" destroy "$DPOOL"
stderr_has "destroy of a missing pool names it" "$DPOOL"
printf 'notes' >"$DIR/notes"
expect 2 "destroy of a file that is not a pool" -- "$PMSTORE" destroy "$DIR/notes"
stderr_has "destroy says it is not a pool" "not a pmstore pool"
expect 2 "create --force over a file that is not a pool" -- "$PMSTORE" create "$DIR/notes" --size=4M --force
[ "$(cat "$DIR/notes")" = notes ] || { echo "FAIL: a file that is not a pool was changed"; failures=$((failures + 1)); }
expect 2 "create on a device with --size" -- "$PMSTORE" create /dev/null --size=4M
stderr_has "a device's size is its own" "drop --size"
expect 2 "create on a device that is not device DAX" -- "$PMSTORE" create /dev/null
stderr_has "not device DAX says what is" "/dev/daxX.Y"
expect 2 "get on a device that is not device DAX" -- "$PMSTORE" get /dev/null k
stderr_has "get on /dev/null says why" "not device DAX"

# Permissions and read-only opens: --mode, then a user who may only read
# the pool (nobody, through setpriv) reads it with every reading command
# and is told why a write fails.
MPOOL=$DIR/modes
expect 2 "create --mode beyond the permission bits" -- "$PMSTORE" create "$MPOOL" --size=4M --mode=4755
stderr_has "bad --mode says what a mode is" "octal permission bits"
expect 0 "create --mode=0640" -- sh -c "umask 022; \"$PMSTORE\" create \"$MPOOL\" --size=4M --mode=0640"
[ "$(stat -c %a "$MPOOL")" = 640 ] || { echo "FAIL: --mode=0640 made $(stat -c %a "$MPOOL")"; failures=$((failures + 1)); }
expect 0 "put into the 0640 pool" -- "$PMSTORE" put "$MPOOL" k v
chmod 0644 "$MPOOL"
chmod 0755 "$DIR"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
expect 0 "get without write permission" -- nobody "$PMSTORE" get "$MPOOL" k
output_is "get without write permission reads the value" "v"
expect 0 "list without write permission" -- nobody "$PMSTORE" list "$MPOOL"
expect 0 "dump without write permission" -- nobody "$PMSTORE" dump "$MPOOL"
expect 0 "check without write permission" -- nobody "$PMSTORE" check "$MPOOL"
expect 0 "stats without write permission" -- nobody "$PMSTORE" stats "$MPOOL" --json
jq -e '.read_only == true and .keys == 1' "$DIR/out" >/dev/null || { echo "FAIL: read-only stats: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 2 "put without write permission" -- nobody "$PMSTORE" put "$MPOOL" k w
stderr_has "put without write permission says why" "no permission to write the pool file"
expect 0 "stats with write permission" -- "$PMSTORE" stats "$MPOOL" --json
jq -e '.read_only == false' "$DIR/out" >/dev/null || { echo "FAIL: stats opened read-only"; failures=$((failures + 1)); }

# Beside another process's read-only open (a dump held up by a full pipe):
# a writer joins the reader (an exclusive one is refused, naming it), and
# stats opens for writing.
HPOOL=$DIR/held
"$PMSTORE" create "$HPOOL" --size=16M >/dev/null
big=$(head -c 4000 /dev/zero | tr '\0' a)
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$PMSTORE" put "$HPOOL" "k$i" "$big"; done
"$PMSTORE" dump "$HPOOL" 2>"$DIR/dump-err" | { while [ ! -e "$DIR/go" ]; do sleep 0.1; done; cat >/dev/null; } &
wait_for_pool_lock "$HPOOL" READ ||
  { echo "FAIL: the held dump never locked the pool: $(cat "$DIR/dump-err")"; failures=$((failures + 1)); }
# (The probe deletes a missing key: it would change nothing if it got in.)
expect 0 "del beside a read-only open" -- "$PMSTORE" del "$HPOOL" absent
expect 2 "an exclusive del beside a read-only open" -- "$PMSTORE" del "$HPOOL" absent --exclusive
stderr_has "an exclusive del beside a read-only open names the reader" "which has it open"
expect 0 "stats beside a read-only open" -- "$PMSTORE" stats "$HPOOL" --json
jq -e '.read_only == false and .keys == 20' "$DIR/out" >/dev/null || { echo "FAIL: stats beside a reader: $(cat "$DIR/out")"; failures=$((failures + 1)); }
touch "$DIR/go"
wait

# The reader table: a process holding the pool (a dump held up by a full
# FIFO) is listed, read-only (no last commit), with the commit its
# iterator reads; killed,
# it is listed as stale until --clear-stale frees its slot. The slot is
# taken just after the pool's lock and the commit pinned once the dump's
# iterator exists, so the listing is polled for.
mkfifo "$DIR/fifo"
"$PMSTORE" dump "$HPOOL" >"$DIR/fifo" 2>"$DIR/dump-err" &
dump_pid=$!
exec 3<"$DIR/fifo"
listed=no
for _ in $(seq 300); do
  "$PMSTORE" readers "$HPOOL" --json >"$DIR/out" 2>"$DIR/err" &&
    jq -e '(.readers | length == 1) and .readers[0].pinned_commit != null' "$DIR/out" >/dev/null && { listed=yes; break; }
  sleep 0.1
done
[ "$listed" = yes ] || { echo "FAIL: the held dump was never listed with the commit it reads: $(cat "$DIR/out" "$DIR/err" "$DIR/dump-err")"; failures=$((failures + 1)); }
jq -e --argjson pid "$dump_pid" '.readers[0] | .pid == $pid and .writable == false and .stale == false and .last_commit == null' "$DIR/out" >/dev/null ||
  { echo "FAIL: readers beside a held dump: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 0 "readers as a user who may only read" -- nobody "$PMSTORE" readers "$HPOOL"
grep -q "read-only" "$DIR/out" || { echo "FAIL: readers as nobody: $(cat "$DIR/out")"; failures=$((failures + 1)); }
grep -Eq "read-only +[0-9TZ:-]+ +- +[0-9]+ *$" "$DIR/out" || { echo "FAIL: no last commit ('-': read-only) and pinned commit columns: $(cat "$DIR/out")"; failures=$((failures + 1)); }
kill -9 "$dump_pid"
wait "$dump_pid" 2>/dev/null
exec 3<&-
expect 0 "readers after the holder was killed" -- "$PMSTORE" readers "$HPOOL"
grep -q "stale" "$DIR/out" || { echo "FAIL: a killed holder is not stale: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 2 "clearing needs write permission on the table" -- nobody "$PMSTORE" readers "$HPOOL" --clear-stale
stderr_has "clearing as nobody says why" "write permission"
expect 0 "readers --clear-stale" -- "$PMSTORE" readers "$HPOOL" --clear-stale --json
jq -e '.cleared == 1 and (.readers | length) == 0' "$DIR/out" >/dev/null ||
  { echo "FAIL: --clear-stale: $(cat "$DIR/out")"; failures=$((failures + 1)); }
expect 2 "readers of what is not a pool" -- "$PMSTORE" readers "$DIR/fifo"

# A device that fails writes (the preloaded shim makes msync or fdatasync
# fail with EIO): exit 2, one line naming the pool and the call, never a
# signal; what was acknowledged before stays, the pool stays clean.
failing() {  # failing CALL AFTER DESCRIPTION -- command...
  call=$1 after=$2 what=$3; shift 4
  LD_PRELOAD=$SHIM PMSTORE_FAIL_CALL=$call PMSTORE_FAIL_AFTER=$after "$@" >"$DIR/out" 2>"$DIR/err"
  got=$?
  if [ "$got" != 2 ]; then
    echo "FAIL: $what: exit $got (a signal when over 128), wanted 2; stderr: $(cat "$DIR/err")"
    failures=$((failures + 1))
  elif [ "$(wc -l <"$DIR/err")" != 1 ] || ! grep -q "^pmstore: $call($FPOOL" "$DIR/err" \
       || ! grep -q "Input/output error" "$DIR/err"; then
    echo "FAIL: $what: wanted one line 'pmstore: $call($FPOOL...): Input/output error', got: $(cat "$DIR/err")"
    failures=$((failures + 1))
  fi
}
FPOOL=$DIR/failing
expect 0 "create a pool that grows" -- "$PMSTORE" create "$FPOOL" --size=4M --max-size=64M
expect 0 "put before the device fails" -- "$PMSTORE" put "$FPOOL" before one
# Open replays the last commit (one msync); the put's commit is the next.
failing msync 1 "put while msync fails" -- "$PMSTORE" put "$FPOOL" during two
failing msync 0 "open while msync fails" -- "$PMSTORE" del "$FPOOL" before
head -c 8388608 /dev/zero | tr '\0' 'L' >"$DIR/large"
failing fdatasync 0 "growth while fdatasync fails" -- "$PMSTORE" put "$FPOOL" large --file "$DIR/large"
expect 0 "get after the failures" -- "$PMSTORE" get "$FPOOL" before
output_is "the acknowledged value stays" "one"
expect 1 "the put that failed to grow the pool is not there" -- "$PMSTORE" get "$FPOOL" large
expect 0 "check after the failures" -- "$PMSTORE" check "$FPOOL"
expect 0 "put once the device works" -- "$PMSTORE" put "$FPOOL" after three

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all CLI checks passed"

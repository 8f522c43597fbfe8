#!/bin/sh
# Makes pool-v1.gz, the version 1 pool that store_v1_pool_test opens: run
# with a pmstore CLI built from a commit that writes format version 1
# (d0b83e1 or earlier), as `make_pool_v1.sh PMSTORE OUT_DIR`.
#
# Content (the test regenerates it by the same rule, ValueFor in
# store_test_util.h): keys key-00000 .. key-02999 with values of
# 20 + (i * 37) % 900 bytes, those with i % 7 == 3 deleted again, and
# large-1 (1.25 MiB, ValueFor(1, ...)) and large-2 (3 MiB + 5 bytes,
# ValueFor(2, ...)), closed cleanly (so it holds a separator image).
set -eu
pmstore=$1
out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
def value_for(i, size):
    return bytes(ord('a') + (i * 31 + j * 7) % 26 for j in range(size))
with open(f"{work}/small.dump", "w") as f:
    f.write("VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n")
    for i in range(3000):
        f.write(" " + (b"key-%05d" % i).hex() + "\n")
        f.write(" " + value_for(i, 20 + (i * 37) % 900).hex() + "\n")
    f.write("DATA=END\n")
with open(f"{work}/large-1", "wb") as f:
    f.write(value_for(1, (5 << 20) // 4))
with open(f"{work}/large-2", "wb") as f:
    f.write(value_for(2, (3 << 20) + 5))
PY
pool=$work/pool-v1
"$pmstore" load "$pool" --file="$work/small.dump" --size=16M --max-size=64M
i=3
while [ $i -lt 3000 ]; do
  "$pmstore" del "$pool" "$(printf 'key-%05d' $i)"
  i=$((i + 7))
done
"$pmstore" put "$pool" large-1 --file="$work/large-1"
"$pmstore" put "$pool" large-2 --file="$work/large-2"
"$pmstore" check "$pool"
gzip -9 -c "$pool" > "$out/pool-v1.gz"

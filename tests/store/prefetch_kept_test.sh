#!/bin/sh
# The default build's lookups issue their prefetches: GCC 12 at -O2 deleted
# the inlined prefetch loops of the index (readrandom took 1.7x as long)
# until base::PrefetchLines kept them. This reads the machine code of the
# built library back and asserts that each function that prefetches on
# purpose still holds a prefetch instruction.
#
#   prefetch_kept_test.sh LIBPMSTORE.so
set -u
lib=${1:?usage: prefetch_kept_test.sh LIBPMSTORE.so}
code=$(mktemp)
trap 'rm -f "$code"' EXIT
objdump -d --no-show-raw-insn -C "$lib" > "$code" || { echo "FAIL: objdump -d $lib"; exit 1; }
# Prefetch instructions per function, "COUNT NAME" with NAME up to its "(".
counts=$(awk '/^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/\(.*/, "", fn); next }
              /\tprefetch/ { n[fn]++ } END { for (f in n) print n[f], f }' "$code")
failed=0
# What prefetches, and why (pmstore/index/): the next leaf of a chain walk,
# the leaves of a MultiGet chunk and of a point lookup, the leaves ahead of
# a scan either way, the nodes of the separator tree a level ahead, and the
# separator image's next stride.
for fn in pmstore::internal::LeafIndex::Load pmstore::internal::LeafIndex::MultiLookupChunk \
          pmstore::internal::LeafIndex::PrefetchForKey pmstore::internal::LeafIndex::ScanFrom \
          pmstore::internal::LeafIndex::ScanBackFrom pmstore::internal::SeparatorMap::FloorMany \
          pmstore::internal::SeparatorImage::FloorIndex; do
  n=$(echo "$counts" | awk -v f="$fn" '$2 == f { print $1 }')
  if [ -n "$n" ]; then
    echo "ok: $fn: $n prefetch instruction(s)"
  elif grep -q "<$fn(" "$code"; then
    echo "FAIL: $fn issues no prefetch (an inlined prefetch loop deleted? use base::PrefetchLines)"
    failed=1
  else
    echo "FAIL: $lib has no function $fn (renamed? update this list)"
    failed=1
  fi
done
exit "$failed"

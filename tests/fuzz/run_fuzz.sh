#!/usr/bin/env bash
# Builds the libFuzzer target over damaged pools (clang, ASan + UBSan) in
# build-fuzz/ and runs it for a bounded time from the seed corpus.
#
#   tests/fuzz/run_fuzz.sh            60 seconds
#   FUZZ_SECONDS=600 tests/fuzz/run_fuzz.sh
#
# A finding is written to build-fuzz/artifacts/; keep it under
# tests/fuzz/regressions/ once fixed (fuzz_regressions_test replays it).
# Exit status: 0 when the run found nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPMSTORE_SANITIZE=address,undefined -DPMSTORE_BUILD_FUZZ=ON -DPMSTORE_BUILD_BENCH=OFF >/dev/null
fi
ninja --quiet -C "$BUILD_DIR" -j"$(nproc)" pmstore_fuzz
# The run grows its own corpus; the checked-in seeds stay as they are.
mkdir -p "$BUILD_DIR/fuzz-corpus" "$BUILD_DIR/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "run_fuzz: pmstore_fuzz for ${seconds}s"
"$BUILD_DIR/bin/pmstore_fuzz" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=512 \
  -print_final_stats=1 -artifact_prefix="$BUILD_DIR/artifacts/" \
  "$BUILD_DIR/fuzz-corpus" tests/fuzz/corpus

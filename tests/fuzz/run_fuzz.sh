#!/usr/bin/env bash
# Runs the libFuzzer target over damaged pools for a bounded time from the
# seed corpus.
#
#   tests/fuzz/run_fuzz.sh            builds it first (clang, ASan + UBSan)
#                                     in build-fuzz/, then 60 seconds
#   tests/fuzz/run_fuzz.sh FUZZER     runs an already built pmstore_fuzz
#                                     (the ctest `pmstore_fuzz_bounded`)
#   FUZZ_SECONDS=600 FUZZ_SEED=42 tests/fuzz/run_fuzz.sh
#
# The run's own corpus and any finding go next to the build
# (BUILD/fuzz/corpus, BUILD/fuzz/artifacts); keep a finding under
# tests/fuzz/regressions/ once fixed (fuzz_regressions_test replays it).
# libFuzzer prints "INFO: Seed: N"; FUZZ_SEED=N repeats that run's choices.
# Exit status: 0 when the run found nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}

if [ $# -ge 1 ]; then
  fuzzer=$(readlink -f "$1")
  build=$(dirname "$(dirname "$fuzzer")")
else
  build=$root/${FUZZ_BUILD_DIR:-build-fuzz}
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPMSTORE_SANITIZE=address,undefined -DPMSTORE_BUILD_FUZZ=ON -DPMSTORE_BUILD_BENCH=OFF >/dev/null
  fi
  ninja --quiet -C "$build" -j"$(nproc)" pmstore_fuzz
  fuzzer=$build/bin/pmstore_fuzz
fi

# The run grows its own corpus; the checked-in seeds stay as they are.
work=$build/fuzz
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
seed_flag=()
[ -n "${FUZZ_SEED:-}" ] && seed_flag=(-seed="$FUZZ_SEED")
echo "run_fuzz: $(basename "$fuzzer") for ${seconds}s, corpus $work/corpus + tests/fuzz/corpus"
"$fuzzer" "${seed_flag[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=512 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$root/tests/fuzz/corpus"

#!/usr/bin/env bash
# usage: run_pytest.sh MODULE_DIR PYTHON SANITIZE CC -- PYTEST_ARGS...
# Runs pytest under PYTHON with the freshly built module first on the path.
# In a sanitizer build (SANITIZE non-empty) the module's sanitizer runtime
# must be in the process before it loads, so it is preloaded from CC's
# runtime directory; where that cannot work, the test is skipped (exit 77)
# with the reason.
set -uo pipefail
module_dir=$1 python=$2 sanitize=$3 cc=$4
shift 5
export PYTHONPATH="$module_dir${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1

if [ -n "$sanitize" ]; then
  case "$sanitize" in
    *thread*) runtime=libclang_rt.tsan-x86_64.so ;;
    *address*) runtime=libclang_rt.asan-x86_64.so ;;
    *) runtime=libclang_rt.ubsan_standalone-x86_64.so ;;
  esac
  path=$("$cc" -print-file-name="$runtime")
  if [ ! -f "$path" ]; then
    echo "SKIPPED: the $sanitize sanitizer runtime cannot be loaded into $python: $cc has no shared $runtime"
    exit 77
  fi
  export LD_PRELOAD="$path"
  # The interpreter itself is not instrumented: its allocations at exit are
  # not this project's leaks.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  why=$("$python" -c "import pmstore" 2>&1)
  status=$?
  if [ $status -ne 0 ]; then
    [ $status -gt 128 ] && why="killed by signal $((status - 128))${why:+: $why}"
    echo "SKIPPED: the $sanitize sanitizer runtime cannot be loaded into $python" \
         "(import pmstore with LD_PRELOAD=$path: ${why//$'\n'/ })"
    exit 77
  fi
fi
exec "$python" -m pytest -p no:cacheprovider -q "$@"

#!/usr/bin/env bash
# usage: install_test.sh BUILD_DIR EXAMPLES_DIR
# CC, CXX, CFLAGS and CXXFLAGS (the build's compilers and sanitizer flags)
# are used for the examples too; LINK_C_AS_CXX=ON links the C example with
# the C++ driver (sanitizer builds). Each example gets a pool of its own in the scratch
# directory.
set -euo pipefail
build=$1 examples=$(cd "$2" && pwd)
cc=${CC:-gcc} cxx=${CXX:-g++} cflags=${CFLAGS:-} cxxflags=${CXXFLAGS:-} link_c_as_cxx=${LINK_C_AS_CXX:-OFF}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/pmstore/version.h"
test -f "$prefix/include/pmstore/c.h"
test -f "$prefix/lib/libpmstore.a"
test -f "$prefix/lib/pkgconfig/pmstore.pc"
ls "$prefix"/lib/libpmstore.so* >/dev/null
if find "$prefix/include" -name '*.h' | xargs grep -l '#include "pmstore/\(base\|mapping\)' ; then
  echo "FAIL: an installed header includes an internal header" >&2
  exit 1
fi

for kind in OFF ON; do
  cmake -S "$examples" -B "$work/ex-$kind" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" \
        -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxxflags" -DPMSTORE_EXAMPLES_STATIC=$kind \
        -DPMSTORE_EXAMPLES_LINK_C_AS_CXX="$link_c_as_cxx" >/dev/null
  ninja --quiet -C "$work/ex-$kind"
  LD_LIBRARY_PATH="$prefix/lib" "$work/ex-$kind/quickstart" "$work/cxx-$kind.pool"
  out=$(LD_LIBRARY_PATH="$prefix/lib" "$work/ex-$kind/quickstart_c" "$work/c-$kind.pool")
  echo "$out"
  if [[ $out != *"user/2 = Grace"*"3 keys"* ]]; then
    echo "FAIL: the C example (static=$kind) printed the wrong thing" >&2
    exit 1
  fi
done
# The shared build must really use the installed .so. ldd's output is
# captured first: `ldd | grep -q` under pipefail fails at random when grep
# exits at its first match and ldd dies of SIGPIPE.
for example in quickstart quickstart_c; do
  libs=$(LD_LIBRARY_PATH="$prefix/lib" ldd "$work/ex-OFF/$example")
  if [[ $libs != *"$prefix/lib/libpmstore.so"* ]]; then
    echo "FAIL: the shared $example does not load $prefix/lib/libpmstore.so:" >&2
    echo "$libs" >&2
    exit 1
  fi
done

# pkg-config: compile the same programs by hand, the C one as strict C99.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2086
"$cxx" -std=c++20 $cxxflags "$examples/quickstart.cc" -o "$work/quickstart-pc" $(pkg-config --cflags --libs pmstore)
LD_LIBRARY_PATH="$prefix/lib" "$work/quickstart-pc" "$work/cxx-pc.pool"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror $cflags $(pkg-config --cflags pmstore) -c "$examples/quickstart.c" \
  -o "$work/quickstart-c.o"
c_linker=$cc
[ "$link_c_as_cxx" = ON ] && c_linker=$cxx
# shellcheck disable=SC2086
"$c_linker" $cflags "$work/quickstart-c.o" -o "$work/quickstart-c-pc" $(pkg-config --libs pmstore)
LD_LIBRARY_PATH="$prefix/lib" "$work/quickstart-c-pc" "$work/c-pc.pool" >/dev/null

# The Python module, installed next to the library: the example runs with
# the interpreter it was built for and with any other CPython of the same
# version on PATH (pyenv's, say), both through PYTHONPATH.
if [ -n "${PMSTORE_PYTHON:-}" ]; then
  module=$(find "$prefix" -name 'pmstore.cpython-*.so' | head -1)
  if [ -z "$module" ]; then
    echo "FAIL: cmake --install put no pmstore Python module under $prefix" >&2
    exit 1
  fi
  site=$(dirname "$module")
  pythons=("$PMSTORE_PYTHON")
  other=$(command -v python3 || true)
  if [ -n "$other" ] && [ "$("$other" -c 'import sys; print(sys.executable)')" != "$PMSTORE_PYTHON" ] &&
     [ "$("$other" -c 'import sys; print(sys.version_info[:2])')" == "$("$PMSTORE_PYTHON" -c 'import sys; print(sys.version_info[:2])')" ]; then
    pythons+=("$other")
  fi
  for python in "${pythons[@]}"; do
    out=$(cd "$work" && PYTHONPATH="$site" "$python" "$examples/quickstart.py" "$work/py-$(basename "$python").pool")
    if [[ $out != *"user/2 = Grace"*"view of user/1: 3 bytes, Ada"*"3 keys"* ]]; then
      echo "FAIL: the Python example under $python printed: $out" >&2
      exit 1
    fi
    echo "python example ran under $python ($site)"
  done
fi
echo "install test: find_package (shared, static) and pkg-config builds of the C++ and C examples ran"

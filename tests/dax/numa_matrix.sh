# shellcheck shell=bash disable=SC2154,SC2034  # $fb, $out and $failed are the sourcing script's
# Sourced by the faultbench_on_*.sh checks, which define $fb (the binary),
# $out (a scratch directory), check() and $failed.
#
# numa_matrix LABEL DESCRIPTION JQ-EXPRESSION COMPARE-ARGS...: runs
# `faultbench compare --numa-matrix --repeat=1 COMPARE-ARGS`, prints its
# matrices and a `dax-measure:` line per cell, and checks JQ-EXPRESSION on
# the JSON document.
numa_matrix() {
  local label=$1 description=$2 expression=$3
  shift 3
  if "$fb" compare --numa-matrix --repeat=1 --save-json="$out/$label.json" "$@" >"$out/$label.txt" 2>&1; then
    sed -n '/^NUMA matrix/,$p' "$out/$label.txt"
    jq -rc --arg l "$label" '.numa_matrix.matrices[0].cells[] | "dax-measure: \($l) numa-matrix cell cpu=\(.cpu_node) mem=\(.mem_node) cpus=\(.cpus) page_nodes=\(.page_nodes) source=\(.page_nodes_source) exact=\(.exact)"' \
      "$out/$label.json"
    check "$description" "$out/$label.json" "$expression"
  else
    echo "FAIL: compare --numa-matrix $*"; cat "$out/$label.txt"; failed=1
  fi
}

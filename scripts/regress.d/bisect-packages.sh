# shellcheck shell=bash
# Sourced by scripts/regress for --bisect-packages FIRST LAST: which Debian
# kernel package first changed the study's signature?
#
# FIRST's behaviour is "before", LAST's is "after"; each package between is
# studied and judged against FIRST (faultbench diff --under-test=package,
# with --any-change when given), and the range halves until two neighbours remain. Only the
# timing-free signature is judged (the VM is emulated), so one study a
# package is enough: no package is judged twice.
#
# A package's results live in CACHE/PACKAGE/BACKING/ (its compare JSONs, or
# a `status` line for a kernel that hung or could not be studied), so a
# second bisection boots nothing already measured. CACHE defaults to one
# folder per version of the study (a hash of the guest's scripts), so a
# changed study never reuses results of the old one.
#
# Uses from scripts/regress: fb, save, cache, backing, diff_flags, fail,
# finish, run_vm_study, vm_failure, ROOT, and cells.sh.

study_hash() {
  cat "$ROOT/scripts/regress.d/guest-study" "$ROOT/scripts/regress.d/backings.sh" \
      "$ROOT/scripts/dax-vm.d/make-fs.sh" | sha256sum | cut -c1-12
}


# The results of PACKAGE on the backing, measured once: sets CELL to the
# cell's directory, which holds JSONs (measured) or a status line (not
# judged). The guest's summary lines are shown as they come.
BOOTS=0 CELL=""
package_cell() {  # PACKAGE
  local cell=$cache/$1/$backing rc=0 t0=$SECONDS
  CELL=$cell
  if cell_done "$cell"; then return; fi
  BOOTS=$((BOOTS + 1))
  echo "regress: boot $BOOTS: $1 on $backing (about 2-4 minutes under emulation)"
  run_vm_study "$1" "" "$backing" "$cache/$1" \
    > >(tee "$save/boot-$BOOTS.log" | grep --line-buffered -E '^(regress\[guest\]: [a-z]|dax-vm: (fetched|the guest|SKIP))') 2>&1 \
    || rc=$?
  case "$rc" in
    0) echo "regress: $1 studied in $((SECONDS - t0)) s" ;;
    77|2)
      if [ -n "$vm_failure" ] && [ "$rc" = 77 ] && grep -q -- "$1" <<< "$vm_failure"; then
        mkdir -p "$cell"; echo "skipped: $vm_failure" > "$cell/status"   # this package's own lack
      else
        echo "regress: ${vm_failure:-scripts/dax-vm exit $rc} (see $save/boot-$BOOTS.log)" >&2; finish "$rc"
      fi ;;
    *) mkdir -p "$cell"; echo "${vm_failure:-failed: scripts/dax-vm exit $rc}" > "$cell/status" ;;
  esac
}

# 0 the same as FIRST, 1 changed, 125 cannot be judged; prints the step.
judge_against_first() {  # STEP PACKAGE
  local cell rc=0 json=$save/step-$1.json moved
  package_cell "$2"
  cell=$CELL
  # A study whose workload failed on one side only (a SIGBUS where the other
  # kernel mapped the page) is the change itself, not a cell to skip.
  if [ "$(study_failed "$first_cell")" != "$(study_failed "$cell")" ]; then
    echo "regress: step $1: $2: changed against $first: the study $( [ -n "$(study_failed "$cell")" ] && echo "failed: $(cat "$cell/status")" || echo "ran, where it failed on $first")"
    return 1
  fi
  if [ -n "$(study_failed "$cell")" ]; then
    echo "regress: step $1: $2: not judged: the study failed as on $first: $(cat "$cell/status")"
    return 125
  fi
  if ! has_results "$cell"; then
    echo "regress: step $1: $2: not judged: $(cat "$cell/status")"
    return 125
  fi
  "$fb" diff --base="$first_cell" --new="$cell" "${package_flags[@]}" "${diff_flags[@]}" --output-format=json \
    > "$json" 2> "$save/step-$1.err" || rc=$?
  moved=$(jq -r '[.jobs[] as $j | $j.figures[] | select(.verdict == "REGRESSION" or .verdict == "improvement")
                  | "\($j.variant) \(.figure) \(.base.median) -> \(.new.median)"] | join("; ")' "$json" 2>/dev/null)
  case "$rc" in
    0) echo "regress: step $1: $2: same as $first" ;;
    1) echo "regress: step $1: $2: changed against $first: $moved" ;;
    *) echo "regress: step $1: $2: cannot judge: $(jq -r '.verdict_text // empty' "$json" 2>/dev/null || head -n 1 "$save/step-$1.err")"
       rc=125 ;;
  esac
  return "$rc"
}

bisect_packages() {
  local list n i lo hi mid step=1 rc max_boots skipped=() candidates
  # Two Debian packages differ in more than the release (their configs, THP
  # defaults, how they show a mount): diff's --under-test=package allows
  # those, unless DIFF-FLAGS name another --under-test.
  package_flags=(--under-test=package)
  case " ${diff_flags[*]} " in *" --under-test"*) package_flags=() ;; esac
  list=$("$ROOT/scripts/kernels" range "$first" "$last") || fail "scripts/kernels range $first $last failed (see above)"
  mapfile -t pkgs <<< "$list"
  n=${#pkgs[@]}
  [ "$n" -ge 2 ] || fail "--bisect-packages: $first and $last are one package"
  max_boots=$(awk -v n="$n" 'BEGIN { b = 0; while (2 ^ b < n) b++; print b + 2 }')
  cache=${cache:-$ROOT/build/regress/cache-$(study_hash)}
  mkdir -p "$cache"
  cache=$(cd "$cache" && pwd)
  echo "regress: bisecting $n packages from $first to $last on $backing" \
       "(${diff_flags[*]:-regressions only}; at most $max_boots boots; results cached in $cache)"
  package_cell "$first"
  first_cell=$CELL
  has_results "$first_cell" || { echo "regress: $first cannot be studied: $(cat "$first_cell/status")" >&2; finish 125; }
  rc=0; judge_against_first "$step" "$last" || rc=$?
  case "$rc" in
    0) echo "regress: no change between $first and $last on $backing ($BOOTS boots)"; finish 0 ;;
    125) echo "regress: $last cannot be judged against $first" >&2; finish 125 ;;
  esac
  lo=0 hi=$((n - 1))
  while :; do
    # The untried package nearest the middle of (lo, hi), skipping those
    # that could not be judged.
    mid=""
    candidates=$(for ((i = lo + 1; i < hi; i++)); do
                   case " ${skipped[*]} " in *" $i "*) ;; *) echo "$(( (2 * i - lo - hi) * (2 * i - lo - hi) )) $i" ;; esac
                 done | sort -n | head -n 1)
    [ -z "$candidates" ] || mid=${candidates#* }
    [ -n "$mid" ] || break
    step=$((step + 1))
    rc=0; judge_against_first "$step" "${pkgs[$mid]}" || rc=$?
    case "$rc" in
      0) lo=$mid ;;
      1) hi=$mid ;;
      *) skipped+=("$mid") ;;
    esac
  done
  echo "regress: $BOOTS boots, $step steps; per-step diffs in $save"
  if [ $((hi - lo)) = 1 ]; then
    echo "first package with the change: ${pkgs[$hi]} (the one before: ${pkgs[$lo]})"
  else
    echo "the change is in one of: ${pkgs[*]:$((lo + 1)):$((hi - lo))} (the one before: ${pkgs[$lo]};" \
         "the packages between could not be judged)"
  fi
  finish 1
}

#!/bin/bash
# A guest kernel that reports a hang is a finding, not a lost run: a task
# blocked on a frozen DAX file system, with the hung-task detector at 2 s,
# makes scripts/dax-vm kill the VM within seconds and exit 122, naming the
# task, with the report in kernel_failure and the console (its stack
# included) kept. The guest would sleep on for 250 s and then exit 0, so a
# dax-vm that missed the report fails every check here.
#   kernel_hang.sh DAX_VM
set -u
dax_vm=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# In the guest: khungtaskd checks every hung_task_timeout_secs and reports a
# task in TASK_UNINTERRUPTIBLE that has not run since its last check; touch
# waits so in sb_start_write on the frozen file system. The report's stack
# is printed at KERN_INFO: dmesg -n 7 lets it onto the console (dax-vm
# boots with loglevel=4).
guest='dmesg -n 7
echo 2 > /proc/sys/kernel/hung_task_timeout_secs || exit 3
fsfreeze -f "$DAX_DIR" || exit 4
touch "$DAX_DIR/blocked" &
echo "kernel_hang: touch (pid $!) waits on the frozen $DAX_DIR"
sleep 250
echo "kernel_hang: no hung task was reported"'
t0=$(date +%s)
"$dax_vm" --fs=ext4 --timeout 300 --out "$tmp/out" -- sh -c "$guest" > "$tmp/log" 2>&1
rc=$? secs=$(($(date +%s) - t0))
grep -E "^dax-vm: (SKIP|the guest's kernel|timed out)|^kernel_hang:" "$tmp/log"
[ "$rc" = 77 ] && exit 77
failed=0
[ "$rc" = 122 ] && echo "ok: exit 122" || { echo "FAIL: exit $rc, expected 122"; failed=1; }
reason="task touch:[0-9]+ blocked for more than [0-9]+ seconds\."
grep -qE "^dax-vm: the guest's kernel hung: $reason; console kept in $tmp/out/console\$" "$tmp/log" \
  && echo "ok: the reason on stderr names the blocked task and the kept console" \
  || { echo "FAIL: no 'the guest's kernel hung: task touch:N blocked ...' line"; failed=1; }
grep -qE "^hang: $reason\$" "$tmp/out/kernel_failure" 2>/dev/null \
  && echo "ok: kernel_failure: $(cat "$tmp/out/kernel_failure")" \
  || { echo "FAIL: kernel_failure is '$(cat "$tmp/out/kernel_failure" 2>/dev/null)'"; failed=1; }
# The report's stack reached the console before the kill.
if grep -qE "INFO: $reason" "$tmp/out/console" 2>/dev/null \
   && sed -n "/INFO: task touch/,\$p" "$tmp/out/console" | grep -qE '(percpu_rwsem_wait|sb_start_write|__sb_start_write|</TASK>)'; then
  echo "ok: console kept with the report and its stack"
else
  echo "FAIL: the console lacks the report or its stack"; failed=1
fi
[ "$secs" -lt 200 ] && echo "ok: $secs s in all (--timeout 300; the guest would have slept 250 s)" \
  || { echo "FAIL: took $secs s: the hang was not acted on"; failed=1; }
[ "$failed" = 0 ] || tail -40 "$tmp/log"
exit "$failed"

#!/bin/bash
# A stand-in for qemu-system-x86_64 (scripts/dax-vm's DAX_VM_QEMU) that
# prints the serial console of a guest whose kernel fails in the way
# KERNEL_HANG_SCENARIO names, and then stays alive as a hung guest would,
# until it is killed: softlockup, rcu, hungtask, oops (the kernel goes on,
# the command never finishes), panic (qemu exits by itself, -no-reboot),
# words (CMD's output only looks like those reports; the command exits 0).
# Lines of the report's stack come a second after its first line, so the
# console keeps them only when dax-vm waits for them before the kill.
set -u
pidfile="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -pidfile) pidfile=$2; shift ;;
    -virtfs) case "$2" in *mount_tag=out,*) out=${2#local,path=}; out=${out%%,*} ;; esac; shift ;;
  esac
  shift
done
if [ -z "$pidfile" ] || [ -z "$out" ]; then echo "kernel_hang_qemu: no -pidfile or no out share" >&2; exit 1; fi
echo $$ > "$pidfile"

printf '[    0.000000] Linux version 6.1.0-57-amd64 (stand-in console)\r\n'
printf 'dax-vm[guest]: ext4 on /dev/pmem0 (NUMA node 1) mounted -o dax at /run/dax; ready at 9.1 s\r\n'
printf '=== dax-vm: begin: build/bin/faultbench compare --numa-matrix\r\n'
printf 'faultbench: cell cpu=0 mem=1 ...\r\n'
stack() {
  printf '[   %s] CPU: 1 PID: 164 Comm: faultbench Not tainted 6.1.0-57-amd64 #1  Debian 6.1.158-1\r\n' "$1"
  sleep 1
  printf '[   %s] Call Trace:\r\n[   %s]  <TASK>\r\n[   %s]  dax_iomap_pte_fault+0x1b4/0x9c0\r\n' "$1" "$1" "$1"
  printf '[   %s]  </TASK> (end of the stack)\r\n' "$1"
}
case "${KERNEL_HANG_SCENARIO:-}" in
  softlockup)
    # A message that lands in the middle of a line of the command's output.
    printf 'faultbench: cell cpu=1 mem=1 [   48.123456] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [faultbench:164]\r\n'
    stack 48.123500 ;;
  rcu)
    printf '[   61.000001] rcu: INFO: rcu_preempt self-detected stall on CPU\r\n'
    printf '[   61.000002] rcu: \t1-....: (5249 ticks this GP) idle=8f4c/1/0x4000000000000000\r\n'
    stack 61.000003 ;;
  hungtask)
    printf '[   30.500000] INFO: task touch:201 blocked for more than 2 seconds.\r\n'
    printf '[   30.500001]       Not tainted 6.1.0-57-amd64 #1 Debian 6.1.158-1\r\n'
    stack 30.500002 ;;
  oops)
    printf '[   12.000000] BUG: kernel NULL pointer dereference, address: 0000000000000008\r\n'
    printf '[   12.000001] #PF: supervisor write access in kernel mode\r\n'
    printf '[   12.000002] Oops: 0002 [#1] PREEMPT SMP NOPTI\r\n'
    stack 12.000003 ;;
  panic)
    printf '[   15.000000] Kernel panic - not syncing: Fatal exception\r\n'
    stack 15.000001
    printf '[   15.000002] ---[ end Kernel panic - not syncing: Fatal exception ]---\r\n'
    exit 0 ;;
  words)
    printf 'faultbench: watchdog: BUG: soft lockup - CPU#1 stuck for 22s! (a line quoted without a timestamp)\r\n'
    printf 'test: Oops: 0002, Kernel panic - not syncing, INFO: task x:1 blocked for more than 2 seconds.\r\n'
    printf '[   20.000000] WARNING: CPU: 1 PID: 164 at mm/memory.c:1 (a warning is no failure)\r\n'
    printf '[   20.000001] EXT4-fs (pmem0): mounted filesystem with ordered data mode\r\n'
    printf '=== dax-vm: end: exit status 0\r\n'
    echo 0 > "$out/rc"
    exit 0 ;;
  *) echo "kernel_hang_qemu: KERNEL_HANG_SCENARIO '${KERNEL_HANG_SCENARIO:-}' unknown" >&2; exit 1 ;;
esac
# A hung guest: nothing more on the console, the process stays (same pid).
exec sleep 600

# Sourced by the shell tests that hold a pool in one process and probe it
# from another. A probe that runs before the holder has opened the pool
# takes the pool itself and refuses the holder, so the test waits until
# the kernel's lock table (/proc/locks) shows the holder's lock: the OFD
# lock on byte 0 of the pool file, READ for a read-only open, WRITE for
# one open for writing.

# wait_for_pool_lock FILE READ|WRITE: status 1 when none came in 30 s.
wait_for_pool_lock() {
  # /proc/locks names the file as MAJOR:MINOR:INODE, the first two in hex.
  # shellcheck disable=SC2046  # stat's three numbers are printf's three arguments
  lock_id=$(printf '%02x:%02x:%s' $(stat -c '%Hd %Ld %i' "$1"))
  lock_tries=0
  until grep -q "OFDLCK *ADVISORY *$2 *-1 $lock_id 0 0\$" /proc/locks; do
    lock_tries=$((lock_tries + 1))
    [ "$lock_tries" -lt 300 ] || return 1
    sleep 0.1
  done
}

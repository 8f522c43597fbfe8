"""A store used across fork (LMDB's rule: it must not be): in the forked
child every call raises FailedPreconditionError and changes nothing; the
parent goes on, and the pool stays clean."""
import pmstore


def test_a_forked_child_gets_a_clear_error_and_the_parent_goes_on(pool, run_python):
    child = run_python("""
import os, sys
import pmstore
store = pmstore.Store(sys.argv[1], initial_size=8 << 20)
store[b"k"] = b"parent"
store.put(b"m", b"unsynced", sync=False)
pid = os.fork()
if pid == 0:
    failures = []
    for name, call in [("get", lambda: store[b"k"]), ("put", lambda: store.put(b"k", b"child")),
                       ("items", lambda: list(store.items())), ("sync", store.sync),
                       ("transaction", lambda: store.transact(lambda t: t.get(b"k"))),
                       ("close", store.close)]:
        try:
            call()
            failures.append(name + " worked")
        except pmstore.FailedPreconditionError as e:
            if "must not be used across fork" not in str(e):
                failures.append(name + ": " + str(e))
    print("; ".join(failures), flush=True)
    os._exit(1 if failures else 0)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
store[b"k"] = b"parent again"
assert store[b"m"] == b"unsynced"
store.close()
print("parent ok")
""", pool)
    assert child.returncode == 0, child.stdout + child.stderr
    assert child.stdout.strip().endswith("parent ok"), child.stdout
    report = pmstore.check(pool)
    assert report["clean"] and report["keys"] == 2, report

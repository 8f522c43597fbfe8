"""The pmstore Python module from an installed copy: a durable write, a
read, a batch, an ordered scan of a prefix and a zero-copy read.

    PYTHONPATH=PREFIX/lib/python3.11/dist-packages python3 quickstart.py POOL
"""
import sys

import pmstore

path = sys.argv[1] if len(sys.argv) > 1 else "/dev/shm/quickstart-py.pool"
with pmstore.Store(path) as store:                    # created when missing
    store[b"user/1"] = b"Ada"                          # durable when it returns
    with store.batch() as batch:                       # one all-or-nothing commit
        batch[b"user/2"] = b"Grace"
        batch[b"zone"] = b"eu"
    print("pmstore %s: user/2 = %s" % (pmstore.__version__, store[b"user/2"].decode()))
    print("user/3:", store.get(b"user/3", b"absent").decode())
    for key, value in store.items(prefix=b"user/"):
        print("  %s = %s" % (key.decode(), value.decode()))
    with store.view(b"user/1") as view:                # no copy: the pool's own bytes
        print("view of user/1: %d bytes, %s" % (len(view), bytes(view[:3]).decode()))
    print("%d keys, %s granularity" % (store.stats()["keys"], store.stats()["granularity"]))

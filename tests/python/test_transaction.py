"""pmstore.Transaction and Store.transact(): reads of a transaction's own
writes, commit at the end of a with block, rollback on an exception,
pmstore.Aborted on a conflict, retries, threads moving money between
accounts, and close() with a transaction alive (in a child interpreter
too: never a crash, never a staged write in the pool)."""
import random
import threading
import time

import pytest

import pmstore


def fill(store, n=100):
    for i in range(n):
        store[b"k%03d" % i] = b"v%03d" % i


def test_own_writes_are_seen_inside_and_nowhere_else_until_commit(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"a"] = b"old"
        with store.transaction() as t:
            t[b"a"] = b"new"
            t.put(b"b", b"2")
            assert t[b"a"] == b"new" and t.get(b"b") == b"2" and b"b" in t
            assert t.get(b"missing") is None and t.get(b"missing", b"d") == b"d" and b"missing" not in t
            with pytest.raises(KeyError):
                t[b"missing"]
            assert t.staged_writes == 2
            # Outside: the store, and a snapshot taken meanwhile, see neither.
            assert store[b"a"] == b"old" and b"b" not in store
            with store.snapshot() as snap:
                assert snap[b"a"] == b"old"
        assert t.ended
        assert store[b"a"] == b"new" and store[b"b"] == b"2"


def test_an_exception_in_the_block_rolls_back_and_propagates(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"a"] = b"old"
        with pytest.raises(RuntimeError, match="boom"):
            with store.transaction() as t:
                t[b"a"] = b"new"
                t[b"b"] = b"2"
                del t[b"a"]
                raise RuntimeError("boom")
        assert t.ended
        assert store[b"a"] == b"old" and b"b" not in store


def test_a_conflict_raises_aborted_and_writes_nothing(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"1"
        with pytest.raises(pmstore.Aborted, match="k") as raised:
            with store.transaction() as t:
                assert t[b"k"] == b"1"
                store[b"k"] = b"changed outside"
                t[b"out"] = b"derived from 1"
        assert isinstance(raised.value, pmstore.Error) and raised.value.code == "ABORTED"
        assert t.ended
        assert b"out" not in store and store[b"k"] == b"changed outside"


def test_a_key_found_absent_conflicts_when_another_commit_adds_it(pool, small):
    with pmstore.Store(pool, **small) as store:
        t = store.transaction()
        assert b"k" not in t
        t[b"out"] = b"k was absent"
        store[b"k"] = b"added"
        with pytest.raises(pmstore.Aborted):
            t.commit()
        assert b"out" not in store


def test_writes_to_keys_not_read_commit_alongside_other_commits(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"1"
        with store.transaction() as t:
            t[b"mine"] = b"x"
            store[b"k"] = b"2"  # t never read k: no conflict
        assert store[b"mine"] == b"x" and store[b"k"] == b"2"


def test_explicit_commit_and_rollback_end_it(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
        t = store.transaction()
        t[b"a"] = b"1"
        t.rollback()
        assert b"a" not in store
        t.rollback()  # twice is fine, for `finally:`
        for call in (lambda: t[b"k"], lambda: t.get(b"k"), lambda: b"k" in t, lambda: t.put(b"x", b"y"),
                     lambda: t.__setitem__(b"x", b"y"), lambda: t.delete(b"k"), lambda: list(t.items()),
                     lambda: list(t.keys(stop=b"")), lambda: t.commit(), lambda: t.staged_writes):
            with pytest.raises(pmstore.FailedPreconditionError, match="already committed or rolled back"):
                call()

        with store.transaction(sync=False) as t:
            t[b"b"] = b"2"
            t.commit(sync=True)
            assert store[b"b"] == b"2"  # committed before the block ends
        # The block's end does nothing more once t committed.
        with pytest.raises(pmstore.FailedPreconditionError):
            t[b"b"]


def test_an_iterator_through_a_transaction_ends_with_it(pool, small):
    with pmstore.Store(pool, **small) as store:
        fill(store)
        t = store.transaction()
        it = t.keys()
        assert next(it) == b"k000"
        t.commit()
        with pytest.raises(pmstore.FailedPreconditionError, match="iterat"):
            next(it)


def test_reverse_items_merge_staged_and_stored_keys(pool, small):
    with pmstore.Store(pool, **small) as store:
        for key in (b"a", b"c", b"e", b"g"):
            store[key] = b"stored " + key
        with store.transaction() as t:
            t[b"b"] = b"staged b"
            t[b"e"] = b"staged e"  # over a stored key
            t[b"h"] = b"staged h"
            del t[b"c"]
            assert list(t.items(reverse=True)) == [
                (b"h", b"staged h"), (b"g", b"stored g"), (b"e", b"staged e"), (b"b", b"staged b"),
                (b"a", b"stored a")]
            assert list(t.keys()) == [b"a", b"b", b"e", b"g", b"h"]
            assert list(t.values(start=b"b", stop=b"g")) == [b"staged b", b"staged e"]
            assert list(t.keys(prefix=b"h")) == [b"h"] and list(t.keys(stop=b"")) == []
            assert list(reversed(t)) == [b"h", b"g", b"e", b"b", b"a"] and list(t) == list(t.keys())
            assert list(store.keys()) == [b"a", b"c", b"e", b"g"]  # none of it outside


def test_del_hides_a_stored_key_inside_the_transaction(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"v"
        with store.transaction() as t:
            del t[b"k"]
            assert b"k" not in t and t.get(b"k") is None and list(t.keys()) == []
            with pytest.raises(KeyError):
                t[b"k"]
            with pytest.raises(KeyError):
                del t[b"k"]  # as on the store: t no longer sees it
            t.delete(b"never there")  # fine, as store.delete
            assert store[b"k"] == b"v"
        assert b"k" not in store


def test_transact_retries_a_conflict_and_returns_what_fn_returned(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"1"
        calls = []

        def fn(t):
            calls.append(t)
            value = t[b"k"]
            if len(calls) == 1:
                store[b"k"] = b"2"  # another commit, inside the first attempt only
            t[b"out"] = value + b"!"
            return "attempt %d" % len(calls)

        assert store.transact(fn) == "attempt 2"
        assert len(calls) == 2 and calls[0] is not calls[1] and all(t.ended for t in calls)
        assert store[b"out"] == b"2!"


def test_transact_gives_up_after_retries_plus_one_attempts(pool, small):
    with pmstore.Store(pool, **small) as store:
        store[b"k"] = b"0"
        for retries, attempts in ((3, 4), (0, 1), (None, 11)):
            calls = []

            def always_conflicts(t):
                calls.append(1)
                t[b"out"] = t[b"k"]
                store[b"k"] = b"%d" % len(calls)

            with pytest.raises(pmstore.Aborted):
                if retries is None:
                    store.transact(always_conflicts)  # the documented default: 10 retries
                else:
                    store.transact(always_conflicts, retries=retries)
            assert len(calls) == attempts
            assert b"out" not in store
        with pytest.raises(ValueError, match="retries"):
            store.transact(always_conflicts, retries=-1)


def test_transact_does_not_retry_other_exceptions(pool, small):
    with pmstore.Store(pool, **small) as store:
        calls = []

        def fails(t):
            calls.append(t)
            t[b"out"] = b"x"
            raise KeyError("not a conflict")

        with pytest.raises(KeyError, match="not a conflict"):
            store.transact(fails)
        assert len(calls) == 1 and calls[0].ended and b"out" not in store


def test_transact_leaves_an_end_that_fn_chose(pool, small):
    with pmstore.Store(pool, **small) as store:
        def gives_up(t):
            t[b"out"] = b"x"
            t.rollback()
            return "nothing written"
        assert store.transact(gives_up) == "nothing written" and b"out" not in store


def test_threads_moving_money_keep_the_total(pool, small):
    accounts, threads, transfers = 4, 4, 150
    with pmstore.Store(pool, **small) as store:
        for a in range(accounts):
            store[b"acct/%d" % a] = b"1000"
        attempts = [0] * threads
        committed = [[] for _ in range(threads)]
        errors = []

        def work(me):
            rng = random.Random(me)
            for _ in range(transfers):
                src, dst = rng.sample(range(accounts), 2)
                amount = rng.randint(1, 300)

                def transfer(t):
                    attempts[me] += 1
                    have = int(t[b"acct/%d" % src])
                    # Let the other threads in between read and commit: on
                    # tmpfs a commit is too quick for them to collide else.
                    time.sleep(0)
                    if have < amount:
                        return None  # reads only: commits, changes nothing
                    t[b"acct/%d" % src] = b"%d" % (have - amount)
                    t[b"acct/%d" % dst] = b"%d" % (int(t[b"acct/%d" % dst]) + amount)
                    return (src, dst, amount)

                try:
                    moved = store.transact(transfer, retries=10000)
                except Exception as e:  # any failure is the test's
                    errors.append(e)
                    return
                if moved:
                    committed[me].append(moved)

        pool_threads = [threading.Thread(target=work, args=(me,)) for me in range(threads)]
        for thread in pool_threads:
            thread.start()
        for thread in pool_threads:
            thread.join()
        assert errors == []
        balances = {a: int(store[b"acct/%d" % a]) for a in range(accounts)}
        assert sum(balances.values()) == 1000 * accounts
        # Every committed transfer landed exactly once: no lost update.
        expected = dict.fromkeys(range(accounts), 1000)
        for src, dst, amount in (m for mine in committed for m in mine):
            expected[src] -= amount
            expected[dst] += amount
        assert balances == expected
        assert sum(len(mine) for mine in committed) > 0
        assert sum(attempts) > threads * transfers, "no conflict was met, so none was retried"


def test_a_transaction_keeps_its_store_alive(pool, small):
    t = pmstore.Store(pool, **small).transaction()  # t holds the only reference
    t[b"a"] = b"1"
    t.commit()
    assert t.store[b"a"] == b"1"
    t.store.close()


def test_close_rolls_back_open_transactions_and_ends_their_iterators(pool, small):
    store = pmstore.Store(pool, **small)
    fill(store)
    t = store.transaction()
    t[b"staged"] = b"x"
    it = t.items()
    next(it)
    store.close()
    assert t.ended
    with pytest.raises(ValueError, match="closed"):
        t[b"k000"]
    with pytest.raises(ValueError, match="closed"):
        next(it)
    with pytest.raises(ValueError, match="closed"):
        t.commit()
    t.rollback()  # fine, as a snapshot's release()
    with pytest.raises(ValueError):
        store.transaction()
    with pytest.raises(ValueError):
        store.transact(lambda t: None)
    with pmstore.Store(pool, create=False) as store:
        assert b"staged" not in store and store[b"k000"] == b"v000"


def test_a_block_whose_store_was_closed_raises_at_its_end(pool, small):
    store = pmstore.Store(pool, **small)
    with pytest.raises(ValueError, match="closed"):
        with store.transaction() as t:
            t[b"a"] = b"1"
            store.close()  # the writes are lost: the block must not end quietly
    with pmstore.Store(pool, create=False) as store:
        assert b"a" not in store


def test_close_from_another_thread_never_pulls_the_store_from_under_a_commit(pool, small, close_while_writing):
    store = pmstore.Store(pool, **small)

    def commit(i):
        def put(t):
            t[b"w%06d" % i] = t.get(b"w%06d" % (i - 1), b"")[:10] + b"x" * 100
        store.transact(put)
    close_while_writing(store, commit)


EXIT_CASES = {
    "transaction_left_open": "t = store.transaction()\nt[b'staged'] = b'x'\nit = t.items()\nnext(it)",
    "transaction_in_a_cycle": "t = store.transaction()\nt[b'staged'] = b'x'\ncycle = [t, store, t.keys()]\n"
                              "cycle.append(cycle)\ndel t, store",
    "store_closed_under_a_transaction": "t = store.transaction()\nt[b'staged'] = b'x'\nstore.close()",
    "only_the_transaction_left": "t = store.transaction()\nt[b'staged'] = b'x'\ndel store\ngc.collect()",
}


@pytest.mark.parametrize("case", sorted(EXIT_CASES))
def test_interpreter_exit_with_a_transaction_alive_is_clean(pool, exit_cleanly_with, case):
    exit_cleanly_with(EXIT_CASES[case])
    with pmstore.Store(pool, create=False) as store:
        assert b"staged" not in store

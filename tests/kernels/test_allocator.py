"""BlockAllocator: unit tests and random operation sequences checked against invariants."""
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvplan.kernels.allocator import BlockAllocator, OutOfBlocksError


def test_allocate_counts_blocks_and_slots():
    a = BlockAllocator(10, 4)
    t = a.allocate("s", list(range(9)))  # 2 full blocks + 1 partial
    assert len(t) == 3 and len(set(t)) == 3
    assert a.stats()["used"] == 3 and a.stats()["free"] == 7
    assert a.block_table("s") == t
    a.check_invariants()


def test_prefix_cache_reuses_full_blocks_only():
    a = BlockAllocator(10, 4)
    t1 = a.allocate(1, list(range(10)))
    t2 = a.allocate(2, list(range(8)) + [99, 98, 97])
    assert t2[:2] == t1[:2] and t2[2] != t1[2]
    st_ = a.stats()
    assert st_["prefix_hits"] == 2 and st_["prefix_queries"] == 4
    assert st_["shared"] == 2
    a.check_invariants()


def test_chained_key_covers_prefix():
    # same second block tokens, different first block -> no reuse of block 1
    a = BlockAllocator(10, 2)
    t1 = a.allocate(1, [1, 2, 3, 4])
    t2 = a.allocate(2, [9, 9, 3, 4])
    assert set(t1).isdisjoint(t2)
    assert a.stats()["prefix_hits"] == 0


def test_freed_cached_blocks_hit_then_lru_evicted():
    a = BlockAllocator(4, 2)
    a.allocate(1, [1, 2, 3, 4])
    a.free(1)
    assert a.stats() == {"used": 0, "free": 4, "shared": 0, "cached": 2,
                         "prefix_hits": 0, "prefix_queries": 2}
    t = a.allocate(2, [1, 2, 3, 4, 5])
    assert a.stats()["prefix_hits"] == 2 and a.stats()["cached"] == 0
    a.free(2)
    # cached now: blocks of [1,2],[3,4]; a different sequence needs all 4 blocks
    a.allocate(3, [7] * 8)
    assert a.stats()["cached"] == 0
    a.free(3)
    a.allocate(4, [1, 2])
    assert a.stats()["prefix_hits"] == 2  # evicted: no new hit
    a.check_invariants()
    del t


def test_lru_evicts_oldest_freed_first():
    a = BlockAllocator(4, 1)
    a.allocate("x", [1])
    a.allocate("y", [2])
    a.free("x")
    a.free("y")
    a.allocate("z", [5, 6, 7])  # 2 free + 1 eviction: x's block (older) goes
    a.check_invariants()
    a.allocate("y2", [2])
    assert a.stats()["prefix_hits"] == 1
    with pytest.raises(OutOfBlocksError):
        a.allocate("x2", [1])


def test_prefix_cache_disabled():
    a = BlockAllocator(6, 2, enable_prefix_cache=False)
    t1 = a.allocate(1, [1, 2, 3])
    t2 = a.allocate(2, [1, 2, 3])
    assert set(t1).isdisjoint(t2)
    a.free(1)
    st_ = a.stats()
    assert st_["cached"] == 0 and st_["prefix_queries"] == 0 and st_["free"] == 4


def test_append_grows_and_keys_new_full_blocks():
    a = BlockAllocator(8, 4)
    a.allocate(1, [1, 2, 3])
    t = a.append(1, [4, 5, 6, 7, 8, 9])
    assert len(t) == 3 and a.seq_len(1) == 9
    t2 = a.allocate(2, [1, 2, 3, 4, 5, 6, 7, 8])
    assert t2 == t[:2]
    a.check_invariants()


def test_fork_shares_and_copy_on_write():
    a = BlockAllocator(8, 4)
    p = a.allocate("p", list(range(6)))
    c = a.fork("p", "c")
    assert c == p and a.stats()["shared"] == 2
    assert a.refcount(p[0]) == 2
    t = a.append("c", [100])
    assert t[0] == p[0] and t[1] != p[1]
    assert a.pop_copies() == [(p[1], t[1])]
    assert a.pop_copies() == []
    assert a.refcount(p[1]) == 1
    a.append("p", [200])  # parent's partial block is no longer shared: no copy
    assert a.pop_copies() == []
    a.check_invariants()
    a.free("p")
    a.free("c")
    assert a.stats()["used"] == 0
    a.check_invariants()


def test_release_outside_window():
    a = BlockAllocator(10, 4)
    a.allocate(1, list(range(17)))  # blocks cover 0-3,4-7,8-11,12-15,16
    assert a.release_outside_window(1, 6) == 2  # window = tokens 11..16
    t = a.block_table(1)
    assert t[:2] == [-1, -1] and all(b >= 0 for b in t[2:])
    assert a.release_outside_window(1, 6) == 0
    a.append(1, [0] * 4)  # 21 tokens, window 15..20 -> block 2 (8-11) outside
    assert a.release_outside_window(1, 6) == 1
    a.check_invariants()
    a.free(1)
    assert a.stats()["used"] == 0


def test_out_of_blocks_error_is_clean():
    a = BlockAllocator(3, 4)
    a.allocate(1, list(range(8)))
    before = (a.stats(), a.block_table(1))
    with pytest.raises(OutOfBlocksError) as ei:
        a.allocate(2, list(range(100, 112)))
    assert ei.value.needed == 3 and ei.value.free == 1
    assert "needed 3" in str(ei.value) and "1 free" in str(ei.value)
    assert isinstance(ei.value, RuntimeError)
    assert not a.has_seq(2)
    with pytest.raises(OutOfBlocksError):
        a.append(1, list(range(9)))
    assert (a.stats(), a.block_table(1)) == before
    a.check_invariants()


def test_out_of_blocks_counts_hits_on_cached_blocks():
    a = BlockAllocator(2, 2)
    a.allocate(1, [1, 2])
    a.free(1)  # block cached
    # reuse of the cached block + 1 new block fits; + 2 new does not
    a.allocate(2, [1, 2, 3])
    a.free(2)
    with pytest.raises(OutOfBlocksError) as ei:
        a.allocate(3, [1, 2, 3, 4, 5])
    assert (ei.value.needed, ei.value.free) == (2, 1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="block_size"):
        BlockAllocator(4, 0)
    with pytest.raises(ValueError, match="num_blocks"):
        BlockAllocator(-1, 4)
    a = BlockAllocator(4, 2)
    a.allocate(1, [1])
    with pytest.raises(ValueError, match="seq_id"):
        a.allocate(1, [1])
    with pytest.raises(KeyError):
        a.free(7)
    with pytest.raises(ValueError, match="child"):
        a.fork(1, 1)
    with pytest.raises(ValueError, match="window_tokens"):
        a.release_outside_window(1, -1)


# --------------------------------------------------------------- random model
def _run_ops(ops, num_blocks, block_size, prefix):
    """Apply ops; a fake physical store checks that every table reads its own tokens."""
    a = BlockAllocator(num_blocks, block_size, enable_prefix_cache=prefix)
    rng = random.Random(1234)
    store = {}  # (block, offset) -> token written there
    live = []
    next_id = 0
    vocab = [0, 1, 2]  # tiny vocabulary: prefix hits are frequent

    def write(sid, start):
        table, toks = a.block_table(sid), a.token_ids(sid)
        for t in range(start, len(toks)):
            store[(table[t // block_size], t % block_size)] = toks[t]

    for op, n in ops:
        try:
            if op == "alloc":
                sid = next_id
                next_id += 1
                hits0 = a.stats()["prefix_hits"]
                a.allocate(sid, [rng.choice(vocab) for _ in range(n)])
                live.append(sid)
                n_hit = a.stats()["prefix_hits"] - hits0
                table, toks = a.block_table(sid), a.token_ids(sid)
                for t in range(n_hit * block_size):  # reused blocks hold our prefix
                    assert store[(table[t // block_size], t % block_size)] == toks[t]
                write(sid, n_hit * block_size)
            elif op == "append" and live:
                sid = rng.choice(live)
                old = a.seq_len(sid)
                a.append(sid, [rng.choice(vocab) for _ in range(n)])
                for src, dst in a.pop_copies():
                    for o in range(block_size):
                        if (src, o) in store:
                            store[(dst, o)] = store[(src, o)]
                write(sid, old)
            elif op == "fork" and live:
                sid = next_id
                next_id += 1
                a.fork(rng.choice(live), sid)
                live.append(sid)
            elif op == "free" and live:
                a.free(live.pop(rng.randrange(len(live))))
            elif op == "window" and live:
                a.release_outside_window(rng.choice(live), n)
        except OutOfBlocksError as e:
            assert e.needed > e.free >= 0
        assert a.pop_copies() == []
        a.check_invariants()
        for sid in live:
            table, toks = a.block_table(sid), a.token_ids(sid)
            for t, tok in enumerate(toks):
                if table[t // block_size] >= 0:
                    assert store[(table[t // block_size], t % block_size)] == tok
        st_ = a.stats()
        assert st_["used"] + st_["free"] == num_blocks
        assert st_["shared"] <= st_["used"]
    for sid in live:
        a.free(sid)
    a.check_invariants()
    st_ = a.stats()
    assert st_["used"] == 0 and st_["free"] == num_blocks and st_["shared"] == 0
    if not prefix:
        assert st_["cached"] == 0


_op = st.tuples(st.sampled_from(["alloc", "append", "fork", "free", "window"]),
                st.integers(min_value=0, max_value=13))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_op, max_size=40), num_blocks=st.integers(0, 12),
       block_size=st.integers(1, 5), prefix=st.booleans())
def test_random_operation_sequences_keep_invariants(ops, num_blocks, block_size, prefix):
    _run_ops(ops, num_blocks, block_size, prefix)


def test_long_random_sequence():
    rng = random.Random(7)
    ops = [(rng.choice(["alloc", "append", "fork", "free", "window"]), rng.randrange(20))
           for _ in range(3000)]
    _run_ops(ops, 40, 4, True)

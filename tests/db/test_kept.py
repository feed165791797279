"""db/kept.VersionedCache, the one way to keep derived data in a process: exact versions, the bound and the least
recently used first, entries per engine, and nothing kept from a transaction that wrote unless its registry entry
says why it may be. Every backend (the write flag is set by the engine's statement hook)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from meadhall.db.engine import create_engine
from meadhall.db.kept import VersionedCache

# Writes nothing, yet is a write statement: the unit of work's connection counts as having written.
NO_ROW_WRITE = text("UPDATE users SET username = username WHERE 1 = 0")


def sized(name: str, bound: int) -> VersionedCache[str, int, tuple[int, ...]]:
    cache: VersionedCache[str, int, tuple[int, ...]] = VersionedCache(name, len)
    cache.max_size = bound
    return cache


def test_a_cache_without_a_registry_entry_cannot_be_built():
    with pytest.raises(LookupError, match="db/derived.py"):
        VersionedCache("a cache nobody registered")


async def test_a_value_is_used_only_at_the_version_it_was_kept_at(rt: Any):
    cache = sized("friends", 10)
    assert cache.get(rt.engine, "a", 1) is None
    assert cache.put(rt.engine, "a", 1, (1, 2))
    assert cache.get(rt.engine, "a", 1) == (1, 2)
    assert cache.get(rt.engine, "a", 2) is None
    assert cache.entry(rt.engine, "a") == (1, (1, 2))
    cache.put(rt.engine, "a", 2, (3,))
    assert cache.get(rt.engine, "a", 1) is None and cache.get(rt.engine, "a", 2) == (3,)
    cache.discard(rt.engine, "a")
    assert cache.entry(rt.engine, "a") is None and len(cache) == 0


async def test_the_least_recently_used_go_first_once_the_sizes_pass_the_bound(rt: Any):
    cache, e = sized("friends", 6), rt.engine
    cache.put(e, "a", 1, (1, 2, 3))
    cache.put(e, "b", 1, (1, 2))
    assert cache.get(e, "a", 1) is not None  # a is now the most recently used
    cache.put(e, "c", 1, (1, 2))  # 7 > 6: b goes, not a
    assert cache.entry(e, "b") is None
    assert cache.entry(e, "a") is not None and cache.entry(e, "c") is not None
    cache.put(e, "a", 2, (1,))  # a replaced: its old size no longer counts
    cache.put(e, "d", 1, (1, 2, 3))  # 1 + 2 + 3 = 6: all stay
    assert all(cache.entry(e, k) is not None for k in "acd")
    cache.discard(e, "d")  # its size no longer counts either
    cache.put(e, "f", 1, (1, 2, 3))
    assert all(cache.entry(e, k) is not None for k in "acf")
    cache.put(e, "g", 1, tuple(range(7)))  # larger than the bound alone: everything goes, itself included
    assert len(cache) == 0


async def test_a_bound_counts_values_one_each_unless_sized(rt: Any):
    cache: VersionedCache[int, int, str] = VersionedCache("history_pages")
    cache.max_size = 2
    for key in range(3):
        cache.put(rt.engine, key, 1, "a page of any size")
    assert len(cache) == 2 and cache.get(rt.engine, 0, 1) is None


async def test_two_engines_never_share_an_entry(rt: Any, tmp_path: Path):
    other = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'other.db'}")
    try:
        cache = sized("friends", 10)
        cache.put(rt.engine, "a", 1, (1,))
        assert cache.get(other, "a", 1) is None
        cache.put(other, "a", 1, (2,))
        async with rt.read() as uow:  # a connection and its engine name the same entries
            assert cache.get(uow.conn, "a", 1) == (1,)
    finally:
        await other.dispose()


async def test_what_a_writing_transaction_read_is_used_but_not_kept(rt: Any):
    cache = sized("guild_states", 10)
    async with rt.uow() as uow:
        assert cache.put(uow.conn, "before the write", 1, (1,))
        await uow.conn.execute(NO_ROW_WRITE)
        assert not cache.put(uow.conn, "after the write", 1, (1,))
        assert not cache.scope(uow.conn).put("after the write", 1, (1,))
    assert cache.entry(rt.engine, "before the write") is not None
    assert cache.entry(rt.engine, "after the write") is None
    async with rt.read() as uow:  # a new unit of work starts unwritten
        assert cache.put(uow.conn, "after the write", 1, (1,))


@pytest.mark.parametrize("name", ["friends", "profile_audiences"])
async def test_an_entry_that_says_why_keeps_what_a_writing_transaction_read(rt: Any, name: str):
    cache = sized(name, 10)
    async with rt.uow() as uow:
        await uow.conn.execute(NO_ROW_WRITE)
        assert cache.put(uow.conn, "kept", 1, (1,))
    assert cache.get(rt.engine, "kept", 1) == (1,)

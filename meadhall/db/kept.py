"""The one way to keep derived data in a process: values kept under the version they were read at.

A value is used only while the version the caller read in its current transaction equals the one it was kept
at, so a change made by any node shows on the next read. The cache owns what every cache needs alike: its
bound (from its entry in db/derived.py, the registry of derived state), dropping the least recently used once
the kept sizes pass it, keying by engine (tests and tools run several databases in one process), and the rule
that what a transaction which already wrote rows read is not kept, unless its entry says why it may be
(`AfterWrite`). Whoever keeps a value decides what its version is; the registry names it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from meadhall.db.derived import CACHES, AfterWrite
from meadhall.db.engine import WROTE_FLAG, engine_token

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")

Bind = AsyncConnection | AsyncEngine


def _one(_value: object) -> int:
    return 1


class VersionedCache(Generic[K, V, T]):
    """Values of type T under versions of type V, by key K (per engine). `size` measures a value against the
    bound (one per value unless given)."""

    def __init__(self, name: str, size: Callable[[T], int] = _one) -> None:
        entry = CACHES.get(name)
        if entry is None:
            raise LookupError(f"cache {name!r} has no entry in db/derived.py CACHES")
        self.name = name
        self.max_size = entry.bound
        self._after_write = entry.after_write
        self._size = size
        self._entries: OrderedDict[tuple[int, K], tuple[V, T]] = OrderedDict()
        self._held = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self._held = 0

    def scope(self, bind: Bind) -> Scope[K, V, T]:
        """The entries of the bind's engine: for a caller that looks up many keys in one transaction."""
        return Scope(self, bind)

    def entry(self, bind: Bind, key: K) -> tuple[V, T] | None:
        """(the version, the value) kept for the key, or None; counts as a use. For a caller that hands the kept
        version to the query that reads the current one (social/relationships/friends.py)."""
        return self.scope(bind).entry(key)

    def get(self, bind: Bind, key: K, version: V) -> T | None:
        """The value kept for the key at exactly `version` (read by the caller now), or None."""
        return self.scope(bind).get(key, version)

    def put(self, bind: Bind, key: K, version: V, value: T) -> bool:
        """Keep the value under `version` unless the rule forbids it; True when kept."""
        return self.scope(bind).put(key, version, value)

    def discard(self, bind: Bind, key: K) -> None:
        self.scope(bind).discard(key)

    def _may_keep(self, bind: Bind) -> bool:
        # An engine stands for reads made outside any transaction of the caller's: nothing of theirs is uncommitted.
        if self._after_write is not AfterWrite.NEVER or not isinstance(bind, AsyncConnection):
            return True
        return not bind.info.get(WROTE_FLAG)

    def _store(self, full_key: tuple[int, K], version: V, value: T) -> None:
        old = self._entries.pop(full_key, None)
        if old is not None:
            self._held -= self._size(old[1])
        self._entries[full_key] = (version, value)
        self._held += self._size(value)
        while self._held > self.max_size and self._entries:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._held -= self._size(dropped)


class Scope(Generic[K, V, T]):
    """One cache's entries of one engine, as seen through one connection (or the engine itself)."""

    __slots__ = ("_bind", "_cache", "_token")

    def __init__(self, cache: VersionedCache[K, V, T], bind: Bind) -> None:
        self._cache = cache
        self._bind = bind
        self._token = engine_token(bind)

    def entry(self, key: K) -> tuple[V, T] | None:
        full_key = (self._token, key)
        entries = self._cache._entries
        found = entries.get(full_key)
        if found is not None:
            entries.move_to_end(full_key)
        return found

    def get(self, key: K, version: V) -> T | None:
        full_key = (self._token, key)
        entries = self._cache._entries
        found = entries.get(full_key)
        if found is None or found[0] != version:
            return None
        entries.move_to_end(full_key)
        return found[1]

    def put(self, key: K, version: V, value: T) -> bool:
        if not self._cache._may_keep(self._bind):
            return False
        self._cache._store((self._token, key), version, value)
        return True

    def discard(self, key: K) -> None:
        cache = self._cache
        old = cache._entries.pop((self._token, key), None)
        if old is not None:
            cache._held -= cache._size(old[1])

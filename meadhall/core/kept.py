"""Values kept per process under the version they were read at, the least recently used dropped first once their
total size passes a bound. Whoever keeps a value decides what its version is and when it may be kept (the
friends under a relationship stamp, the audiences of a profile change under their guilds' versions); this only
holds them."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")


class Kept(Generic[K, V, T]):
    def __init__(self, max_size: int, size: Callable[[T], int]) -> None:
        self._entries: OrderedDict[K, tuple[V, T]] = OrderedDict()
        self._max_size = max_size
        self._size = size
        self._held = 0

    def entry(self, key: K) -> tuple[V, T] | None:
        """(the version, the value) kept for the key, or None; counts as a use."""
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: K, version: V, value: T) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._held -= self._size(old[1])
        self._entries[key] = (version, value)
        self._held += self._size(value)
        while self._held > self._max_size and self._entries:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._held -= self._size(dropped)

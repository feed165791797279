"""The one shape of a hook between layers (docs/architecture.md, "Hooks between layers"): a lower package
that needs work done by a higher one, which it may not import, offers a `Hook` at module level, named for
what it announces or asks; the higher package adds its callback by name from its `setup.py` when the app
is built, and the lower package iterates the hook where the work is due.

Adding is idempotent by name: building two apps in one process (as tests do) registers once, and a
callback added again under its name keeps its place. Callbacks run in the order they were first added."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Hook(Generic[F]):
    """Named callbacks of one signature, in the order they were added."""

    __slots__ = ("_callbacks",)

    def __init__(self) -> None:
        self._callbacks: dict[str, F] = {}

    def add(self, name: str, callback: F) -> None:
        """Register `callback` under `name`, replacing (in place) what that name held."""
        self._callbacks[name] = callback

    def discard(self, name: str) -> None:
        """Forget what `name` holds, if anything (tests that add a callback of their own)."""
        self._callbacks.pop(name, None)

    def get(self, name: str) -> F | None:
        """The callback added under `name`: hooks keyed by what they decide (a file purpose's fetch rule)."""
        return self._callbacks.get(name)

    def first(self) -> F | None:
        """The first callback added: hooks that ask one question and take one answer (a lookup slot)."""
        return next(iter(self._callbacks.values()), None)

    def __iter__(self) -> Iterator[F]:
        # A copy: a callback that adds to the hook while it runs never upsets the walk.
        return iter(list(self._callbacks.values()))

    def items(self) -> list[tuple[str, F]]:
        return list(self._callbacks.items())

    def __bool__(self) -> bool:
        return bool(self._callbacks)

    def __len__(self) -> int:
        return len(self._callbacks)

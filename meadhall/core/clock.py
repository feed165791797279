"""Time comes from a clock object so tests can move it (house rule 11)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import overload


class Clock:
    """The wall clock, timezone-aware UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def timestamp(self) -> float:
        return self.now().timestamp()


class MovableClock(Clock):
    """A clock that stands still until moved; used by tests and benchmarks of time rules."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 0, **kwargs: float) -> datetime:
        self._now += timedelta(seconds=seconds, **kwargs)
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when


@overload
def iso(value: datetime) -> str: ...
@overload
def iso(value: None) -> None: ...
@overload
def iso(value: datetime | None) -> str | None: ...


def iso(value: datetime | None) -> str | None:
    """Timestamps on the wire: UTC with millisecond precision and `Z` (docs/architecture.md)."""
    if value is None:
        return None
    if value.tzinfo is None:  # UTC by construction (SQLite): no offset to cut off
        return value.isoformat(timespec="milliseconds") + "Z"
    if value.utcoffset():
        value = value.astimezone(UTC)
    # "YYYY-MM-DDTHH:MM:SS.mmm" is 23 characters; isoformat is the fastest way there (hot in history).
    return value.isoformat(timespec="milliseconds")[:23] + "Z"


def as_utc(value: datetime | None) -> datetime | None:
    """Databases may hand back naive datetimes (SQLite); they are UTC by construction."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

"""Rate limiting: the bucket table of API.md 5.2 and a GCRA token bucket over a store.

GCRA (generic cell rate algorithm) keeps one number per key, the "theoretical arrival time" (TAT),
which makes it cheap in memory and a single atomic step in Redis. A bucket of `burst` tokens refills
one token every `emission` seconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, Protocol

KeyKind = Literal["user", "ip", "user_room", "webhook", "login"]


@dataclass(frozen=True)
class Bucket:
    name: str
    count: int  # requests ...
    seconds: float  # ... per this many seconds
    key: KeyKind
    burst: int | None = None  # capacity; defaults to `count`

    @property
    def capacity(self) -> int:
        return self.burst or self.count

    @property
    def emission(self) -> float:
        """Seconds per token."""
        return self.seconds / self.count


# API.md 5.2. `auth.lockout` is not a token bucket (it counts failures); it is listed so that its name
# is known, and the accounts domain implements it with the same stores.
_TABLE = [
    Bucket("global", 1200, 60, "user"),
    Bucket("auth.register", 30, 3600, "ip"),
    Bucket("auth.login", 30, 60, "ip"),
    Bucket("gateway.connect", 60, 60, "ip"),
    Bucket("auth.lockout", 5, 900, "login"),
    Bucket("auth.step_up", 10, 60, "user"),
    Bucket("auth.password", 5, 60, "user"),
    Bucket("auth.2fa", 10, 60, "user"),
    Bucket("auth.passkey", 10, 60, "ip"),
    Bucket("messages.send", 5, 5, "user_room", burst=10),
    Bucket("channel.slowmode", 1, 1, "user_room"),
    Bucket("messages.modify", 10, 5, "user"),
    Bucket("reactions", 10, 5, "user"),
    Bucket("typing", 1, 3, "user"),
    # Not in API.md 5.2 (ack is `global` there): an acknowledgement writes, so it gets its own bucket.
    Bucket("read_states.ack", 30, 10, "user"),
    Bucket("search", 10, 60, "user"),
    Bucket("uploads", 30, 60, "user"),
    Bucket("files", 600, 60, "user"),
    Bucket("invites.create", 10, 60, "user"),
    Bucket("invites.preview", 60, 60, "ip"),
    Bucket("invites.join", 10, 60, "user"),
    Bucket("guilds.create", 10, 3600, "user"),
    Bucket("relationships", 20, 60, "user"),
    Bucket("dm.open", 20, 60, "user"),
    Bucket("calls", 10, 60, "user"),
    Bucket("voice", 20, 60, "user"),
    Bucket("sounds.play", 3, 10, "user"),
    Bucket("webhooks.execute", 30, 60, "webhook"),
    Bucket("link_previews", 20, 60, "user"),
    Bucket("push.subscriptions", 10, 60, "user"),
    Bucket("instance.audit_export", 5, 60, "user"),
]
BUCKETS: dict[str, Bucket] = {b.name: b for b in _TABLE}

_OVERRIDE = re.compile(r"^\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*$")


def parse_override(spec: str) -> tuple[int, float]:
    """Parse a `RATE_LIMITS` value `count/seconds`; ValueError when malformed."""
    match = _OVERRIDE.match(spec)
    if not match or int(match.group(1)) < 1 or float(match.group(2)) <= 0:
        raise ValueError(f"rate limit {spec!r} must look like count/seconds, e.g. 1000/3600")
    return int(match.group(1)), float(match.group(2))


def bucket_table(overrides: dict[str, str]) -> dict[str, Bucket]:
    """The bucket table with `RATE_LIMITS` applied; an override sets capacity = count."""
    table = dict(BUCKETS)
    for name, spec in overrides.items():
        count, seconds = parse_override(spec)
        table[name] = Bucket(name, count, seconds, BUCKETS[name].key)
    return table


@dataclass(frozen=True)
class Decision:
    bucket: str
    allowed: bool
    limit: int
    remaining: int
    retry_after: float  # seconds until one more request is allowed (0 when allowed)
    reset_after: float  # seconds until the bucket is full again
    now: float

    @property
    def reset_at(self) -> float:
        return self.now + self.reset_after

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": f"{self.reset_at:.3f}",
            "X-RateLimit-Reset-After": f"{self.reset_after:.3f}",
            "X-RateLimit-Bucket": self.bucket,
        }
        if not self.allowed:
            headers["Retry-After"] = str(max(1, math.ceil(self.retry_after)))
        return headers


class GcraStore(Protocol):
    async def gcra(self, key: str, emission: float, burst: int, now: float) -> tuple[bool, float, float]:
        """One atomic step: (allowed, slack, reset_after). `slack` = seconds of credit left when allowed,
        seconds to wait when refused."""
        ...


class Limiter:
    """Applies buckets to keys over a store; time comes from the caller so tests can move it."""

    def __init__(self, store: GcraStore, overrides: dict[str, str] | None = None, prefix: str = "rl") -> None:
        self.store = store
        self.table = bucket_table(overrides or {})
        self.prefix = prefix

    def bucket(self, name: str) -> Bucket:
        return self.table[name]

    async def hit(self, name: str, key: str, now: float, *, spec: Bucket | None = None) -> Decision:
        """Take one token of bucket `name` for `key`. `spec` replaces the table entry for buckets whose
        size is a property of the resource (room slowmode)."""
        bucket = spec or self.table[name]
        allowed, slack, reset_after = await self.store.gcra(
            f"{self.prefix}:{name}:{key}", bucket.emission, bucket.capacity, now
        )
        if allowed:
            remaining = min(bucket.capacity - 1, int(slack / bucket.emission + 1e-9))
            return Decision(name, True, bucket.capacity, remaining, 0.0, reset_after, now)
        return Decision(name, False, bucket.capacity, 0, slack, reset_after, now)


def gcra_step(tat: float | None, emission: float, burst: int, now: float) -> tuple[bool, float, float, float]:
    """The pure GCRA step shared by the memory store and the tests:
    returns (allowed, slack, reset_after, new_tat)."""
    tat = now if tat is None or tat < now else tat
    new_tat = tat + emission
    allow_at = new_tat - burst * emission
    if now < allow_at:
        return False, allow_at - now, tat - now, tat
    return True, now - allow_at, new_tat - now, new_tat

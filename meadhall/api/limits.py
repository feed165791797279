"""Apply a rate-limit bucket inside a request and remember the decision for the response headers."""

from __future__ import annotations

from starlette.requests import HTTPConnection

from meadhall.core.errors import rate_limited
from meadhall.core.ratelimit import Bucket, Decision

STATE_KEY = "ratelimit"


async def take(conn: HTTPConnection, bucket: str, key: str | int, *, spec: Bucket | None = None) -> Decision:
    """Take one token or raise 429 `rate_limited`. The most specific bucket is applied last, so its
    decision is the one whose headers the response carries (docs/reference/limits.md)."""
    rt = conn.app.state.runtime
    decision = await rt.limiter.hit(bucket, str(key), rt.now_ts(), spec=spec)
    if not decision.allowed:
        raise rate_limited(bucket, decision.retry_after, decision.headers())
    conn.scope.setdefault("state", {})[STATE_KEY] = decision
    return decision


def remember(conn: HTTPConnection, decision: Decision) -> None:
    """Make `decision` the one whose headers the response carries (a bucket applied in a service)."""
    conn.scope.setdefault("state", {})[STATE_KEY] = decision

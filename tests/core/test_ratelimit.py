"""GCRA limiter (docs/reference/limits.md) on every store: burst, refill, retry_after, remaining, headers,
the bucket table and `RATE_LIMITS` overrides. Time is passed in, so nothing sleeps."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meadhall.config import Settings
from meadhall.core.ratelimit import BUCKETS, Bucket, Decision, Limiter, bucket_table, parse_override
from meadhall.core.stores import MemoryStore
from tests.support.stores import STORE_KINDS, open_store

# Start times with many fractional digits: a store that loses precision on epoch-scale numbers
# (Lua's 14-digit tostring did) refuses the last token of a burst for some of them.
STARTS = [1_700_000_000.123456, 1_712_345_678.987654, 1_765_432_109.5]
NOW = STARTS[0]


@pytest.fixture(params=STORE_KINDS)
async def limiter(request: pytest.FixtureRequest) -> AsyncIterator[Limiter]:
    async with open_store(request.param) as store:
        yield Limiter(store)


def limiter_with(base: Limiter, overrides: dict[str, str]) -> Limiter:
    """Another limiter over the same store (and so the same Redis prefix and cleanup)."""
    return Limiter(base.store, overrides, prefix=f"{base.prefix}-o")


# ---------------------------------------------------------------- bucket table (docs/reference/limits.md)

SPEC_TABLE = [
    # name, capacity, seconds per token, key
    ("global", 1200, 60 / 1200, "user"),
    ("auth.register", 30, 3600 / 30, "ip"),
    ("auth.login", 30, 60 / 30, "ip"),
    ("auth.step_up", 10, 60 / 10, "user"),
    ("auth.password", 5, 60 / 5, "user"),
    ("auth.2fa", 10, 60 / 10, "user"),
    ("auth.passkey", 10, 60 / 10, "ip"),
    ("messages.send", 10, 1.0, "user_room"),
    ("messages.modify", 10, 5 / 10, "user"),
    ("reactions", 10, 5 / 10, "user"),
    ("typing", 1, 3.0, "user"),
    ("search", 10, 60 / 10, "user"),
    ("uploads", 30, 60 / 30, "user"),
    ("files", 600, 60 / 600, "user"),
    ("invites.create", 10, 60 / 10, "user"),
    ("invites.preview", 60, 60 / 60, "ip"),
    ("invites.join", 10, 60 / 10, "user"),
    ("guilds.create", 10, 3600 / 10, "user"),
    ("relationships", 20, 60 / 20, "user"),
    ("dm.open", 20, 60 / 20, "user"),
    ("calls", 10, 60 / 10, "user"),
    ("voice", 20, 60 / 20, "user"),
    ("sounds.play", 3, 10 / 3, "user"),
    ("webhooks.execute", 30, 60 / 30, "webhook"),
    ("link_previews", 20, 60 / 20, "user"),
    ("push.subscriptions", 10, 60 / 10, "user"),
    ("instance.audit_export", 5, 60 / 5, "user"),
]


@pytest.mark.parametrize(("name", "capacity", "emission", "key"), SPEC_TABLE)
def test_bucket_table_matches_api_5_2(name, capacity, emission, key):
    bucket = BUCKETS[name]
    assert bucket.capacity == capacity
    assert bucket.emission == pytest.approx(emission)
    assert bucket.key == key


def test_every_api_bucket_is_known():
    names = {row[0] for row in SPEC_TABLE} | {"auth.lockout", "channel.slowmode"}
    assert names <= set(BUCKETS)


def test_messages_send_is_capacity_10_refill_one_per_second():
    bucket = BUCKETS["messages.send"]
    assert bucket.capacity == 10
    assert bucket.emission == 1.0
    assert bucket.key == "user_room"


# ---------------------------------------------------------------- GCRA behaviour, every store


@pytest.mark.parametrize("name", ["messages.send", "global", "auth.register", "sounds.play", "typing"])
async def test_burst_of_capacity_passes_then_next_is_refused(limiter, name):
    capacity = limiter.bucket(name).capacity
    for start in STARTS:
        key = f"burst-{start}"
        results = [(await limiter.hit(name, key, start)).allowed for _ in range(capacity)]
        assert all(results), f"request {results.index(False) + 1} of {capacity} refused at {start}"
        refused = await limiter.hit(name, key, start)
        assert not refused.allowed


@pytest.mark.parametrize("name", ["messages.send", "global", "sounds.play", "typing"])
async def test_one_emission_interval_refills_exactly_one_token(limiter, name):
    bucket = limiter.bucket(name)
    for start in STARTS:
        key = f"refill-{start}"
        for _ in range(bucket.capacity):
            await limiter.hit(name, key, start)
        assert not (await limiter.hit(name, key, start)).allowed
        # Slightly before the interval is over: still refused.
        assert not (await limiter.hit(name, key, start + bucket.emission * 0.99)).allowed
        later = start + bucket.emission
        assert (await limiter.hit(name, key, later)).allowed
        assert not (await limiter.hit(name, key, later)).allowed


async def test_retry_after_is_time_until_next_token(limiter):
    for _ in range(10):
        await limiter.hit("messages.send", "u1:c1", NOW)
    first = await limiter.hit("messages.send", "u1:c1", NOW)
    assert not first.allowed
    assert first.retry_after == pytest.approx(1.0, abs=1e-6)
    assert first.remaining == 0
    # A refused request takes no token: a quarter second later the wait is 0.75 s, not 1.75 s.
    later = await limiter.hit("messages.send", "u1:c1", NOW + 0.25)
    assert not later.allowed
    assert later.retry_after == pytest.approx(0.75, abs=1e-6)


async def test_allowed_decisions_have_no_retry_after(limiter):
    decision = await limiter.hit("messages.send", "u1:c1", NOW)
    assert decision.allowed
    assert decision.retry_after == 0.0


async def test_remaining_counts_down_to_zero(limiter):
    seen = [(await limiter.hit("messages.send", "u1:c1", NOW)).remaining for _ in range(10)]
    assert seen == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
    refused = await limiter.hit("messages.send", "u1:c1", NOW)
    assert (refused.allowed, refused.remaining, refused.limit) == (False, 0, 10)


async def test_remaining_recovers_with_elapsed_time(limiter):
    for _ in range(10):
        await limiter.hit("messages.send", "u1:c1", NOW)
    # 3.5 s refill 3 whole tokens; one is taken by this request.
    decision = await limiter.hit("messages.send", "u1:c1", NOW + 3.5)
    assert decision.allowed
    assert decision.remaining == 2


async def test_idle_bucket_is_full_again_after_capacity_times_emission(limiter):
    for _ in range(10):
        await limiter.hit("messages.send", "u1:c1", NOW)
    later = NOW + 10
    decisions = [await limiter.hit("messages.send", "u1:c1", later) for _ in range(11)]
    assert [d.allowed for d in decisions] == [True] * 10 + [False]
    # Waiting far longer does not bank more than `capacity` tokens.
    much_later = NOW + 10_000
    decisions = [await limiter.hit("messages.send", "u1:c1", much_later) for _ in range(11)]
    assert [d.allowed for d in decisions] == [True] * 10 + [False]


async def test_reset_after_is_time_until_bucket_is_full(limiter):
    for n in range(1, 4):
        decision = await limiter.hit("messages.send", "u1:c1", NOW)
        assert decision.reset_after == pytest.approx(float(n), abs=1e-6)
        assert decision.reset_at == pytest.approx(NOW + n, abs=1e-6)
    for _ in range(7):
        await limiter.hit("messages.send", "u1:c1", NOW)
    refused = await limiter.hit("messages.send", "u1:c1", NOW)
    assert refused.reset_after == pytest.approx(10.0, abs=1e-6)


async def test_keys_and_buckets_are_independent(limiter):
    for _ in range(10):
        await limiter.hit("messages.send", "u1:c1", NOW)
    assert not (await limiter.hit("messages.send", "u1:c1", NOW)).allowed
    other_room = await limiter.hit("messages.send", "u1:c2", NOW)
    assert other_room.allowed and other_room.remaining == 9
    other_bucket = await limiter.hit("reactions", "u1:c1", NOW)
    assert other_bucket.allowed and other_bucket.remaining == 9


async def test_spec_replaces_table_entry(limiter):
    slowmode = Bucket("channel.slowmode", 1, 30, "user_room")
    first = await limiter.hit("channel.slowmode", "u1:c1", NOW, spec=slowmode)
    second = await limiter.hit("channel.slowmode", "u1:c1", NOW + 29, spec=slowmode)
    third = await limiter.hit("channel.slowmode", "u1:c1", NOW + 30, spec=slowmode)
    assert first.allowed and not second.allowed and third.allowed
    assert second.retry_after == pytest.approx(1.0, abs=1e-6)
    assert (second.bucket, second.limit) == ("channel.slowmode", 1)


async def test_override_through_limiter_changes_enforcement(limiter):
    tight = limiter_with(limiter, {"global": "3/60"})
    decisions = [await tight.hit("global", "ip1.2.3.4", NOW) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert decisions[-1].limit == 3
    assert decisions[-1].retry_after == pytest.approx(20.0, abs=1e-6)
    assert (await tight.hit("global", "ip1.2.3.4", NOW + 20)).allowed
    # Buckets that were not overridden keep their table values.
    assert tight.bucket("messages.send") == BUCKETS["messages.send"]


# ---------------------------------------------------------------- headers (docs/reference/limits.md)


async def test_headers_of_an_allowed_request(limiter):
    decision = await limiter.hit("messages.send", "u1:c1", NOW)
    assert decision.headers() == {
        "X-RateLimit-Limit": "10",
        "X-RateLimit-Remaining": "9",
        "X-RateLimit-Reset": f"{NOW + 1:.3f}",
        "X-RateLimit-Reset-After": "1.000",
        "X-RateLimit-Bucket": "messages.send",
    }


async def test_headers_of_a_refused_request_carry_retry_after(limiter):
    for _ in range(10):
        await limiter.hit("messages.send", "u1:c1", NOW)
    refused = await limiter.hit("messages.send", "u1:c1", NOW + 0.25)
    headers = refused.headers()
    assert headers["Retry-After"] == "1"  # ceil(0.75)
    assert headers["X-RateLimit-Remaining"] == "0"
    assert headers["X-RateLimit-Limit"] == "10"
    assert headers["X-RateLimit-Bucket"] == "messages.send"
    assert headers["X-RateLimit-Reset-After"] == "9.750"
    assert headers["X-RateLimit-Reset"] == f"{NOW + 10:.3f}"


@pytest.mark.parametrize(
    ("retry_after", "header"), [(0.001, "1"), (0.75, "1"), (1.0, "1"), (1.001, "2"), (19.5, "20"), (20.0, "20")]
)
def test_retry_after_header_is_the_ceiling(retry_after, header):
    decision = Decision("search", False, 10, 0, retry_after, 60.0, NOW)
    assert decision.headers()["Retry-After"] == header


def test_reset_headers_have_three_decimals():
    decision = Decision("global", True, 1200, 5, 0.0, 57.25, 1_700_000_000.0)
    headers = decision.headers()
    assert headers["X-RateLimit-Reset"] == "1700000057.250"
    assert headers["X-RateLimit-Reset-After"] == "57.250"
    assert "Retry-After" not in headers


# ---------------------------------------------------------------- overrides (RATE_LIMITS)


def test_bucket_table_applies_overrides_and_keeps_the_rest():
    table = bucket_table({"global": "3/60", "messages.send": "20/10"})
    assert (table["global"].capacity, table["global"].emission, table["global"].key) == (3, 20.0, "user")
    # An override sets capacity = count: the table's burst of 10 is gone.
    assert (table["messages.send"].capacity, table["messages.send"].emission) == (20, 0.5)
    assert table["messages.send"].key == "user_room"
    assert table["auth.login"] == BUCKETS["auth.login"]
    assert BUCKETS["global"].capacity == 1200  # the shared table is not mutated


def test_bucket_table_rejects_unknown_bucket():
    with pytest.raises(KeyError):
        bucket_table({"no.such.bucket": "1/1"})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("1000/3600", (1000, 3600.0)), (" 5 / 2.5 ", (5, 2.5)), ("1/0.5", (1, 0.5)), ("30/60", (30, 60.0))],
)
def test_parse_override_accepts_count_per_seconds(spec, expected):
    assert parse_override(spec) == expected


@pytest.mark.parametrize(
    "spec",
    ["", "abc", "10", "10/", "/10", "0/60", "10/0", "10/0.0", "-1/60", "10/-5", "1e3/60", "1.5/60",
     "10/60/2", "10 per 60", "ten/60", "10/sixty", "10//60"],
)
def test_parse_override_rejects_garbage(spec):
    with pytest.raises(ValueError):
        parse_override(spec)


def test_settings_rate_limits_feed_the_limiter(tmp_path):
    settings = Settings(DATA_DIR=tmp_path, RATE_LIMITS='{"global": "3/60", "auth.register": "1000/3600"}')
    limiter = Limiter(MemoryStore(), settings.RATE_LIMITS)
    assert limiter.bucket("global").capacity == 3
    assert limiter.bucket("auth.register").capacity == 1000


# ---------------------------------------------------------------- property: GCRA is a token bucket

# Steps in quarter seconds with an emission of 1 s keep every float exact, so the limiter must agree
# with an exact token-bucket model on every single request.
@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=60))
def test_memory_limiter_matches_exact_token_bucket(steps):
    async def run() -> None:
        limiter = Limiter(MemoryStore())
        tokens, now, last = Fraction(10), Fraction(NOW), Fraction(NOW)
        for step in steps:
            now += Fraction(step, 4)
            tokens = min(Fraction(10), tokens + (now - last))
            last = now
            decision = await limiter.hit("messages.send", "k", float(now))
            expected = tokens >= 1
            assert decision.allowed == expected
            if expected:
                tokens -= 1
                assert decision.remaining == math.floor(tokens)
            else:
                assert decision.retry_after == pytest.approx(float(1 - tokens), abs=1e-6)

    asyncio.run(run())

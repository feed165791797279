"""Snowflake ids (docs/architecture.md): 42 bits of milliseconds since 2024-01-01Z, 10 bits node, 12 bits sequence."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from meadhall.core.ids import EPOCH_MS, MAX_ID, SnowflakeGenerator, id_timestamp_ms, parse_id


def frozen(ms: int):
    return lambda: ms


def fields(snowflake: int) -> tuple[int, int, int]:
    return snowflake >> 22, (snowflake >> 12) & 0x3FF, snowflake & 0xFFF


def test_epoch_is_2024_01_01_utc():
    assert EPOCH_MS == int(datetime(2024, 1, 1, tzinfo=UTC).timestamp() * 1000)


def test_layout_timestamp_node_sequence():
    now = EPOCH_MS + 123_456_789
    gen = SnowflakeGenerator(5, now_ms=frozen(now))
    first, second = gen.next(), gen.next()
    assert first == (123_456_789 << 22) | (5 << 12) | 0
    assert fields(first) == (123_456_789, 5, 0)
    assert fields(second) == (123_456_789, 5, 1)
    assert id_timestamp_ms(first) == now


def test_sequence_restarts_in_a_new_millisecond():
    ms = [EPOCH_MS + 1000]
    gen = SnowflakeGenerator(1, now_ms=lambda: ms[0])
    gen.next()
    gen.next()
    ms[0] += 1
    assert fields(gen.next()) == (1001, 1, 0)


def test_max_node_id_does_not_spill_into_other_fields():
    gen = SnowflakeGenerator(1023, now_ms=frozen(EPOCH_MS + 7))
    ids = [gen.next() for _ in range(3)]
    assert [fields(i) for i in ids] == [(7, 1023, 0), (7, 1023, 1), (7, 1023, 2)]


def test_strictly_increasing_under_a_frozen_clock_past_4096():
    gen = SnowflakeGenerator(3, now_ms=frozen(EPOCH_MS + 50_000))
    ids = [gen.next() for _ in range(10_000)]
    assert all(a < b for a, b in zip(ids, ids[1:], strict=False))
    assert len(set(ids)) == len(ids)
    # The 4097th id in one millisecond borrows the next millisecond with sequence 0.
    assert fields(ids[4095]) == (50_000, 3, 4095)
    assert fields(ids[4096]) == (50_001, 3, 0)
    assert fields(ids[8192]) == (50_002, 3, 0)
    assert all(fields(i)[1] == 3 for i in ids)


def test_clock_going_backwards_keeps_ids_increasing():
    ms = [EPOCH_MS + 10_000]
    gen = SnowflakeGenerator(0, now_ms=lambda: ms[0])
    before = gen.next()
    ms[0] -= 5_000  # e.g. an NTP step back
    after = gen.next()
    assert after > before
    assert fields(after)[0] == 10_000


def test_default_clock_is_wall_time():
    gen = SnowflakeGenerator(0)
    made = id_timestamp_ms(gen.next())
    assert abs(made - time.time() * 1000) < 5_000


def test_ids_from_threads_are_unique():
    gen = SnowflakeGenerator(9, now_ms=frozen(EPOCH_MS + 1))
    out: list[list[int]] = [[] for _ in range(4)]

    def work(bucket: list[int]) -> None:
        for _ in range(3_000):
            bucket.append(gen.next())

    threads = [threading.Thread(target=work, args=(b,)) for b in out]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for b in out for i in b]
    assert len(set(every)) == 12_000
    assert all(a < b for b in out for a, b in zip(b, b[1:], strict=False))


def test_ids_fit_in_signed_64_bits():
    # The top of the 42-bit timestamp range minus one bit still fits PostgreSQL BIGINT.
    gen = SnowflakeGenerator(1023, now_ms=frozen(EPOCH_MS + (1 << 41) - 1))
    assert 0 < gen.next() <= MAX_ID


@pytest.mark.parametrize("node_id", [0, 1, 512, 1023])
def test_node_id_in_range_is_accepted(node_id):
    assert SnowflakeGenerator(node_id).node_id == node_id


@pytest.mark.parametrize("node_id", [-1, 1024, 4096, -1024])
def test_node_id_out_of_range_is_rejected(node_id):
    with pytest.raises(ValueError):
        SnowflakeGenerator(node_id)


# ---------------------------------------------------------------- parse_id


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0", 0), ("1", 1), ("175928847299117063", 175928847299117063), (str(MAX_ID), MAX_ID),
     (42, 42), (0, 0), (MAX_ID, MAX_ID)],
)
def test_parse_id_accepts_decimal_snowflakes(value, expected):
    assert parse_id(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "", "abc", "12a", "a12", "0x1f", "1.0", "1e5", " 1", "1 ", "+1", "-1", "-0", "1_000",
        "١٢٣",  # Arabic-Indic digits: str.isdigit() accepts them
        "１２",  # full-width digits
        "²",  # superscript two: isdigit() is True
        str(MAX_ID + 1), "9" * 19, "1" * 20, "0" * 20, "18446744073709551615",
        None, -1, MAX_ID + 1, 1.5, [], {},
    ],
)
def test_parse_id_rejects_malformed(value):
    assert parse_id(value) is None

"""The soak's verdict (bench/soak/verdict.py) fails on each loss or double it is fed, and only on those:
the checks that `make soak-short` relies on to fail CI."""

from __future__ import annotations

import pytest

from bench.soak.run import parse_args, parse_faults
from bench.soak.verdict import EPOCH_MS, ClientRecord, HttpTally, Send, Stored, judge

TOTAL = 4
ROOM, OTHER = "100", "200"


def snowflake(ms: int, n: int = 0) -> int:
    return ((ms - EPOCH_MS) << 22) | n


T0 = EPOCH_MS + 10_000_000


def world() -> tuple[list[Send], list[Stored], list[ClientRecord]]:
    """Four messages in ROOM, each acknowledged and stored once, seen once by one client of ROOM; a client
    of OTHER saw none of them (rightly)."""
    ids = [snowflake(T0 + 1000 * i) for i in range(TOTAL)]
    sends = [Send(i, "7", ROOM, acked_id=ids[i]) for i in range(TOTAL)]
    stored = [Stored(i, ids[i], "7", ROOM) for i in range(TOTAL)]
    watcher = ClientRecord("watcher", frozenset({ROOM}), bytearray([1] * TOTAL), bytearray(TOTAL),
                           covered_from_ms=T0 - 1, covered_to_ms=T0 + 10_000)
    outsider = ClientRecord("outsider", frozenset({OTHER}), bytearray(TOTAL), bytearray(TOTAL),
                            covered_from_ms=T0 - 1, covered_to_ms=T0 + 10_000)
    return sends, stored, [watcher, outsider]


def test_a_clean_run_passes() -> None:
    sends, stored, clients = world()
    verdict = judge(sends, stored, clients, HttpTally())
    assert verdict.ok, verdict.failures
    assert (verdict.acknowledged, verdict.stored, verdict.deliveries) == (4, 4, 4)


def test_an_acknowledged_message_missing_from_history_is_lost() -> None:
    sends, stored, clients = world()
    del stored[2]
    clients[0].dispatched[2] = 0  # nobody could receive what was never stored
    verdict = judge(sends, stored, clients, HttpTally())
    assert not verdict.ok
    assert verdict.lost == 1
    assert verdict.failures == ["1 acknowledged messages lost"]


def test_a_retried_send_stored_twice_is_a_duplicate_and_its_two_dispatches_are_not_doubles() -> None:
    sends, stored, clients = world()
    stored.append(Stored(1, snowflake(T0 + 1500), "7", ROOM))
    clients[0].dispatched[1] = 2  # each copy dispatched once: right for the client, wrong for the store
    verdict = judge(sends, stored, clients, HttpTally())
    assert not verdict.ok
    assert (verdict.duplicated, verdict.doubles) == (1, 0)
    assert verdict.failures == ["1 messages stored twice (one author, room and nonce)"]


def test_an_acknowledgement_naming_another_id_fails() -> None:
    sends, stored, clients = world()
    sends[0].acked_id = snowflake(T0 - 5)
    verdict = judge(sends, stored, clients, HttpTally())
    assert verdict.wrong_id == 1 and not verdict.ok


def test_a_message_dispatched_twice_to_one_client_is_a_double() -> None:
    sends, stored, clients = world()
    clients[0].dispatched[3] = 2
    verdict = judge(sends, stored, clients, HttpTally())
    assert (verdict.doubles, verdict.clients_doubled) == (1, 1)
    assert verdict.failures == ["1 deliveries doubled at 1 clients"]


def test_a_message_neither_dispatched_nor_filled_while_covered_is_a_miss() -> None:
    sends, stored, clients = world()
    clients[0].dispatched[1] = 0
    verdict = judge(sends, stored, clients, HttpTally())
    assert (verdict.misses, verdict.clients_missing) == (1, 1)
    assert verdict.failures == ["1 deliveries missed by 1 clients"]


def test_a_gap_filled_from_history_is_no_miss_and_the_fill_overlap_no_double() -> None:
    sends, stored, clients = world()
    clients[0].dispatched[1] = 0
    clients[0].dispatched[2] = 1
    clients[0].filled[1] = clients[0].filled[2] = 1  # the fill returned 1 (missed) and 2 (held already)
    verdict = judge(sends, stored, clients, HttpTally())
    assert verdict.ok, verdict.failures
    assert verdict.filled == 2


def test_a_message_created_outside_a_clients_cover_is_not_expected() -> None:
    sends, stored, clients = world()
    clients[0].dispatched[0] = 0
    clients[0].covered_from_ms = T0 + 500  # connected after message 0 was created
    assert judge(sends, stored, clients, HttpTally()).ok
    clients[0].dispatched[3] = 0
    clients[0].covered_to_ms = T0 + 2500  # and gone (the run's end) before message 3
    assert judge(sends, stored, clients, HttpTally()).ok


def test_an_unacknowledged_send_a_failed_fill_an_ended_client_and_a_500_each_fail() -> None:
    for spoil in ("gave_up", "fill", "ended", "http"):
        sends, stored, clients = world()
        tally = HttpTally()
        if spoil == "gave_up":
            sends.append(Send(TOTAL, "7", ROOM, gave_up="gave up after 40 attempts"))
        elif spoil == "fill":
            clients[0].fill_errors = 1
        elif spoil == "ended":
            clients[1].ended = "closed 4013 (replaced)"
        else:
            tally.error("send: HTTP 500")
        verdict = judge(sends, stored, clients, tally)
        assert len(verdict.failures) == 1, (spoil, verdict.failures)


def test_the_fault_schedule_and_the_short_preset() -> None:
    faults = parse_faults("redis:50,kill:20,term@0:80", nodes=2, sqlite=False)
    assert [(f.kind, f.at, f.node) for f in faults] == [("kill", 20.0, 0), ("redis", 50.0, None), ("term", 80.0, 0)]
    args = parse_args(["--short"])
    assert (args.nodes, args.connections, args.senders, args.rate, args.faults) == (2, 60, 10, 30.0, "kill:20,redis:50")
    assert args.latency_budget_ms is None and args.memory_budget is None
    full = parse_args([])
    assert (full.connections, full.senders, full.duration, full.latency_budget_ms) == (1000, 200, 600.0, 250.0)
    assert full.warmup == 55.0  # before the first fault (a SIGKILL at 60 s)
    assert {f.node for f in parse_faults(full.faults, 2, False) if f.node is not None} == {1}


def test_a_fault_schedule_the_run_cannot_make_is_refused() -> None:
    for spec, sqlite in (("explode:10", False), ("kill", False), ("redis:10", True), ("postgres:5", True),
                         ("disk:10", False)):
        with pytest.raises(SystemExit):
            parse_faults(spec, nodes=2, sqlite=sqlite)
    with pytest.raises(SystemExit):
        parse_args(["--connections", "100", "--users", "5", "--senders", "5"])  # 20 a user: over the cap of 10

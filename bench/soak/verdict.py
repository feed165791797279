"""The soak's checks, kept apart from the machinery so that a unit test can feed them a doubled or a lost
message and see the verdict fail (tests/soak/test_verdict.py).

Every message the harness sends has an index i (its nonce is `<run>.<i>`, also written in its content, so
that history identifies it whether or not it echoes the nonce). Each client keeps, per index, how many
times a MESSAGE_CREATE of it was dispatched to that client and whether a gap fill from history returned it:
a bytearray per client, not a set of ids, so that 1,000 clients over a 10-minute run stay a few MiB each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.harness import percentile

ID_SHIFT = 22  # a snowflake's timestamp lies above its 22 low bits (meadhall/core/ids.py)
EPOCH_MS = 1_704_067_200_000


def id_ms(snowflake: int) -> int:
    """The wall-clock milliseconds a snowflake was made at."""
    return (snowflake >> ID_SHIFT) + EPOCH_MS


@dataclass
class Send:
    """One message the senders tried to create: acknowledged (with the id the server answered) or not."""

    index: int
    author: str
    room: str
    acked_id: int | None = None
    gave_up: str | None = None  # why the sender stopped retrying without an answer


@dataclass
class Stored:
    """One of the run's messages as history returns it at the end."""

    index: int
    id: int
    author: str
    room: str


@dataclass
class ClientRecord:
    """What one gateway connection saw. `covered_from_ms`..`covered_to_ms` is when the client was a client:
    from its first READY to the end of the run (or to a final close); messages created in it must reach it."""

    name: str
    rooms: frozenset[str]
    dispatched: bytearray  # per index: MESSAGE_CREATE dispatches received (saturates at 255)
    filled: bytearray  # per index: 1 when a gap fill from history returned it
    covered_from_ms: int = 0
    covered_to_ms: int = 2**62
    ended: str | None = None  # a close after which the client may not reconnect (4004, 4010, 4013)
    fill_errors: int = 0


@dataclass
class HttpTally:
    """Answers of every request the senders and gap fills made, sorted by what the issue promises."""

    ok: int = 0
    in_window_503: int = 0  # 503 with Retry-After inside a fault window: the promise during an outage
    in_window_5xx: int = 0  # other 5xx inside a fault window (a 507 on a full disk is promised too)
    network_errors: int = 0  # refused / reset / timed out: a dead node, retried elsewhere
    rate_limited: int = 0
    errors: list[str] = field(default_factory=list)  # each broken promise, once per answer

    def error(self, text: str) -> None:
        if len(self.errors) < 1000:
            self.errors.append(text)


@dataclass
class Verdict:
    sent: int = 0
    acknowledged: int = 0
    gave_up: int = 0
    stored: int = 0
    lost: int = 0  # acknowledged, not in history
    wrong_id: int = 0  # acknowledged with an id history does not hold for that message
    duplicated: int = 0  # extra messages with one (author, room, nonce)
    deliveries: int = 0
    filled: int = 0
    doubles: int = 0  # MESSAGE_CREATE dispatched more than once to one client
    misses: int = 0  # created while the client was covered, neither dispatched nor filled
    clients_missing: int = 0
    clients_doubled: int = 0
    failures: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    missed: dict[int, int] = field(default_factory=dict)  # message index -> clients that missed it

    @property
    def ok(self) -> bool:
        return not self.failures

    def example(self, text: str) -> None:
        if len(self.examples) < 12:
            self.examples.append(text)


def check_messages(sends: list[Send], stored: list[Stored], verdict: Verdict) -> dict[int, list[Stored]]:
    """Every acknowledged message stored exactly once; returns the stored copies of each index."""
    verdict.sent = len(sends)
    by_index: dict[int, list[Stored]] = {}
    for message in stored:
        by_index.setdefault(message.index, []).append(message)
    verdict.stored = len(by_index)
    for index, copies in by_index.items():
        keys = {(m.author, m.room) for m in copies}
        extra = len(copies) - len(keys)
        if extra:
            verdict.duplicated += extra
            verdict.example(f"message {index} stored {len(copies)} times: ids {[m.id for m in copies]}")
    for send in sends:
        if send.gave_up is not None:
            verdict.gave_up += 1
            verdict.example(f"message {send.index} never acknowledged: {send.gave_up}")
        if send.acked_id is None:
            continue
        verdict.acknowledged += 1
        copies = by_index.get(send.index, [])
        if not copies:
            verdict.lost += 1
            verdict.example(f"message {send.index} acknowledged as {send.acked_id}, not in history")
        elif send.acked_id not in {m.id for m in copies}:
            verdict.wrong_id += 1
            verdict.example(f"message {send.index} acknowledged as {send.acked_id}, history holds "
                            f"{[m.id for m in copies]}")
    if verdict.lost:
        verdict.failures.append(f"{verdict.lost} acknowledged messages lost")
    if verdict.duplicated:
        verdict.failures.append(f"{verdict.duplicated} messages stored twice (one author, room and nonce)")
    if verdict.wrong_id:
        verdict.failures.append(f"{verdict.wrong_id} acknowledgements name an id history does not hold")
    if verdict.gave_up:
        verdict.failures.append(f"{verdict.gave_up} sends never acknowledged")
    return by_index


def check_deliveries(clients: list[ClientRecord], first: dict[int, Stored], copies: dict[int, int],
                     verdict: Verdict) -> None:
    """Every client received each message of its rooms exactly once, by dispatch or by gap fill. A message
    stored twice (already a failure) is rightly dispatched twice: only dispatches beyond its copies are
    doubles."""
    by_room: dict[str, list[Stored]] = {}
    for message in first.values():
        by_room.setdefault(message.room, []).append(message)
    for client in clients:
        doubles = misses = 0
        for index, count in enumerate(client.dispatched):
            if count:
                verdict.deliveries += count
                extra = count - copies.get(index, 1)
                if extra > 0:
                    doubles += extra
                    if doubles == extra:
                        verdict.example(f"{client.name}: message {index} dispatched {count} times")
        verdict.filled += sum(client.filled)
        for room in client.rooms:
            for message in by_room.get(room, ()):
                if not client.covered_from_ms <= id_ms(message.id) <= client.covered_to_ms:
                    continue
                i = message.index
                if i < len(client.dispatched) and (client.dispatched[i] or client.filled[i]):
                    continue
                misses += 1
                verdict.missed[i] = verdict.missed.get(i, 0) + 1
                if misses == 1:
                    verdict.example(f"{client.name}: message {i} (id {message.id}) neither dispatched nor filled")
        verdict.doubles += doubles
        verdict.misses += misses
        verdict.clients_doubled += bool(doubles)
        verdict.clients_missing += bool(misses)
        if client.ended:
            verdict.failures.append(f"{client.name} ended: {client.ended}")
        if client.fill_errors:
            verdict.failures.append(f"{client.name}: {client.fill_errors} gap fills failed")
    if verdict.misses:
        verdict.failures.append(f"{verdict.misses} deliveries missed by {verdict.clients_missing} clients")
    if verdict.doubles:
        verdict.failures.append(f"{verdict.doubles} deliveries doubled at {verdict.clients_doubled} clients")


def check_http(tally: HttpTally, verdict: Verdict) -> None:
    if tally.errors:
        verdict.failures.append(f"{len(tally.errors)} answers broke a promise (e.g. {tally.errors[0]})")


def judge(sends: list[Send], stored: list[Stored], clients: list[ClientRecord], tally: HttpTally) -> Verdict:
    verdict = Verdict()
    by_index = check_messages(sends, stored, verdict)
    first = {index: copies[0] for index, copies in by_index.items()}
    check_deliveries(clients, first, {index: len(copies) for index, copies in by_index.items()}, verdict)
    check_http(tally, verdict)
    return verdict


def summary(values: list[float]) -> dict[str, Any]:
    """p50 / p99 / max in milliseconds of a list of seconds."""
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"n": len(ordered), "p50_ms": round((percentile(ordered, 50) or 0) * 1000, 1),
            "p99_ms": round((percentile(ordered, 99) or 0) * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1)}

"""The CSV export of the instance audit log `GET /instance/audit-logs/export` (OpenAPI:
exportInstanceAuditLog; docs/audit.md), through HTTP: headers and file name, columns, CSV quoting, cells
that look like formulas, the digest line, the filters, the row cap (a small patched cap), and its
`instance.audit_export` bucket (5 per minute)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from meadhall.admin.audit import export as export_module
from meadhall.audit.record import record
from tests.support.admin import admin_account
from tests.support.http import Api, assert_error

COLUMNS = ["id", "created_at", "action", "actor_id", "actor_username", "target_type", "target_id", "guild_id",
           "reason", "data"]
G1 = 9_000_001


async def entry(rt: Any, clock: Any, when: str, action: str, **kw: Any) -> str:
    clock.set(datetime.fromisoformat(when))
    async with rt.uow() as uow:
        return str(await record(uow, action, **kw))


async def export(client: Any, account: Any, expect: int = 200, **params: Any) -> Any:
    return await Api(client).request("GET", "/instance/audit-logs/export", account, params=params, expect=expect)


def parse(body: bytes) -> tuple[list[list[str]], str]:
    """The CSV rows (header first) and the digest line, after checking the digest covers every byte before it."""
    head, sep, last = body.rpartition(b"# sha256=")
    assert sep and head.endswith(b"\r\n") and last.endswith(b"\r\n")
    digest = last[:-2].decode()
    assert digest == hashlib.sha256(head).hexdigest()
    return list(csv.reader(io.StringIO(head.decode("utf-8"), newline=""))), digest


@pytest.fixture
async def admin(client, accounts, rt, clock):
    clock.set(datetime(2025, 5, 1, 8, 0, tzinfo=UTC))
    return await admin_account(client, accounts, rt, "root")  # writes instance.admin_grant (actor null)


async def test_headers_columns_and_rows_newest_first(client, accounts, rt, clock, admin):
    alice = await accounts.register("alice")
    ban = await entry(rt, clock, "2025-05-02T10:11:12.345678+00:00", "member.ban", actor_id=int(alice.id),
                      guild_id=G1, target_type="user", target_id=int(admin.id), reason="spam, \"really\"\nagain",
                      data={"changes": {"name": ["Zoë", "b"]}, "n": 1})
    clock.set(datetime(2025, 5, 3, 4, 5, 6, tzinfo=UTC))
    r = await export(client, admin)
    assert r.headers["content-type"] == "text/csv; charset=utf-8"
    assert r.headers["content-disposition"] == 'attachment; filename="audit-20250503-040506.csv"'
    rows, _ = parse(r.content)
    assert rows[0] == COLUMNS
    assert rows[1] == [ban, "2025-05-02T10:11:12.345Z", "member.ban", alice.id, "alice", "user", admin.id, str(G1),
                       "spam, \"really\"\nagain", '{"changes":{"name":["Zoë","b"]},"n":1}']
    assert rows[2][2:] == ["instance.admin_grant", "", "", "user", admin.id, "", "", "{}"]
    assert len(rows) == 3


@pytest.mark.parametrize("reason", ["=SUM(A1:A2)", "+1", "-2+3", "@cmd", "=1+1\n=2"])
async def test_formula_like_cells_become_text(client, rt, clock, admin, reason):
    await entry(rt, clock, "2025-05-02T00:00:00+00:00", "member.kick", actor_id=None, guild_id=G1, reason=reason,
                target_type="user", target_id=1)
    rows, _ = parse((await export(client, admin, action="member.kick")).content)
    assert rows[1][8] == "'" + reason


async def test_every_text_cell_is_defused(client, rt, clock, admin):
    """Not only the reason: any text cell (usernames cannot start so; actions and target types are written by
    code, but the rule holds for every cell). Ids, times and JSON objects never start with these characters."""
    await entry(rt, clock, "2025-05-02T00:00:00+00:00", "@odd.action", actor_id=None, guild_id=G1,
                target_type="+type", data={"x": "=y"})
    rows, _ = parse((await export(client, admin, action="@odd.action")).content)
    assert rows[1][2] == "'@odd.action" and rows[1][5] == "'+type" and rows[1][9] == '{"x":"=y"}'


async def test_filters_apply_as_in_the_list(client, rt, clock, admin):
    await entry(rt, clock, "2025-05-02T00:00:00+00:00", "member.kick", actor_id=None, guild_id=G1,
                target_type="user", target_id=5)
    await entry(rt, clock, "2025-05-03T00:00:00+00:00", "member.kick", actor_id=None, guild_id=G1 + 1,
                target_type="user", target_id=6)
    rows, _ = parse((await export(client, admin, guild_id=str(G1))).content)
    assert [r[6] for r in rows[1:]] == ["5"]
    rows, _ = parse((await export(client, admin, **{"from": "2025-05-02T12:00:00Z", "to": "2025-05-04"})).content)
    assert [r[6] for r in rows[1:]] == ["6"]
    rows, _ = parse((await export(client, admin, target_id="7")).content)
    assert rows == [COLUMNS]  # nothing matches: the header and the digest line only
    assert_error(await export(client, admin, 422, to="tomorrow"), 422, "validation.failed")


async def test_at_most_the_cap_newest_first_across_pages(client, rt, clock, admin, monkeypatch):
    monkeypatch.setattr(export_module, "EXPORT_MAX", 7)
    monkeypatch.setattr(export_module, "EXPORT_BATCH", 3)  # several keyset pages, the last one cut short
    ids = [await entry(rt, clock, f"2025-05-02T00:00:{i:02d}+00:00", "member.kick", actor_id=None, guild_id=G1,
                       target_type="user", target_id=i) for i in range(10)]
    rows, _ = parse((await export(client, admin)).content)
    assert [r[0] for r in rows[1:]] == ids[::-1][:7]
    rows, _ = parse((await export(client, admin, action="member.kick", target_id="3")).content)
    assert [r[0] for r in rows[1:]] == [ids[3]]


async def test_the_digest_changes_with_the_content(client, rt, clock, admin):
    _, first = parse((await export(client, admin)).content)
    _, again = parse((await export(client, admin)).content)
    await entry(rt, clock, "2025-05-02T00:00:00+00:00", "member.kick", actor_id=None, guild_id=G1)
    _, after = parse((await export(client, admin)).content)
    assert first == again != after and re.fullmatch(r"[0-9a-f]{64}", after)


async def test_six_exports_within_a_minute_are_limited(client, admin, clock):
    for _ in range(5):
        await export(client, admin)
    r = await export(client, admin, 429)
    body = assert_error(r, 429, "rate_limited")
    assert json.dumps(body).count("instance.audit_export") >= 1
    clock.advance(61)
    await export(client, admin)  # the bucket refills

"""The instance audit log `GET /instance/audit-logs` and its action list `GET /instance/audit-logs/actions`
(OpenAPI: listInstanceAuditLog, listInstanceAuditLogActions; docs/audit.md), through HTTP: every scope
newest first with `total`, each filter alone and combined, date and timestamp ranges (`from` inclusive,
`to` exclusive, on the shown millisecond), paging, malformed filters, and administrators only."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from meadhall.admin.audit import service as audit_service
from meadhall.audit.record import record
from tests.support.admin import admin_account
from tests.support.http import Api, assert_error

G1, G2 = 7_000_001, 7_000_002
ENTRY_KEYS = {"id", "action", "guild_id", "actor_id", "actor", "target_type", "target_id", "reason", "data",
              "created_at"}

# Appendix A of the contract, copied here so the registry in code is checked against it.
APPENDIX_A = """
guild.create guild.update guild.owner_transfer guild.delete channel.create channel.update channel.delete
channel.override_update channel.override_delete channel.background_update role.create role.update role.delete
role.reorder member.nick_update member.role_add member.role_remove member.timeout member.timeout_clear member.kick
member.ban member.unban invite.create invite.delete invite.background_update message.delete message.pin
message.unpin emoji.create emoji.update emoji.delete sound.create sound.update sound.delete cosmetic.create
cosmetic.update cosmetic.delete webhook.create webhook.update webhook.delete webhook.token_reset
webhook.avatar_update voice.mute voice.deafen voice.move voice.disconnect template.create instance.user_ban
instance.user_unban instance.user_session_revoke instance.user_reset_2fa instance.user_temp_password
instance.user_logout_all instance.user_delete instance.user_claim guild.import instance.admin_grant instance.admin_revoke instance.guild_update
instance.guild_delete instance.settings_update limits.bypass
""".split()


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


async def entry(rt: Any, clock: Any, when: str, action: str, **kw: Any) -> str:
    clock.set(at(when))
    async with rt.uow() as uow:
        return str(await record(uow, action, **kw))


class Log:
    """An administrator, alice and bob, and entries at known times (the grant of the administrator first)."""

    def __init__(self, admin: Any, alice: Any, bob: Any, ids: dict[str, str]) -> None:
        self.admin, self.alice, self.bob, self.ids = admin, alice, bob, ids


@pytest.fixture
async def log(client, accounts, rt, clock) -> Log:
    clock.set(at("2025-03-01T09:00:00Z"))
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    admin = await admin_account(client, accounts, rt, "root")  # writes instance.admin_grant at 09:00
    a, b, adm = int(alice.id), int(bob.id), int(admin.id)
    ids = {
        "create": await entry(rt, clock, "2025-03-01T10:00:00Z", "guild.create", actor_id=a, guild_id=G1,
                              target_type="guild", target_id=G1),
        "gban": await entry(rt, clock, "2025-03-02T00:00:00Z", "member.ban", actor_id=a, guild_id=G1,
                            target_type="user", target_id=b, reason="spam"),
        "iban": await entry(rt, clock, "2025-03-02T12:30:00.500900Z", "instance.user_ban", actor_id=adm,
                            target_type="user", target_id=b, reason="abuse"),
        "update": await entry(rt, clock, "2025-03-03T00:00:00Z", "guild.update", actor_id=b, guild_id=G2,
                              target_type="guild", target_id=G2, data={"changes": {"name": ["x", "y"]}}),
        "settings": await entry(rt, clock, "2025-03-03T23:59:59.999Z", "instance.settings_update", actor_id=adm,
                                target_type="settings"),
    }
    return Log(admin, alice, bob, ids)


async def listing(client: Any, account: Any, **params: Any) -> dict[str, Any]:
    return await Api(client).get("/instance/audit-logs", account, params=params)


async def actions_of(client: Any, account: Any, **params: Any) -> list[str]:
    return [e["action"] for e in (await listing(client, account, **params))["audit_entries"]]


async def test_every_scope_newest_first_with_total(client, log):
    body = await listing(client, log.admin)
    assert set(body) == {"audit_entries", "total", "has_more"}
    assert body["total"] == 6 and body["has_more"] is False
    entries = body["audit_entries"]
    assert [e["action"] for e in entries] == ["instance.settings_update", "guild.update", "instance.user_ban",
                                              "member.ban", "guild.create", "instance.admin_grant"]
    assert all(set(e) == ENTRY_KEYS for e in entries)
    settings, update, iban, gban, create, grant = entries
    assert update["guild_id"] == str(G2) and update["data"] == {"changes": {"name": ["x", "y"]}}
    assert iban["guild_id"] is None and iban["reason"] == "abuse" and iban["target_id"] == log.bob.id
    assert iban["created_at"] == "2025-03-02T12:30:00.500Z"
    assert iban["actor"]["id"] == log.admin.id and iban["actor"]["username"] == "root"
    assert gban["actor"]["username"] == "alice" and gban["guild_id"] == str(G1)
    assert grant["actor_id"] is None and grant["actor"] is None and grant["target_id"] == log.admin.id
    assert settings["target_type"] == "settings" and settings["target_id"] is None


async def test_each_filter_alone(client, log):
    assert await actions_of(client, log.admin, action="member.ban") == ["member.ban"]
    assert await actions_of(client, log.admin, action="no.such_action") == []
    assert await actions_of(client, log.admin, actor_id=log.alice.id) == ["member.ban", "guild.create"]
    assert await actions_of(client, log.admin, actor_id=log.admin.id) == ["instance.settings_update",
                                                                          "instance.user_ban"]
    assert await actions_of(client, log.admin, target_id=log.bob.id) == ["instance.user_ban", "member.ban"]
    assert await actions_of(client, log.admin, guild_id=str(G1)) == ["member.ban", "guild.create"]
    assert await actions_of(client, log.admin, guild_id="1") == []
    body = await listing(client, log.admin, actor_id=log.alice.id)
    assert body["total"] == 2 and body["has_more"] is False


async def test_filters_combined(client, log):
    assert await actions_of(client, log.admin, target_id=log.bob.id, guild_id=str(G1)) == ["member.ban"]
    assert await actions_of(client, log.admin, target_id=log.bob.id, actor_id=log.admin.id,
                            action="instance.user_ban") == ["instance.user_ban"]
    assert await actions_of(client, log.admin, target_id=log.bob.id, action="guild.update") == []
    body = await listing(client, log.admin, actor_id=log.admin.id, **{"from": "2025-03-03"})
    assert [e["action"] for e in body["audit_entries"]] == ["instance.settings_update"] and body["total"] == 1


@pytest.mark.parametrize(("params", "expected"), [
    ({"from": "2025-03-02"}, ["settings", "update", "iban", "gban"]),
    ({"to": "2025-03-02"}, ["create", "grant"]),  # exclusive: the entry at midnight is the next day's
    ({"from": "2025-03-02", "to": "2025-03-03"}, ["iban", "gban"]),
    ({"from": "2025-03-03", "to": "2025-03-04"}, ["settings", "update"]),
    ({"from": "2025-03-04"}, []),
    # Timestamps act on the shown millisecond: the ban shows as 12:30:00.500.
    ({"from": "2025-03-02T12:30:00.500Z"}, ["settings", "update", "iban"]),
    ({"from": "2025-03-02T12:30:00.5001Z"}, ["settings", "update"]),
    ({"to": "2025-03-02T12:30:00.500Z", "from": "2025-03-02"}, ["gban"]),
    ({"to": "2025-03-02T12:30:00.5001Z", "from": "2025-03-02"}, ["iban", "gban"]),
    ({"from": "2025-03-02T14:30:00.500+02:00", "to": "2025-03-03T01:00:00+01:00"}, ["iban"]),
    ({"from": "2025-03-03T23:59:59.999Z"}, ["settings"]),
    ({"to": "2025-03-03T23:59:59.999Z", "from": "2025-03-03"}, ["update"]),
])
@pytest.mark.parametrize("sparse_max", [10_000, 0])  # a small window sorted, or a large one walked by id
async def test_date_and_timestamp_ranges(client, log, params, expected, sparse_max, monkeypatch):
    monkeypatch.setattr(audit_service, "SPARSE_MAX", sparse_max)
    names = {v: k for k, v in log.ids.items()}
    body = await listing(client, log.admin, **params)
    got = [names.get(e["id"], "grant") for e in body["audit_entries"]]
    assert got == expected and body["total"] == len(expected)


@pytest.mark.parametrize(("field", "value"), [
    ("from", "yesterday"), ("from", "2025-02-30"), ("to", "2025-03-01T10:00:00"), ("to", "03/01/2025"),
    ("actor_id", "abc"), ("target_id", "-1"), ("guild_id", "1.5"), ("before_id", "x"),
])
async def test_malformed_filters_are_refused(client, log, field, value):
    r = await Api(client).request("GET", "/instance/audit-logs", log.admin, params={field: value}, expect=422)
    assert_error(r, 422, "validation.failed")
    assert field in r.text


@pytest.mark.parametrize("limit", ["0", "101", "many"])
async def test_limit_out_of_range_is_refused(client, log, limit):
    r = await Api(client).request("GET", "/instance/audit-logs", log.admin, params={"limit": limit}, expect=422)
    assert_error(r, 422, "validation.failed")


async def test_pages_by_before_id_with_a_steady_total(client, log):
    seen: list[str] = []
    before: str | None = None
    while True:
        params = {"limit": 2, **({"before_id": before} if before else {})}
        body = await listing(client, log.admin, **params)
        assert body["total"] == 6  # the cursor is ignored by the count
        seen += [e["id"] for e in body["audit_entries"]]
        if not body["has_more"]:
            break
        assert len(body["audit_entries"]) == 2
        before = body["audit_entries"][-1]["id"]
    assert len(seen) == 6 == len(set(seen)) and seen == sorted(seen, key=int, reverse=True)
    body = await listing(client, log.admin, limit=1, before_id=log.ids["gban"], actor_id=log.alice.id)
    assert [e["id"] for e in body["audit_entries"]] == [log.ids["create"]]
    assert body["has_more"] is False and body["total"] == 2


async def test_the_action_list_is_appendix_a(client, log):
    body = await Api(client).get("/instance/audit-logs/actions", log.admin)
    assert body == {"actions": APPENDIX_A}


def test_every_action_the_code_writes_is_listed():
    """Drift guard: an action literal passed to record() anywhere in the service is one of the list."""
    root = Path(__file__).resolve().parents[2] / "meadhall"
    written = set()
    for path in root.rglob("*.py"):
        written |= set(re.findall(r"record\(\s*uow,\s*\"([a-z_.0-9]+)\"", path.read_text()))
    assert written and written <= set(APPENDIX_A), written - set(APPENDIX_A)


@pytest.mark.parametrize("path", ["/instance/audit-logs", "/instance/audit-logs/actions",
                                  "/instance/audit-logs/export"])
async def test_administrators_only(client, log, path):
    api = Api(client)
    assert_error(await api.request("GET", path, log.alice, expect=403), 403, "perm.denied")
    assert_error(await api.request("GET", path, None, expect=401), 401, "auth.unauthorized")

"""Shared helpers of the guild tests: guilds, members, roles, audit rows, instance administrators."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from meadhall.db.schema import audit_log, guilds, members, users
from meadhall.guilds.membership import do_add_member
from meadhall.guilds.queries import get_guild

API = "/api/v1"


async def make_guild(client: Any, owner: Any, name: str = "Great Hall") -> dict[str, Any]:
    r = await client.post(f"{API}/guilds", json={"name": name}, headers=owner.headers)
    assert r.status_code == 201, r.text
    return r.json()["guild"]


async def join(rt: Any, guild_id: str | int, account: Any) -> None:
    """Make `account` a member, as an accepted invitation would (MEMBER_ADD, GUILD_CREATE, message)."""
    async with rt.uow() as uow:
        guild = await get_guild(uow.conn, int(guild_id))
        assert guild is not None
        await do_add_member(uow, guild, int(account.id), via="invite")


async def insert_member(rt: Any, guild_id: str | int, user_id: str | int) -> None:
    """A membership row written directly: no events, no system message, no audit entry."""
    async with rt.engine.begin() as conn:
        await conn.execute(insert(members).values(guild_id=int(guild_id), user_id=int(user_id), nick=None,
                                                  nick_norm=None, joined_at=rt.clock.now(), timeout_until=None))
        await conn.execute(update(guilds).where(guilds.c.id == int(guild_id))
                           .values(member_count=guilds.c.member_count + 1))


async def make_role(client: Any, actor: Any, guild_id: str, name: str, permissions: str = "",
                    **extra: Any) -> dict[str, Any]:
    r = await client.post(f"{API}/guilds/{guild_id}/roles", json={"name": name, "permissions": permissions, **extra},
                          headers=actor.headers)
    assert r.status_code == 201, r.text
    return r.json()["role"]


async def give(client: Any, actor: Any, guild_id: str, account: Any, role_id: str) -> None:
    r = await client.put(f"{API}/guilds/{guild_id}/members/{account.id}/roles/{role_id}", headers=actor.headers)
    assert r.status_code == 204, r.text


async def set_default_permissions(client: Any, owner: Any, guild_id: str, permissions: str) -> None:
    r = await client.patch(f"{API}/guilds/{guild_id}/roles/{guild_id}", json={"permissions": permissions},
                           headers=owner.headers)
    assert r.status_code == 200, r.text


async def make_admin(rt: Any, account: Any) -> None:
    """Instance administrator by SQL (the grant endpoint belongs to instance administration)."""
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(account.id)).values(is_instance_admin=True))


async def audit_rows(rt: Any, guild_id: str | int, action: str | None = None) -> list[dict[str, Any]]:
    stmt = select(audit_log).where(audit_log.c.guild_id == int(guild_id)).order_by(audit_log.c.id)
    if action is not None:
        stmt = stmt.where(audit_log.c.action == action)
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


def error(r: Any) -> tuple[int, str]:
    return r.status_code, r.json()["error"]["code"]


def denied(r: Any, permission: str | None) -> None:
    """403 perm.denied naming `permission` (None: a rule such as hierarchy or ownership failed)."""
    assert r.status_code == 403, r.text
    body = r.json()["error"]
    assert body["code"] == "perm.denied"
    assert body["permission"] == permission, body


def users_of(events: Any, type_: str) -> list[set[int]]:
    return [set(e.users) for e in events.of_type(type_)]


class Hall:
    """A guild with an owner, a moderator, a plain member and an outsider.

    Roles bottom-up: `helper` (1, no extra permissions), `mod` (2, the given moderator permissions),
    `top` (3, same permissions, held by nobody at first). The moderator holds `mod`, the member nothing."""

    def __init__(self, guild: dict[str, Any], owner: Any, mod: Any, member: Any, outsider: Any,
                 roles: dict[str, dict[str, Any]]) -> None:
        self.guild, self.id = guild, guild["id"]
        self.owner, self.mod, self.member, self.outsider = owner, mod, member, outsider
        self.roles = roles

    def url(self, path: str = "") -> str:
        return f"{API}/guilds/{self.id}{path}"

    def ids(self, *accounts: Any) -> set[int]:
        return {int(a.id) for a in accounts}


async def hall(client: Any, accounts: Any, rt: Any, mod_permissions: str) -> Hall:
    owner = await accounts.register("owner")
    mod = await accounts.register("moderator")
    member = await accounts.register("member")
    outsider = await accounts.register("outsider")
    guild = await make_guild(client, owner)
    for account in (mod, member):
        await join(rt, guild["id"], account)
    # Created top-down: each new role takes position 1.
    top = await make_role(client, owner, guild["id"], "top", mod_permissions)
    mod_role = await make_role(client, owner, guild["id"], "mod", mod_permissions)
    helper = await make_role(client, owner, guild["id"], "helper")
    await give(client, owner, guild["id"], mod, mod_role["id"])
    roles = {"top": top, "mod": mod_role, "helper": helper}
    return Hall(guild, owner, mod, member, outsider, roles)

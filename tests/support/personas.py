"""Personas: registered accounts (the `accounts` fixture registers them) and the halls most tests start
from, a guild with its people in known roles."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.factories import add_member
from tests.support.guilds import give, make_guild, make_role
from tests.support.http import API

PASSWORD = "correct horse battery staple"


class Account(dict[str, Any]):
    """A registered user: `id`, `token`, `user`, `password`, and `headers` for Bearer requests."""

    @property
    def id(self) -> str:
        return str(self["user"]["id"])

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self['token']}"}


class Accounts:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.count = 0

    async def register(self, username: str | None = None, password: str = PASSWORD, **extra: Any) -> Account:
        self.count += 1
        username = username or f"user{self.count}"
        body = {"username": username, "email": f"{username}@example.com", "password": password, **extra}
        r = await self.client.post("/api/v1/auth/register", json=body)
        assert r.status_code == 201, r.text
        data = r.json()
        self.client.cookies.clear()  # requests carry Bearer tokens unless a test sets cookies itself
        return Account(token=data["token"], user=data["user"], password=password, session=data["session"])


class Hall:
    """A guild owned by `owner` with members `a` and `b`, `outsider` not a member; `general` is its text room."""

    def __init__(self, guild: dict[str, Any], owner: Any, a: Any, b: Any, outsider: Any) -> None:
        self.guild, self.id = guild, guild["id"]
        self.general = guild["system_channel_id"]
        self.owner, self.a, self.b, self.outsider = owner, a, b, outsider


async def hall(client: Any, accounts: Any, rt: Any) -> Hall:
    owner = await accounts.register("owner")
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    outsider = await accounts.register("outsider")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], a)
    await add_member(rt, guild["id"], b)
    return Hall(guild, owner, a, b, outsider)


class StaffedHall:
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


async def staffed_hall(client: Any, accounts: Any, rt: Any, mod_permissions: str) -> StaffedHall:
    owner = await accounts.register("owner")
    mod = await accounts.register("moderator")
    member = await accounts.register("member")
    outsider = await accounts.register("outsider")
    guild = await make_guild(client, owner, "Great Hall")
    for account in (mod, member):
        await add_member(rt, guild["id"], account)
    # Created top-down: each new role takes position 1.
    top = await make_role(client, owner, guild["id"], "top", mod_permissions)
    mod_role = await make_role(client, owner, guild["id"], "mod", mod_permissions)
    helper = await make_role(client, owner, guild["id"], "helper")
    await give(client, owner, guild["id"], mod, mod_role["id"])
    roles = {"top": top, "mod": mod_role, "helper": helper}
    return StaffedHall(guild, owner, mod, member, outsider, roles)


async def gathering(client: Any, accounts: Any, rt: Any, *names: str) -> tuple[Any, str, list[Any]]:
    """An owner (alice) and members (`names`) in one guild; returns (guild, general room id, accounts)."""
    people = [await accounts.register(name) for name in ("alice", *names)]
    guild = await make_guild(client, people[0])
    for account in people[1:]:
        await add_member(rt, guild["id"], account)
    return guild, guild["system_channel_id"], people

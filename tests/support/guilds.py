"""Guild calls over HTTP: guilds, roles, role grants, rooms, permission overrides, invitations."""

from __future__ import annotations

from typing import Any

from tests.support.http import Api, unwrap


async def make_guild(client: Any, owner: Any, name: str = "Hall", *, expect: int = 201, **extra: Any) -> Any:
    """The created guild (the error body when `expect` is not 201)."""
    body = await Api(client).post("/guilds", owner, json={"name": name, **extra}, expect=expect)
    return unwrap(body, "guild", expect, 201)


async def make_role(client: Any, actor: Any, guild_id: str, name: str, permissions: str = "", *,
                    expect: int = 201, **extra: Any) -> Any:
    body = await Api(client).post(f"/guilds/{guild_id}/roles", actor, expect=expect,
                                  json={"name": name, "permissions": permissions, **extra})
    return unwrap(body, "role", expect, 201)


async def give(client: Any, actor: Any, guild_id: str, account: Any, role_id: str, *, expect: int = 204) -> None:
    await Api(client).put(f"/guilds/{guild_id}/members/{account.id}/roles/{role_id}", actor, expect=expect)


async def set_default_permissions(client: Any, owner: Any, guild_id: str, permissions: str, *,
                                  expect: int = 200) -> None:
    """Edit the default role (its id is the guild id) through the API, as an owner would."""
    await Api(client).patch(f"/guilds/{guild_id}/roles/{guild_id}", owner, json={"permissions": permissions},
                            expect=expect)


async def room(client: Any, account: Any, guild_id: str, *, expect: int = 201, **body: Any) -> Any:
    """A new room (text unless `type` says otherwise)."""
    body.setdefault("type", "text")
    created = await Api(client).post(f"/guilds/{guild_id}/channels", account, json=body, expect=expect)
    return unwrap(created, "channel", expect, 201)


async def override(client: Any, owner: Any, channel_id: str, target_id: str, kind: str, allow: str = "",
                   deny: str = "", *, expect: int = 204) -> None:
    await Api(client).put(f"/channels/{channel_id}/permissions/{target_id}", owner, expect=expect,
                          json={"type": kind, "allow": allow, "deny": deny})


async def make_invite(client: Any, who: Any, channel_id: str, *, expect: int = 201, **body: Any) -> Any:
    created = await Api(client).post(f"/channels/{channel_id}/invites", who, json=body, expect=expect)
    return unwrap(created, "invite", expect, 201)


async def accept_invite(client: Any, who: Any, code: str) -> Any:
    """The response of joining through invitation `code` (not asserted: callers check refusals too)."""
    return await Api(client).request("POST", f"/invites/{code}", who, expect=None)


def users_of(events: Any, type_: str) -> list[set[int]]:
    return [set(e.users) for e in events.of_type(type_)]

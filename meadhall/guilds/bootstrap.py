"""First-time setup (`meadhall bootstrap-admin`, docs/operations.md): the instance administrator and the
main server, built through the same `build_guild` path as every other guild. Run by the CLI as the
system actor; a second run changes nothing."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries as account_queries
from meadhall.accounts.passwords import check_password
from meadhall.accounts.signin import NewAccount, do_create_user, hash_password
from meadhall.accounts.validation import check_email, check_username
from meadhall.audit.record import record
from meadhall.core import permissions as perms
from meadhall.core.crypto import random_password
from meadhall.core.errors import validation_error
from meadhall.core.text import check_single_line
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.structure import ChannelSpec, RoleSpec, Structure, build_guild
from meadhall.runtime import Runtime

DEFAULT_GUILD_NAME = "Main"
ALREADY = {"status": "already_bootstrapped"}

BOOTSTRAP_STRUCTURE = Structure(
    default_permissions=int(perms.DEFAULT),
    default_role_name="User",
    roles=[RoleSpec(name="Administrator", permissions=int(perms.ALL))],
    channels=[ChannelSpec("general")],
)


async def is_bootstrapped(conn: AsyncConnection) -> bool:
    """Any instance administrator or any main server means setup has happened."""
    if await account_queries.select_admin_count(conn) > 0:
        return True
    return await guild_queries.select_main_guild_exists(conn)


def _validated(username: str, email: str, password: str | None, guild_name: str, rt: Runtime
               ) -> tuple[str, str, str]:
    try:
        username = check_username(username)
    except ValueError as exc:
        raise validation_error("username", str(exc)) from None
    try:
        email = check_email(email)
    except ValueError as exc:
        raise validation_error("email", str(exc)) from None
    if password is not None:
        check_password(password, rt.settings.LEAKED_PASSWORDS_FILE)
    guild_name = guild_name.strip()
    if not 2 <= len(guild_name) <= 100:
        raise validation_error("guild_name", "must be 2-100 characters")
    try:
        check_single_line(guild_name)
    except ValueError as exc:
        raise validation_error("guild_name", str(exc)) from None
    return username, email, guild_name


async def bootstrap_admin(rt: Runtime, username: str, email: str, password: str | None,
                          guild_name: str = DEFAULT_GUILD_NAME) -> dict[str, Any]:
    async with rt.read() as uow:
        if await is_bootstrapped(uow.conn):
            return ALREADY
    username, email, guild_name = _validated(username, email, password, guild_name, rt)
    chosen = password or random_password()
    # The slow hash runs before the write transaction, which would hold the SQLite write lock.
    password_hash = await hash_password(rt, chosen)
    async with rt.uow() as uow:
        if await is_bootstrapped(uow.conn):  # another run finished in between
            return ALREADY
        admin = await do_create_user(rt, uow, NewAccount(username, email, chosen, is_instance_admin=True),
                                     password_hash)
        await record(uow, "instance.admin_grant", actor_id=None, target_type="user", target_id=admin["id"])
        built = await build_guild(uow, owner_id=admin["id"], owner_name=admin["display_name"], name=guild_name,
                                  description=None, structure=BOOTSTRAP_STRUCTURE, is_main=True)
        guild_id = int(built.guild["id"])
        [administrator_role] = built.role_ids
        await member_queries.insert_member_role(uow.conn, guild_id, admin["id"], administrator_role)
        await record(uow, "guild.create", actor_id=None, target_type="guild", target_id=guild_id,
                     guild_id=guild_id, data={"bootstrap": True})
    result: dict[str, Any] = {
        "status": "created",
        "user_id": str(admin["id"]),
        "guild_id": str(guild_id),
        "channel_id": str(built.system_channel_id),
    }
    if password is None:
        result["password"] = chosen
    result["next"] = f"meadhall totp-setup --email {email}"
    return result

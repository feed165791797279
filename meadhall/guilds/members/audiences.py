"""Who hears of a user's profile change in each of their guilds (MEMBER_UPDATE), kept per process under the
permission versions of those guilds (derived registry "perm_version"; this cache is its entry "profile_audiences",
db/derived.py): a user in 100 guilds changing their status again reads 100 version numbers instead of every
member of every guild.

A version changes with every insert, update and delete of the guild's members (nickname and timeout included)
and of the roles they hold, so kept audiences are used exactly while every one of the user's guilds, and the
set of them, is as it was. Versions are read before the audiences: under PostgreSQL's read committed a change
committed in between can only make the kept audiences newer than their versions, never older, and the next
reader sees new versions and reads again. The versions live in the database, so a member who joined through
another node is heard of at once.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.kept import VersionedCache
from meadhall.guilds.members import queries
from meadhall.guilds.members.queries import ProfileAudience

Versions = tuple[tuple[int, int], ...]
# user id -> the audiences, under the versions read before them; the bound counts member ids, all users together.
KEPT: VersionedCache[int, Versions, list[ProfileAudience]] = VersionedCache(
    "profile_audiences", lambda audiences: sum(len(a.members) for a in audiences))


async def profile_audiences(conn: AsyncConnection, user_id: int) -> list[ProfileAudience]:
    """The user's guilds with their membership, held roles and members (select_profile_audiences), read again
    only when a version moved. Only for transactions that changed no guild's members, roles or rooms (a profile
    change writes the users row alone): a version such a transaction raised might never commit, and a later
    one could take the same number. The audiences returned are shared: never change them."""
    # kept by trigger: see derived registry "perm_version"
    versions = await queries.select_guild_versions_of_user(conn, user_id)
    if not versions:
        return []
    kept = KEPT.get(conn, user_id, versions)
    if kept is not None:
        return kept
    audiences = await queries.select_profile_audiences(conn, user_id)
    # Kept although the transaction wrote (the registry's AfterWrite.SOURCES_UNWRITTEN): see the docstring.
    KEPT.put(conn, user_id, versions, audiences)
    return audiences
